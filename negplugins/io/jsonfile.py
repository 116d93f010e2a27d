"""Reading JSON that users give the suite (run sidecars, BEIR results), within bounds.

:func:`read_json` is the one parser of user JSON. It refuses, with one line naming the file (and the
line and column where the problem is):

- anything but a regular file (a FIFO is refused, not waited on: :func:`negplugins.io.inputs.open_regular`);
- files over ``max_bytes``;
- text that is not UTF-8, or not JSON;
- nesting deeper than ``max_depth`` (checked on the text before parsing, so no ``RecursionError``);
- an object with the same key twice (JSON leaves it undefined; Python would keep the last silently);
- ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON, unless ``allow_non_finite``.
"""

from __future__ import annotations

import json
import os
import re

from ..errors import UserError
from .inputs import open_regular

__all__ = ["MAX_JSON_DEPTH", "read_json", "parse_json"]

#: Deepest nesting of arrays and objects accepted (a sidecar needs 3, BEIR results 2).
MAX_JSON_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def read_json(path: str | os.PathLike, *, what: str = "JSON file", max_bytes: int, max_depth: int = MAX_JSON_DEPTH,
              allow_non_finite: bool = False, label: str | None = None, error: type[UserError] = UserError):
    """Parse the JSON file ``path`` within bounds.

    Parameters
    ----------
    path : path
        The file.
    what : str
        What the file is, for messages (``metadata sidecar``, ``BEIR results file``).
    max_bytes : int
        Larger files are refused without being read.
    max_depth : int
        Deepest nesting of arrays and objects accepted.
    allow_non_finite : bool
        Accept ``NaN`` and ``Infinity`` literals (refused by default).
    label : str, optional
        How messages name the file (default: its path).
    error : type
        The :class:`UserError` subclass raised.

    Raises
    ------
    UserError
        (or ``error``) The file is missing, not a regular file, too large, not UTF-8, not JSON, too
        deep, has a duplicate key or a non-finite number.
    """
    label = label or str(path)
    with open_regular(path, what, error) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise error(f"{label}: {what} is {size} bytes, over the limit of {max_bytes} bytes")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise error(f"{label}: {what} is over the limit of {max_bytes} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as failure:
        raise error(f"{label}: {what} is not UTF-8 (byte {failure.start})") from None
    return parse_json(text, label=label, what=what, max_depth=max_depth, allow_non_finite=allow_non_finite,
                      error=error)


def parse_json(text: str, *, label: str, what: str = "JSON", max_depth: int = MAX_JSON_DEPTH,
               allow_non_finite: bool = False, error: type[UserError] = UserError):
    """Parse JSON ``text`` with the checks of :func:`read_json` (``label`` names it in messages)."""
    _check_depth(text, label, what, max_depth, error)

    def no_duplicates(pairs):
        record = {}
        for key, value in pairs:
            if key in record:
                raise _Refused(f"duplicate key {key!r}")
            record[key] = value
        return record

    def no_constant(name):
        raise _Refused(f"{name} is not a valid JSON number")

    try:
        return json.loads(text, object_pairs_hook=no_duplicates,
                          parse_constant=None if allow_non_finite else no_constant)
    except json.JSONDecodeError as failure:
        raise error(f"{label}:{failure.lineno}:{failure.colno}: not valid JSON ({failure.msg})") from None
    except _Refused as refused:
        raise error(f"{label}: {what}: {refused}") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise error(f"{label}: {what} nests too deeply") from None


class _Refused(ValueError):
    pass


def _check_depth(text: str, label: str, what: str, max_depth: int, error) -> None:
    """Refuse nesting deeper than ``max_depth`` (brackets inside strings do not count), in C speed."""
    if text.count("[") + text.count("{") <= max_depth:
        return
    import numpy as np

    outside_strings = np.frombuffer(_STRING.sub('""', text).encode("utf-8"), dtype=np.uint8)
    steps = np.zeros(len(outside_strings), dtype=np.int32)
    steps[(outside_strings == ord("[")) | (outside_strings == ord("{"))] = 1
    steps[(outside_strings == ord("]")) | (outside_strings == ord("}"))] = -1
    if len(steps) and int(np.cumsum(steps).max()) > max_depth:
        raise error(f"{label}: {what} nests deeper than {max_depth} levels of arrays and objects")
