"""Validate a TREC run against a registered dataset before anything is scored (docs/evaluation.md): each problem
with its line under a kind of :data:`KINDS`, at most :data:`MAX_LISTED` listed per kind, all counted."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.files import atomic_writer
from ..io.jsonfile import open_regular
from ..io.run_columns import RunColumns, parse_columns, parse_lines, read_run_bytes, row_lines

__all__ = ["MAX_LISTED", "KINDS", "ValidationReport", "validate_run", "DocIdSet", "doc_id_set"]

#: Problems listed per kind (all are counted).
MAX_LISTED = 20
#: Reading stops after this many malformed lines (columns, encoding, rank, score): a file that is not a run.
MAX_MALFORMED = 1000

KINDS = ("size", "encoding", "columns", "rank", "score", "duplicate", "rank-order", "unknown-query",
         "unknown-document", "empty")
#: How a count of each kind reads in a summary: (one, several), ``{n}`` the count (``1 encoding problem``).
_COUNTED = {
    "size": ("{n} size limit exceeded", "{n} size limits exceeded"),
    "encoding": ("{n} encoding problem", "{n} encoding problems"),  # not UTF-8, a byte-order mark, broken gzip
    "columns": ("{n} line without 6 columns", "{n} lines without 6 columns"),
    "rank": ("{n} rank not an integer", "{n} ranks not integers"),
    "score": ("{n} score not a finite number", "{n} scores not finite numbers"),
    "duplicate": ("{n} duplicate (query, document) pair", "{n} duplicate (query, document) pairs"),
    "rank-order": ("{n} rank out of order with its score", "{n} ranks out of order with their scores"),
    "unknown-query": ("{n} unknown query id", "{n} unknown query ids"),
    "unknown-document": ("{n} unknown document id", "{n} unknown document ids"),
    "empty": ("no line", "no line"),
}


def count_text(kind: str, count: int) -> str:
    """A problem count in words: ``1 encoding problem``, ``3 unknown query ids``, ``no line``."""
    one, several = _COUNTED[kind]
    return (one if count == 1 else several).format(n=count)


@dataclass
class ValidationReport:
    """The outcome of :func:`validate_run`."""

    dataset: str
    run: str
    lines: int = 0
    queries: int = 0
    problems: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    missing_queries: list[str] = field(default_factory=list)
    dataset_queries: int = 0
    seconds_doc_check: float = 0.0
    #: Why reading stopped before the end of the file (empty: it did not).
    stopped: str = ""
    outside_subset: list[str] = field(default_factory=list)
    whole_dataset: str | None = None

    @property
    def valid(self) -> bool:
        return not any(self.counts.values())

    def add(self, kind: str, line: int, message: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        listed = self.problems.setdefault(kind, [])
        if len(listed) < MAX_LISTED:
            listed.append((line, message))

    def summary(self) -> str:
        """One line: valid, or the problem counts by kind."""
        if self.valid:
            outside = (f"; {len(self.outside_subset)} of them are queries of {self.whole_dataset} outside "
                       f"{self.dataset}, left out" if self.outside_subset else "")
            return f"{self.run}: valid run for {self.dataset} ({self.lines} lines, {self.queries} queries{outside})"
        kinds = ", ".join(count_text(k, self.counts[k]) for k in KINDS if self.counts.get(k))
        return f"{self.run}: invalid run for {self.dataset}: {kinds}"

    def problem_lines(self, limit: int | None = None) -> list[str]:
        """``path:line: [kind] message`` for the listed problems, by kind, at most ``limit`` in all."""
        out = []
        for kind in KINDS:
            for line, message in self.problems.get(kind, []):
                out.append(f"{self.run}:{line}: [{kind}] {message}" if line else f"{self.run}: [{kind}] {message}")
            more = self.counts.get(kind, 0) - len(self.problems.get(kind, []))
            if more > 0:
                out.append(f"{self.run}: [{kind}] ... and {more} more")
        if self.stopped:
            out.append(f"{self.run}: {self.stopped}")
        return out[:limit]

    def to_text(self) -> str:
        lines = [self.summary(), *("  " + p for p in self.problem_lines())]
        if self.missing_queries:
            shown = ", ".join(self.missing_queries[:MAX_LISTED])
            more = len(self.missing_queries) - MAX_LISTED
            lines.append(f"  note: {len(self.missing_queries)} of {self.dataset_queries} dataset queries have no "
                         f"result (they score 0 on standard measures): {shown}" + (f", ... {more} more" if more > 0 else ""))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"dataset": self.dataset, "run": self.run, "valid": self.valid, "lines": self.lines,
                "queries": self.queries, "counts": {k: self.counts[k] for k in KINDS if self.counts.get(k)},
                "problems": {k: [{"line": line, "message": msg} for line, msg in self.problems[k]]
                             for k in KINDS if self.problems.get(k)},
                "stopped": self.stopped or None,
                "missing_queries": len(self.missing_queries),
                "missing_query_ids": self.missing_queries[:MAX_LISTED],
                "outside_subset": len(self.outside_subset), "whole_dataset": self.whole_dataset}

    def error_message(self, limit: int = 10) -> str:
        """The message of the :class:`UserError` raised for an invalid run (one paragraph)."""
        listed = self.problem_lines()
        text = "; ".join(listed[:limit])
        if len(listed) > limit:
            text += f"; ... ({len(listed) - limit} more listed by 'negplugins validate')"
        return f"{self.summary()}; not scored: {text}"


# -- document id sets --------------------------------------------------------------------------------

_EXACT_WIDTH = 24


class DocIdSet:
    """A sorted array of document ids (or of their 64-bit hashes), for bulk membership tests."""

    def __init__(self, keys: np.ndarray, hashed: bool):
        self.keys = keys
        self.hashed = hashed

    @staticmethod
    def _hash(ids) -> np.ndarray:
        return np.fromiter((int.from_bytes(hashlib.blake2b(i.encode("utf-8"), digest_size=8).digest(), "little")
                            for i in ids), dtype=np.uint64, count=len(ids))

    @staticmethod
    def _storable(encoded: bytes, width: int) -> bool:
        """Whether an ``S{width}`` array holds ``encoded`` as it is (it drops trailing NUL bytes)."""
        return 0 < len(encoded) <= width and not encoded.endswith(b"\0")

    @classmethod
    def from_ids(cls, ids: list[str]) -> "DocIdSet":
        encoded = [i.encode("utf-8") for i in ids]
        width = max(max(map(len, encoded), default=1), 1)
        if width <= _EXACT_WIDTH and all(cls._storable(e, width) or not e for e in encoded):
            return cls(np.unique(np.array(encoded, dtype=f"S{width}")), hashed=False)  # sorted, deduplicated
        return cls(np.unique(cls._hash(ids)), hashed=True)

    def contains(self, ids: list[str]) -> np.ndarray:
        """Boolean array: is each id in the set (compared byte for byte)."""
        if not ids or len(self.keys) == 0:
            return np.zeros(len(ids), dtype=bool)
        if self.hashed:
            query = self._hash(ids)
        else:
            encoded = [i.encode("utf-8") for i in ids]
            width = self.keys.dtype.itemsize
            unstorable = np.array([not self._storable(e, width) for e in encoded], dtype=bool)
            query = np.array([b"" if bad else e for e, bad in zip(encoded, unstorable)], dtype=f"S{width}")
        positions = np.searchsorted(self.keys, query)
        positions[positions == len(self.keys)] = 0
        found = self.keys[positions] == query
        if not self.hashed:
            found &= ~unstorable
        return found

    def __len__(self):
        return len(self.keys)

    def save(self, path: Path) -> None:
        with atomic_writer(path, "wb") as f:
            np.savez(f, keys=self.keys, hashed=np.array(self.hashed))

    @classmethod
    def load(cls, path: Path) -> "DocIdSet":
        """Read a saved set; ValueError when the file is not one :meth:`save` wrote or its keys are not sorted."""
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, hashed = data["keys"], data["hashed"]
        except (OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as error:
            raise ValueError(f"{path}: not a document id set ({error})") from None
        if hashed.shape != () or keys.ndim != 1 or (keys.dtype.kind != "S" and keys.dtype != np.uint64) \
                or bool(hashed) != (keys.dtype == np.uint64):
            raise ValueError(f"{path}: not a document id set (keys {keys.dtype} {keys.shape})")
        if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            raise ValueError(f"{path}: document id set not sorted")
        return cls(keys, bool(hashed))


def doc_id_set(dataset_id: str, dataset=None) -> DocIdSet:
    """The document ids of a dataset's corpus, cached on disk after the first call."""
    import ir_datasets

    dataset = dataset if dataset is not None else datasets.load(dataset_id)
    namespace = dataset.docs_namespace() or datasets.docs_root_id(dataset_id, dataset)
    path = Path(ir_datasets.util.home_path()) / "negplugins" / "docids" / f"{datasets.slug(namespace)}.npz"
    if path.is_file():
        try:
            return DocIdSet.load(path)
        except ValueError as error:  # damaged (a killed writer of an old version, a disk error): rebuilt
            logging.getLogger(__name__).warning("rebuilding the document id cache: %s", error)
    id_set = DocIdSet.from_ids([doc.doc_id for doc in dataset.docs_iter()])
    id_set.save(path)
    return id_set


