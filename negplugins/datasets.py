"""Resolve dataset ids and read what the runners and evaluation need from a registered dataset."""

from __future__ import annotations

import difflib
import re
from typing import Iterator

import ir_datasets

import ir_datasets_ext  # noqa: F401  (registers the suite's datasets)
from ir_datasets_ext.benchmark import Benchmark, benchmark_of, benchmarks

from .errors import UnknownDatasetError

__all__ = ["load", "benchmark", "benchmarks", "benchmark_of", "query_texts", "qrels_dict", "breakdown_field",
           "ordered_subsets", "query_groups", "negation_field", "negation_groups", "NEGATION", "NO_NEGATION",
           "docs_root_id", "slug", "whole_dataset_id", "split_outside_subset"]

def load(dataset_id: str):
    """Return the registered dataset ``dataset_id``.

    Raises
    ------
    UnknownDatasetError
        The id is not registered; the message suggests the closest registered ids.
    """
    try:
        return ir_datasets.registry[dataset_id]
    except KeyError:
        pass
    names = list(ir_datasets.registry)
    ours = sorted(n for n in names if benchmark_of(n) is not None)
    close = difflib.get_close_matches(dataset_id, ours, n=3, cutoff=0.5) or \
        difflib.get_close_matches(dataset_id, names, n=3, cutoff=0.6)
    if close:
        hint = f"did you mean {', '.join(close)}?"
    else:
        hint = "the suite's datasets: " + ", ".join(n for n in ours if n.count("/") <= 1)
    raise UnknownDatasetError(f"unknown dataset {dataset_id!r}; {hint}")


def normalise_text(text: str) -> str:
    """One line of text: runs of whitespace (tabs and newlines included) become one space."""
    return " ".join(text.split())


def query_texts(dataset) -> dict[str, str]:
    """``{query_id: text}`` in the dataset's order, text normalised to one line."""
    return {q.query_id: normalise_text(q.default_text()) for q in dataset.queries_iter()}


def qrels_dict(dataset) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for qrel in dataset.qrels_iter():
        qrels.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    return qrels


def benchmark(dataset) -> Benchmark | None:
    """The spec of the benchmark a loaded dataset belongs to (None for a dataset outside the suite)."""
    return benchmark_of(dataset.dataset_id())


def breakdown_field(dataset) -> str | None:
    """The query field that splits a dataset into its subsets (its benchmark's ``subset_field``).

    None outside the suite's benchmarks, or when the dataset's queries lack the field.
    """
    spec = benchmark(dataset)
    field = spec.subset_field if spec is not None else None
    return field if field in getattr(dataset.queries_cls(), "_fields", ()) else None


def ordered_subsets(dataset, names) -> list[str]:
    """Subset names in the benchmark's own order (its spec's ``subsets``); others after them, sorted."""
    spec = benchmark(dataset)
    if spec is None:
        return sorted(set(names))
    return spec.ordered_subsets(names)


def query_groups(dataset) -> dict[str, str]:
    """``{query_id: subset}`` by :func:`breakdown_field`; empty when the dataset has none."""
    field = breakdown_field(dataset)
    if field is None:
        return {}
    return {q.query_id: str(getattr(q, field)) for q in dataset.queries_iter()}


#: The two groups of a benchmark's negation split (see :func:`negation_groups`).
NEGATION, NO_NEGATION = "negation", "no negation"


def negation_field(dataset) -> str | None:
    """The query field that marks a dataset's negation queries (its benchmark's ``negation_split``).

    None outside the suite's benchmarks, for a benchmark without a split, or when the queries lack the field.
    """
    spec = benchmark(dataset)
    if spec is None or spec.negation_split is None:
        return None
    field = spec.negation_split[0]
    return field if field in getattr(dataset.queries_cls(), "_fields", ()) else None


def negation_groups(dataset) -> dict[str, str]:
    """``{query_id: NEGATION or NO_NEGATION}`` by the benchmark's ``negation_split``; empty without one.

    ComLQ: ``has_negation`` True is :data:`NEGATION`; BoolQuestions: ``question_type`` ``not``.
    """
    field = negation_field(dataset)
    if field is None:
        return {}
    spec = benchmark(dataset)
    return {q.query_id: NEGATION if spec.is_negation(getattr(q, field)) else NO_NEGATION
            for q in dataset.queries_iter()}


def docs_root_id(dataset_id: str) -> str:
    """The shortest registered id whose documents are the same as ``dataset_id``'s.

    Subsets such as ``comlq/2in`` share one corpus with ``comlq``, so they share one index.
    """
    handler = load(dataset_id).docs_handler()
    family = dataset_id.split("/")[0]
    candidates = [name for name in ir_datasets.registry if name == family or name.startswith(family + "/")]
    same = [name for name in candidates if ir_datasets.registry[name].has_docs()
            and ir_datasets.registry[name].docs_handler() is handler]
    return min(same, key=lambda name: (name.count("/"), len(name), name)) if same else dataset_id


def slug(dataset_id: str) -> str:
    """A file-name-safe form of a dataset id: ``comlq/2in`` -> ``comlq-2in``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", dataset_id).strip("-")


def iter_docs_for_indexing(dataset) -> Iterator[tuple[str, str]]:
    """``(doc_id, contents)`` for every document: title and text joined by a newline where both exist."""
    for doc in dataset.docs_iter():
        title = getattr(doc, "title", "") or ""
        text = doc.default_text() if hasattr(doc, "default_text") else doc.text
        if title and not text.startswith(title):
            text = f"{title}\n{text}"
        yield doc.doc_id, text


def whole_dataset_id(dataset_id: str) -> str | None:
    """The nearest registered dataset id above ``dataset_id`` (``comlq/pni`` -> ``comlq``), or None."""
    parts = dataset_id.split("/")
    for end in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:end])
        if candidate in set(ir_datasets.registry):  # iterating instantiates no registry pattern
            return candidate
    return None


def split_outside_subset(dataset_id: str, query_ids) -> tuple[str | None, list[str], list[str]]:
    """Split query ids that ``dataset_id`` does not know into those of its whole benchmark and the rest.

    A subset (``comlq/pni``, ``boolquestions/nq/not``) is scored on a run of the whole benchmark: the
    run's other queries are outside the subset, not errors. A query the whole benchmark does not know
    either stays unknown.

    Returns
    -------
    tuple
        ``(whole dataset id or None, outside-subset query ids, unknown query ids)``, ids in input order.
    """
    query_ids = list(query_ids)
    whole = whole_dataset_id(dataset_id) if query_ids else None
    if whole is None:
        return None, [], query_ids
    whole_known = {q.query_id for q in load(whole).queries_iter()}
    outside = [q for q in query_ids if q in whole_known]
    return whole, outside, [q for q in query_ids if q not in whole_known]
