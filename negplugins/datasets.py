"""Resolve dataset ids and read what the runners and evaluation need from a registered dataset.

Document text: one policy for every runner
------------------------------------------
What a runner indexes, encodes or scores for a document is decided here and nowhere else:

:func:`document_fields`
    ``(title, text)``: the document's ``title`` field (``""`` when it has none) and its ``text`` field
    (its ``default_text()`` when it has no string ``text``). BEIR keeps the two apart, so these are
    what :func:`negplugins.beir.export.export_beir` writes to ``corpus.jsonl`` and what the BEIR runners
    (``search beir-dense``, ``search beir-rerank``) hand to BEIR, which encodes
    ``(title + " " + text).strip()``.
:func:`document_text`
    One string: the document's ``default_text()`` (its ``text`` when it has none), with the title and a
    newline put in front when there is a title the text does not already start with. Whitespace is
    kept as the dataset gives it; with ``normalise=True`` every run of whitespace (tabs and newlines
    included) becomes one space (:func:`normalise_text`). :func:`iter_docs_for_indexing` yields it
    as is to the Lucene index (``index``, ``search bm25``) and the dense encoder (``search dense``);
    ``search rerank`` scores it normalised, as it scores the normalised query text, except with the
    bi-encoder, which encodes it as ``search dense`` does (so a dense index's vectors are its own).

For the suite's datasets every runner sees the same words: only BoolQuestions NQ has titles, and its
``default_text()`` is already ``"<title> <text>"``, which is also what BEIR joins. The variants differ in
whitespace alone (kept, collapsed, stripped), which the Lucene analyzers and the models' tokenizers
split on and discard. They are kept as they are so that the committed runs (``runs/``) and the Lucene
index, which must stay byte-identical to one built by stock Pyserini from the same ``docs.jsonl``, do
not change.
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
    """Return the registered dataset ``dataset_id``.

    Raises
    ------
    UnknownDatasetError
        The id is not registered; the message suggests the closest registered ids (compared without regard
        to case: ``ComLQ`` suggests ``comlq``; ids themselves are case-sensitive, as in ir_datasets).
    """
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
    """The derived copies a loaded dataset reads in place of its release files, as records (empty: none).

    One record per copy (:meth:`ir_datasets_ext.derived.DataOrigin.to_dict`: ``kind`` ``"derived copy"``,
    ``file``, ``sha256``, ``size``, ``source``, ...), from the dataset's ``data_origins()``
    (:class:`ir_datasets_ext.derived.DataOrigins`); a dataset outside the suite has none. Run sidecars,
    evaluations, report cards and leaderboards all carry these records, so a number computed on a copy says so.
    """
    origins = getattr(dataset, "data_origins", None)
    return [origin.to_dict() for origin in origins()] if callable(origins) else []


def data_origin_notes(records) -> list[str]:
    """One line per :func:`data_origins` record, as evaluations and reports print it."""
    from ir_datasets_ext.derived import DataOrigin

    return [f"data: {DataOrigin.from_dict(record).describe()}" for record in records]
def close_ids(dataset_id: str, names: list[str], cutoff: float) -> list[str]:
    """The (at most 3) ids of ``names`` closest to ``dataset_id``, compared in lower case (difflib's ratio).

    An id that differs only in case is the one suggestion (``ComLQ`` -> ``comlq``).
    """
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
    """The registered ids below ``dataset_id`` (``nevir`` -> ``nevir/train``, ...) whose datasets have ``part``.

    ``part`` is ``"docs"``, ``"queries"``, ``"qrels"`` or ``"scoreddocs"``; the ids are in registration order,
    the nearest level first (``boolquestions/msmarco`` before ``boolquestions/msmarco/and``).
    """
    below = [name for name in ir_datasets.registry if name.startswith(dataset_id + "/")]
    have = [name for name in below if getattr(ir_datasets.registry[name], f"has_{part}")()]
    return sorted(have, key=lambda name: name.count("/"))


def require(dataset, part: str, dataset_id: str | None = None) -> None:
    """Refuse a dataset without ``part`` (``"docs"``, ``"queries"``, ``"qrels"``, ``"scoreddocs"``).

    A family root such as ``nevir`` or ``excluir`` is a real ir_datasets entry with its documentation (and
    ``excluir`` its corpus) but no queries: asked for them, it names the ids that have them.

    Raises
    ------
    UserError
        ``<id>: the dataset has no queries; use nevir/train, nevir/dev, nevir/test`` (the ids below it with them).
    """
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


def docs_root_id(dataset_id: str, dataset=None) -> str:
    """The shortest registered id whose documents are the same as ``dataset_id``'s.

    Subsets such as ``comlq/2in`` share one corpus with ``comlq``, so they share one index. ``dataset``,
    when given, is ``dataset_id`` already loaded (it is not resolved again).
    """
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
    """``(title, text)`` of a document as BEIR holds it (see the module documentation).

    ``title`` is the ``title`` field, ``""`` when the document has none; ``text`` is the ``text`` field
    when it is a string, else ``default_text()``. Neither is re-normalised.
    """
    title = getattr(doc, "title", "") or ""
    text = doc.text if isinstance(getattr(doc, "text", None), str) else doc.default_text()
    return title, text


def document_text(doc, normalise: bool = False) -> str:
    """The text a runner indexes, encodes or scores for a document (see the module documentation).

    Parameters
    ----------
    doc : namedtuple
        A document of an ir_datasets dataset.
    normalise : bool
        Collapse every run of whitespace into one space (:func:`normalise_text`), as ``search rerank``
        does; by default the text is returned as the dataset gives it.

    Returns
    -------
    str
        ``default_text()`` (``text`` when the document has no ``default_text``), preceded by
        ``title + "\\n"`` when the document has a non-empty title the text does not start with.
    """
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
    """Bytes of the file a dataset's documents are read from, when its documents say so without reading it.

    The datasets of the suite (:class:`ir_datasets_ext.util.StoredDocs`) tell the size of their corpus file;
    other datasets give ``None``. Used to estimate the disk space an index of the documents takes.
    """
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