# -- validation --------------------------------------------------------------------------------------

def validate_run(dataset_id: str, run_path: str | os.PathLike, *, dataset=None, check_documents: bool = True,
                 return_run: bool = False):
    """The :class:`ValidationReport` of ``run_path`` for ``dataset_id`` (with ``return_run``, and the
    :class:`~negplugins.io.run_columns.RunColumns` of its well-formed lines); UserError for no regular file."""
    path = Path(run_path)
    dataset = dataset if dataset is not None else datasets.load(dataset_id)
    if not path.exists():
        raise UserError(f"{path}: run file not found")
    if not path.is_file():
        open_regular(path, "run file").close()  # raises, naming what the path is
    report = ValidationReport(dataset=dataset_id, run=str(run_path))
    columns, lines = _read(path, report)
    repeated = _check_duplicates(columns, lines, report, first_at=not return_run)
    _check_rank_order(columns, ~repeated, lines, report)
    _check_queries(dataset_id, dataset, columns, lines, report)
    if check_documents and dataset.has_docs() and columns.lines:
        _check_documents(dataset_id, dataset, run_path, columns, repeated if return_run else None, lines, report)
    return (report, columns) if return_run else report


def _read(path: Path, report: ValidationReport):
    """The run's columns, and a function giving the line number of each row; reading problems go to ``report``."""
    data, stopped = read_run_bytes(path)
    malformed = out_of_range = 0

    def record(kind, number, message, counts=True):
        nonlocal malformed, out_of_range
        report.add(kind, number, message)
        if not counts:
            out_of_range += 1
            return False
        malformed += 1
        if malformed > MAX_MALFORMED:
            report.stopped = f"reading stopped at line {number}, after {MAX_MALFORMED} malformed lines (not a run?)"
        return malformed > MAX_MALFORMED

    columns = parse_columns(data)
    if columns is None:
        columns = parse_lines(data, record)
    if stopped is not None and not report.stopped:
        report.add(stopped.kind, stopped.line, stopped.reason)
    report.lines = columns.lines + out_of_range + sum(report.counts.get(k, 0) for k in ("columns", "rank", "score"))
    report.queries = len(columns.query_ids)
    if report.lines == 0 and not report.counts.get("size") and not report.counts.get("encoding"):
        report.add("empty", 0, "the run holds no line")

    @functools.cache
    def lines() -> np.ndarray:
        return columns.line if columns.line is not None else row_lines(data)

    return columns, lines


