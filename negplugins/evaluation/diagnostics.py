"""Diagnostics a paper table cannot show: where a run's top k comes from, and its scores without some documents.

``negplugins evaluate --by-doc-field FIELD [--without-docs FIELD=VALUE]``; see docs/evaluation.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .. import datasets
from ..errors import UserError
from ..io.run_columns import RunColumns
from ..measures.ranking import STOCK, canonical_order
from ..options import MAX_HITS, check_distinct, check_int
from .results import Evaluation, clean_float, clean_groups

#: Depth of the top-k shares unless given (``--by-doc-field-k``).
DEFAULT_K = 10
#: A field with more distinct values than this is not categorical (``doc_id``, ``text``) and is refused.
MAX_VALUES = 100
#: The value given to a run's document that the corpus does not hold (only in runs read without validation).
NOT_IN_CORPUS = "(not in the corpus)"


@dataclass
class DocFieldShares:
    """One run's mean share of its top ``k`` per value of a document field, overall and per subset."""

    run: str
    field: str
    k: int
    values: list[str]
    overall: dict[str, float]
    queries: int
    subsets: dict[str, dict] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"run": self.run, "field": self.field, "k": self.k, "queries": self.queries,
                "overall": {v: clean_float(self.overall.get(v)) for v in self.values},
                "subsets": clean_groups(self.subsets)}


@dataclass
class Removal:
    """The runs scored again with the documents whose ``field`` is ``value`` removed from the collection."""

    field: str
    value: str
    documents: int  # documents of the corpus removed
    judged: int  # (query, document) judgements removed from the qrels
    queries_dropped: int  # queries left without any judgement
    evaluations: list[Evaluation]

    def to_dict(self) -> dict:
        return {"field": self.field, "value": self.value, "documents_removed": self.documents,
                "judgements_removed": self.judged, "queries_dropped": self.queries_dropped,
                "runs": [ev.to_dict(per_query=False) for ev in self.evaluations]}


@dataclass
class Diagnostics:
    """Shares of the top ``k`` per run and the removals asked for."""

    dataset: str
    field: str | None
    k: int
    values: list[str]
    shares: list[DocFieldShares]
    removals: list[Removal]
    breakdown_field: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        record = {"dataset": self.dataset, "notes": list(self.notes)}
        if self.field is not None:
            record["by_doc_field"] = {"field": self.field, "k": self.k, "values": list(self.values),
                                      "breakdown_field": self.breakdown_field,
                                      "runs": [s.to_dict() for s in self.shares]}
        record["without_docs"] = [r.to_dict() for r in self.removals]
        return record


def doc_fields(dataset) -> list[str]:
    """The fields of a dataset's documents other than ``doc_id``."""
    if not dataset.has_docs():
        return []
    return [name for name in getattr(dataset.docs_cls(), "_fields", ()) if name != "doc_id"]


def _check_field(dataset, dataset_id: str, name: str, option: str) -> None:
    fields = doc_fields(dataset)
    if name not in fields:
        raise UserError(f"{option}: the documents of {dataset_id} have no field {name!r}"
                        + (f"; their fields: {', '.join(fields)}" if fields else " (the dataset has no documents)"))


def doc_field_values(dataset, fields, dataset_id: str | None = None, option: str = "--by-doc-field"):
    """``{field: {doc_id: value as text}}`` of categorical document fields, in one pass over the corpus."""
    dataset_id = dataset_id or dataset.dataset_id()
    fields = list(dict.fromkeys(fields))
    values: dict[str, dict[str, str]] = {name: {} for name in fields}
    distinct: dict[str, set] = {name: set() for name in fields}
    for doc in dataset.docs_iter():
        for name in fields:
            value = str(getattr(doc, name))
            values[name][doc.doc_id] = value
            seen = distinct[name]
            if value not in seen:
                seen.add(value)
                if len(seen) > MAX_VALUES:
                    raise UserError(f"{option}: the documents of {dataset_id} have more than {MAX_VALUES} distinct "
                                    f"values of {name!r}; a categorical field is expected (such as ComLQ's origin)")
    return values


def top_k_shares(run, doc_values, k: int, query_ids) -> tuple[dict[str, float], int]:
    """``({value: mean share}, queries averaged)`` of the top ``k`` (one ranking) over the queries with results."""
    totals: Counter = Counter()
    queries = 0
    for query_id in query_ids:
        scored = run.get(query_id)
        if not scored:
            continue
        top = canonical_order(scored)[:k]
        for value, count in Counter(doc_values.get(doc_id, NOT_IN_CORPUS) for doc_id in top).items():
            totals[value] += count / len(top)
        queries += 1
    if not queries:
        return {}, 0
    return {value: total / queries for value, total in totals.items()}, queries


