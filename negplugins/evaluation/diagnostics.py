"""Diagnostics a paper table cannot show: where a run's top k comes from, and its scores without some documents.

For a dataset whose documents carry a categorical field (ComLQ's ``origin``: ``evidence``, ``distractor``,
``generated``):

* **shares of the top k** (:func:`top_k_shares`): for each judged query with results, the fraction of its
  top ``k`` documents (the suite's one ranking, :mod:`negplugins.measures.ranking`) having each value of
  the field; the fractions of a query sum to 1 (a query with fewer than ``k`` results is divided by what
  it has). Averaged over those queries (each counts once), overall and per subset.
* **scores without a value** (:func:`without_docs`): the documents having the value are taken out of the
  collection, i.e. out of every run (the documents below move up) and out of the qrels, and the measures
  are computed again (with the evaluation's tie handling); a query left without any judgement is dropped from the qrels.

``negplugins evaluate --by-doc-field FIELD [--by-doc-field-k K] [--without-docs FIELD=VALUE]`` is
:func:`diagnose`; the output formats are in :mod:`negplugins.evaluation.reports`. The leaderboards show
the same numbers for a benchmark whose spec names a ``doc_field`` (ComLQ: ``origin``, without
``generated``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .. import datasets
from ..errors import UserError
from ..io.run_columns import RunColumns
from ..measures.ranking import STOCK, canonical_order
from ..options import MAX_HITS, check_distinct, check_int
from .results import Evaluation, clean_float

__all__ = ["DEFAULT_K", "MAX_VALUES", "NOT_IN_CORPUS", "DocFieldShares", "Removal", "Diagnostics",
           "doc_fields", "doc_field_values", "top_k_shares", "check_options", "share_breakdown", "without_docs",
           "parse_without", "diagnose"]

#: Depth of the top-k shares unless given (``--by-doc-field-k``).
DEFAULT_K = 10
#: A field with more distinct values than this is not categorical (``doc_id``, ``text``) and is refused.
MAX_VALUES = 100
#: The value given to a run's document that the corpus does not hold (only in runs read without validation).
NOT_IN_CORPUS = "(not in the corpus)"


@dataclass
class DocFieldShares:
    """One run's top-``k`` shares per value of a document field.

    ``overall`` maps each value to its mean share over the ``queries`` judged queries with results;
    ``subsets`` maps each subset to ``{"queries": n, value: share, ...}``.
    """

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
                "subsets": {name: {key: (n if key == "queries" else clean_float(n)) for key, n in values.items()}
                            for name, values in self.subsets.items()}}


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
    """What :func:`diagnose` returns: shares of the top ``k`` per run and the removals asked for."""

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
    """The fields of a dataset's documents other than ``doc_id`` (empty for a dataset without documents)."""
    if not dataset.has_docs():
        return []
    return [name for name in getattr(dataset.docs_cls(), "_fields", ()) if name != "doc_id"]


def _check_field(dataset, dataset_id: str, name: str, option: str) -> None:
    fields = doc_fields(dataset)
    if name not in fields:
        raise UserError(f"{option}: the documents of {dataset_id} have no field {name!r}"
                        + (f"; their fields: {', '.join(fields)}" if fields else " (the dataset has no documents)"))


def doc_field_values(dataset, fields, dataset_id: str | None = None, option: str = "--by-doc-field"):
    """Read the values of categorical document fields, in one pass over the corpus.

    Every document's value is held in memory (a few hundred MB for a corpus of millions of documents).

    Parameters
    ----------
    dataset
        A loaded dataset with documents.
    fields : iterable of str
        Document fields (ComLQ ``origin``).
    dataset_id : str, optional
        How messages name the dataset (default: its id).
    option : str
        How messages name the option that asked for the fields.

    Returns
    -------
    dict
        ``{field: {doc_id: value}}``, every value as text (``True`` for a boolean).

    Raises
    ------
    UserError
        A field the documents do not have, or one with more than :data:`MAX_VALUES` distinct values.
    """
    dataset_id = dataset_id or dataset.dataset_id()
    fields = list(dict.fromkeys(fields))
    for name in fields:
        _check_field(dataset, dataset_id, name, option)
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
    """Mean share of each value among the top ``k`` documents of the queries of ``query_ids``.

    Parameters
    ----------
    run : dict
        ``{query_id: {doc_id: score}}``.
    doc_values : dict
        ``{doc_id: value}``; a document not in it counts as :data:`NOT_IN_CORPUS`.
    k : int
        Depth (the documents ranked 1 to ``k`` in the one ranking).
    query_ids : iterable of str
        The queries averaged over; those with no result in ``run`` are skipped.

    Returns
    -------
    tuple
        ``({value: mean share}, queries averaged)``; only values that occur are keys.
    """
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
    """A run's top-``k`` shares over the judged queries of ``qrels``, overall and per subset.

    ``groups`` maps query ids to subsets (:func:`negplugins.datasets.query_groups`), ``subsets`` gives
    their order; ``values`` the values listed (default: those that occur, sorted), each with a share
    (0 where absent).
    """
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
    """``(run, qrels, judgements removed, queries dropped)`` with the documents whose value is ``value`` removed.

    The documents leave the run (those below them move up: the ranking is by score) and the qrels; a query
    left without any judgement leaves the qrels. Nothing is modified in place.
    """
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