def _check_duplicates(columns: RunColumns, lines, report: ValidationReport, first_at: bool) -> np.ndarray:
    """Report each row repeating an earlier (query, document) pair; the mask of those rows."""
    key = columns.query * max(len(columns.doc_ids), 1) + columns.doc
    repeated = np.zeros(len(key), dtype=bool)
    ordered = np.sort(key)
    if not np.any(ordered[1:] == ordered[:-1]):
        return repeated
    order = np.argsort(key, kind="stable")
    same = np.r_[False, key[order][1:] == key[order][:-1]]
    repeated[order[same]] = True
    first = np.empty(len(key), dtype=np.int64)
    first[order] = order[np.maximum.accumulate(np.where(same, 0, np.arange(len(key))))]
    rows = np.flatnonzero(repeated)
    docs = columns.doc_ids.take(columns.doc[rows]).to_pylist()
    for row, doc_id in zip(rows.tolist(), docs):
        where = f" (first at line {lines()[first[row]]})" if first_at else ""
        report.add("duplicate", int(lines()[row]), f"query {columns.query_ids[columns.query[row]]!r} document "
                                                   f"{doc_id!r} appears more than once{where}")
    return repeated


def _check_rank_order(columns: RunColumns, keep: np.ndarray, lines, report: ValidationReport) -> None:
    """Within a query, in rank order: a rank repeated, or a larger rank with a strictly higher score."""
    if keep.all():
        order = columns.rank_order()
    else:
        rows = np.flatnonzero(keep)
        order = rows[np.lexsort((rows, columns.rank[rows], columns.query[rows]))]
    query, rank, score = columns.query[order], columns.rank[order], columns.score[order]
    same_query = query[1:] == query[:-1]
    repeat = same_query & (rank[1:] == rank[:-1])
    higher = same_query & ~repeat & (score[1:] > score[:-1])
    for i in np.flatnonzero(repeat | higher):
        query_id, line, earlier = columns.query_ids[query[i + 1]], lines()[order[i + 1]], lines()[order[i]]
        if repeat[i]:
            report.add("rank-order", int(line), f"query {query_id!r}: rank {rank[i + 1]} repeats the rank of line "
                                                f"{earlier}")
        else:
            report.add("rank-order", int(line), f"query {query_id!r}: rank {rank[i + 1]} has score "
                                                f"{score[i + 1]:g}, higher than rank {rank[i]} (score "
                                                f"{score[i]:g}, line {earlier})")


