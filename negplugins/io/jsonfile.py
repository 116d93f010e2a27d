"""Reading the files users give the suite within bounds: :func:`open_regular` for any file, :func:`read_json` the
one parser of user JSON (sidecars, BEIR results), which refuses with one line naming the file, line and column."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from ..errors import UserError

__all__ = ["MAX_JSON_DEPTH", "open_regular", "read_json", "parse_json"]

#: Deepest nesting of arrays and objects accepted (a sidecar needs 3, BEIR results 2).
MAX_JSON_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def open_regular(path: str | os.PathLike, what: str = "file", error: type[UserError] = UserError):
    """Open ``path`` for reading bytes, refusing (``error``) anything but an existing regular file: checked before
    and after opening with ``O_NONBLOCK``, so a FIFO is refused, never waited on."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except OSError as failure:
        raise error(f"{path}: cannot read {what} ({failure.strerror or failure})") from None
    _require_regular(path, info.st_mode, what, error)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as failure:
        raise error(f"{path}: cannot read {what} ({failure.strerror or failure})") from None
    try:
        _require_regular(path, os.fstat(fd).st_mode, what, error)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _require_regular(path: Path, mode: int, what: str, error) -> None:
    if stat.S_ISDIR(mode):
        raise error(f"{path}: is a directory, expected a {what}")
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise error(f"{path}: is {kind}, not a regular file; expected a {what}")


def read_json(path: str | os.PathLike, *, what: str = "JSON file", max_bytes: int, max_depth: int = MAX_JSON_DEPTH,
              label: str | None = None, error: type[UserError] = UserError):
    """Parse the JSON file ``path`` within bounds, refusing files over ``max_bytes``, text that is not UTF-8 or
    not JSON, nesting deeper than ``max_depth``, a key given twice, ``NaN`` and ``Infinity``."""
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
    return parse_json(text, label=label, what=what, max_depth=max_depth, error=error)


def parse_json(text: str, *, label: str, what: str = "JSON", max_depth: int = MAX_JSON_DEPTH,
               error: type[UserError] = UserError):
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
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    except json.JSONDecodeError as failure:
        raise error(f"{label}:{failure.lineno}:{failure.colno}: not valid JSON ({failure.msg})") from None
    except _Refused as refused:
        raise error(f"{label}: {what}: {refused}") from None


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
