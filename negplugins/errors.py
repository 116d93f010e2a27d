"""The suite's one error policy: what a user can fix is a user error, everything else is a bug. An :class:`OSError`
is a user error when the system refused a path the user chose for a reason of the user's machine
(:func:`os_error_message`). See docs/cli.md.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Iterable

__all__ = ["UserError", "OutputError", "UnknownDatasetError", "PATH_VARIABLES", "os_error_message", "ERRNO_CAUSES",
           "error_line"]


class UserError(Exception):
    """Bad input: an unknown name, an unreadable or malformed file, an unsupported combination."""


class OutputError(UserError):
    """An output would replace something the suite did not create, or one of the command's inputs."""


class UnknownDatasetError(UserError, KeyError):
    def __str__(self):  # KeyError would quote the message
        return str(self.args[0])


#: Variables naming folders the suite (or a library it drives) writes or reads: their folders are the user's.
PATH_VARIABLES = ("IR_DATASETS_HOME", "TMPDIR", "HF_HOME", "HF_HUB_CACHE", "TRANSFORMERS_CACHE",
                  "SENTENCE_TRANSFORMERS_HOME", "TORCH_HOME", "XDG_CACHE_HOME", "RAY_TMPDIR", "JAVA_HOME")

#: ``errno`` -> (what happened, what to do), for the causes a user can fix.
ERRNO_CAUSES = {
    errno.EACCES: ("permission denied", "make it writable (readable, for an input) or choose another path"),
    errno.EPERM: ("operation not permitted (an immutable or protected file or folder)",
                  "choose another path or lift the protection"),
    errno.EROFS: ("on a read-only file system", "choose a path on a writable file system"),
    errno.ENOSPC: ("no space left on the device", "free some space or choose a path on another disk"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or choose a path on another disk"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "choose another path"),
    errno.EEXIST: ("already exists and is not a folder", "choose another path"),
    errno.EISDIR: ("is a folder where a file was expected", "choose another path"),
    errno.ELOOP: ("symbolic link loop", "fix the links or choose another path"),
    errno.ENAMETOOLONG: ("file name too long for this file system", "choose a shorter name"),
    errno.ENOENT: ("not found", "check the path"),
    errno.EFBIG: ("file too large for this file system", "choose a path on another file system"),
    errno.EMLINK: ("too many links", "choose another path"),
    errno.EXDEV: ("across file systems", "choose a path on one file system"),
    errno.EIO: ("input/output error of the device", "check the disk, or choose a path on another one"),
    errno.ETXTBSY: ("file busy (a running program)", "choose another path"),
}


def _absolute(path) -> Path | None:
    try:
        return Path(os.path.abspath(os.fsdecode(path)))
    except (TypeError, ValueError):
        return None


#: The suite's hidden files beside an output ``name`` (:mod:`negplugins.io.files`): ``.name.XXXXXXXX.tmp``,
#: ``.name.XXXXXXXX.partial``, ``.name.old-XXXXXXXX.partial``, ``.name.LABEL-XXXXXXXX.partial``, ``.name.lock``.
_HIDDEN = re.compile(r"^\.(?P<name>.+)\.(?:[^./]+\.(?:tmp|partial)|lock)$")


def _visible(path: Path) -> Path:
    """``path`` with the suite's hidden temporary file or folder in it replaced by the output it stands for."""
    for candidate in (path, *path.parents):
        match = _HIDDEN.match(candidate.name)
        if match:
            return candidate.parent / match.group("name")
    return path


def _within(path: Path, folder: Path | None) -> bool:
    return folder is not None and (path == folder or folder in path.parents)


def os_error_message(error: OSError, named: Iterable = (), variables: Iterable[str] = PATH_VARIABLES,
                     caches: Iterable = (), workdir=None) -> str | None:
    """``"<path>: <what happened> (<the system's words>); <what to do>"`` when the user can fix it, else ``None``;
    the path shown is the one the user chose (of ``named``, ``variables``, ``caches`` or ``workdir``)."""
    cause = ERRNO_CAUSES.get(error.errno)
    if cause is None:
        return None
    what, todo = cause
    detail = error.strerror or os.strerror(error.errno)
    if error.filename is None:
        if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG):  # met while writing an open file
            return f"{what} while writing ({detail}); {todo}"
        return None
    path = _absolute(error.filename)
    if path is None:
        return None
    shown = _visible(path)
    for value in named:
        folder = _absolute(value)
        if _within(shown, folder) and folder != Path(folder.anchor):
            inside = "" if shown == folder else f" ({os.path.relpath(shown, folder)} in it)"
            return f"{value}{inside}: {what} ({detail}); {todo}"
    if error.errno == errno.ENOENT:  # a missing file the user did not name may be the suite's own (a bug)
        return None
    for name in variables:
        value = os.environ.get(name)
        if value and _within(shown, folder := _absolute(value)):
            inside = "" if shown == folder else f" ({shown})"
            return f"{name}={value}{inside}: {what} ({detail}); {todo}, or set {name} to another folder"
    for cache in caches:
        if _within(shown, _absolute(cache)):
            return f"{_relative(shown, workdir)}: {what} ({detail}); {todo} (a cache negplugins rebuilds)"
    if _within(shown, _absolute(workdir)):
        return f"{_relative(shown, workdir)}: {what} ({detail}); {todo}"
    return None


def _relative(path: Path, workdir) -> str:
    folder = _absolute(workdir)
    return os.path.relpath(path, folder) if _within(path, folder) else str(path)


#: A terminal colour code (Ray colours its messages).
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def error_line(error: BaseException, *, whole: bool = False) -> str:
    """Another library's exception as one line without colour codes: its first line (``whole``: every line joined),
    or its type name when it has no message."""
    text = _COLOUR.sub("", str(error))
    if whole:
        text = " ".join(text.split("\n")).strip()
        return text or type(error).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
