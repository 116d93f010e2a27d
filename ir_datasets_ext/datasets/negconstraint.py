"""NegConstraint: negative-constraint queries over Wikipedia passages (Findings of ACL 2025, arXiv 2505.22299).

The release is one zip in BEIR layout (``NegConstraint/corpus.jsonl``, ``queries.jsonl``, ``test.tsv``). Registered
ids: ``negconstraint`` (the 198 judged queries, as the authors' loader evaluates), ``negconstraint/<constraint>``
for each kind of constraint (:func:`constraint_kind`), and ``negconstraint/all-queries`` (all 366 queries).
How the ids and the kinds were chosen: docs/benchmarks/negconstraint.md.
"""

import functools
import io
import json
import re
from typing import NamedTuple

from ir_datasets.datasets.base import Dataset, FilteredQueries

from ..download import ZipMember, pinned_download
from ..spec import Benchmark, Breakdown, Data, Measures, Paper, Protocol, read_reported, register_benchmark
from ..util import (
    Documentation,
    FormatError,
    StoredDocs,
    StreamedQrels,
    StreamedQueries,
    iter_beir_qrels,
    iter_jsonl,
    register,
    register_subsets,
    require_fields,
)

NAME = "negconstraint"

#: The commit of github.com/xgl-git/NS-IR-main the release file is read from (its URL in etc/downloads.json).
REVISION = "5490b8487c2c093aab99533c295b203ac9a9fbb7"

QREL_DEFS = {1: "The passage the query was written for: on topic and within its constraint"}

CORPUS = "NegConstraint/corpus.jsonl"
QUERIES = "NegConstraint/queries.jsonl"
QRELS = "NegConstraint/test.tsv"

#: The kinds of constraint, in the order :func:`constraint_kind` tries them: the kind and the words that mark it.
CONSTRAINT_CUES = (
    ("excluding", re.compile(r"\bexclud(?:e|es|ing)\b")),
    ("without", re.compile(r"\bwithout\b")),
    ("do-not-mention", re.compile(r"\b(?:do not|don't|avoid|avoiding)(?: any)? (?:mention|mentioning|refer|reference)")),
)
#: Subset names (the ``constraint`` field): the kinds above, then ``other`` (another cue, or none).
CONSTRAINTS = tuple(kind for kind, _ in CONSTRAINT_CUES) + ("other",)


def constraint_kind(text: str) -> str:
    """The kind of a query's negative constraint, read from its words (:data:`CONSTRAINT_CUES`), else ``other``."""
    words = text.lower().replace("\u2019", "'")
    return next((kind for kind, cue in CONSTRAINT_CUES if cue.search(words)), "other")


_NS_IR = ("The paper's tables (arXiv 2505.22299) could not be read where this benchmark was added, so the suite records "
          "no number of the paper and has no row to set its runs beside. The authors' main.py retrieves the top 100 "
          "passages with bge-large-en-v1.5 (llama-index VectorStoreIndex) and reranks them with first-order-logic "
          "forms of the query and of each passage written by gpt-4o through the OpenAI API (utils.py, query2fol and "
          "doc2fol); the suite has no run of it. main.py maps each retrieved text back to a passage id through a "
          "text-to-id dictionary, so of two passages with the same text only the later id is ever returned: the "
          "judged passage 10560 of query 156 cannot be retrieved there (query 157 has the same text and is judged to "
          "10563, a passage with the same text as 10560).")

SPEC = register_benchmark(Benchmark(
    name=NAME,
    title="NegConstraint",
    summary="negative-constraint queries (\"..., excluding ...\", \"but don't mention ...\")",
    datasets=(NAME, f"{NAME}/<constraint>", f"{NAME}/all-queries"),
    negatives="none",
    order=6,
    # no number recorded: the paper's tables could not be read where the benchmark was added (reproduction_notes)
    paper=Paper(reference="Xu et al., Findings of ACL 2025", url="https://arxiv.org/abs/2505.22299",
                reported=read_reported(NAME), reproduction_notes={"NS-IR": _NS_IR}),
    # the authors' evaluate.py: pytrec_eval's ndcg_cut, map_cut, recall and P at 1, 3, 5, 10 and 100
    measures=Measures(names=("nDCG@10", "AP@100", "R@100"), main="nDCG@10",
                      paper_names={"AP@100": "MAP@100", "R@100": "Recall@100"}),
    data=Data(url="https://github.com/xgl-git/NS-IR-main", revision=REVISION,
              license=""),  # the repository states none (no LICENSE file, nothing in its README)
    breakdown=Breakdown(subset_field="constraint", subsets=CONSTRAINTS),
    # the authors' main.py retrieves the top 100 (VectorIndexRetriever(similarity_top_k=100)) before reranking
    protocol=Protocol(kind="retrieval", depth=100, datasets=(NAME,)),
))

