"""NevIR: contrastive document pairs that differ by a negation (Weller et al., EACL 2024).

Each line of ``train.jsonl`` / ``validation.jsonl`` / ``test.jsonl`` is one pair: ``q1`` is answered
by ``doc1`` only, ``q2`` by ``doc2`` only. Registered ids: ``nevir/train``, ``nevir/dev`` (the
``validation.jsonl`` file) and ``nevir/test``. Each split has its own documents (the two documents of
each of its pairs) and its own docstore. Ids follow MTEB's copy (``orionweller/NevIR-mteb``: ``1000-2_q1``,
``1000-2_doc1``): pair = the row's ``id``; ``<pair>_q1``, ``<pair>_q2``, ``<pair>_doc1``, ``<pair>_doc2``.
A row without ``id`` falls back to its 0-based line number, and each pass over the file logs a warning
with the number of such rows: their ids cannot match MTEB's, so runs on them are not comparable.

The benchmark is reranking: scoreddocs list each query's two candidates, both with score 0.0.
"""

import logging
from typing import NamedTuple

import ir_datasets
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import BaseQrels, BaseQueries, BaseScoredDocs, GenericScoredDoc, TrecQrel

from ..benchmark import Benchmark, register_benchmark
from ..download import VerifiedDownload
from ..util import Documentation, FormatError, StoredDocs, iter_jsonl, register, require_fields
from .nevir_reported import REPORTED

NAME = "nevir"

_logger = logging.getLogger(__name__)

#: HuggingFace revision of orionweller/NevIR the files are pinned to.
REVISION = "6263585072ce3b435ed09658613553fbf4e74184"

QREL_DEFS = {
    1: "The document of the pair that answers the query",
    -1: "Explicit negative: the other document of the pair, which differs by a negation and does not answer the query",
}

SPEC = register_benchmark(Benchmark(
    name=NAME,
    title="NevIR",
    summary="negation in contrastive document pairs",
    paper="Weller et al., EACL 2024",
    paper_url="https://arxiv.org/abs/2305.07614",
    data_url="https://huggingface.co/datasets/orionweller/NevIR",
    datasets=(f"{NAME}/train", f"{NAME}/dev", f"{NAME}/test"),
    measures=("PairedAcc",),
    paper_names={"PairedAcc": "paired accuracy"},
    negatives="the pair's other document",
    docs=f"docs/{NAME}.yaml",
    reported=REPORTED,
    # each query ranks its pair's two documents (the scoreddocs), as the paper's evaluate.py
    protocol="pairs",
    depth=2,
    protocol_datasets=(f"{NAME}/test",),
    reported_decimals=3,  # the paper prints percentages with one decimal (Random's 25% with none)
))


#: Registered split name -> file of the release.
SPLITS = {"train": "train.jsonl", "dev": "validation.jsonl", "test": "test.jsonl"}
#: Pairs per split (from the release / HF card).
PAIR_COUNTS = {"train": 948, "dev": 225, "test": 1383}

CANDIDATE_SCORE = 0.0  # scoreddocs carry no ranking: every candidate has this score


def _download(file):
    return VerifiedDownload(
        benchmark=NAME,
        file=file,
        url=f"https://huggingface.co/datasets/orionweller/NevIR/resolve/{REVISION}/{file}",
    )


_FILES = {split: _download(file) for split, file in SPLITS.items()}


class NevIRDoc(NamedTuple):
    doc_id: str
    text: str
    pair_id: str

    def default_text(self):
        return self.text


class NevIRQuery(NamedTuple):
    query_id: str
    text: str
    pair_id: str
    query: str  # = text; the column PyTerrier's get_topics() reads (ir_datasets keeps query_id first, text second)

    def default_text(self):
        return self.text


class NevIRPair(NamedTuple):
    pair_id: str
    q1: str
    q2: str
    doc1: str
    doc2: str


