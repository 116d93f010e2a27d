"""Checks of an output's place, made before any work: can the suite write there at all? Refused in one line: a
path under ``/proc`` or ``/sys``, a link loop, a file where a folder is needed, a folder it may not write, a name
too long (counting the hidden temporary name beside it).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from ..environment import nearest_existing
from ..errors import ERRNO_CAUSES, OutputError

__all__ = ["HIDDEN_NAME_EXTRA", "KERNEL_FILE_SYSTEMS", "check_destination"]

#: Bytes the longest hidden name beside an output adds to its name: ``.`` + name + ``.old-`` + 8 + ``.partial``.
HIDDEN_NAME_EXTRA = 22
#: Mount points of file systems that hold no user files: the suite never writes under them.
KERNEL_FILE_SYSTEMS = (Path("/proc"), Path("/sys"))


def _refuse(path, what: str, todo: str = "write the output elsewhere") -> OutputError:
    return OutputError(f"{path}: {what}; {todo}")


def check_destination(path: str | os.PathLike) -> None:
    """Refuse an output (file or folder) that cannot be written where it is; of an existing character device
    (``/dev/null``), written through, only the write permission counts."""
    path = Path(path)
    try:
        os.stat(path)
        exists = True
    except OSError as error:
        if error.errno not in (errno.ENOENT, errno.ENOTDIR):  # a loop, a name too long, ...
            cause = ERRNO_CAUSES.get(error.errno)
            raise _refuse(path, cause[0] if cause else error.strerror) from None
        exists = False
    if exists and not path.is_dir() and not path.is_file():  # a device written through (/dev/stdout, a link into
        if not os.access(path, os.W_OK):                        # /proc), or a FIFO refused later
            raise _refuse(path, "is not writable")
        return
    real = Path(os.path.realpath(path))
    for kernel in KERNEL_FILE_SYSTEMS:
        if real == kernel or kernel in real.parents:
            raise _refuse(path, f"is under {kernel}, a kernel file system that holds no files of yours")
    parent = nearest_existing(path.parent if path.parent != path else path)
    if parent is None:
        return
    if not parent.is_dir():
        raise _refuse(path, f"cannot be created, {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise _refuse(path, f"cannot be written, the folder {parent} {_why_not_writable(parent)}")
    _check_name_length(path, parent)


def _why_not_writable(folder: Path) -> str:
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "is on a read-only file system"
    except OSError:
        pass
    return "is not writable (no permission, or an immutable folder)"


def _check_name_length(path: Path, parent: Path) -> None:
    try:
        name_max = os.pathconf(parent, "PC_NAME_MAX")
        path_max = os.pathconf(parent, "PC_PATH_MAX")
    except (OSError, ValueError):
        return
    created = path.relative_to(parent).parts if parent in path.parents else (path.name,)
    for part in created[:-1]:  # folders made on the way, under their own names
        if len(os.fsencode(part)) > name_max:
            raise _refuse(path, f"folder name too long ({len(os.fsencode(part))} bytes; at most {name_max} here)",
                          "choose a shorter name")
    length = len(os.fsencode(path.name))
    if length + HIDDEN_NAME_EXTRA > name_max:
        raise _refuse(path, f"file name too long ({length} bytes; at most {name_max - HIDDEN_NAME_EXTRA} here, as "
                            f"negplugins writes a hidden temporary name {HIDDEN_NAME_EXTRA} bytes longer beside it)",
                      "choose a shorter name")
    full = len(os.fsencode(os.path.abspath(path))) + HIDDEN_NAME_EXTRA
    if full >= path_max:
        raise _refuse(path, f"path too long ({full - HIDDEN_NAME_EXTRA} bytes; at most "
                            f"{path_max - HIDDEN_NAME_EXTRA - 1} here)", "choose a shorter path")
