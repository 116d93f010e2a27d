"""ExcluIR: exclusionary queries over a HotpotQA-based corpus (Zhang et al., arXiv 2404.19230).

Two JSON arrays on Google Drive, parsed streaming: ``corpus.json`` (``excluir``) and ``test_manual_final.json``
(``excluir/test``), whose queries are read from a derived copy offline where the release is absent.
"""

from typing import NamedTuple

from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrel

from ..derived import DataOrigin, DataOrigins, OriginDocumentation, ReleaseOrDerived
from ..download import pinned_download
from ..gdrive import GoogleDriveSource
from ..spec import Benchmark, Data, Measures, Paper, Protocol, read_reported, register_benchmark
from ..util import (
    Documentation,
    FormatError,
    StoredDocs,
    StreamedQrels,
    StreamedQueries,
    file_size,
    iter_json_array,
    register,
    validator,
)

NAME = "excluir"

QREL_DEFS = {
    1: "Positive: the passage answers the query while respecting its exclusion",
    -1: "Explicit negative: the passage matches the query but contains what the query excludes",
}

SPEC = register_benchmark(Benchmark(
    name=NAME,
    title="ExcluIR",
    summary='exclusionary queries such as "... but not X"',
    datasets=(f"{NAME}/test",),
    negatives="the document the query excludes",
    order=2,
    paper=Paper(reference="Zhang et al., 2024", url="https://arxiv.org/abs/2404.19230", reported=read_reported(NAME),
                decimals=4),  # the paper prints percentages with two decimals
    measures=Measures(names=("R@1", "RR@10", "DeltaR@1", "DeltaMRR@10", "RightRank@10"), main="R@1",
                      paper_names={"RR@10": "MRR@10", "DeltaR@1": "ΔR@1", "DeltaMRR@10": "ΔMRR@10",
                                   "RightRank@10": "Right Rank@10"}),
    data=Data(url="https://github.com/zwh-sdu/ExcluIR", license=""),  # the repository states none
    # full-corpus retrieval; the paper's measures look at the top 10 at most (R@1, MRR@10, Right Rank@10)
    protocol=Protocol(kind="retrieval", depth=100, datasets=(f"{NAME}/test",)),
))


#: The 3,452 test queries as github.com/AdamF-Optimizer/IR_llm_negation_rewriting saved them; no corpus
#: comes with them. Provenance and hashes: ../shared/data/excluir/SOURCES.md in the suite's reference material.
DERIVED_TEST = DataOrigin.pinned(NAME, "derived/ExcluIR_test_manual_final.json")


class ExcluIRDoc(NamedTuple):
    doc_id: str
    text: str

    def default_text(self):
        return self.text


class ExcluIRQuery(NamedTuple):
    query_id: str
    text: str  # RQ_rewrite, the exclusionary query
    positive_doc_id: str
    negative_doc_id: str
    query: str  # = text; the column PyTerrier's get_topics() reads (ir_datasets keeps query_id first, text second)

    def default_text(self):
        return self.text


def _index(value, source, position, field):
    if not (isinstance(value, str) and value.isdigit() or type(value) is int and value >= 0):
        raise FormatError(f"{source}:{position}: {field} holds {value!r}, expected a non-negative document index")
    return str(int(value))


def iter_excluir_queries(streamer, source="test_manual_final.json"):
    """Yield :class:`ExcluIRQuery` from a ``test_manual_final.json`` stream, validating the two fields it reads
    (``RQ_rewrite``, ``corpus_sub_index``)."""
    if isinstance(streamer, ReleaseOrDerived):
        source = streamer.file
    with streamer.stream() as stream:
        for position, index, record in iter_json_array(stream, source):
            where = f"{position.split(':', 1)[1]} (query {index})"
            if not isinstance(record, dict):
                raise FormatError(f"{source}:{where}: expected a JSON object, got {type(record).__name__}")
            for field, kind in (("RQ_rewrite", str), ("corpus_sub_index", list)):
                if field not in record:
                    raise FormatError(f"{source}:{where}: missing field {field!r}")
                if not isinstance(record[field], kind):
                    raise FormatError(
                        f"{source}:{where}: field {field!r} is {type(record[field]).__name__}, expected {kind.__name__}")
            pair = record["corpus_sub_index"]
            if len(pair) != 2:
                raise FormatError(
                    f"{source}:{where}: corpus_sub_index has {len(pair)} entries, expected [negative, positive]")
            negative = _index(pair[0], source, where, "corpus_sub_index[0]")
            positive = _index(pair[1], source, where, "corpus_sub_index[1]")
            yield ExcluIRQuery(str(index), record["RQ_rewrite"], positive, negative, record["RQ_rewrite"])


def iter_corpus(streamer, source="corpus.json"):
    """Yield :class:`ExcluIRDoc` from a ``corpus.json`` stream (a JSON array of passage strings)."""
    with streamer.stream() as stream:
        for position, index, text in iter_json_array(stream, source):
            if not isinstance(text, str):
                raise FormatError(f"{position} (document {index}): expected a string, got {type(text).__name__}")
            yield ExcluIRDoc(str(index), text)


# File ids from the authors' Drive folder (as used by github.com/thijmennijdam/NevIR-reproducibility,
# src/preprocess_data/data.py). No checksum is published: the SHA-256 is recorded at the first download, once the
# file has been read whole as its dataset reads it.
_CORPUS = pinned_download(NAME, "corpus.json", source=GoogleDriveSource, validate=validator(iter_corpus))
_TEST_RELEASE = pinned_download(NAME, "test_manual_final.json", source=GoogleDriveSource,
                                validate=validator(iter_excluir_queries))
_TEST = ReleaseOrDerived(_TEST_RELEASE, DERIVED_TEST)


def iter_qrels(streamer):
    """The positive and the excluded document of each query, 1 and -1."""
    for query in iter_excluir_queries(streamer):
        yield TrecQrel(query.query_id, query.positive_doc_id, 1, "0")
        yield TrecQrel(query.query_id, query.negative_doc_id, -1, "0")


def _init():
    documentation = Documentation(f"docs/{NAME}.yaml")
    docs = StoredDocs(ExcluIRDoc, store=NAME, namespace=NAME, count_hint=90406, read=lambda: iter_corpus(_CORPUS),
                      source_size=file_size(_CORPUS))
    base = Dataset(docs, documentation("_"))
    register(NAME, base)
    test = Dataset(docs, StreamedQueries(lambda: iter_excluir_queries(_TEST), ExcluIRQuery, NAME),
                   StreamedQrels(lambda: iter_qrels(_TEST), QREL_DEFS), DataOrigins(_TEST),
                   OriginDocumentation(documentation("test"), DERIVED_TEST))
    register(f"{NAME}/test", test)
    return base, {"test": test}


base, subsets = _init()