# NegConstraint.zip at the root of github.com/xgl-git/NS-IR-main (at REVISION), unchanged since commit e93c272.
_RELEASE = pinned_download(NAME, "NegConstraint.zip")


class NegConstraintDoc(NamedTuple):
    doc_id: str
    text: str

    def default_text(self):
        return self.text


class NegConstraintQuery(NamedTuple):
    query_id: str
    text: str
    constraint: str  # one of CONSTRAINTS, from the text (constraint_kind)
    query: str  # = text; the column PyTerrier's get_topics() reads

    def default_text(self):
        return self.text


def iter_docs(corpus):
    with corpus.stream() as stream:
        for line_number, record in iter_jsonl(stream, CORPUS):
            require_fields(record, ("_id", "text"), CORPUS, line_number)
            yield NegConstraintDoc(record["_id"], record["text"])


def iter_queries(queries_file):
    with queries_file.stream() as stream:
        for line_number, record in iter_jsonl(stream, QUERIES):
            require_fields(record, ("_id", "text"), QUERIES, line_number)
            text = record["text"]
            yield NegConstraintQuery(record["_id"], text, constraint_kind(text), text)


def iter_corpus_ids(corpus):
    """The ``_id`` of each corpus line, without building the docstore."""
    with corpus.stream() as stream:
        for line_number, line in enumerate(io.TextIOWrapper(stream, encoding="utf-8", newline=""), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                raise FormatError(f"{CORPUS}:{line_number}: not a JSON object ({error.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("_id"), str):
                raise FormatError(f"{CORPUS}:{line_number}: expected a JSON object with a text field '_id'")
            yield record["_id"]


def iter_qrels(qrels_file, known_ids):
    """The judgements of ``test.tsv`` (CRLF lines); a row naming a passage or a query the release lacks
    (``known_ids()``: its passage ids and query ids) is refused."""
    doc_ids, query_ids = known_ids()
    for line_number, qrel in iter_beir_qrels(qrels_file, QRELS):
        if qrel.doc_id not in doc_ids:
            raise FormatError(f"{QRELS}:{line_number}: passage {qrel.doc_id!r} is not in {CORPUS}")
        if qrel.query_id not in query_ids:
            raise FormatError(f"{QRELS}:{line_number}: query {qrel.query_id!r} is not in {QUERIES}")
        yield qrel


def open_release(release) -> tuple[StoredDocs, StreamedQueries, StreamedQrels]:
    """The documents, all queries and the judgements of a NegConstraint zip (``release``: a streamer of the zip)."""
    corpus, queries_file, qrels_file = (ZipMember(release, member) for member in (CORPUS, QUERIES, QRELS))
    docs = StoredDocs(NegConstraintDoc, store=NAME, namespace=NAME, count_hint=3946, read=lambda: iter_docs(corpus))
    queries = StreamedQueries(lambda: iter_queries(queries_file), NegConstraintQuery, NAME)

    @functools.cache
    def known_ids():
        return frozenset(iter_corpus_ids(corpus)), frozenset(q.query_id for q in queries.queries_iter())

    return docs, queries, StreamedQrels(lambda: iter_qrels(qrels_file, known_ids), QREL_DEFS)


def _init():
    documentation = Documentation(f"docs/{NAME}.yaml")
    docs, all_queries, qrels = open_release(_RELEASE)

    @functools.cache
    def judged_qids():
        return frozenset(qrel.query_id for qrel in qrels.qrels_iter())

    judged = FilteredQueries(all_queries, judged_qids)
    base = Dataset(docs, judged, qrels, documentation("_"))
    register(NAME, base)

    @functools.cache
    def qids_of(kind: str):
        return frozenset(q.query_id for q in judged.queries_iter() if q.constraint == kind)

    subsets = register_subsets(NAME, docs, judged, qrels, documentation, qids_of, {kind: kind for kind in CONSTRAINTS})
    subsets["all-queries"] = Dataset(docs, all_queries, qrels, documentation("all-queries"))
    register(f"{NAME}/all-queries", subsets["all-queries"])
    return base, subsets


base, subsets = _init()
