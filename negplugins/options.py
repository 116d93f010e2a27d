"""Accepted ranges of the numeric options, checked in one place for the command line and the Python API.

The command line checks each value while parsing (``type=bounded_int(1, MAX_HITS)``): a value out of
range ends the command before any work, with one line naming the option, the value and the range, and
exit status 2. The Python API functions behind the commands check the same values with
:func:`check_int` / :func:`check_float` and raise :class:`~negplugins.errors.UserError`.

Ranges (the bounds keep memory and time finite, far above any practical setting):

==========================  =================================  ==========================================
option                      accepted                           why the bound
==========================  =================================  ==========================================
``--hits``, ``--top-k``     1 .. :data:`MAX_HITS` (100,000)    result lists are held in memory per batch
``--threads``               1 .. :data:`MAX_THREADS` (256)     each is a Java or Python worker
``--batch-size``            1 .. :data:`MAX_BATCH_SIZE`        queries or texts held per batch
``--max-length``            1 .. :data:`MAX_LENGTH` (tokens)   models accept at most a few thousand
``--shard-num``             1 .. :data:`MAX_SHARDS`            one folder per shard
``--shard-id``              0 .. shard-num - 1                 as ``pyserini.encode``
``--k1``                    finite, >= 0                       Pyserini / Anserini accept k1 >= 0
``--b``                     finite, 0 .. 1                     length normalisation is a proportion
``--permutations``          1 .. :data:`MAX_PERMUTATIONS`      time grows linearly (memory is chunked)
measure cutoffs (``@k``)    1 .. :data:`MAX_CUTOFF`            ``@0`` aborts pytrec_eval's C code
==========================  =================================  ==========================================
"""

from __future__ import annotations

import argparse
import math
import operator

from .errors import UserError

__all__ = ["DEFAULT_HITS", "MAX_HITS", "MAX_THREADS", "MAX_BATCH_SIZE", "MAX_LENGTH", "MAX_SHARDS", "MAX_PERMUTATIONS",
           "MAX_CUTOFF", "bounded_int", "positive_int", "finite_float", "check_int", "check_float", "int_range",
           "float_range", "add_progress_options", "tqdm_disable", "progress_bar", "check_distinct"]

#: Documents per query of every search runner (``search bm25``, ``dense``, ``beir-dense``) unless ``--hits``
#: says otherwise: Pyserini's default (and what BEIR's ``EvaluateRetrieval`` retrieves by default).
DEFAULT_HITS = 1000
MAX_HITS = 100_000
MAX_THREADS = 256
MAX_BATCH_SIZE = 65_536
MAX_LENGTH = 100_000
MAX_SHARDS = 10_000
MAX_PERMUTATIONS = 1_000_000
MAX_CUTOFF = 1_000_000


def int_range(lo: int, hi: int | None) -> str:
    """``"an integer from 1 to 100000"`` (or ``"an integer >= 0"`` without an upper bound)."""
    return f"an integer from {lo} to {hi}" if hi is not None else f"an integer >= {lo}"


def float_range(lo: float | None, hi: float | None) -> str:
    """``"a finite number from 0 to 1"``, ``"a finite number >= 0"`` or ``"a finite number"``."""
    if lo is not None and hi is not None:
        return f"a finite number from {lo:g} to {hi:g}"
    if lo is not None:
        return f"a finite number >= {lo:g}"
    if hi is not None:
        return f"a finite number <= {hi:g}"
    return "a finite number"


def _as_int(value, lo: int, hi: int | None) -> int | None:
    """``value`` as an int when it is an integer (not a bool) within ``[lo, hi]``, else None."""
    if isinstance(value, bool):
        return None
    try:
        number = operator.index(value)
    except TypeError:
        return None
    if number < lo or (hi is not None and number > hi):
        return None
    return number


