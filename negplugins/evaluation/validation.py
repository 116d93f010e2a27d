"""Validate a TREC run against a registered dataset before anything is scored.

Checks, each a *kind* of problem reported with line numbers:

``size``            the file (or its gzip expansion) exceeds the byte limit, or a line is absurdly long
``encoding``        a line is not UTF-8, the file starts with a UTF-8 byte-order mark, or its gzip stream is broken
``columns``         a line does not have six white-space separated columns
``rank``            the rank column is not an integer
``score``           the score column is not a finite number
``duplicate``       the same (query, document) pair appears twice
``rank-order``      within a query, ranks are repeated or a larger rank has a strictly higher score
                    (ranks must increase as scores decrease or stay equal)
``unknown-query``   a query id the dataset does not know (one problem per query id, at its first line)
``unknown-document`` a document id absent from the dataset's corpus
``empty``           the run holds no line

Dataset queries with no result in the run are reported too, but do not make a run invalid (they score
zero on standard measures). Listings are capped (:data:`MAX_LISTED` per kind); counts are complete,
except that reading stops after :data:`MAX_MALFORMED` malformed lines (a file that is not a run).

Document ids are checked against a compact id set built once per corpus and cached on disk under the
ir_datasets home (``$IR_DATASETS_HOME/negplugins/docids/<namespace>.npz``): a sorted NumPy array of
the ids (exact, when every id is at most 24 bytes and none ends with a NUL byte, which NumPy's fixed-width
``S`` arrays drop) or of their 64-bit BLAKE2b hashes (other ids), looked up in bulk with ``numpy.searchsorted``.

Files are read once, within the bounds of the suite's run reader (:mod:`negplugins.io.inputs`): at most
:data:`MAX_BYTES` bytes (compressed size and gzip expansion alike, also for gzip bombs) and
:data:`MAX_LINE_BYTES` per line, gzip recognised by its magic bytes. A run whose lines all have the plain form is
parsed into columns (:mod:`negplugins.io.run_columns`) and checked with array operations; any other run, and any
run in which a check fails, is read line by line from the same bytes, which names every problem with its line
(see :func:`validate_run`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zipfile
import zlib
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.files import atomic_writer
from ..io.inputs import MAX_RUN_BYTES, BoundedReadError, max_run_bytes, open_regular
from ..io.run_columns import RunColumns, parse_columns, read_run_bytes
from ..io.trec import parse_run_lines

__all__ = ["MAX_BYTES", "MAX_LISTED", "KINDS", "ValidationReport", "validate_run", "DocIdSet", "doc_id_set"]

#: Largest run accepted, in bytes, compressed or uncompressed (200 MB); override with
#: ``NEGPLUGINS_MAX_RUN_BYTES``.
MAX_BYTES = MAX_RUN_BYTES
#: Problems listed per kind (all are counted).
MAX_LISTED = 20

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



def max_bytes() -> int:
    """The run size bound (:func:`negplugins.io.inputs.max_run_bytes`)."""
    return max_run_bytes()


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
        return out if limit is None else out[:limit]

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


# -- bounded reading ---------------------------------------------------------------------------------

#: Reading stops after this many malformed lines (columns, encoding, rank, score): a file that is not
#: a run is rejected without parsing all of it. Counts of the other kinds stay complete.
MAX_MALFORMED = 1000


class _TooManyMalformed(Exception):
    pass


def read_run_lines(path: Path, report: ValidationReport, data: bytes | None = None):
    """Parse lines; yield ``(line, qid, docid, rank, score)`` for well-formed lines, reporting the rest.

    The run is read by the one bounded reader of the suite (:func:`negplugins.io.trec.parse_run_lines`);
    a bound passed or a broken gzip stream is reported (``size`` / ``encoding``) and stops reading. ``data``: the
    file's content already read (:func:`~negplugins.io.run_columns.read_run_bytes`).
    """
    malformed = 0

    def record(kind, number, message):
        nonlocal malformed
        malformed += 1
        report.add(kind, number, message)
        if malformed > MAX_MALFORMED:
            report.stopped = f"reading stopped at line {number}, after {MAX_MALFORMED} malformed lines (not a run?)"
            raise _TooManyMalformed

    try:
        for item in parse_run_lines(path, record, data=data):
            report.lines += 1
            yield item
    except BoundedReadError as error:
        report.add(error.kind, error.line, error.reason)
    except _TooManyMalformed:
        pass
    report.lines += sum(report.counts.get(kind, 0) for kind in ("columns", "rank", "score"))


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
            keys = np.array(encoded, dtype=f"S{width}")
            hashed = False
        else:
            keys = cls._hash(ids)
            hashed = True
        keys = np.unique(keys)  # sorted, deduplicated
        return cls(keys, hashed)

    def contains(self, ids: list[str]) -> np.ndarray:
        """Boolean array: is each id in the set (compared byte for byte)."""
        if not ids:
            return np.zeros(0, dtype=bool)
        if self.hashed:
            query = self._hash(ids)
        else:
            encoded = [i.encode("utf-8") for i in ids]
            width = self.keys.dtype.itemsize
            unstorable = np.array([not self._storable(e, width) for e in encoded], dtype=bool)
            query = np.array([b"" if bad else e for e, bad in zip(encoded, unstorable)], dtype=f"S{width}")
        if len(self.keys) == 0:
            return np.zeros(len(ids), dtype=bool)
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
        """Read a saved set.

        Raises
        ------
        ValueError
            The file is not a set saved by :meth:`save` (truncated, overwritten, other arrays), or its
            keys are not sorted and unique.
        """
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


def _cache_path(dataset_id: str, dataset) -> Path:
    import ir_datasets

    namespace = dataset.docs_namespace() or datasets.docs_root_id(dataset_id, dataset)
    return Path(ir_datasets.util.home_path()) / "negplugins" / "docids" / f"{datasets.slug(namespace)}.npz"


def doc_id_set(dataset_id: str, dataset=None) -> DocIdSet:
    """The document ids of a dataset's corpus, cached on disk after the first call."""
    dataset = dataset if dataset is not None else datasets.load(dataset_id)
    path = _cache_path(dataset_id, dataset)
    if path.is_file():
        try:
            return DocIdSet.load(path)
        except ValueError as error:  # damaged (a killed writer of an old version, a disk error): rebuilt
            logging.getLogger(__name__).warning("rebuilding the document id cache: %s", error)
    ids = [doc.doc_id for doc in dataset.docs_iter()]
    id_set = DocIdSet.from_ids(ids)
    id_set.save(path)
    return id_set


