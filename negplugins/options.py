"""The accepted ranges of the numeric options, and the one check of each: an argparse ``type=`` for the command line
(:func:`bounded_int`, :func:`finite_float`), a :class:`~negplugins.errors.UserError` for the Python API
(:func:`check_int`, :func:`check_float`); either names the option, the value and the range.
"""

from __future__ import annotations

import argparse
import math
import operator

from .errors import UserError

__all__ = ["DEFAULT_HITS", "MAX_HITS", "MAX_THREADS", "MAX_BATCH_SIZE", "MAX_LENGTH", "MAX_SHARDS", "MAX_PERMUTATIONS",
           "MAX_CUTOFF", "bounded_int", "finite_float", "check_int", "check_float", "int_range", "add_progress_options",
           "tqdm_disable", "progress_bar", "check_distinct"]

#: Documents per query of every search runner unless ``--hits`` says otherwise (Pyserini's and BEIR's default).
DEFAULT_HITS = 1000
MAX_HITS = 100_000
MAX_THREADS = 256
MAX_BATCH_SIZE = 65_536
MAX_LENGTH = 100_000
MAX_SHARDS = 10_000
MAX_PERMUTATIONS = 1_000_000
MAX_CUTOFF = 1_000_000  # @0 aborts pytrec_eval's C code

#: Help of every ``--force`` that lets a command replace a run it would otherwise refuse to.
FORCE_HELP = ("replace an existing run (and its sidecar) even if it is committed (tracked by git) or was not "
              "written by negplugins")
#: Help of ``--force`` for a command whose ``--output`` is one file (a report, a topic file).
FILE_FORCE_HELP = ("replace an existing --output file that holds anything else, even one tracked by git "
                   "(without it, only a file already holding exactly the output is accepted, and left untouched)")


def int_range(lo: int, hi: int | None) -> str:
    return f"an integer from {lo} to {hi}" if hi is not None else f"an integer >= {lo}"


def _float_range(lo: float, hi: float | None) -> str:
    return f"a finite number from {lo:g} to {hi:g}" if hi is not None else f"a finite number >= {lo:g}"


def _as_int(value, lo: int, hi: int | None) -> int | None:
    """``value`` as an int when it is an integer (not a bool, not a float) within ``[lo, hi]``, else None."""
    if isinstance(value, bool):
        return None
    try:
        number = operator.index(value)
    except TypeError:
        return None
    return None if number < lo or (hi is not None and number > hi) else number


def _as_float(value, lo: float, hi: float | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if not math.isfinite(number) or number < lo or (hi is not None and number > hi):
        return None
    return number


def check_int(value, option: str, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``[lo, hi]``; otherwise a UserError naming ``option``, the value and the range."""
    number = _as_int(value, lo, hi)
    if number is None:
        raise UserError(f"{option}: expected {int_range(lo, hi)}, got {value!r}")
    return number


def check_float(value, option: str, lo: float, hi: float | None = None) -> float:
    """``value`` as a finite float in ``[lo, hi]``; otherwise a UserError naming ``option``, the value and the range."""
    number = _as_float(value, lo, hi)
    if number is None:
        raise UserError(f"{option}: expected {_float_range(lo, hi)}, got {value!r}")
    return number


def bounded_int(lo: int, hi: int | None = None):
    """An argparse ``type=``: an integer written in decimal, within ``[lo, hi]``."""

    def integer(text: str) -> int:
        try:
            number = _as_int(int(text.strip(), 10), lo, hi)
        except ValueError:
            number = None
        if number is None:
            raise argparse.ArgumentTypeError(f"expected {int_range(lo, hi)}, got {text!r}")
        return number

    return integer


def finite_float(lo: float, hi: float | None = None):
    """An argparse ``type=``: a finite number (no ``nan`` or ``inf``) within ``[lo, hi]``."""

    def number(text: str) -> float:
        try:
            value = _as_float(float(text), lo, hi)
        except ValueError:
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(f"expected {_float_range(lo, hi)}, got {text!r}")
        return value

    return number


def check_distinct(values, option: str | None, what: str, key=None) -> list:
    """``values`` as a list; a UserError naming the option (``None``: a positional) and the value given twice."""
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


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (``args.progress``: True, False, or None for the default)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show a progress bar on stderr (default: only when stderr is a terminal)")
    group.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")


def tqdm_disable(progress: bool | None) -> bool | None:
    """tqdm's ``disable`` for a ``progress`` option: None (the default) disables the bar unless stderr is a terminal."""
    return None if progress is None else not progress


def progress_bar(total: int | None, desc: str, progress: bool | None, unit: str = "passages"):
    """The one progress bar of a model step, on standard error: ``unit`` counted, rate and time left, once a second."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=f" {unit}", disable=tqdm_disable(progress), mininterval=1.0)
