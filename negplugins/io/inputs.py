"""Bounded reading of user files: one way to open them, one way to read a run's lines.

Every reader of a TREC run (``evaluate``, ``validate``, ``search rerank``, ``search beir-rerank``,
``leaderboard``) and of user JSON goes through :func:`open_regular`, which refuses what is not a
regular file (a directory, a FIFO, a device) *before* anything could block on it. Runs are then read
by :func:`iter_run_lines`:

- gzip is recognised by its magic bytes (``1f 8b``), never by the file name;
- at most :func:`max_run_bytes` bytes are read, counted on the file and on its gzip expansion alike
  (a gzip bomb stops at the bound), and no line may exceed :data:`MAX_LINE_BYTES`;
- the expansion is read in blocks of :data:`BLOCK_BYTES` and blank stretches are skipped in C, so a
  gzip of empty lines is rejected after reading the bound, in a fraction of a second.

Problems are raised as :class:`BoundedReadError`, which names the file and line.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import zlib
from pathlib import Path

from ..errors import UserError

__all__ = ["MAX_RUN_BYTES", "MAX_LINE_BYTES", "BLOCK_BYTES", "MAX_RUN_BYTES_ENV", "BoundedReadError",
           "max_run_bytes", "open_regular", "iter_run_lines"]

#: Largest run accepted, in bytes, compressed or uncompressed (200 MB); override with
#: ``NEGPLUGINS_MAX_RUN_BYTES``.
MAX_RUN_BYTES = 200 * 1024 * 1024
MAX_RUN_BYTES_ENV = "NEGPLUGINS_MAX_RUN_BYTES"
#: Longest line accepted in a run (a TREC line is well under 1 KB).
MAX_LINE_BYTES = 64 * 1024
#: Bytes decompressed and split per step.
BLOCK_BYTES = 1 << 20
#: A block whose lines average fewer bytes than this is scanned for non-blank lines instead of split
#: (the shortest TREC line, ``q Q0 d 1 1 t``, has 12).
_SPARSE_LINE_BYTES = 8
_NON_SPACE = re.compile(rb"\S")
#: The first two bytes of a gzip stream (how a run is recognised as gzip, whatever its name).
GZIP_MAGIC = b"\x1f\x8b"
#: The UTF-8 byte-order mark. A run is ASCII or UTF-8 without one: trec_eval and ir_measures would read it as part of
#: the first query id, so every reader of the suite refuses a run that starts with it.
UTF8_BOM = b"\xef\xbb\xbf"


class BoundedReadError(UserError):
    """A user file that cannot be read within the bounds.

    Attributes
    ----------
    path : str
        The file.
    line : int
        The line the problem is on (0: the whole file).
    kind : str
        ``size`` (a bound was passed) or ``encoding`` (unreadable bytes, a broken gzip stream).
    reason : str
        The message without the file and line.
    """

    def __init__(self, path, line: int, kind: str, reason: str):
        self.path, self.line, self.kind, self.reason = str(path), line, kind, reason
        super().__init__(f"{self.path}:{line}: {reason}" if line else f"{self.path}: {reason}")


def max_run_bytes() -> int:
    """The run size bound: ``NEGPLUGINS_MAX_RUN_BYTES`` if set (a positive integer), else :data:`MAX_RUN_BYTES`."""
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


def open_regular(path: str | os.PathLike, what: str = "file", error: type[UserError] = UserError):
    """Open ``path`` for reading bytes, refusing anything but an existing regular file.

    The file is checked with ``os.stat`` before it is opened and opened with ``O_NONBLOCK`` (then
    checked again on the open descriptor), so a FIFO swapped in between is refused rather than
    waited on forever.

    Raises
    ------
    UserError
        (or ``error``) The file is missing, a directory, a FIFO, socket or device, or unreadable.
    """
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


def iter_run_lines(path: str | os.PathLike, limit: int | None = None, what: str = "run file", data: bytes | None = None):
    """Yield ``(line_number, line_bytes)`` of a run (plain or gzip), within the bounds.

    Blank lines may be skipped (their numbers are counted); the bytes exclude the newline. ``data``: the run's
    content already read within the bounds (:func:`negplugins.io.run_columns.read_run_bytes`), split instead
    of opening the file again.

    Raises
    ------
    BoundedReadError
        The file, or its gzip expansion, exceeds ``limit`` bytes (default :func:`max_run_bytes`), a
        line exceeds :data:`MAX_LINE_BYTES`, or the gzip stream is broken or truncated.
    UserError
        The file is missing or not a regular file.
    """
    limit = max_run_bytes() if limit is None else limit
    if data is not None:
        yield from _split_lines(path, io.BytesIO(data), limit, False)
        return
    with open_regular(path, what) as raw:
        size = os.fstat(raw.fileno()).st_size
        if size > limit:
            raise BoundedReadError(path, 0, "size", f"file is {size} bytes, over the limit of {limit} bytes "
                                                    f"(raise it with {MAX_RUN_BYTES_ENV})")
        is_gzip = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if is_gzip else raw
        yield from _split_lines(path, stream, limit, is_gzip)


def _split_lines(path, stream, limit: int, is_gzip: bool):
    number = 0  # lines completed so far
    total = 0
    carry = b""
    while True:
        try:
            block = stream.read(BLOCK_BYTES)
        except (OSError, EOFError, zlib.error) as failure:
            where = "gzip stream" if is_gzip else "file"
            raise BoundedReadError(path, number + 1, "encoding",
                                   f"cannot read the {where} ({failure}); truncated or not a run?") from None
        if not block:
            break
        total += len(block)
        if total > limit:
            raise BoundedReadError(path, number + 1, "size", f"{'gzip expansion' if is_gzip else 'file'} exceeds "
                                                             f"the limit of {limit} bytes; reading stopped "
                                                             f"(raise it with {MAX_RUN_BYTES_ENV})")
        data = carry + block if carry else block
        end = data.rfind(b"\n")
        carry = data[end + 1:]
        if len(carry) > MAX_LINE_BYTES:
            raise BoundedReadError(path, number + data.count(b"\n", 0, end + 1) + 1, "size",
                                   f"line longer than {MAX_LINE_BYTES} bytes; reading stopped")
        if end < 0:
            continue
        body = data[:end]
        count = body.count(b"\n") + 1
        if not body.strip():
            number += count
            continue
        if count * _SPARSE_LINE_BYTES > len(body):
            yield from _sparse_lines(path, body, number)
        else:
            for offset, line in enumerate(body.split(b"\n"), start=number + 1):
                if len(line) > MAX_LINE_BYTES:
                    raise BoundedReadError(path, offset, "size", f"line longer than {MAX_LINE_BYTES} bytes; "
                                                                 "reading stopped")
                yield offset, line
        number += count
    if carry.strip():
        yield number + 1, carry


def _sparse_lines(path, body: bytes, number: int):
    """The non-blank lines of a block made mostly of blank lines, found without visiting each."""
    counted = 0
    line_number = number + 1
    position = 0
    while (found := _NON_SPACE.search(body, position)) is not None:
        start = body.rfind(b"\n", position, found.start()) + 1
        end = body.find(b"\n", found.start())
        end = len(body) if end < 0 else end
        line_number += body.count(b"\n", counted, start)
        counted = start
        if end - start > MAX_LINE_BYTES:
            raise BoundedReadError(path, line_number, "size", f"line longer than {MAX_LINE_BYTES} bytes; "
                                                              "reading stopped")
        yield line_number, body[start:end]
        position = end + 1
