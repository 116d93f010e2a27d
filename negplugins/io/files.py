"""The one write path of the suite: files and folders written beside their destination and renamed into place
whole, never onto an input, a special file or a folder the suite did not write (its :data:`MARKER` lists what it
wrote), one command at a time per destination. The rules: docs/workflow.md, "Output safety".
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import fcntl
import glob
import json
import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable

from ..environment import nearest_existing
from ..errors import OutputError, UserError
from .command_inputs import check_not_input
from .destinations import check_destination
from .interrupts import check_not_stopping, deferred_signals
from .jsonfile import read_json

__all__ = ["MARKER", "atomic_writer", "written_together", "pending_file", "atomic_directory", "scratch_directory",
           "output_lock", "check_file_output", "check_folder_output", "check_free_space", "write_marker"]

#: File written into every folder the suite creates: ``{"written_by": "negplugins", "files": [...]}``.
MARKER = "negplugins-output.json"
_RUN_ENDINGS = (".trec", ".trec.gz", ".meta.json")
#: Largest :data:`MARKER` read (it lists file names: 64 MiB is about half a million of them).
MAX_MARKER_BYTES = 64 * 1024 * 1024


def _umask() -> int:
    from ir_datasets_ext.disk import umask

    return umask()


def check_free_space(folder: str | os.PathLike, needed: int, what: str) -> None:
    """Refuse a step that writes about ``needed`` bytes into ``folder`` when its disk has less free space."""
    from ir_datasets_ext.disk import DiskSpaceError
    from ir_datasets_ext.disk import check_free_space as check

    try:
        check(folder, needed, what)
    except DiskSpaceError as error:
        raise OutputError(str(error)) from None


_NOT_FILES = {stat.S_IFDIR: "a folder", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
              stat.S_IFBLK: "a block device"}


def check_file_output(path: str | os.PathLike, inputs: Iterable = ()) -> None:
    """Refuse a file output that is a folder, FIFO, socket or block device, or is (or is inside) one of ``inputs``
    or of the command's declared inputs."""
    path = Path(path)
    check_destination(path)
    try:
        kind = _NOT_FILES.get(stat.S_IFMT(os.stat(path).st_mode))
    except OSError:
        kind = None
    if kind:
        raise OutputError(f"{path}: is {kind}; the output must be a regular file")
    check_not_input(path, inputs)


@contextlib.contextmanager
def _beside(path: Path, folder: bool = False, label: str = ""):
    """A new temporary file or folder beside ``path`` (``.<name>.<label>*``), removed when the block ends unless
    :func:`_commit` renamed it into place."""
    tmp = None
    try:
        with deferred_signals():  # it exists only once ``tmp`` names it, for the removal below
            if folder:
                tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.{label}", suffix=".partial", dir=path.parent))
            else:
                fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
                os.close(fd)
                tmp = Path(name)
        yield tmp
    finally:
        with deferred_signals():
            if tmp is not None:
                _remove(tmp)


def _commit(step: Callable) -> None:
    """Run ``step(pending)``, the renames that put outputs in place, whole with SIGINT and SIGTERM held back; not at
    all once a signal is stopping the command (its exception may have been lost on the way)."""
    check_not_stopping()
    with deferred_signals() as pending:
        if not pending:
            step(pending)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8", *,
                  inputs: Iterable = ()):
    """Open a temporary file beside ``path`` (``mode`` ``"w"`` or ``"wb"``), renamed to ``path`` only if the block
    succeeds; a character device is written through, a symbolic link followed; ``path`` may be none of ``inputs``."""
    path = Path(path)
    check_file_output(path, inputs)
    text = {} if "b" in mode else {"encoding": encoding, "newline": ""}
    if path.exists() and stat.S_ISCHR(os.stat(path).st_mode):
        check_not_stopping()
        with open(path, mode, **text) as f:  # /dev/null, /dev/stdout: written through, never replaced
            yield f
        return
    if path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    stack, moves = _GROUP.get() or (None, None)
    with contextlib.ExitStack() as own:
        tmp = (stack or own).enter_context(_beside(path))
        with open(tmp, mode, **text) as f:
            yield f
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        if moves is None:
            _commit(lambda pending: os.replace(tmp, path))
        else:  # renamed with the others at the end of written_together()
            moves.append((tmp, path))


#: The open :func:`written_together` block: the stack of its temporary files and their ``(tmp, path)`` renames.
_GROUP: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("negplugins_written_together", default=None)


@contextlib.contextmanager
def written_together():
    """Files written with :func:`atomic_writer` in the block appear together when it ends (a run and its sidecar),
    or none does; :func:`pending_file` reads what was written so far."""
    stack, moves = contextlib.ExitStack(), []
    token = _GROUP.set((stack, moves))
    with stack:
        try:
            yield
        finally:
            _GROUP.reset(token)
        _commit(lambda pending: [os.replace(tmp, path) for tmp, path in moves])


