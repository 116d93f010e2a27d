"""Free disk space checked before the large writes (``IR_DATASETS_SKIP_DISK_FREE=true`` skips it, as in ir_datasets),
and a plain ``open()``'s permissions for what ``mkstemp`` made, so that a lab can share one ``IR_DATASETS_HOME``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["SKIP_ENV", "DiskSpaceError", "check_free_space", "format_bytes", "free_bytes",
           "give_usual_permissions", "umask"]

#: Set to ``true`` to skip the free space checks (the variable stock ir_datasets reads for the same purpose).
SKIP_ENV = "IR_DATASETS_SKIP_DISK_FREE"


class DiskSpaceError(OSError):
    """Not enough free disk space for a step; the message names the folder, the space needed and available."""


def format_bytes(size: float) -> str:
    """``size`` in bytes as a short human-readable amount (``1.5 GiB``)."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(size) < 1024:
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TiB"


def free_bytes(folder: str | os.PathLike) -> int:
    """Free bytes (for this user) on the file system that holds ``folder`` or its nearest existing parent."""
    folder = Path(folder).absolute()
    existing = next((candidate for candidate in [folder, *folder.parents] if candidate.exists()), None)
    return shutil.disk_usage(existing or Path(folder.anchor or ".")).free


def check_free_space(folder: str | os.PathLike, needed: int, what: str) -> None:
    """Refuse (a one-line DiskSpaceError) a step that needs about ``needed`` bytes in ``folder``, named ``what``,
    when its file system has less free space."""
    if os.environ.get(SKIP_ENV, "").strip().lower() == "true":
        return
    free = free_bytes(folder)
    if free < needed:
        raise DiskSpaceError(f"{folder}: not enough free disk space for {what}: about {format_bytes(needed)} needed, "
                             f"{format_bytes(free)} available; free some space or choose another folder "
                             f"({SKIP_ENV}=true skips this check)")


def umask() -> int:
    """The process's umask, read without changing it where Linux tells it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)  # elsewhere: the classic read, which sets it for an instant
    os.umask(mask)
    return mask


def give_usual_permissions(path: str | os.PathLike, recursive: bool = False) -> None:
    """Give ``path`` (and with ``recursive`` a folder's contents, links aside) the permissions ``open()`` /
    ``mkdir`` would have: ``0666`` / ``0777`` less the umask."""
    mask = umask()
    path = Path(path)
    todo = [path]
    while todo:
        current = todo.pop()
        if current.is_symlink():
            continue
        if current.is_dir():
            os.chmod(current, 0o777 & ~mask)
            if recursive:
                todo.extend(current.iterdir())
        else:
            os.chmod(current, 0o666 & ~mask)