def share_breakdown(run, doc_values, k: int, qrels, groups=None, subsets=None, *, label: str = "", field: str = "",
                    values=None) -> DocFieldShares:
    """A run's top-``k`` shares over the judged queries of ``qrels``, overall and per subset (``groups``)."""
    if isinstance(run, RunColumns):  # the documents the top k can hold, not the whole run
        run = run.top(k)
    overall, queries = top_k_shares(run, doc_values, k, qrels.keys())
    per_subset = {}
    groups = groups or {}
    for subset in subsets if subsets is not None else sorted(set(groups.values())):
        shares, count = top_k_shares(run, doc_values, k, [q for q in qrels if groups.get(q) == subset])
        per_subset[subset] = (count, shares)
    if values is None:
        values = sorted(set(overall).union(*(shares for _, shares in per_subset.values())))
    else:
        values = list(values) + sorted(set(overall) - set(values))
    return DocFieldShares(run=label, field=field, k=k, values=list(values),
                          overall={v: overall.get(v, 0.0) if queries else float("nan") for v in values},
                          queries=queries,
                          subsets={s: {"queries": count, **{v: shares.get(v, 0.0) if count else float("nan")
                                                            for v in values}}
                                   for s, (count, shares) in per_subset.items()})


def without_docs(run, qrels, doc_values, value: str):
    """``(run, qrels, judgements removed, queries dropped)`` without the documents whose value is ``value``."""
    removed = {doc_id for doc_id, v in doc_values.items() if v == value}
    new_run = {q: {d: s for d, s in docs.items() if d not in removed} for q, docs in run.items()}
    new_qrels, judged, dropped = {}, 0, 0
    for query_id, docs in qrels.items():
        kept = {d: rel for d, rel in docs.items() if d not in removed}
        judged += len(docs) - len(kept)
        if kept:
            new_qrels[query_id] = kept
        else:
            dropped += 1
    return {q: docs for q, docs in new_run.items() if docs}, new_qrels, judged, dropped


def parse_without(text: str) -> tuple[str, str]:
    """``"origin=generated"`` -> ``("origin", "generated")``; anything else is a UserError."""
    name, sep, value = str(text).partition("=")
    if not sep or not name.strip() or not value:
        raise UserError(f"--without-docs: expected FIELD=VALUE (such as origin=generated), got {text!r}")
    return name.strip(), value


def check_options(dataset, dataset_id: str, field: str | None, k: int | None, without=()):
    """``(k, [(field, value)])`` of the diagnostics asked for, checked before any run is read."""
    if k is not None and field is None:
        raise UserError("--by-doc-field-k needs --by-doc-field")
    removals = [parse_without(w) if isinstance(w, str) else tuple(w) for w in without]
    check_distinct([f"{name}={value}" for name, value in removals], "--without-docs", "removal")
    if field is None and not removals:
        raise UserError("nothing to diagnose: give a document field (--by-doc-field) or --without-docs FIELD=VALUE")
    if field is not None:
        _check_field(dataset, dataset_id, field, "--by-doc-field")
    for name, _ in removals:
        _check_field(dataset, dataset_id, name, "--without-docs")
    return (DEFAULT_K if k is None else check_int(k, "--by-doc-field-k", 1, MAX_HITS)), removals


def diagnose(dataset_id: str, run_paths, *, field: str | None = None, k: int | None = None, without=(),
             measures=None, ties: str = STOCK) -> Diagnostics:
    """Top-``k`` shares per value of ``field``, and the runs scored without the documents of each ``FIELD=VALUE``."""
    from .scoring import Evaluator

    evaluator = Evaluator.load(dataset_id, measures, ties=ties)
    k, removals = check_options(evaluator.dataset, dataset_id, field, k, without)
    return diagnose_runs(evaluator, evaluator.read_runs(run_paths), field, k, removals)


def diagnose_runs(evaluator, runs, field: str | None, k: int, removals) -> Diagnostics:
    """:func:`diagnose` of runs ``[(label, path, run)]`` already read by ``evaluator``, options already checked."""
    dataset, dataset_id, qrels = evaluator.dataset, evaluator.dataset_id, evaluator.qrels
    values = doc_field_values(dataset, [*([field] if field else []), *(f for f, _ in removals)], dataset_id)
    for name, value in removals:
        present = set(values[name].values())
        if value not in present:
            raise UserError(f"--without-docs: no document of {dataset_id} has {name}={value!r}; its values: "
                            + ", ".join(sorted(present)))
    shares, field_values = [], []
    if field is not None:
        field_values = sorted(set(values[field].values()))
        shares = [share_breakdown(run, values[field], k, qrels, evaluator.groups, evaluator.subsets, label=label,
                                  field=field, values=field_values) for label, _, run in runs]
    done = []
    for name, value in removals:
        evaluations = []
        judged = dropped = 0
        for label, _, run in runs:
            kept_run, kept_qrels, judged, dropped = without_docs(run, qrels, values[name], value)
            evaluations.append(evaluator.on_qrels(kept_qrels).score(kept_run, label, label))
        documents = sum(1 for v in values[name].values() if v == value)
        done.append(Removal(name, value, documents, judged, dropped, evaluations))
    return Diagnostics(dataset=dataset_id, field=field, k=k, values=field_values, shares=shares, removals=done,
                       breakdown_field=datasets.breakdown_field(dataset) if evaluator.subsets else None,
                       notes=list(evaluator.notes))
