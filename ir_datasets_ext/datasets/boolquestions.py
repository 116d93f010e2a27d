"""BoolQuestions: AND / OR / NOT questions over MS MARCO and Natural Questions (Zhang et al., 2024).

Per corpus (``boolquestions/msmarco``, ``boolquestions/nq``, each with the subsets ``/and``, ``/or``, ``/not``): the
release's ``eval.json`` and ``corpus.jsonl``, streamed. A passage listed as both positive and negative for a
question gets :data:`CONFLICT_LABEL`, as in the authors' ``evaluate.py``; null negative ids are skipped and counted.
"""

import functools
import logging
from dataclasses import dataclass
from typing import NamedTuple

from ir_datasets.datasets.base import Dataset, FilteredQrels
from ir_datasets.formats import BaseQrels, TrecQrel

from ..download import pinned_download
from ..spec import Benchmark, Breakdown, Data, Measures, Paper, Protocol, read_reported, register_benchmark
from ..util import (
    Documentation,
    FormatError,
    StoredDocs,
    StreamedQueries,
    file_size,
    iter_json_array,
    iter_jsonl,
    register,
    register_subsets,
    validator,
)

NAME = "boolquestions"

_logger = logging.getLogger(__name__)

#: The HF commit is only known by its prefix 084b967, so the URLs use ``resolve/main``; the SHA-256 seen
#: at the first download is recorded and enforced afterwards (trust on first use).
REVISION = "main"

QUESTION_TYPES = ("and", "or", "not")

#: Relevance of a passage the release lists as both positive and negative for a question.
CONFLICT_LABEL = 2

QREL_DEFS = {
    CONFLICT_LABEL: "Listed by the release among both the positive and the negative passages of the question: "
                    "a positive (as in the authors' MRR@10), and a negative for NegRecall(conflict=2) "
                    "(as in the authors' NegRecall@10)",
    1: "Positive passage: satisfies the Boolean question",
    -1: "Explicit negative: a passage annotated as violating the question's Boolean logic "
        "(for example it contains what a NOT question excludes)",
}

SPEC = register_benchmark(Benchmark(
    name=NAME,
    title="BoolQuestions",
    summary="AND / OR / NOT questions over MS MARCO and Natural Questions",
    datasets=(f"{NAME}/msmarco", f"{NAME}/nq", f"{NAME}/<corpus>/and", f"{NAME}/<corpus>/or", f"{NAME}/<corpus>/not"),
    negatives="the question's negative passages",
    order=4,
    paper=Paper(reference="Zhang et al., Findings of EMNLP 2024", url="https://arxiv.org/abs/2411.12235",
                reported=read_reported(NAME), decimals=4),  # the paper prints percentages with two decimals
    # the authors' MRR@10 (questions with a positive) and NegRecall@10 (passages listed as both count as negatives)
    measures=Measures(names=("PosRR@10", f"NegRecall(conflict={CONFLICT_LABEL})@10"), main="PosRR@10",
                      paper_names={"PosRR@10": "MRR@10", f"NegRecall(conflict={CONFLICT_LABEL})@10": "NegRecall@10"}),
    data=Data(url="https://huggingface.co/datasets/ustc-zhangzm/BoolQuestions", revision=REVISION,
              license="cc-by-sa-3.0"),  # the repository's README ("License") and the dataset card
    breakdown=Breakdown(subset_field="question_type", subsets=QUESTION_TYPES,
                        negation_split=("question_type", ("not",))),
    # full-corpus retrieval on both corpora, as the paper's tables; its measures look at the top 10
    protocol=Protocol(kind="retrieval", depth=100, datasets=(f"{NAME}/msmarco", f"{NAME}/nq")),
))


#: Registered corpus name -> (release folder, whether corpus rows have a title).
CORPORA = {
    "msmarco": ("MSMARCO", False),
    "nq": ("NaturalQuestions", True),
}
#: Passages of the MS MARCO passage collection (boolquestions/msmarco's documents: its docstore's size hint).
MSMARCO_PASSAGES = 8_841_823
#: Questions of BoolQuestions' MS MARCO part, per the paper (354 AND, 469 OR, 328 NOT).
MSMARCO_QUESTIONS = 1151


class BoolQuestionsDoc(NamedTuple):
    doc_id: str
    text: str
    title: str  # '' for MS MARCO, which has no titles

    def default_text(self):
        return f"{self.title} {self.text}" if self.title else self.text