# -- validation --------------------------------------------------------------------------------------

_DOC_BATCH = 1 << 16
_INT64 = (-(1 << 63), (1 << 63) - 1)


class _Lines:
    """What validation keeps of each well-formed line: five numbers, in compact arrays.

    Query ids are interned (``queries``: id -> index, in order of first appearance); a (query,
    document) pair is kept as its 64-bit hash, and pairs whose hashes collide are compared exactly
    on a second reading of the file (:func:`_confirm_duplicates`).
    """

    def __init__(self):
        self.queries: dict[str, int] = {}
        self.query = array("l")
        self.rank = array("q")
        self.score = array("d")
        self.line = array("q")
        self.pair = array("q")

    def add(self, number: int, query_id: str, doc_id: str, rank: int, score: float) -> None:
        index = self.queries.setdefault(query_id, len(self.queries))
        self.query.append(index)
        self.rank.append(rank)
        self.score.append(score)
        self.line.append(number)
        self.pair.append(hash((query_id, doc_id)))

    def arrays(self):
        return (np.frombuffer(self.query, dtype=np.int64) if self.query.itemsize == 8
                else np.asarray(self.query, dtype=np.int64),
                np.frombuffer(self.rank, dtype=np.int64), np.frombuffer(self.score, dtype=np.float64),
                np.frombuffer(self.line, dtype=np.int64), np.frombuffer(self.pair, dtype=np.int64))


def _corpus_ids(dataset_id, dataset, run_path) -> DocIdSet:
    """:func:`doc_id_set`, a corpus that cannot be read being a UserError naming the run it was read for."""
    from ir_datasets_ext.download import DownloadError
    from ir_datasets_ext.util import FormatError

    try:
        return doc_id_set(dataset_id, dataset)
    except (DownloadError, FormatError, OSError) as error:
        raise UserError(f"cannot read the documents of {dataset_id} to validate {run_path} ({error})") from None


