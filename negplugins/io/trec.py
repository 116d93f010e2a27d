"""Reading and writing TREC run files (``query_id Q0 doc_id rank score tag``).

Scores are written with six decimals, as Pyserini writes them, so runs of the suite and of stock Pyserini compare
byte for byte.
"""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import Iterable, Mapping

from ..errors import UserError
from .files import atomic_writer
from .run_columns import RunColumns, parse_columns, parse_lines, read_run_bytes

__all__ = ["RunFormatError", "read_run", "check_run_format", "write_run", "ranked"]


class RunFormatError(UserError):
    """A run file is missing, unreadable or has a malformed line."""


def read_run(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """Read a TREC run (plain or gzip, within the bounds) into ``{query_id: {doc_id: score}}``, a pair given twice
    keeping its last score; RunFormatError at the first problem, naming the file and line."""
    return _read_checked(path).as_dict()


def check_run_format(path: str | os.PathLike) -> int:
    """The number of lines of a run, each checked as :func:`read_run` checks it."""
    return _read_checked(path).lines


def _read_checked(path) -> RunColumns:
    path = Path(path)

    def fail(kind, number, message):
        raise RunFormatError(f"{path}:{number}: {message}")

    try:
        data, problem = read_run_bytes(path)
        columns = parse_columns(data)
        if columns is None:
            columns = parse_lines(data, fail, int64_ranks=False)
    except RunFormatError:
        raise
    except UserError as error:  # bounds, missing or special file
        raise RunFormatError(str(error)) from None
    if problem is not None:
        raise RunFormatError(str(problem))
    if not columns.lines:
        raise RunFormatError(f"{path}: the run is empty")
    return columns


def ranked(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """``(doc_id, score)`` in the suite's one ranking (:mod:`negplugins.measures.ranking`), the order in which
    trec_eval reads exact ties: decreasing score, equal scores by doc id descending."""
    from ..measures.ranking import canonical_order

    return [(doc_id, scores[doc_id]) for doc_id in canonical_order(scores)]


def write_run(path: str | os.PathLike, results: Iterable[tuple[str, Iterable[tuple[str, float]]]], tag: str) -> int:
    """Write ``(query_id, [(doc_id, score), ...])`` in rank order, atomically (``.gz`` reproducibly); lines written."""
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
        with (atomic_writer(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
              io.TextIOWrapper(gz, encoding="utf-8", newline="") as f):
            write_lines(f)
    else:
        with atomic_writer(path) as f:
            write_lines(f)
    return lines
