"""Reading and writing standard 6-column TREC run files.

A line is ``query_id Q0 doc_id rank score tag``, separated by white space. Writing formats scores
with six decimals, as Pyserini does, so runs of the suite and of stock Pyserini compare byte for byte.
"""

from __future__ import annotations

import gzip
import io
import math
import os
from pathlib import Path
from typing import Iterable, Mapping

from ..errors import UserError
from .files import atomic_writer
from .inputs import UTF8_BOM, iter_run_lines

__all__ = ["RunFormatError", "parse_run_lines", "read_run", "check_run_format", "write_run", "ranked"]


class RunFormatError(UserError):
    """A run file is missing, unreadable or has a malformed line."""


def parse_run_lines(path: str | os.PathLike, on_problem, limit: int | None = None, data: bytes | None = None):
    """Yield ``(line_number, query_id, doc_id, rank, score)`` of the well-formed lines of a run.

    The file is read by :func:`negplugins.io.inputs.iter_run_lines` (bounded, gzip by magic bytes).
    A line is split on runs of white space (``str.split()``, as ir_measures reads it) and must give
    six columns. Each malformed line, and a first line opening with a UTF-8 byte-order mark, is passed to
    ``on_problem(kind, line_number, message)`` (kinds as in :mod:`negplugins.evaluation.validation`:
    ``encoding``, ``columns``, ``rank``, ``score``) and skipped;
    ``on_problem`` may raise to stop. Bounds and unreadable files raise
    :class:`~negplugins.io.inputs.BoundedReadError`. ``data``: the file's content already read
    (:func:`negplugins.io.run_columns.read_run_bytes`), split instead of opening the file again.
    """
    for number, raw in iter_run_lines(path, limit, data=data):
        if number == 1 and raw.startswith(UTF8_BOM):
            on_problem("encoding", number, "the file starts with a UTF-8 byte-order mark; a run is ASCII or UTF-8 "
                                           "without one (trec_eval would read it as part of the first query id)")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            on_problem("encoding", number, "not UTF-8")
            continue
        fields = text.split()
        if not fields:
            continue
        if len(fields) != 6:
            on_problem("columns", number, f"expected 6 columns 'qid Q0 docid rank score tag', got {len(fields)}: "
                                          f"{text.strip()[:60]!r}")
            continue
        query_id, _, doc_id, rank, score, _ = fields
        try:
            rank_value = int(rank)
        except ValueError:
            on_problem("rank", number, f"rank {rank[:30]!r} is not an integer")
            continue
        try:
            value = float(score)
        except ValueError:
            on_problem("score", number, f"score {score[:30]!r} is not a number")
            continue
        if not math.isfinite(value):
            on_problem("score", number, f"score {score[:30]!r} is not finite")
            continue
        yield number, query_id, doc_id, rank_value, value


def read_run(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """Read a TREC run (plain or gzip) into ``{query_id: {doc_id: score}}``.

    Read within the bounds of :mod:`negplugins.io.inputs` (size and gzip expansion at most
    ``NEGPLUGINS_MAX_RUN_BYTES``, lines at most 64 KB). A pair given twice keeps its last score.

    Raises
    ------
    RunFormatError
        The file is missing, not a regular file, unreadable, over the bounds, empty, or a line is not
        ``qid Q0 docid rank score tag`` with an integer rank and a finite numeric score; the message
        names the file and line.
    """
    path = Path(path)

    def fail(kind, number, message):
        raise RunFormatError(f"{path}:{number}: {message}")

    run: dict[str, dict[str, float]] = {}
    try:
        for _, query_id, doc_id, _, score in parse_run_lines(path, fail):
            run.setdefault(query_id, {})[doc_id] = score
    except RunFormatError:
        raise
    except UserError as error:  # bounds, missing or special file
        raise RunFormatError(str(error)) from None
    if not run:
        raise RunFormatError(f"{path}: the run is empty")
    return run


def check_run_format(path: str | os.PathLike) -> int:
    """Check that every line of a run is ``qid Q0 docid rank score tag``; return the number of lines.

    The checks of :func:`read_run` (bounded read, 6 columns, integer rank, finite numeric score, not
    empty) without holding the run in memory.

    Raises
    ------
    RunFormatError
        At the first problem, naming the file and line.
    """
    path = Path(path)

    def fail(kind, number, message):
        raise RunFormatError(f"{path}:{number}: {message}")

    try:
        lines = sum(1 for _ in parse_run_lines(path, fail))
    except RunFormatError:
        raise
    except UserError as error:  # bounds, missing or special file
        raise RunFormatError(str(error)) from None
    if not lines:
        raise RunFormatError(f"{path}: the run is empty")
    return lines


def ranked(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """``(doc_id, score)`` in the suite's one ranking: decreasing score, equal scores by doc id descending.

    The order the suite's measures score (see :mod:`negplugins.measures.ranking`), and the one in which trec_eval
    and pytrec_eval's measures read exact ties, so a run written in it has ranks that agree with its evaluation.
    """
    from ..measures.ranking import canonical_order

    return [(doc_id, scores[doc_id]) for doc_id in canonical_order(scores)]


def write_run(path: str | os.PathLike, results: Iterable[tuple[str, Iterable[tuple[str, float]]]], tag: str) -> int:
    """Write ``(query_id, [(doc_id, score), ...])`` pairs, each list already in rank order.

    Returns the number of lines written. The file appears only when complete. A path ending in
    ``.gz`` is gzip-compressed deterministically (no file name, modification time 0), so the same
    lines always give the same bytes.
    """
    if not tag or any(c.isspace() for c in tag):
        raise UserError(f"run tag {tag!r} must be one word without white space")
    lines = 0

    def write_lines(f):
        nonlocal lines
        for query_id, hits in results:
            for rank, (doc_id, score) in enumerate(hits, start=1):
                f.write(f"{query_id} Q0 {doc_id} {rank} {score:.6f} {tag}\n")
                lines += 1

    if Path(path).suffix == ".gz":
        with atomic_writer(path, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed:
                with io.TextIOWrapper(compressed, encoding="utf-8", newline="") as f:
                    write_lines(f)
    else:
        with atomic_writer(path) as f:
            write_lines(f)
    return lines
