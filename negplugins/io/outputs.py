"""Checks on run outputs, made before any work: a run never replaces what the suite did not just write.

A run file comes with its sidecar (:func:`negplugins.io.sidecars.metadata_path`), so writing a run writes
two files. :func:`check_run_output` refuses, with one line naming the file:

- an output that is a folder, a device, a FIFO or a socket (a run needs a regular file: its checksum
  and sidecar go beside it), or that is, or whose sidecar is, one of the command's inputs;
- a sidecar collision: ``a.trec`` and ``a.trec.gz`` share ``a.meta.json``; when that sidecar
  describes another run file that still exists, the second run is refused whatever ``--force`` says;
- without ``force``: an existing run or sidecar tracked by git (a committed contribution), or an
  existing run the suite did not write (no sidecar naming it with its SHA-256: hand-made, or edited
  since). Re-running a command over its own earlier, untracked output is allowed.

:func:`write_file_output` is the rule for other file outputs (topic files, evaluation reports): an
existing file is replaced only with ``force``, unless it already holds exactly the bytes to be written
(nothing is written then: re-running a command is a no-op). :func:`check_replaceable_file` makes the
checks that need no content (inputs, special files, files tracked by git) before any work.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Iterable

from ..errors import UserError
from .files import OutputError, atomic_writer, check_file_output, same_file
from .jsonfile import read_json
from .sidecars import MAX_SIDECAR_BYTES, MAX_SIDECAR_DEPTH, file_sha256, metadata_path

__all__ = ["check_run_output", "check_sidecar_output", "check_replaceable_file", "write_file_output",
           "tracked_by_git"]


def _repository_root(path: Path) -> Path | None:
    for folder in [path.parent, *path.parent.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def tracked_by_git(path: str | os.PathLike) -> bool:
    """Whether ``path`` is tracked in the git repository holding it (``False`` outside any repository).

    Without a working ``git`` command, a file inside a repository counts as tracked (the safe answer).
    """
    path = Path(path).absolute()
    root = _repository_root(path)
    if root is None:
        return False
    try:
        result = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", str(path)],
                                capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return True
    if result.returncode != 0:
        return True
    return bool(result.stdout.strip(b"\0"))


def _read_sidecar_json(path: Path) -> tuple[object, str | None]:
    """``(record, None)``, or ``(None, message)`` when ``path`` is not JSON within the sidecar bounds.

    Read with :func:`negplugins.io.jsonfile.read_json` (size, depth, duplicate keys), so a hostile
    sidecar gives a message naming it, never a ``RecursionError``.
    """
    try:
        record = read_json(path, what="metadata sidecar", max_bytes=MAX_SIDECAR_BYTES, max_depth=MAX_SIDECAR_DEPTH)
    except UserError as error:
        return None, str(error)
    return record, None


def check_replaceable_file(path: str | os.PathLike, inputs: Iterable = (), force: bool = False) -> None:
    """The checks of a file output that need no content, made before any work (see :func:`write_file_output`).

    Refuses ``path`` when it is one of ``inputs``, a folder, FIFO, socket or block device, or (without
    ``force``) a file tracked by git.

    Raises
    ------
    OutputError
        With one line naming the file and what to do.
    """
    path = Path(path)
    check_file_output(path, inputs)
    if not force and path.is_file() and tracked_by_git(path):
        raise OutputError(f"{path}: is tracked by git (a committed file); write elsewhere or pass --force to replace it")


def write_file_output(path: str | os.PathLike, content: str | bytes, inputs: Iterable = (),
                      force: bool = False) -> bool:
    """Write ``content`` to the file output ``path`` (a report, a topic file), never replacing what is not ours.

    The rule: an existing regular file is replaced only with ``force``, unless it already holds
    exactly ``content`` (byte for byte): then nothing is written, so re-running a command is a no-op.
    A file tracked by git is refused without ``force`` before that (:func:`check_replaceable_file`).
    A character device (``/dev/null``) is written through. The write is atomic
    (:func:`negplugins.io.files.atomic_writer`). Runs have their own rule (:func:`check_run_output`).

    Parameters
    ----------
    path : path
        The destination.
    content : str or bytes
        What to write (``str`` is written as UTF-8, newlines unchanged).
    inputs : iterable of paths
        The command's inputs; the destination may be none of them.
    force : bool
        Replace an existing file whatever it holds (``--force``).

    Returns
    -------
    bool
        ``True`` if the file was written, ``False`` if it already held ``content`` (left untouched).

    Raises
    ------
    OutputError
        With one line naming the file and what to do.
    """
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    check_replaceable_file(path, inputs, force=force)
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    if existing is not None and stat.S_ISREG(existing.st_mode):
        if existing.st_size == len(data) and _holds(path, data):
            return False
        if not force:
            raise OutputError(f"{path}: exists and differs from what this command writes (an existing file is "
                              f"replaced only with --force); write elsewhere or pass --force to replace it")
    with atomic_writer(path, "wb", inputs=inputs) as f:
        f.write(data)
    return True


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file ``path`` holds exactly ``data`` (read in blocks; stops at the first difference)."""
    view = memoryview(data)
    try:
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
    """Refuse writing the sidecar of ``run`` over a file that is not an earlier sidecar of ``run`` (without ``force``).

    For ``leaderboard sidecar``, which writes only the sidecar: the run rule of :func:`check_run_output`
    applied to it. An existing sidecar is replaced without ``force`` only when it is untracked, parses
    within the sidecar bounds and names ``run`` (re-running the command with corrected fields).

    Raises
    ------
    OutputError
        With one line naming the sidecar and what to do.
    """
    run = Path(run)
    sidecar = metadata_path(run)
    check_replaceable_file(sidecar, inputs=[run], force=force)
    if sidecar.exists() and not sidecar.is_file():
        raise OutputError(f"{sidecar}: the run's sidecar path exists and is not a regular file")
    if force or not sidecar.is_file():
        return
    record, unreadable = _read_sidecar_json(sidecar)
    if unreadable:
        raise OutputError(f"{unreadable}; it is not a sidecar negplugins wrote: pass --force to replace it")
    if not isinstance(record, dict) or record.get("run") != run.name:
        raise OutputError(f"{sidecar}: exists and is not a sidecar of {run.name}; pass --force to replace it")


def check_run_output(output: str | os.PathLike, inputs: Iterable = (), force: bool = False) -> None:
    """Refuse a run output (and its sidecar) that would replace an input or something the suite did not write.

    Parameters
    ----------
    output : path
        The run file about to be written.
    inputs : iterable of paths
        Files the command reads (first-stage runs, results files); neither the run nor its sidecar may be one.
    force : bool
        Replace an existing run (and its sidecar) even if committed or not written by the suite.

    Raises
    ------
    OutputError
        With one line naming the file and what to do.
    """
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
    record, unreadable = _read_sidecar_json(sidecar) if sidecar.is_file() else (None, None)
    described = record.get("run") if isinstance(record, dict) else None
    if isinstance(described, str) and described != output.name and "/" not in described \
            and (output.parent / described).is_file() and not same_file(output.parent / described, output):
        raise OutputError(f"{output}: its sidecar {sidecar} describes another run, {output.parent / described}; "
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
    if output.is_file():
        ours = isinstance(record, dict) and described == output.name and record.get("run_sha256") == file_sha256(output)
        if not ours:
            raise OutputError(f"{output}: exists and was not written by negplugins (or was changed since: its "
                              f"sidecar does not match it); pass --force to replace it")