def iter_pairs(streamer, source):
    """Yield :class:`NevIRPair` for each line of a NevIR split file, validating fields and ids."""
    seen = set()
    without_id = []
    with streamer.stream() as stream:
        for line_number, record in iter_jsonl(stream, source):
            require_fields(record, ("q1", "q2", "doc1", "doc2"), source, line_number)
            if "id" in record and record["id"] is not None:
                if isinstance(record["id"], bool) or not isinstance(record["id"], (str, int)):
                    raise FormatError(f"{source}:{line_number}: field 'id' is {type(record['id']).__name__}, "
                                      f"expected str or int")
                pair_id = str(record["id"])
            else:
                pair_id = str(line_number - 1)
                without_id.append(line_number)
            if pair_id in seen:
                raise FormatError(f"{source}:{line_number}: pair id {pair_id!r} occurs twice")
            seen.add(pair_id)
            yield NevIRPair(pair_id, record["q1"], record["q2"], record["doc1"], record["doc2"])
    if without_id:
        lines = ", ".join(map(str, without_id[:10])) + (", ..." if len(without_id) > 10 else "")
        _logger.warning(f"{source}: {len(without_id)} row(s) have no 'id' (line(s) {lines}); their pair ids are "
                        "0-based line numbers, not the ids of MTEB's NevIR (orionweller/NevIR-mteb, e.g. "
                        "1000-2_q1), so runs on them are not comparable with MTEB's")


class NevIRDocs(StoredDocs):
    def __init__(self, streamer, split):
        super().__init__(NevIRDoc, store=f"{NAME}/docs-{split}", namespace=f"{NAME}/{split}",
                         count_hint=2 * PAIR_COUNTS[split])
        self._streamer = streamer
        self._split = split
        self._source = SPLITS[split]

    @ir_datasets.util.use_docstore
    def docs_iter(self):
        for pair in iter_pairs(self._streamer, self._source):
            yield NevIRDoc(f"{pair.pair_id}_doc1", pair.doc1, pair.pair_id)
            yield NevIRDoc(f"{pair.pair_id}_doc2", pair.doc2, pair.pair_id)


class NevIRQueries(BaseQueries):
    def __init__(self, streamer, split):
        super().__init__()
        self._streamer = streamer
        self._split = split

    def queries_iter(self):
        for pair in iter_pairs(self._streamer, SPLITS[self._split]):
            yield NevIRQuery(f"{pair.pair_id}_q1", pair.q1, pair.pair_id, pair.q1)
            yield NevIRQuery(f"{pair.pair_id}_q2", pair.q2, pair.pair_id, pair.q2)

    def queries_cls(self):
        return NevIRQuery

    def queries_namespace(self):
        return f"{NAME}/{self._split}"

    def queries_lang(self):
        return "en"


class NevIRQrels(BaseQrels):
    def __init__(self, streamer, split):
        self._streamer = streamer
        self._split = split

    def qrels_iter(self):
        for pair in iter_pairs(self._streamer, SPLITS[self._split]):
            p = pair.pair_id
            yield TrecQrel(f"{p}_q1", f"{p}_doc1", 1, "0")
            yield TrecQrel(f"{p}_q1", f"{p}_doc2", -1, "0")
            yield TrecQrel(f"{p}_q2", f"{p}_doc2", 1, "0")
            yield TrecQrel(f"{p}_q2", f"{p}_doc1", -1, "0")

    def qrels_cls(self):
        return TrecQrel

    def qrels_defs(self):
        return QREL_DEFS


class NevIRScoredDocs(BaseScoredDocs):
    """Each query's two candidates, in the fixed order doc1, doc2 (so the relevant one comes first for
    q1 and second for q2), all with score :data:`CANDIDATE_SCORE`."""

    def __init__(self, streamer, split):
        self._streamer = streamer
        self._split = split

    def scoreddocs_iter(self):
        for pair in iter_pairs(self._streamer, SPLITS[self._split]):
            p = pair.pair_id
            for query in ("q1", "q2"):
                yield GenericScoredDoc(f"{p}_{query}", f"{p}_doc1", CANDIDATE_SCORE)
                yield GenericScoredDoc(f"{p}_{query}", f"{p}_doc2", CANDIDATE_SCORE)

    def scoreddocs_cls(self):
        return GenericScoredDoc

    def scoreddocs_count(self):
        return None


def _init():
    documentation = Documentation(f"docs/{NAME}.yaml")
    subsets = {}
    for split in SPLITS:
        files = _FILES[split]
        subsets[split] = Dataset(
            NevIRDocs(files, split),
            NevIRQueries(files, split),
            NevIRQrels(files, split),
            NevIRScoredDocs(files, split),
            documentation(split),
        )
        register(f"{NAME}/{split}", subsets[split])
    return None, subsets


base, subsets = _init()
