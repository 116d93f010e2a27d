"""The rules for what an output may replace, checked before any work: :func:`check_run_output` for a run and its
sidecar (a run the suite did not write, or a committed one, only with ``--force``), :func:`check_replaceable_file`
for every other file (docs/workflow.md, "Output safety").
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Callable, Iterable

from ..errors import OutputError
from .command_inputs import same_file
from .files import atomic_writer, check_file_output
from .sidecars import file_sha256, git_root, metadata_path, other_run, read_sidecar_json

__all__ = ["check_run_output", "check_sidecar_output", "check_replaceable_file", "write_file_output",
           "tracked_by_git"]


def tracked_by_git(path: str | os.PathLike) -> bool:
    """Whether ``path`` is tracked by git (without a working ``git``: whether it lies in a git work tree)."""
    path = Path(path).absolute()
    root = git_root(path.parent)
    if root is None:
        return False
    try:
        result = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", str(path)],
                                capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return True
    return result.returncode != 0 or bool(result.stdout.strip(b"\0"))


def check_replaceable_file(path: str | os.PathLike, inputs: Iterable = (), force: bool = False, *,
                           content: bytes | None = None, ours: Callable[[Path], bool] | None = None,
                           refusal: str | None = None) -> bool:
    """The one rule for a file output other than a run; True when ``path`` already holds ``content``. Refused: one of
    ``inputs``, a folder, FIFO, socket or block device and, without ``force``, a file tracked by git or one holding
    neither ``content`` nor, by ``ours(path)``, an earlier output of the command (``refusal`` says so)."""
    path = Path(path)
    check_file_output(path, inputs)
    if not path.exists():
        return False
    if not force and path.is_file() and tracked_by_git(path):
        raise OutputError(f"{path}: is tracked by git (a committed file); write elsewhere or pass --force to replace it")
    if content is not None and path.is_file() and _holds(path, content):
        return True
    if force or (content is None and ours is None) or (path.is_file() and ours is not None and ours(path)):
        return False
    if not path.is_file() and ours is None:  # a character device (/dev/null): written through
        return False
    raise OutputError(refusal or f"{path}: exists and differs from what this command writes (an existing file is "
                                 f"replaced only with --force); write elsewhere or pass --force to replace it")


def write_file_output(path: str | os.PathLike, content: str | bytes, inputs: Iterable = (),
                      force: bool = False) -> bool:
    """Write ``content`` (``str`` as UTF-8) to ``path`` atomically under :func:`check_replaceable_file`'s rule; False
    when the file already held it (left untouched: re-running is a no-op)."""
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    if check_replaceable_file(path, inputs, force, content=data):
        return False
    with atomic_writer(path, "wb", inputs=inputs) as f:
        f.write(data)
    return True


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file ``path`` holds exactly ``data`` (read in blocks; stops at the first difference)."""
    view = memoryview(data)
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as f:
            offset = 0
            while block := f.read(1 << 20):
                if view[offset:offset + len(block)] != block:
                    return False
                offset += len(block)
            return offset == len(data)
    except OSError:
        return False


def check_sidecar_output(run: str | os.PathLike, force: bool = False) -> None:
    """Refuse writing ``run``'s sidecar over a file that is not its earlier, untracked sidecar, unless ``force``."""
    run = Path(run)
    sidecar = metadata_path(run)
    check_replaceable_file(sidecar, inputs=[run], force=force)
    if sidecar.exists() and not sidecar.is_file():
        raise OutputError(f"{sidecar}: the run's sidecar path exists and is not a regular file")
    if force or not sidecar.is_file():
        return
    record, unreadable = read_sidecar_json(sidecar)
    if unreadable:
        raise OutputError(f"{unreadable}; it is not a sidecar negplugins wrote: pass --force to replace it")
    if not isinstance(record, dict) or record.get("run") != run.name:
        raise OutputError(f"{sidecar}: exists and is not a sidecar of {run.name}; pass --force to replace it")


def check_run_output(output: str | os.PathLike, inputs: Iterable = (), force: bool = False) -> None:
    """Refuse a run output (and its sidecar) that would replace one of ``inputs``, a sidecar of another run, or,
    without ``force``, a committed run or one the suite did not write (no sidecar naming it with its SHA-256)."""
    output = Path(output)
    sidecar = metadata_path(output)
    inputs = [source for source in inputs if source is not None]
    check_file_output(output, inputs)
    if output.exists() and not stat.S_ISREG(os.stat(output).st_mode):
        raise OutputError(f"{output}: is not a regular file; a run needs one (its checksum and sidecar "
                          f"{sidecar.name} go beside it)")
    check_file_output(sidecar, inputs)
    if sidecar.exists() and not sidecar.is_file():
        raise OutputError(f"{sidecar}: the run's sidecar path exists and is not a regular file")
    record, unreadable = read_sidecar_json(sidecar) if sidecar.is_file() else (None, None)
    other = other_run(record, output)
    if other is not None and not same_file(other, output):
        raise OutputError(f"{output}: its sidecar {sidecar} describes another run, {other}; "
                          f"choose another name (runs named alike share one sidecar)")
    if force:
        return
    for path in (output, sidecar):
        if path.is_file() and tracked_by_git(path):
            raise OutputError(f"{path}: is a committed run file (tracked by git); write the run elsewhere "
                              f"(e.g. work/{output.name}) or pass --force to replace it")
    if sidecar.is_file() and not isinstance(record, dict):
        if unreadable:
            raise OutputError(f"{unreadable}; it is not a sidecar negplugins wrote: pass --force to replace it")
        raise OutputError(f"{sidecar}: exists and is not a sidecar negplugins wrote; pass --force to replace it")
    if output.is_file() and not (isinstance(record, dict) and record.get("run") == output.name
                                 and record.get("run_sha256") == file_sha256(output)):
        raise OutputError(f"{output}: exists and was not written by negplugins (or was changed since: its "
                          f"sidecar does not match it); pass --force to replace it")
