"""The one reader of TREC runs: a run's bytes read once, within bounds (docs/workflow.md), into columns. pyarrow
splits a run whose every line has the plain form ``qid Q0 docid rank score tag``, ``str.split()`` any other (as
ir_measures reads it), each malformed line reported with its number."""

from __future__ import annotations

import contextlib
import gzip
import math
import os
import re
import zlib
from array import array
from collections.abc import Mapping

import numpy as np

from ..errors import UserError
from .jsonfile import open_regular

__all__ = ["BoundedReadError", "RunColumns", "max_run_bytes", "read_run_bytes", "parse_columns", "parse_lines",
           "row_lines", "split_lines"]

MAX_RUN_BYTES = 200 * 1024 * 1024
MAX_RUN_BYTES_ENV = "NEGPLUGINS_MAX_RUN_BYTES"
MAX_LINE_BYTES = 64 * 1024
BLOCK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
#: trec_eval and ir_measures read a byte-order mark as part of the first query id: every reader refuses it.
UTF8_BOM = b"\xef\xbb\xbf"
#: Bytes ``str.split()`` treats as white space besides the space and the newline; ``\r`` only before ``\n``.
_OTHER_ASCII_SPACE = b"\t\x0b\x0c\x1c\x1d\x1e\x1f"
#: UTF-8 encodings of the non-ASCII characters ``str.split()`` splits on.
_UNICODE_SPACE = re.compile(rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80")
_INT64 = (-(1 << 63), (1 << 63) - 1)


class BoundedReadError(UserError):
    """A run that cannot be read within the bounds: ``kind`` is ``size`` or ``encoding``, ``line`` 0 the file."""

    def __init__(self, path, line: int, kind: str, reason: str):
        self.path, self.line, self.kind, self.reason = str(path), line, kind, reason
        super().__init__(f"{self.path}:{line}: {reason}" if line else f"{self.path}: {reason}")


def max_run_bytes() -> int:
    """The run size bound: ``NEGPLUGINS_MAX_RUN_BYTES`` if set (a positive integer), else 200 MB."""
    value = os.environ.get(MAX_RUN_BYTES_ENV)
    if not value:
        return MAX_RUN_BYTES
    try:
        bound = int(value)
    except ValueError:
        bound = 0
    if bound < 1:
        raise UserError(f"{MAX_RUN_BYTES_ENV}={value!r}: expected a positive number of bytes")
    return bound


def read_run_bytes(path: str | os.PathLike) -> tuple[bytearray, BoundedReadError | None]:
    """A run's bytes (a gzip run's expansion) within :func:`max_run_bytes`, and the problem that stopped the reading
    if one did (the bytes then end with the last whole line before it)."""
    limit = max_run_bytes()
    with open_regular(path, "run file") as raw:
        size = os.fstat(raw.fileno()).st_size
        if size > limit:
            return bytearray(), BoundedReadError(path, 0, "size", f"file is {size} bytes, over the limit of {limit} "
                                                                  f"bytes (raise it with {MAX_RUN_BYTES_ENV})")
        is_gzip = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        data, problem = _read_blocks(path, gzip.GzipFile(fileobj=raw, mode="rb") if is_gzip else raw, limit, is_gzip)
    long_line = _first_long_line(data)
    if long_line is not None:
        start, number = long_line
        return data[:start], BoundedReadError(path, number, "size",
                                              f"line longer than {MAX_LINE_BYTES} bytes; reading stopped")
    if problem is not None:
        del data[data.rfind(b"\n") + 1:]
    return data, problem


def _read_blocks(path, stream, limit: int, is_gzip: bool) -> tuple[bytearray, BoundedReadError | None]:
    data = bytearray()
    where = "gzip stream" if is_gzip else "file"
    while True:
        try:
            block = stream.read(BLOCK_BYTES)
        except (OSError, EOFError, zlib.error) as failure:
            return data, BoundedReadError(path, data.count(b"\n") + 1, "encoding",
                                          f"cannot read the {where} ({failure}); truncated or not a run?")
        if not block:
            return data, None
        if len(data) + len(block) > limit:
            return data, BoundedReadError(path, data.count(b"\n") + 1, "size",
                                          f"{'gzip expansion' if is_gzip else 'file'} exceeds the limit of {limit} "
                                          f"bytes; reading stopped (raise it with {MAX_RUN_BYTES_ENV})")
        data += block


def _first_long_line(data) -> tuple[int, int] | None:
    """``(bytes read, line number)`` where a line over :data:`MAX_LINE_BYTES` stops the reading by blocks: at the
    line, or at the start of the block in which it passes the bound unended."""
    half = MAX_LINE_BYTES // 2
    if all(data.find(b"\n", start, start + half) >= 0 for start in range(0, len(data) - half + 1, half)):
        return None  # every aligned stretch of half the bound holds a newline: no line passes the bound
    view = np.frombuffer(data, dtype=np.uint8)
    starts = np.r_[0, np.flatnonzero(view == 10) + 1]
    ends = np.r_[starts[1:] - 1, len(view)]
    stops = []
    for index in np.flatnonzero(ends - starts > MAX_LINE_BYTES).tolist():
        start, end = int(starts[index]), int(ends[index])
        block = (start + MAX_LINE_BYTES) // BLOCK_BYTES
        if end == len(view) or block < end // BLOCK_BYTES:
            stops.append((block, 0, data.rfind(b"\n", 0, block * BLOCK_BYTES) + 1, index + 1))
        else:
            stops.append((end // BLOCK_BYTES, 1, start, index + 1))
    return min(stops)[2:] if stops else None


def _plain_form(data: bytes) -> bool:
    """True when splitting on single spaces and newlines reads the lines as ``str.split()`` does."""
    if data.startswith(UTF8_BOM) or any(bytes([byte]) in data for byte in _OTHER_ASCII_SPACE):
        return False
    carriage = data.count(b"\r")
    if carriage and carriage != data.count(b"\r\n"):
        return False
    if not data.isascii():
        try:  # pyarrow checks only the columns kept, Python decodes each line
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        if _UNICODE_SPACE.search(data):
            return False
    return True


def parse_columns(data) -> RunColumns | None:
    """Columns of a run whose every line has the plain form; ``None`` otherwise (:func:`parse_lines` reads it)."""
    import pyarrow as pa
    from pyarrow import csv

    if data.isspace() or not _plain_form(data):
        return None
    # pandas first, where installed: pyarrow imports it on its first conversion to NumPy, from C++ that drops an
    # exception raised meanwhile (Ctrl-C's), and the command went on as if no signal had come
    with contextlib.suppress(ImportError):
        import pandas  # noqa: F401
    import pyarrow.compute as pc

    names = ["query", "q0", "doc", "rank", "score", "tag"]
    try:
        table = csv.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=csv.ReadOptions(column_names=names),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                                           double_quote=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=csv.ConvertOptions(
                column_types={"query": pa.string(), "q0": pa.binary(), "doc": pa.string(),
                              "rank": pa.dictionary(pa.int32(), pa.string()), "score": pa.float64(),
                              "tag": pa.binary()},
                null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=True))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    # an empty column: two spaces in a row, a space opening or closing the line
    if table.num_rows == 0 or any(pc.min(pc.binary_length(table.column(name))).as_py() == 0
                                  for name in ("query", "q0", "doc", "tag")):
        return None
    table = table.drop_columns(["q0", "tag"])  # read only to be checked
    rank = _ranks(table.column("rank"))
    if rank is None:
        return None
    score = table.column("score").to_numpy()
    if not np.isfinite(score).all():
        return None
    queries = table.column("query").combine_chunks().dictionary_encode()
    docs = table.column("doc").combine_chunks().dictionary_encode()
    return RunColumns(queries.dictionary.to_pylist(), queries.indices.to_numpy().astype(np.int64),
                      docs.dictionary, docs.indices.to_numpy().astype(np.int64), rank, score)


def _ranks(column) -> np.ndarray | None:
    """The rank column as integers read by Python's ``int()`` (pyarrow's parser also reads ``0x1f``); None where
    one is not an integer of 64 bits."""
    parts = []
    for chunk in column.chunks:
        try:
            values = [int(text) for text in chunk.dictionary.to_pylist()]
        except ValueError:
            return None
        if values and not _INT64[0] <= min(values) <= max(values) <= _INT64[1]:
            return None
        parts.append(np.array(values, dtype=np.int64)[chunk.indices.to_numpy()])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def parse_lines(data, on_problem, int64_ranks: bool = True) -> RunColumns:
    """Columns of any run split by ``str.split()``, each row's line number in ``line``; a malformed line goes to
    ``on_problem(kind, number, message)`` (a true return stops the reading), a rank beyond 64 bits too, with a fourth
    argument False, unless ``int64_ranks`` is false (it then reads as 0)."""
    import pyarrow as pa

    queries: dict[str, int] = {}
    docs: dict[str, int] = {}
    query, doc, rank, line, score = array("q"), array("q"), array("q"), array("q"), array("d")
    for number, raw in split_lines(data):
        fields, problem = _fields(number, raw)
        if problem is not None:
            if on_problem(*problem):
                break
            continue
        if fields is None:
            continue
        query_id, doc_id, rank_value, score_value = fields
        if not _INT64[0] <= rank_value <= _INT64[1]:
            if int64_ranks:
                on_problem("rank", number, f"rank {rank_value} is out of range", False)
                continue
            rank_value = 0
        query.append(queries.setdefault(query_id, len(queries)))
        doc.append(docs.setdefault(doc_id, len(docs)))
        rank.append(rank_value)
        score.append(score_value)
        line.append(number)
    columns = RunColumns(list(queries), np.frombuffer(query, dtype=np.int64), pa.array(list(docs), pa.string()),
                         np.frombuffer(doc, dtype=np.int64), np.frombuffer(rank, dtype=np.int64),
                         np.frombuffer(score, dtype=np.float64))
    columns.line = np.frombuffer(line, dtype=np.int64)
    return columns


def split_lines(data):
    """``(number, line)`` of a run's lines, blocks of blank lines skipped in one step."""
    number, start = 0, 0
    while start < len(data):
        end = len(data) if start + BLOCK_BYTES >= len(data) else data.rfind(b"\n", start, start + BLOCK_BYTES) + 1
        block = data[start:end or len(data)]
        if not block.isspace():
            yield from enumerate(block.split(b"\n"), start=number + 1)
        number += block.count(b"\n")
        start += len(block)


def _fields(number: int, raw) -> tuple[tuple | None, tuple | None]:
    """``((query_id, doc_id, rank, score), None)`` of a well-formed line, ``(None, (kind, number, message))`` of a
    malformed one, ``(None, None)`` of a blank one."""
    if number == 1 and raw.startswith(UTF8_BOM):
        return None, ("encoding", number, "the file starts with a UTF-8 byte-order mark; a run is ASCII or UTF-8 "
                                          "without one (trec_eval would read it as part of the first query id)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, ("encoding", number, "not UTF-8")
    fields = text.split()
    if not fields:
        return None, None
    if len(fields) != 6:
        return None, ("columns", number, f"expected 6 columns 'qid Q0 docid rank score tag', got {len(fields)}: "
                                         f"{text.strip()[:60]!r}")
    query_id, _, doc_id, rank, score, _ = fields
    try:
        rank_value = int(rank)
    except ValueError:
        return None, ("rank", number, f"rank {rank[:30]!r} is not an integer")
    try:
        value = float(score)
    except ValueError:
        return None, ("score", number, f"score {score[:30]!r} is not a number")
    if not math.isfinite(value):
        return None, ("score", number, f"score {score[:30]!r} is not finite")
    return (query_id, doc_id, rank_value, value), None


def row_lines(data) -> np.ndarray:
    """The line number of each row :func:`parse_columns` read from ``data`` (its lines not empty)."""
    view = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(view == 10)
    starts = np.r_[0, newlines + 1]
    ends = np.r_[newlines, len(view)]
    carriage = np.zeros(len(ends), dtype=bool)
    carriage[:-1] = view[np.maximum(ends[:-1] - 1, 0)] == 13
    return np.flatnonzero(ends - starts - carriage > 0) + 1


class RunColumns(Mapping):
    """A run as columns, one row per line, indexing ``query_ids`` (in order of first appearance) and ``doc_ids`` (a
    pyarrow string array); as a mapping, ``{query_id: {doc_id: score}}`` in the order of the file."""

    def __init__(self, query_ids: list[str], query: np.ndarray, doc_ids, doc: np.ndarray, rank: np.ndarray,
                 score: np.ndarray):
        self.query_ids, self.query, self.doc_ids, self.doc = query_ids, query, doc_ids, doc
        self.rank, self.score = rank, score
        self._known = set(query_ids)
        self.line: np.ndarray | None = None  # each row's line number, where known
        self._dict: dict | None = None
        self._order: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.query_ids)

    def __iter__(self):
        return iter(self.query_ids)

    def __contains__(self, query_id) -> bool:
        return query_id in self._known

    def __getitem__(self, query_id):
        return self.as_dict()[query_id]

    @property
    def lines(self) -> int:
        return len(self.query)

    def rank_order(self) -> np.ndarray:
        """Row positions grouped by query (in order of first appearance), by rank within a query, then by line."""
        if self._order is None:
            query, rank = self.query, self.rank
            in_order = len(query) < 2 or bool(np.all((query[1:] > query[:-1])
                                                     | ((query[1:] == query[:-1]) & (rank[1:] > rank[:-1]))))
            self._order = np.arange(len(query)) if in_order else np.lexsort((np.arange(len(query)), rank, query))
        return self._order

    def _rows(self, rows: np.ndarray) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}`` of ``rows`` (positions grouped by query)."""
        docs = self.doc_ids.take(self.doc[rows]).to_pylist()
        scores = self.score[rows].tolist()
        query = self.query[rows]
        cuts = np.flatnonzero(query[1:] != query[:-1]) + 1
        starts = [0, *cuts.tolist()]
        ends = [*cuts.tolist(), len(rows)]
        names = self.query_ids
        return {names[query[s]]: dict(zip(docs[s:e], scores[s:e])) for s, e in zip(starts, ends)}

    def as_dict(self) -> dict[str, dict[str, float]]:
        """The whole run, ``{query_id: {doc_id: score}}``, each query's documents in the order of the file."""
        if self._dict is None:
            rows = np.argsort(self.query, kind="stable")
            self._dict = self._rows(rows)
        return self._dict

    def top(self, k: int) -> dict[str, dict[str, float]]:
        """Each query's documents whose single-precision score reaches its ``k``-th highest: what any ranking's top
        ``k`` can hold, ties included, so a cutoff measure gets its value on the whole run (ranks validated)."""
        order = self.rank_order()
        query = self.query[order]
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
        sizes = np.diff(np.r_[starts, len(query)])
        kth = self.score[order][starts + np.minimum(sizes, k) - 1].astype(np.float32)
        group = np.repeat(np.arange(len(starts)), sizes)
        keep = self.score[order].astype(np.float32) >= kth[group]
        return self._rows(order[keep])

    def without_queries(self, query_ids) -> RunColumns:
        """The run without the rows of ``query_ids``."""
        drop = set(query_ids)
        if not drop:
            return self
        gone = np.array([q in drop for q in self.query_ids], dtype=bool)
        rows = ~gone[self.query]
        remap = np.cumsum(~gone) - 1
        return RunColumns([q for q in self.query_ids if q not in drop], remap[self.query[rows]], self.doc_ids,
                          self.doc[rows], self.rank[rows], self.score[rows])