class BoolQuestionsQuery(NamedTuple):
    query_id: str
    text: str
    question_type: str  # and | or | not
    query: str  # = text; the column PyTerrier's get_topics() reads (ir_datasets keeps query_id first, text second)

    def default_text(self):
        return self.text


class _Question(NamedTuple):
    query: BoolQuestionsQuery
    positives: list
    negatives: list
    null_negatives: int

    def labels(self):
        """``(doc_id, relevance)`` once per passage: 1 positive, -1 negative, :data:`CONFLICT_LABEL` both."""
        negatives = set(self.negatives)
        labels = {doc_id: CONFLICT_LABEL if doc_id in negatives else 1 for doc_id in self.positives}
        for doc_id in self.negatives:
            labels.setdefault(doc_id, -1)
        return labels.items()


def _id(value, source, where, field):
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise FormatError(f"{source}:{where}: {field} is {type(value).__name__}, expected a string or integer id")
    return str(value)


def _iter_records(streamer, source):
    """``(where, record)`` for each question of ``eval.json``, a JSON array or JSON lines."""
    with streamer.stream() as stream:
        first = next((chunk.lstrip() for chunk in iter(lambda: stream.read(4096), b"") if chunk.lstrip()), b"")
    with streamer.stream() as stream:
        if first[:1] == b"[":
            for position, index, record in iter_json_array(stream, source):
                yield f"{position.rsplit(':', 1)[1]} (question {index})", record
        else:
            yield from iter_jsonl(stream, source)


def iter_questions(streamer, source):
    """Yield validated :class:`_Question` records of an ``eval.json`` stream."""
    for where, record in _iter_records(streamer, source):
        if not isinstance(record, dict):
            raise FormatError(f"{source}:{where}: expected a JSON object, got {type(record).__name__}")
        for field in ("qid", "question", "question_type", "positive_ctxs", "negative_ctxs"):
            if field not in record:
                raise FormatError(f"{source}:{where}: missing field {field!r}")
        qid = _id(record["qid"], source, where, "qid")
        if not isinstance(record["question"], str):
            raise FormatError(f"{source}:{where}: field 'question' is {type(record['question']).__name__}, expected str")
        question_type = record["question_type"]
        if question_type not in QUESTION_TYPES:
            raise FormatError(f"{source}:{where}: question_type {question_type!r} is not one of "
                              f"{', '.join(QUESTION_TYPES)}")
        lists = {}
        nulls = 0
        for field in ("positive_ctxs", "negative_ctxs"):
            contexts = record[field]
            if not isinstance(contexts, list):
                raise FormatError(f"{source}:{where}: field {field!r} is {type(contexts).__name__}, expected a list")
            ids = []
            for i, context in enumerate(contexts):
                if not isinstance(context, dict) or "passage_id" not in context:
                    raise FormatError(f"{source}:{where}: {field}[{i}] has no 'passage_id'")
                if context["passage_id"] is None:
                    if field == "positive_ctxs":
                        raise FormatError(f"{source}:{where}: {field}[{i}] has a null passage_id")
                    nulls += 1
                    continue
                ids.append(_id(context["passage_id"], source, where, f"{field}[{i}].passage_id"))
            lists[field] = ids
        yield _Question(BoolQuestionsQuery(qid, record["question"], question_type, record["question"]),
                        lists["positive_ctxs"], lists["negative_ctxs"], nulls)


def iter_queries(streamer, source):
    return (question.query for question in iter_questions(streamer, source))


def iter_corpus(streamer, source, has_titles):
    """Yield :class:`BoolQuestionsDoc` for each line of a ``corpus.jsonl`` stream (``title`` with ``has_titles``)."""
    with streamer.stream() as stream:
        for line_number, record in iter_jsonl(stream, source):
            for field in ("docid", "doc") + (("title",) if has_titles else ()):
                if field not in record:
                    raise FormatError(f"{source}:{line_number}: missing field {field!r}")
            doc_id = _id(record["docid"], source, line_number, "docid")
            text, title = record["doc"], record.get("title", "") if has_titles else ""
            if not isinstance(text, str) or not isinstance(title, str):
                raise FormatError(f"{source}:{line_number}: fields 'doc' and 'title' must be strings")
            yield BoolQuestionsDoc(doc_id, text, title)