class _DocumentCheck:
    """Checks document ids against the corpus in batches while the run is read (no id kept after)."""

    def __init__(self, dataset_id: str, dataset, run_path, report: ValidationReport):
        self.dataset_id, self.dataset, self.run_path, self.report = dataset_id, dataset, run_path, report
        self.id_set = None
        self.pending: list[tuple[int, str]] = []

    def add(self, number: int, doc_id: str) -> None:
        self.pending.append((number, doc_id))
        if len(self.pending) >= _DOC_BATCH:
            self.flush()

    def flush(self) -> None:
        import time

        if not self.pending:
            return
        start = time.perf_counter()
        if self.id_set is None:
            self.id_set = _corpus_ids(self.dataset_id, self.dataset, self.run_path)
        found = self.id_set.contains([doc_id for _, doc_id in self.pending])
        for (number, doc_id), ok in zip(self.pending, found.tolist()):
            if not ok:
                self.report.add("unknown-document", number,
                                f"document id {doc_id!r} is not in the corpus of {self.dataset_id}")
        self.pending = []
        self.report.seconds_doc_check += time.perf_counter() - start


def _confirm_duplicates(path: Path, lines: set[int], data: bytes | None = None) -> dict[int, tuple[int, str]]:
    """Re-read the ``lines`` whose pair hashes collide; those repeating an earlier pair exactly.

    Returns ``{line: (first line of the same pair, doc id)}``.
    """
    first: dict[tuple[str, str], int] = {}
    confirmed: dict[int, tuple[int, str]] = {}
    try:
        for number, query_id, doc_id, _, _ in parse_run_lines(path, lambda *problem: None, data=data):
            if number in lines:
                earlier = first.setdefault((query_id, doc_id), number)
                if earlier != number:
                    confirmed[number] = (earlier, doc_id)
    except BoundedReadError:  # the first reading stopped there too, and reported it
        pass
    return confirmed


def validate_run(dataset_id: str, run_path: str | os.PathLike, *, dataset=None, check_documents: bool = True,
                 return_run: bool = False):
    """Validate ``run_path`` for ``dataset_id``, reading the file once.

    The file is read into memory once (:func:`~negplugins.io.run_columns.read_run_bytes`) and, where every line
    has the plain form, parsed into columns and checked with array operations (:func:`_check_columns`). Only
    where that finds a problem (or a line out of the plain form, or a bound passed) are the same bytes read line
    by line (:func:`_validate_lines`), to name each problem with its line: the messages are those of the line
    reader either way.

    Returns the :class:`ValidationReport`; with ``return_run=True`` a pair ``(report, run)`` where
    ``run`` is ``{query_id: {doc_id: score}}`` of the well-formed lines (a
    :class:`~negplugins.io.run_columns.RunColumns` when the columns were read).

    Raises
    ------
    UserError
        Unknown dataset, or the run file is missing or not a regular file.
    """
    path = Path(run_path)
    dataset = dataset if dataset is not None else datasets.load(dataset_id)
    if not path.exists():
        raise UserError(f"{path}: run file not found")
    if not path.is_file():
        open_regular(path, "run file").close()  # raises, naming what the path is
    data = read_run_bytes(path)
    columns = parse_columns(data) if data is not None else None
    if columns is not None:
        report = ValidationReport(dataset=dataset_id, run=str(run_path))
        if _check_columns(dataset_id, dataset, run_path, columns, report, check_documents):
            return (report, columns) if return_run else report
    return _validate_lines(dataset_id, dataset, path, run_path, data, check_documents, return_run)


def _check_columns(dataset_id, dataset, run_path, columns: RunColumns, report: ValidationReport,
                   check_documents: bool) -> bool:
    """Every check of the line reader on a run's columns; True (and ``report`` filled) when none fails.

    False as soon as one fails: the caller then reads the lines to name each problem.
    """
    import time

    pairs = np.sort(columns.query * max(len(columns.doc_ids), 1) + columns.doc)
    if np.any(pairs[1:] == pairs[:-1]):
        return False  # duplicate
    order = columns.rank_order()
    query, rank, score = columns.query[order], columns.rank[order], columns.score[order]
    same_query = query[1:] == query[:-1]
    if np.any(same_query & ((rank[1:] == rank[:-1]) | (score[1:] > score[:-1]))):
        return False  # rank-order
    known_queries = [q.query_id for q in dataset.queries_iter()]
    known = set(known_queries)
    whole, outside, unknown = datasets.split_outside_subset(dataset_id, [q for q in columns.query_ids
                                                                         if q not in known])
    if unknown:
        return False
    if check_documents and dataset.has_docs():
        start = time.perf_counter()
        found = _corpus_ids(dataset_id, dataset, run_path).contains(columns.doc_ids.to_pylist())
        report.seconds_doc_check = time.perf_counter() - start
        if not found.all():
            return False
    report.lines, report.queries = columns.lines, len(columns.query_ids)
    report.dataset_queries = len(known_queries)
    report.whole_dataset, report.outside_subset = whole, outside
    report.missing_queries = [q for q in known_queries if q not in columns]
    return True


