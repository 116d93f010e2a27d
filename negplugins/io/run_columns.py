"""A TREC run read once into columns: the fast path of every run reader of the suite.

:func:`read_run_bytes` reads a run (plain or gzip) within the bounds of :mod:`negplugins.io.inputs` into one
``bytes`` object; :func:`parse_columns` splits it into columns with pyarrow's CSV reader when every line has the
plain form ``qid Q0 docid rank score tag`` (one space between columns, no column empty, no byte-order mark, ASCII
digits for the rank, a number pyarrow and Python both read the same way for the score). Anything else (tabs,
several spaces, a space opening or closing a line, a malformed line, a non-finite score, ...) returns ``None`` and
the caller reads the same bytes line by line
(:func:`negplugins.io.trec.parse_run_lines`), which names the file, the line and the problem: the line of a
problem is looked for only when there is one.

:class:`RunColumns` holds the parsed columns and is also a read-only mapping ``{query_id: {doc_id: score}}``
(built on first use), so code written for ir_measures' dict runs reads it unchanged; :meth:`RunColumns.top`
gives the scorers only the documents that cutoff measures can see.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Mapping

import numpy as np

from .inputs import GZIP_MAGIC, MAX_LINE_BYTES, UTF8_BOM, max_run_bytes, open_regular

__all__ = ["RunColumns", "read_run_bytes", "parse_columns"]

#: Bytes Python's ``str.split()`` treats as white space besides the space and the newline (a line holding one
#: is read line by line, as before). ``\r`` is accepted only before ``\n``.
_OTHER_ASCII_SPACE = b"\t\x0b\x0c\x1c\x1d\x1e\x1f"
#: UTF-8 encodings of the non-ASCII characters ``str.split()`` splits on.
_UNICODE_SPACE = re.compile(rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80")
_CHUNK = 1 << 24


def read_run_bytes(path: str | os.PathLike, limit: int | None = None) -> bytes | None:
    """The whole content of a run (its gzip expansion for a gzip file), read in one pass.

    Returns ``None`` where the bounded line reader has something to report (the file or its expansion over
    ``limit``, a broken gzip stream): the caller reads the file line by line then, for the exact message.

    Raises
    ------
    UserError
        The file is missing or not a regular file (:func:`~negplugins.io.inputs.open_regular`).
    """
    limit = max_run_bytes() if limit is None else limit
    with open_regular(path, "run file") as raw:
        if os.fstat(raw.fileno()).st_size > limit:
            return None
        data = raw.read(limit + 1)
    if len(data) > limit:
        return None
    if data[:2] != GZIP_MAGIC:
        return data
    inflater = zlib.decompressobj(wbits=31)
    parts, total, rest = [], 0, data
    try:
        while rest:  # gzip members one after another, as GzipFile reads them
            part = inflater.decompress(rest, limit + 1 - total)
            total += len(part)
            parts.append(part)
            if total > limit or inflater.unconsumed_tail:
                return None  # a bomb: the line reader names where the bound is passed
            if not inflater.eof:
                return None  # truncated
            rest = inflater.unused_data
            if rest and rest[:2] != GZIP_MAGIC:
                return None  # trailing garbage: as GzipFile decides
            inflater = zlib.decompressobj(wbits=31)
    except zlib.error:
        return None
    return b"".join(parts)


def _plain_form(data: bytes) -> bool:
    """True when splitting on single spaces and newlines reads the lines as ``str.split()`` does."""
    if data.startswith(UTF8_BOM):
        return False
    if any(byte in data for byte in (bytes([b]) for b in _OTHER_ASCII_SPACE)):
        return False
    carriage = data.count(b"\r")
    if carriage and carriage != data.count(b"\r\n"):
        return False
    if not data.isascii():
        try:  # every line is decoded by the line reader, its Q0 and tag columns too (pyarrow only checks those kept)
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        if _UNICODE_SPACE.search(data):
            return False
    return _longest_line(data) <= MAX_LINE_BYTES


def _longest_line(data: bytes) -> int:
    """Bytes of the longest line (newline excluded), counted in chunks of the file."""
    longest, start = 0, 0
    view = np.frombuffer(data, dtype=np.uint8)
    for offset in range(0, len(view), _CHUNK):
        ends = np.flatnonzero(view[offset:offset + _CHUNK] == 10) + offset
        if len(ends):
            longest = max(longest, int(ends[0] - start), int(np.diff(ends).max(initial=0)) - 1)
            start = int(ends[-1]) + 1
    return max(longest, len(view) - start)


def parse_columns(data: bytes) -> RunColumns | None:
    """Columns of a run whose every line has the plain form; ``None`` otherwise (read it line by line)."""
    import pyarrow as pa
    from pyarrow import csv

    if not _plain_form(data):
        return None
    _import_pandas_first()
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
    if table.num_rows == 0 or _has_empty_column(table):
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


def _has_empty_column(table) -> bool:
    """True when a line has an empty column: two spaces in a row, or a space opening or closing the line, where
    ``str.split()`` reads one column fewer (an empty rank or score is not read as a number)."""
    import pyarrow.compute as pc

    return any(pc.min(pc.binary_length(table.column(name))).as_py() == 0 for name in ("query", "q0", "doc", "tag"))


def _import_pandas_first() -> None:
    """Import pandas, when installed, before pyarrow does: pyarrow imports it on its first conversion to NumPy, from
    C++ that drops an exception raised meanwhile (Ctrl-C's), and the command went on as if no signal had come."""
    try:
        import pandas  # noqa: F401
    except ImportError:  # pyarrow will not import it either
        pass


def _ranks(column) -> np.ndarray | None:
    """The rank column as integers, each distinct text read by Python's ``int()`` as the line reader reads it
    (pyarrow's own integer parser also reads ``0x1f``); None where one is not an integer of 64 bits."""
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


_INT64 = (-(1 << 63), (1 << 63) - 1)


class RunColumns(Mapping):
    """A run as columns, one row per line: query index, document index, rank and score.

    ``query_ids`` are the run's query ids in order of first appearance and ``query`` each row's index into
    them; ``doc_ids`` (a pyarrow string array) the distinct document ids and ``doc`` each row's index into
    them. As a mapping it is ``{query_id: {doc_id: score}}`` in the order of the file.
    """

    def __init__(self, query_ids: list[str], query: np.ndarray, doc_ids, doc: np.ndarray, rank: np.ndarray,
                 score: np.ndarray):
        self.query_ids, self.query, self.doc_ids, self.doc = query_ids, query, doc_ids, doc
        self.rank, self.score = rank, score
        self._known = set(query_ids)
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
        """Each query's documents that any ranking by score can place in its top ``k``.

        Kept: every document whose score, in single precision, is at least the single-precision value of the
        ``k``-th highest score of its query. That holds the top ``k`` in the suite's one ranking, in trec_eval's
        (single precision, ties by doc id descending) and in MS MARCO's (ties by doc id ascending), ties at the
        boundary included, so a measure with cutoff ``k`` gets the value it has on the whole run. Assumes
        validated ranks: within a query, scores do not increase with rank.
        """
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