def _release_files(folder: str, has_titles: bool) -> dict:
    """A corpus's release files (``eval``, ``corpus``), pinned in etc/downloads.json and trusted on first use once
    read whole."""
    return {"eval": pinned_download(NAME, f"{folder}/eval.json", validate=validator(iter_questions)),
            "corpus": pinned_download(NAME, f"{folder}/corpus.jsonl",
                                      validate=validator(functools.partial(iter_corpus, has_titles=has_titles)))}


#: Registered corpus name -> its release files.
_FILES = {name: _release_files(folder, has_titles) for name, (folder, has_titles) in CORPORA.items()}


@dataclass
class _Counts:
    """What the qrels leave out or merge: null and repeated negative ids, passages listed as both (conflicts)."""

    null_negatives: int = 0
    null_only: int = 0
    repeated_negatives: int = 0
    conflicts: int = 0

    def add(self, question: _Question):
        self.null_negatives += question.null_negatives
        self.null_only += bool(question.null_negatives and not question.negatives)
        self.repeated_negatives += len(question.negatives) - len(set(question.negatives))  # each extra listing
        self.conflicts += len(set(question.positives) & set(question.negatives))


class BoolQuestionsQrels(BaseQrels):
    def __init__(self, streamer, name):
        self._streamer = streamer
        self._source = f"{CORPORA[name][0]}/eval.json"

    def qrels_iter(self, query_ids=None):
        counts = _Counts()
        for question in iter_questions(self._streamer, self._source):
            qid = question.query.query_id
            if query_ids is not None and qid not in query_ids:
                continue
            counts.add(question)
            for doc_id, relevance in question.labels():
                yield TrecQrel(qid, doc_id, relevance, "0")
        if counts.null_negatives:
            _logger.warning(f"{self._source}: skipped {counts.null_negatives} negative context(s) with a null "
                            f"passage_id ({counts.null_only} question(s) have only null negatives); the authors' "
                            "NegRecall divides by len(negative_ctxs), nulls included, the suite by the non-null "
                            "negatives")
        if counts.repeated_negatives:
            _logger.warning(f"{self._source}: {counts.repeated_negatives} repeated negative passage id(s) counted "
                            "once; the authors' NegRecall divides by len(negative_ctxs), repeats included")
        if counts.conflicts:
            _logger.warning(f"{self._source}: {counts.conflicts} passage(s) listed as both positive and negative "
                            f"for a question, labelled {CONFLICT_LABEL}: positives, and negatives for "
                            f"NegRecall(conflict={CONFLICT_LABEL})")

    def label_counts(self, query_ids=None) -> "_Counts":
        """The :class:`_Counts` of the questions ``query_ids`` (default: all)."""
        counts = _Counts()
        for question in iter_questions(self._streamer, self._source):
            if query_ids is None or question.query.query_id in query_ids:
                counts.add(question)
        return counts

    def qrels_cls(self):
        return TrecQrel

    def qrels_defs(self):
        return QREL_DEFS


class _FilteredBoolQrels(FilteredQrels):
    def label_counts(self) -> _Counts:
        return self._qrels_handler.label_counts(self._lazy_qids())


def _init():
    documentation = Documentation(f"docs/{NAME}.yaml")
    bases, subsets = {}, {}
    for name in CORPORA:
        files = _FILES[name]
        folder, has_titles = CORPORA[name]
        docs = StoredDocs(BoolQuestionsDoc, store=f"{NAME}/docs-{name}", namespace=f"{NAME}/{name}",
                          count_hint=MSMARCO_PASSAGES if name == "msmarco" else None,
                          read=functools.partial(iter_corpus, files["corpus"], f"{folder}/corpus.jsonl", has_titles),
                          source_size=file_size(files["corpus"]))
        queries = StreamedQueries(functools.partial(iter_queries, files["eval"], f"{folder}/eval.json"),
                                  BoolQuestionsQuery, f"{NAME}/{name}")
        qrels = BoolQuestionsQrels(files["eval"], name)
        bases[name] = Dataset(docs, queries, qrels, documentation(name))
        register(f"{NAME}/{name}", bases[name])

        def qids_of(question_type, queries=queries):
            return frozenset(q.query_id for q in queries.queries_iter() if q.question_type == question_type)

        by_type = register_subsets(f"{NAME}/{name}", docs, queries, qrels,
                                   lambda subset, name=name: documentation(f"{name}/{subset}"), qids_of,
                                   {question_type: question_type for question_type in QUESTION_TYPES},
                                   _FilteredBoolQrels)
        subsets.update({f"{name}/{question_type}": subset for question_type, subset in by_type.items()})
    return bases, subsets


bases, subsets = _init()