def _validate_lines(dataset_id, dataset, path, run_path, data, check_documents, return_run):
    """:func:`validate_run` line by line: each problem named with its line."""
    report = ValidationReport(dataset=dataset_id, run=str(run_path))
    run: dict[str, dict[str, float]] | None = {} if return_run else None
    kept = _Lines()
    documents = _DocumentCheck(dataset_id, dataset, run_path, report) \
        if check_documents and dataset.has_docs() else None
    for number, query_id, doc_id, rank, score in read_run_lines(path, report, data):
        if not _INT64[0] <= rank <= _INT64[1]:
            report.add("rank", number, f"rank {rank} is out of range")
            continue
        if run is not None:
            docs = run.setdefault(query_id, {})
            if doc_id in docs:
                report.add("duplicate", number, f"query {query_id!r} document {doc_id!r} appears more than once")
                continue
            docs[doc_id] = score
        kept.add(number, query_id, doc_id, rank, score)
        if documents is not None:
            documents.add(number, doc_id)
    if documents is not None:
        documents.flush()
    report.queries = len(kept.queries)
    if report.lines == 0 and not report.counts.get("size") and not report.counts.get("encoding"):
        report.add("empty", 0, "the run holds no line")

    query, rank, score, line, pair = kept.arrays()
    keep = np.ones(len(line), dtype=bool)
    if run is None and len(pair):
        keep = _mark_duplicates(path, query, pair, line, kept, report, data)
    _check_rank_order(query[keep], rank[keep], score[keep], line[keep], list(kept.queries), report)

    known_queries = [q.query_id for q in dataset.queries_iter()]
    report.dataset_queries = len(known_queries)
    known = set(known_queries)
    if len(line):
        first_lines = np.full(len(kept.queries), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first_lines, query, line)
        report.whole_dataset, report.outside_subset, unknown = datasets.split_outside_subset(
            dataset_id, [q for q in kept.queries if q not in known])
        for query_id in unknown:
            report.add("unknown-query", int(first_lines[kept.queries[query_id]]),
                       f"query id {query_id!r} is not a query of {dataset_id}")
    report.missing_queries = [q for q in known_queries if q not in kept.queries]
    if return_run:
        return report, run
    return report


def _mark_duplicates(path, query, pair, line, kept, report, data=None) -> np.ndarray:
    """Report repeated (query, document) pairs; returns the mask of lines that are not repeats."""
    keep = np.ones(len(line), dtype=bool)
    ordered = np.sort(pair)
    colliding = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    if not len(colliding):
        return keep
    in_group = np.isin(pair, colliding)
    confirmed = _confirm_duplicates(Path(path), set(line[in_group].tolist()), data)
    names = list(kept.queries)
    position = {int(n): i for i, n in zip(np.flatnonzero(in_group), line[in_group])}
    for number in sorted(confirmed):
        i = position[number]
        keep[i] = False
        earlier, doc_id = confirmed[number]
        report.add("duplicate", number, f"query {names[query[i]]!r} document {doc_id!r} appears more than once "
                                        f"(first at line {earlier})")
    return keep


def _check_rank_order(query, rank, score, line, names, report) -> None:
    """Within a query, in rank order: a rank repeated, or a larger rank with a strictly higher score."""
    if len(line) < 2:
        return
    order = np.lexsort((line, rank, query))
    query, rank, score, line = query[order], rank[order], score[order], line[order]
    same_query = query[1:] == query[:-1]
    repeat = same_query & (rank[1:] == rank[:-1])
    higher = same_query & ~repeat & (score[1:] > score[:-1])
    for i in np.flatnonzero(repeat | higher):
        query_id, current = names[query[i + 1]], i + 1
        if repeat[i]:
            report.add("rank-order", int(line[current]), f"query {query_id!r}: rank {rank[current]} repeats the rank "
                                                         f"of line {line[i]}")
        else:
            report.add("rank-order", int(line[current]), f"query {query_id!r}: rank {rank[current]} has score "
                                                         f"{score[current]:g}, higher than rank {rank[i]} (score "
                                                         f"{score[i]:g}, line {line[i]})")


def report_json(report: ValidationReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