def pending_file(path: str | os.PathLike) -> Path:
    """The file that holds what was last written to ``path`` in :func:`written_together`'s block, else ``path``."""
    where = _where(path)
    _, moves = _GROUP.get() or (None, [])
    for tmp, destination in reversed(moves):
        if _where(destination) == where:
            return tmp
    return Path(path)


def _where(path: str | os.PathLike) -> str:
    """``path`` as :func:`atomic_writer` writes it: a symbolic link followed, the folder's links resolved."""
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()
    return os.path.join(os.path.realpath(path.parent), path.name)


# -- folders ---------------------------------------------------------------------------------------

def write_marker(folder: str | os.PathLike) -> Path:
    """Write :data:`MARKER` into ``folder``, listing every file in it (sorted, so the bytes are reproducible)."""
    folder = Path(folder)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                   if not p.is_dir() and p.relative_to(folder).as_posix() != MARKER)
    record = {"written_by": "negplugins",
              "note": "negplugins replaces this folder when it rebuilds it; keep no other files here",
              "files": files}
    path = folder / MARKER
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def _read_marker(folder: Path) -> tuple[dict | None, str | None]:
    """``(record, None)`` for ``folder``'s :data:`MARKER`, ``(None, why)`` when the suite could not have written it
    (read within bounds), ``(None, None)`` when there is none."""
    if not (folder / MARKER).is_file():
        return None, None
    try:
        record = read_json(folder / MARKER, what="output marker", max_bytes=MAX_MARKER_BYTES)
    except UserError as error:
        return None, str(error)
    files = record.get("files") if isinstance(record, dict) else None
    if not (isinstance(files, list) and all(isinstance(name, str) for name in files)):
        return None, f"{folder / MARKER}: output marker has no list of file names"
    return record, None


def _owned(folder: Path) -> bool:
    record, _ = _read_marker(folder)
    if record is None:
        return False
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}
    return present - {MARKER} <= set(record["files"])


def check_folder_output(path: str | os.PathLike, inputs: Iterable = ()) -> None:
    """Refuse a folder output that the suite may not replace (see the module's description); the folder may not
    be, be inside or hold one of ``inputs`` (besides the command's declared inputs)."""
    path = Path(path)
    check_destination(path)
    resolved = path.resolve()
    cwd = Path.cwd().resolve()
    if path.is_symlink():
        raise OutputError(f"{path}: is a symbolic link; give the folder itself as the output")
    if resolved == cwd or resolved in cwd.parents:
        raise OutputError(f"{path}: is the current directory or one of its parents; give a new folder as the output")
    if resolved == Path.home().resolve() or resolved == Path(resolved.anchor):
        raise OutputError(f"{path}: is the home folder or the file system root; give a new folder as the output")
    if not path.exists():
        above = nearest_existing(path.parent)
        if above is not None and not above.is_dir():
            raise OutputError(f"{path}: cannot be created, {above} is not a folder")
        check_not_input(path, inputs, folder=True)
        return
    if not path.is_dir():
        raise OutputError(f"{path}: exists and is not a folder")
    if (path / ".git").exists():
        raise OutputError(f"{path}: is a repository root (holds .git); give a new folder as the output")
    if not any(path.iterdir()) or _owned(path):
        check_not_input(path, inputs, folder=True)  # (any other folder is refused below)
        return
    runs = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.name.endswith(_RUN_ENDINGS))
    if runs:
        raise OutputError(f"{path}: holds runs ({runs[0]}{', ...' if len(runs) > 1 else ''}) that negplugins would "
                          f"delete; give a new folder as the output")
    _, unreadable = _read_marker(path)
    if unreadable:
        raise OutputError(f"{unreadable}; so {path} is not recognisably negplugins' output: give a new or empty "
                          f"folder as the output")
    strangers = sorted(p.name for p in path.iterdir())
    raise OutputError(f"{path}: holds files negplugins did not write ({', '.join(strangers[:3])}"
                      f"{', ...' if len(strangers) > 3 else ''}); give a new or empty folder as the output")


_HELD: dict[str, int] = {}


def _lock_timeout() -> float | None:
    value = os.environ.get("NEGPLUGINS_LOCK_TIMEOUT")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        raise UserError(f"NEGPLUGINS_LOCK_TIMEOUT={value!r}: expected a number of seconds") from None
    if not seconds >= 0:
        raise UserError(f"NEGPLUGINS_LOCK_TIMEOUT={value!r}: expected a number of seconds >= 0")
    return seconds


