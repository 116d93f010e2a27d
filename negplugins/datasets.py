"""Resolve dataset ids and read what the runners and evaluation need from a registered dataset.

The text of a document, one policy for every runner: :func:`document_fields` gives BEIR's ``(title, text)`` (BEIR
export and runners); :func:`document_text` gives ``default_text()``, with the title and a newline in front where
the text does not start with it, whitespace as given for the Lucene index and the dense encoder, collapsed
(``normalise=True``) for ``search rerank``'s cross-encoders. For the suite's datasets every runner sees the same
words (only BoolQuestions NQ has titles, and its ``default_text()`` is ``"<title> <text>"``); the variants differ in
whitespace alone, kept as they are so that the committed runs and indexes do not change.
"""

from __future__ import annotations

import difflib
import re
from typing import Iterator

import ir_datasets

from ._compat import upstream

# before ir_datasets_ext registers the datasets in ir_datasets.registry: a moved registry is named in a warning
upstream.check("ir_datasets")

import ir_datasets_ext  # noqa: E402, F401  (registers the suite's datasets)
from ir_datasets_ext.spec import Benchmark, benchmark_of, benchmarks  # noqa: E402

from .errors import UnknownDatasetError, UserError  # noqa: E402

__all__ = ["load", "benchmark", "benchmarks", "benchmark_of", "query_texts", "qrels_dict", "breakdown_field",
           "ordered_subsets", "query_groups", "negation_field", "negation_groups", "NEGATION", "NO_NEGATION",
           "docs_root_id", "slug", "whole_dataset_id", "split_outside_subset", "normalise_text", "document_fields",
           "document_text", "iter_docs_for_indexing", "data_origins", "data_origin_notes", "require",
           "ids_with", "close_ids", "dataset_language"]


def load(dataset_id: str):
    """The registered dataset ``dataset_id``; an UnknownDatasetError suggests the closest registered ids."""
    try:
        return ir_datasets.registry[dataset_id]
    except KeyError:
        pass
    names = list(ir_datasets.registry)
    ours = sorted(n for n in names if benchmark_of(n) is not None)
    close = close_ids(dataset_id, ours, 0.5) or close_ids(dataset_id, names, 0.6)
    if close:
        hint = f"did you mean {', '.join(close)}?"
    else:
        hint = "the suite's datasets: " + ", ".join(n for n in ours if n.count("/") <= 1)
    raise UnknownDatasetError(f"unknown dataset {dataset_id!r}; {hint}")


def data_origins(dataset) -> list[dict]:
    """The derived copies a loaded dataset reads in place of its release files, as records (empty: none)."""
    origins = getattr(dataset, "data_origins", None)
    return [origin.to_dict() for origin in origins()] if callable(origins) else []


def data_origin_notes(records) -> list[str]:
    """One line per :func:`data_origins` record, as evaluations and reports print it."""
    from ir_datasets_ext.derived import DataOrigin

    return [f"data: {DataOrigin.from_dict(record).describe()}" for record in records]


def close_ids(dataset_id: str, names: list[str], cutoff: float) -> list[str]:
    """The (at most 3) ids of ``names`` closest to ``dataset_id`` in lower case; one differing in case only wins."""
    by_lower: dict[str, list[str]] = {}
    for name in names:
        by_lower.setdefault(name.lower(), []).append(name)
    if dataset_id.lower() in by_lower:
        return by_lower[dataset_id.lower()]
    close = difflib.get_close_matches(dataset_id.lower(), list(by_lower), n=3, cutoff=cutoff)
    return [name for lower in close for name in by_lower[lower]][:3]


#: What each part of a dataset is called in messages.
_PARTS = {"docs": "documents", "queries": "queries", "qrels": "relevance judgements (qrels)",
          "scoreddocs": "candidate documents (scoreddocs)"}


def ids_with(dataset_id: str, part: str) -> list[str]:
    """The registered ids below ``dataset_id`` whose datasets have ``part`` (``"docs"``, ``"queries"``, ...), the
    nearest level first."""
    below = [name for name in ir_datasets.registry if name.startswith(dataset_id + "/")]
    have = [name for name in below if getattr(ir_datasets.registry[name], f"has_{part}")()]
    return sorted(have, key=lambda name: name.count("/"))


def require(dataset, part: str, dataset_id: str | None = None) -> None:
    """Refuse a dataset without ``part`` with a UserError naming the ids below it that have it (a family root
    such as ``nevir`` has no queries: ``use nevir/train, nevir/dev, nevir/test``)."""
    if getattr(dataset, f"has_{part}")():
        return
    dataset_id = dataset_id or dataset.dataset_id()
    have = ids_with(dataset_id, part)
    more = f" (and {len(have) - 8} more)" if len(have) > 8 else ""
    hint = f"use {', '.join(have[:8])}{more}" if have else f"choose a dataset with {_PARTS[part]}"
    raise UserError(f"{dataset_id}: the dataset has no {_PARTS[part]}; {hint}")


def normalise_text(text: str) -> str:
    """One line of text: runs of whitespace (tabs and newlines included) become one space."""
    return " ".join(text.split())


def query_texts(dataset) -> dict[str, str]:
    """``{query_id: text}`` in the dataset's order, text normalised to one line (:func:`require`: it has queries)."""
    require(dataset, "queries")
    return {q.query_id: normalise_text(q.default_text()) for q in dataset.queries_iter()}


def qrels_dict(dataset) -> dict[str, dict[str, int]]:
    """``{query_id: {doc_id: relevance}}`` (:func:`require`: the dataset has qrels)."""
    require(dataset, "qrels")
    qrels: dict[str, dict[str, int]] = {}
    for qrel in dataset.qrels_iter():
        qrels.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    return qrels


