"""Resolve dataset ids and read what the runners and evaluation need from a registered dataset."""

from __future__ import annotations

import difflib
import re
from typing import Iterator

import ir_datasets

import ir_datasets_ext  # noqa: F401  (registers the suite's datasets)
from ir_datasets_ext.datasets import boolquestions, comlq, negplugins_demo

from .errors import UnknownDatasetError

__all__ = ["load", "query_texts", "qrels_dict", "breakdown_field", "docs_root_id", "slug"]

#: Query fields by which results are broken down, in order of preference.
BREAKDOWN_FIELDS = ("structure", "question_type", "kind")

#: The benchmarks' own order of their subsets (ComLQ's paper order of structures, ...).
SUBSET_ORDER = {
    "structure": comlq.STRUCTURES,
    "question_type": boolquestions.QUESTION_TYPES,
    "kind": negplugins_demo.KINDS,
}

_SUITE_PREFIXES = ("comlq", "excluir", "nevir", "boolquestions", "dureader-retrieval", "negplugins-demo")


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
    ours = sorted(n for n in names if n.split("/")[0] in _SUITE_PREFIXES)
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


def breakdown_field(dataset) -> str | None:
    """The query field that splits a dataset into its subsets (ComLQ structure, BoolQuestions type)."""
    fields = getattr(dataset.queries_cls(), "_fields", ())
    return next((field for field in BREAKDOWN_FIELDS if field in fields), None)


def ordered_subsets(dataset, names) -> list[str]:
    """Subset names in the benchmark's own order (:data:`SUBSET_ORDER`); others after them, sorted."""
    rank = {name: i for i, name in enumerate(SUBSET_ORDER.get(breakdown_field(dataset), ()))}
    return sorted(set(names), key=lambda name: (rank.get(name, len(rank)), name))


def query_groups(dataset) -> dict[str, str]:
    """``{query_id: subset}`` by :func:`breakdown_field`; empty when the dataset has none."""
    field = breakdown_field(dataset)
    if field is None:
        return {}
    return {q.query_id: str(getattr(q, field)) for q in dataset.queries_iter()}


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