@contextlib.contextmanager
def output_lock(path: str | os.PathLike):
    """Hold an exclusive ``flock`` on ``.<name>.lock`` beside ``path`` for the block (re-entrant); the file is
    removed on release. OutputError once another process held it over ``NEGPLUGINS_LOCK_TIMEOUT`` seconds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.parent / f".{path.name}.lock"
    key = str(lock.resolve())
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield lock
        finally:  # the outer holder may have released already (a second Ctrl-C cut the unwinding short)
            if key in _HELD:
                _HELD[key] -= 1
        return
    timeout = _lock_timeout()
    deadline = None if timeout is None else time.monotonic() + timeout
    told = False
    fd, held = -1, False
    try:
        while not held:
            with deferred_signals():  # an interrupted wait closes what it opened (below)
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
            if not _try_lock(fd):
                if not told:
                    print(f"negplugins: waiting for another negplugins command writing {path} (lock {lock})",
                          file=sys.stderr, flush=True)
                    told = True
                if deadline is not None and time.monotonic() >= deadline:
                    raise OutputError(f"{path}: another negplugins command is writing it (lock {lock} held for more "
                                      f"than {timeout:g} s); try again when it has finished") from None
                fd = _close(fd)
                time.sleep(0.2)
                continue
            # the holder before us may have removed the file we locked: lock the current one
            held = _is_current(lock, fd)
            if not held:
                fd = _close(fd)
        _HELD[key] = 1
        yield lock
    finally:
        with deferred_signals():
            _HELD.pop(key, None)
            # ours, or a lock file this process created and was interrupted before locking: nobody else holds it
            if fd >= 0 and (held or (_try_lock(fd) and _is_current(lock, fd))):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(lock)
            _close(fd)


def _try_lock(fd: int) -> bool:
    """Take the exclusive ``flock`` on ``fd`` without waiting; ``False`` if another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return False
    return True


def _is_current(lock: Path, fd: int) -> bool:
    """Whether ``fd`` is the file now at ``lock`` (a releasing holder removes the file it locked)."""
    try:
        return os.path.samestat(os.stat(lock), os.fstat(fd))
    except FileNotFoundError:
        return False


def _close(fd: int) -> int:
    if fd >= 0:
        os.close(fd)
    return -1


def _remove_stale_partials(path: Path) -> None:
    """Remove the ``.<name>.*.partial`` leftovers of killed builds of ``path`` (holding its lock), first putting
    back a previous output a killed swap had moved aside, when ``path`` is missing."""
    for stale in sorted(path.parent.glob(f".{glob.escape(path.name)}.old-*.partial")):
        aside = stale / path.name
        if stale.is_dir() and not stale.is_symlink() and os.path.lexists(aside) and not os.path.lexists(path):
            os.replace(aside, path)
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.partial"):
        _remove(stale)


def _remove(path: Path) -> None:
    """Remove the file or folder ``path`` if it exists (a folder's symbolic link is removed, not followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def scratch_directory(path: str | os.PathLike, label: str = "scratch"):
    """A temporary folder beside ``path`` (``.<name>.<label>-*.partial``, which the next build removes after a
    kill), removed when the block ends; for use under :func:`output_lock` on ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _beside(path, folder=True, label=f"{label}-") as tmp:
        yield tmp


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike, *, inputs: Iterable = ()):
    """Yield a temporary folder beside ``path``; it becomes ``path``, with :data:`MARKER`, only if the block
    succeeds. ``path`` is checked (:func:`check_folder_output`) before and at the swap, locked meanwhile; a signal
    or an error before the new folder is in place leaves ``path`` as it was."""
    path = Path(path)
    check_folder_output(path, inputs)
    with output_lock(path):
        _remove_stale_partials(path)
        with _beside(path, folder=True) as tmp:
            yield tmp
            write_marker(tmp)
            os.chmod(tmp, 0o777 & ~_umask())
            _commit(lambda pending: _swap(tmp, path, pending))


def _swap(new: Path, path: Path, pending) -> None:
    """Put the folder ``new`` at ``path``, the previous ``path`` moved aside and removed; on any failure, or a
    signal before the new folder is in place, undo."""
    aside = None
    committed = False
    try:
        if os.path.lexists(path):
            check_folder_output(path)
            aside = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", suffix=".partial", dir=path.parent))
            os.replace(path, aside / path.name)
        os.replace(new, path)
        committed = not pending  # the point of no return: a signal before it undoes the swap
        if not committed:
            _undo_swap(new, path, aside)
    except BaseException as error:
        _undo_swap(new, path, aside, error)
        raise
    finally:
        if aside is not None and (committed or not os.path.lexists(aside / path.name)):
            _remove(aside)


def _undo_swap(new: Path, path: Path, aside: Path | None, error: BaseException | None = None) -> None:
    """Put the previous folder (in ``aside``) back at ``path`` and the new one back at ``new``, reading what moved
    off the file system; OutputError if the previous one stays in ``aside`` (the next build restores it)."""
    moved_aside = aside is not None and os.path.lexists(aside / path.name)
    try:
        if not os.path.lexists(new) and os.path.lexists(path):  # the new folder is at ``path``
            os.replace(path, new)
        if moved_aside:
            os.replace(aside / path.name, path)
    except OSError as failure:
        kept = f"; the previous one is kept in {aside / path.name}" if moved_aside else ""
        raise OutputError(f"{path}: could not be replaced ({error or 'interrupted'}), nor put back as it was "
                          f"({failure}){kept}") from error