def _removals(without) -> list[tuple[str, str]]:
    """``(field, value)`` of each removal asked (``"FIELD=VALUE"`` or a pair); one asked twice is a UserError."""
    removals = [parse_without(w) if isinstance(w, str) else tuple(w) for w in without]
    check_distinct([f"{name}={value}" for name, value in removals], "--without-docs", "removal")
    return removals


def check_options(dataset_id: str, field: str | None, k: int | None, without=(), dataset=None) -> None:
    """Check the diagnostics asked for without reading any data: the fields exist, ``FIELD=VALUE`` parses.

    ``dataset``: the dataset already loaded (loaded here otherwise).

    Raises
    ------
    UserError
        Unknown dataset or field, a malformed or repeated ``--without-docs``, or ``k`` without a field.
    """
    if k is not None and field is None:
        raise UserError("--by-doc-field-k needs --by-doc-field")
    dataset = dataset if dataset is not None else datasets.load(dataset_id)
    if field is not None:
        _check_field(dataset, dataset_id, field, "--by-doc-field")
    for name, _ in _removals(without):
        _check_field(dataset, dataset_id, name, "--without-docs")


def diagnose(dataset_id: str, run_paths, *, field: str | None = None, k: int = DEFAULT_K, without=(),
             measures=None, names=None, validate: bool = True, ties: str = STOCK, inputs=None) -> Diagnostics:
    """Top-``k`` shares per value of a document field, and scores without the documents of some values.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id whose documents carry the field(s).
    run_paths : list of path
        TREC runs.
    field : str, optional
        The categorical document field to break the top ``k`` down by (``origin``); None: no shares.
    k : int
        Depth of the shares, 1 to :data:`~negplugins.options.MAX_HITS` (default 10).
    without : iterable
        ``"FIELD=VALUE"`` strings or ``(field, value)`` pairs: for each, the runs are scored again with
        those documents removed (one removal at a time).
    measures : list or str, optional
        Measures of the removals (default: the dataset's, as :func:`~negplugins.evaluation.scoring.evaluate`).
    names : list of str, optional
        Labels of the runs (default: their file names).
    validate : bool
        Validate each run first (default).
    ties : str
        Tie handling of the removals' measures, as :func:`~negplugins.evaluation.scoring.evaluate` (default
        ``"stock"``); the shares are always of the top ``k`` in the one ranking.
    inputs : EvaluationInputs, optional
        The dataset, qrels, measures and runs already read (:func:`~negplugins.evaluation.scoring.read_inputs`)
        for the evaluation these diagnostics go with; ``run_paths``, ``measures``, ``names`` and ``validate``
        are then not used, and nothing is read again.

    Raises
    ------
    UserError
        Unknown dataset or field, a field that is not categorical, a VALUE no document has, ``k`` out of
        range, or an invalid run.
    """
    from pathlib import Path

    from .scoring import check_ties, read_inputs, score_run

    check_ties(ties)
    k = check_int(k, "--by-doc-field-k", 1, MAX_HITS)
    removals_asked = _removals(without)
    if field is None and not removals_asked:
        raise UserError("nothing to diagnose: give a document field (--by-doc-field) or --without-docs FIELD=VALUE")
    if inputs is None:
        run_paths = [str(p) for p in run_paths]
        names = list(names) if names is not None else [Path(p).name for p in run_paths]
        dataset = datasets.load(dataset_id)
    else:
        dataset = inputs.dataset
    for name in [*([field] if field else []), *(f for f, _ in removals_asked)]:
        _check_field(dataset, dataset_id, name, "--by-doc-field" if name == field else "--without-docs")
    if inputs is None:
        inputs = read_inputs(dataset_id, run_paths, measures, names=names, validate=validate, dataset=dataset)
    qrels, parsed, notes = inputs.qrels, inputs.measures, inputs.notes
    names = [label for label, _, _ in inputs.runs]
    runs = [run for _, _, run in inputs.runs]
    values = doc_field_values(dataset, [*([field] if field else []), *(f for f, _ in removals_asked)], dataset_id)
    for name, value in removals_asked:
        present = set(values[name].values())
        if value not in present:
            raise UserError(f"--without-docs: no document of {dataset_id} has {name}={value!r}; its values: "
                            + ", ".join(sorted(present)))
    groups = datasets.query_groups(dataset)
    subsets = datasets.ordered_subsets(dataset, (groups[q] for q in qrels if q in groups))
    shares = []
    field_values = []
    if field is not None:
        field_values = sorted(set(values[field].values()))
        shares = [share_breakdown(run, values[field], k, qrels, groups, subsets, label=label, field=field,
                                  values=field_values) for run, label in zip(runs, names)]
    removals = []
    for name, value in removals_asked:
        evaluations = []
        judged = dropped = 0
        for run, label in zip(runs, names):
            kept_run, kept_qrels, judged, dropped = without_docs(run, qrels, values[name], value)
            evaluations.append(score_run(dataset_id, dataset, kept_qrels, kept_run, label, parsed, ties=ties))
        documents = sum(1 for v in values[name].values() if v == value)
        removals.append(Removal(name, value, documents, judged, dropped, evaluations))
    return Diagnostics(dataset=dataset_id, field=field, k=k, values=field_values, shares=shares, removals=removals,
                       breakdown_field=datasets.breakdown_field(dataset) if subsets else None, notes=list(notes))