def _as_float(value, lo: float | None, hi: float | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if not math.isfinite(number) or (lo is not None and number < lo) or (hi is not None and number > hi):
        return None
    return number


def check_int(value, option: str, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``[lo, hi]``; otherwise a UserError naming ``option``, the value and the range.

    Parameters
    ----------
    value : int
        The value given (a bool or a float is refused, even ``10.0``).
    option : str
        Its name as a user types it, e.g. ``"--hits"``.
    lo, hi : int
        Inclusive bounds; ``hi=None`` for none.
    """
    number = _as_int(value, lo, hi)
    if number is None:
        raise UserError(f"{option}: expected {int_range(lo, hi)}, got {value!r}")
    return number


def check_float(value, option: str, lo: float | None = None, hi: float | None = None) -> float:
    """``value`` as a finite float in ``[lo, hi]``; otherwise a UserError naming the option, value and range."""
    number = _as_float(value, lo, hi)
    if number is None:
        raise UserError(f"{option}: expected {float_range(lo, hi)}, got {value!r}")
    return number


def check_distinct(values, option: str | None, what: str, key=None) -> list:
    """``values`` as a list when no two are the same (equal ``key(value)``); otherwise a UserError naming the option
    and the value given twice. A list option names each thing once: a repeat is a slip, never a request to do the
    work twice.

    ``option`` prefixes the message (``None`` for positional values); ``what`` is one value (``"benchmark"``).
    """
    values, seen = list(values), {}
    for value in values:
        identity = key(value) if key else value
        if identity in seen:
            first = seen[identity]
            spelled = f" (as {str(first)!r})" if str(first) != str(value) else ""
            prefix = f"{option}: " if option else ""
            raise UserError(f"{prefix}{what} {str(value)!r} is given twice{spelled}; give each {what} once")
        seen[identity] = value
    return values


def bounded_int(lo: int, hi: int | None = None):
    """An argparse ``type=``: an integer written in decimal, within ``[lo, hi]``.

    The error, shown by argparse as ``argument --hits: ...``, gives the range and the value typed.
    """

    def parse(text: str) -> int:
        try:
            number = int(text.strip(), 10)
        except ValueError:
            number = None
        if number is None or _as_int(number, lo, hi) is None:
            raise argparse.ArgumentTypeError(f"expected {int_range(lo, hi)}, got {text!r}")
        return number

    parse.__name__ = "integer"
    return parse


def finite_float(lo: float | None = None, hi: float | None = None):
    """An argparse ``type=``: a finite number (no ``nan`` or ``inf``) within ``[lo, hi]``."""

    def parse(text: str) -> float:
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is None or _as_float(number, lo, hi) is None:
            raise argparse.ArgumentTypeError(f"expected {float_range(lo, hi)}, got {text!r}")
        return number

    parse.__name__ = "number"
    return parse


def positive_int(hi: int | None = None):
    """``bounded_int(1, hi)``."""
    return bounded_int(1, hi)


#: Help of every ``--force`` that lets a command replace a run it would otherwise refuse to.
FORCE_HELP = ("replace an existing run (and its sidecar) even if it is committed (tracked by git) or was not "
              "written by negplugins")


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (``args.progress``: True, False, or None for the default).

    The default shows the progress bar, on standard error, only when standard error is a terminal
    (tqdm's ``disable=None``), so a log file or a pipe gets no bar.
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show a progress bar on stderr (default: only when stderr is a terminal)")
    group.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")


def tqdm_disable(progress: bool | None) -> bool | None:
    """tqdm's ``disable`` for a ``progress`` option: None (the default) disables the bar unless stderr is a terminal."""
    return None if progress is None else not progress


def progress_bar(total: int | None, desc: str, progress: bool | None, unit: str = "passages"):
    """The one progress bar of a model step (encoding passages or queries, scoring pairs), on standard error.

    It counts ``unit`` and shows the rate (``31.9 passages/s``) and the time left, updated at most once a second;
    ``progress`` as :func:`tqdm_disable` reads it (True: shown, False: never, None: only on a terminal).
    """
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=f" {unit}", disable=tqdm_disable(progress), mininterval=1.0)


#: Help of ``--force`` for a command whose ``--output`` is one file (a report, a topic file).
FILE_FORCE_HELP = ("replace an existing --output file that holds anything else, even one tracked by git "
                    "(without it, only a file already holding exactly the output is accepted, and left untouched)")