def benchmark(dataset) -> Benchmark | None:
    """The spec of the benchmark a loaded dataset belongs to (None for a dataset outside the suite)."""
    return benchmark_of(dataset.dataset_id())


def _query_field(dataset, field: str | None) -> str | None:
    return field if field in getattr(dataset.queries_cls(), "_fields", ()) else None


def breakdown_field(dataset) -> str | None:
    """The query field that splits a dataset into its subsets; None outside the suite or where its queries lack it."""
    spec = benchmark(dataset)
    return _query_field(dataset, spec.breakdown.subset_field if spec is not None else None)


def ordered_subsets(dataset, names) -> list[str]:
    """Subset names in the benchmark's own order; others after them, sorted."""
    spec = benchmark(dataset)
    return sorted(set(names)) if spec is None else spec.ordered_subsets(names)


def query_groups(dataset) -> dict[str, str]:
    """``{query_id: subset}`` by :func:`breakdown_field`; empty when the dataset has none."""
    field = breakdown_field(dataset)
    if field is None:
        return {}
    return {q.query_id: str(getattr(q, field)) for q in dataset.queries_iter()}


#: The two groups of a benchmark's negation split (see :func:`negation_groups`).
NEGATION, NO_NEGATION = "negation", "no negation"


def negation_field(dataset) -> str | None:
    """The query field that marks a dataset's negation queries; None without a split or where its queries lack it."""
    spec = benchmark(dataset)
    split = spec.breakdown.negation_split if spec is not None else None
    return _query_field(dataset, split[0] if split is not None else None)


def negation_groups(dataset) -> dict[str, str]:
    """``{query_id: NEGATION or NO_NEGATION}`` by the benchmark's negation split; empty without one."""
    field = negation_field(dataset)
    if field is None:
        return {}
    spec = benchmark(dataset)
    return {q.query_id: NEGATION if spec.is_negation(getattr(q, field)) else NO_NEGATION
            for q in dataset.queries_iter()}


def docs_root_id(dataset_id: str, dataset=None) -> str:
    """The shortest registered id whose documents are ``dataset_id``'s (``comlq/2in`` -> ``comlq``: one index)."""
    dataset = dataset if dataset is not None else load(dataset_id)
    require(dataset, "docs", dataset_id)
    handler = dataset.docs_handler()
    family = dataset_id.split("/")[0]
    candidates = [name for name in ir_datasets.registry if name == family or name.startswith(family + "/")]
    same = [name for name in candidates if ir_datasets.registry[name].has_docs()
            and ir_datasets.registry[name].docs_handler() is handler]
    return min(same, key=lambda name: (name.count("/"), len(name), name)) if same else dataset_id


def dataset_language(dataset) -> str:
    """The documents' language code (``en`` when the dataset does not say)."""
    try:
        return dataset.docs_lang() or "en"
    except (AttributeError, NotImplementedError):
        return "en"


def slug(dataset_id: str) -> str:
    """A file-name-safe form of a dataset id: ``comlq/2in`` -> ``comlq-2in``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", dataset_id).strip("-")


def document_fields(doc) -> tuple[str, str]:
    """``(title, text)`` of a document as BEIR holds it: its ``title`` (or ``""``) and its ``text`` field (or
    ``default_text()``)."""
    title = getattr(doc, "title", "") or ""
    text = doc.text if isinstance(getattr(doc, "text", None), str) else doc.default_text()
    return title, text


def document_text(doc, normalise: bool = False) -> str:
    """The text a runner indexes, encodes or scores for a document (the module's policy)."""
    title = getattr(doc, "title", "") or ""
    text = doc.default_text() if hasattr(doc, "default_text") else doc.text
    if title and not text.startswith(title):
        text = f"{title}\n{text}"
    return normalise_text(text) if normalise else text


def iter_docs_for_indexing(dataset) -> Iterator[tuple[str, str]]:
    """``(doc_id, document_text(doc))`` for every document, whitespace as given (Lucene and dense indexes)."""
    require(dataset, "docs")
    for doc in dataset.docs_iter():
        yield doc.doc_id, document_text(doc)


def docs_source_size(dataset) -> int | None:
    """Bytes of the file a dataset's documents are read from, where they tell it (the suite's datasets), else None."""
    try:
        size = getattr(dataset.docs_handler(), "docs_source_size", None)
    except (AttributeError, NotImplementedError):
        return None
    return size() if callable(size) else None


def whole_dataset_id(dataset_id: str) -> str | None:
    """The nearest registered dataset id above ``dataset_id`` (``comlq/pni`` -> ``comlq``), or None."""
    parts = dataset_id.split("/")
    for end in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:end])
        if candidate in set(ir_datasets.registry):  # iterating instantiates no registry pattern
            return candidate
    return None


def split_outside_subset(dataset_id: str, query_ids) -> tuple[str | None, list[str], list[str]]:
    """``(whole dataset id or None, ids outside the subset, unknown ids)`` of query ids ``dataset_id`` does not know:
    a subset is scored on a run of its whole benchmark, whose other queries are not errors."""
    query_ids = list(query_ids)
    whole = whole_dataset_id(dataset_id) if query_ids else None
    if whole is None:
        return None, [], query_ids
    whole_known = {q.query_id for q in load(whole).queries_iter()}
    outside = [q for q in query_ids if q in whole_known]
    return whole, outside, [q for q in query_ids if q not in whole_known]