def _check_queries(dataset_id: str, dataset, columns: RunColumns, lines, report: ValidationReport) -> None:
    """Unknown query ids (at the first line of each), dataset queries without a result, queries outside a subset."""
    known_queries = [q.query_id for q in dataset.queries_iter()]
    report.dataset_queries = len(known_queries)
    known = set(known_queries)
    if columns.lines:
        report.whole_dataset, report.outside_subset, unknown = datasets.split_outside_subset(
            dataset_id, [q for q in columns.query_ids if q not in known])
        if unknown:
            _, first_rows = np.unique(columns.query, return_index=True)
            index = {query_id: i for i, query_id in enumerate(columns.query_ids)}
            for query_id in unknown:
                report.add("unknown-query", int(lines()[first_rows[index[query_id]]]),
                           f"query id {query_id!r} is not a query of {dataset_id}")
    report.missing_queries = [q for q in known_queries if q not in columns]


def _check_documents(dataset_id, dataset, run_path, columns: RunColumns, skip, lines, report) -> None:
    """Document ids absent from the corpus, at each of their rows (but those of ``skip``)."""
    from ir_datasets_ext.download import DownloadError
    from ir_datasets_ext.util import FormatError

    start = time.perf_counter()
    try:
        id_set = doc_id_set(dataset_id, dataset)
    except (DownloadError, FormatError, OSError) as error:
        raise UserError(f"cannot read the documents of {dataset_id} to validate {run_path} ({error})") from None
    found = id_set.contains(columns.doc_ids.to_pylist())
    unknown = ~found[columns.doc] if skip is None else ~found[columns.doc] & ~skip
    rows = np.flatnonzero(unknown)
    for row, doc_id in zip(rows.tolist(), columns.doc_ids.take(columns.doc[rows]).to_pylist()):
        report.add("unknown-document", int(lines()[row]),
                   f"document id {doc_id!r} is not in the corpus of {dataset_id}")
    report.seconds_doc_check = time.perf_counter() - start


def report_json(report: ValidationReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
