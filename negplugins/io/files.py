"""The one write path of the suite: files and folders that never destroy what the suite did not create.

Every command writes through :func:`atomic_writer` (files) or :func:`atomic_directory` (folders):

- Nothing half-written is left at the destination: the output is written beside it and renamed into
  place only when complete.
- A file output is never a folder, a FIFO, a socket or a block device, and never one of the command's
  inputs nor inside one (compared with ``os.path.samefile``, so through symbolic and hard links; the inputs
  are those passed and those the command declared: :mod:`negplugins.io.command_inputs`).
  A character device (``/dev/null``, ``/dev/stdout``) is written through, never replaced. A symbolic
  link is followed: its target is replaced, the link stays.
- A folder output is replaced only when it is empty or recognisably the suite's own output: it holds
  :data:`MARKER`, which lists every file the suite wrote into it, and nothing else (indexes built
  before the marker existed are recognised by their manifest). Never the current directory or one
  of its parents, the home folder, ``/``, a repository root (a folder holding ``.git``), a folder
  holding contributed runs, any folder holding files the suite did not write, nor a folder that is, is inside
  or holds one of the command's inputs.
- Two commands writing the same folder take turns: each holds an exclusive ``fcntl.flock`` on a lock
  file beside the destination (``.<name>.lock``, removed when released); the second waits, with a
  message, up to ``NEGPLUGINS_LOCK_TIMEOUT`` seconds (default: no limit) and then refuses. Leftovers
  of interrupted builds (``.<name>.*.partial``) are removed only by a build holding that lock, so a
  concurrent build's work is never deleted.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import fcntl
import json
import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable

from ..errors import OutputError, UserError
from .command_inputs import check_not_input, same_file
from .destinations import check_destination
from .interrupts import check_not_stopping, deferred_signals

__all__ = ["MARKER", "OutputError", "atomic_writer", "written_together", "pending_file", "atomic_directory",
           "scratch_directory", "output_lock", "check_file_output", "check_folder_output", "check_free_space", "write_marker", "same_file"]

#: File written into every folder the suite creates: ``{"written_by": "negplugins", "files": [...]}``.
MARKER = "negplugins-output.json"
#: Manifests of folders the suite wrote before :data:`MARKER` existed (Lucene and faiss indexes, shards).
LEGACY_MANIFESTS = ("negplugins-index.json", "negplugins-shard.json")
_RUN_ENDINGS = (".trec", ".trec.gz", ".meta.json")
#: Largest :data:`MARKER` read (it lists file names: 64 MiB is about half a million of them).
MAX_MARKER_BYTES = 64 * 1024 * 1024


def _umask() -> int:
    from ir_datasets_ext.disk import umask

    return umask()


def check_free_space(folder: str | os.PathLike, needed: int, what: str) -> None:
    """Refuse a step that writes about ``needed`` bytes into ``folder`` when its disk has less free space.

    :func:`ir_datasets_ext.disk.check_free_space` (skipped when ``IR_DATASETS_SKIP_DISK_FREE=true``), as a
    user error.

    Raises
    ------
    OutputError
        One line naming the folder, the step, the space needed and the space available.
    """
    from ir_datasets_ext.disk import DiskSpaceError
    from ir_datasets_ext.disk import check_free_space as check

    try:
        check(folder, needed, what)
    except DiskSpaceError as error:
        raise OutputError(str(error)) from None


def _kind(mode: int) -> str | None:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return None


def check_file_output(path: str | os.PathLike, inputs: Iterable = ()) -> None:
    """Refuse a file output that is a folder, FIFO, socket or block device, or is (or is inside) one of ``inputs``
    or of the inputs the command declared (:func:`negplugins.io.command_inputs.check_not_input`).

    Raises
    ------
    OutputError
        With one line naming the output and what was expected.
    """
    path = Path(path)
    check_destination(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and _kind(mode):
        raise OutputError(f"{path}: is {_kind(mode)}; the output must be a regular file")
    check_not_input(path, inputs)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8", *,
                  inputs: Iterable = ()):
    """Open a temporary file beside ``path``; rename it to ``path`` only if the block succeeds.

    Parameters
    ----------
    path : path
        The destination. A character device is written through; a symbolic link is followed.
    mode : str
        ``"w"`` or ``"wb"``.
    encoding : str, optional
        Text encoding (ignored in binary mode).
    inputs : iterable of paths
        The command's inputs; the destination may be none of them.

    Raises
    ------
    OutputError
        The destination is a folder, FIFO, socket, block device, or one of ``inputs``.
    """
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
    tmp, group = None, _GROUP.get()
    try:
        with deferred_signals():  # the temporary file exists only once ``tmp`` names it, for the cleanup below
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, mode, **text) as f:
            yield f
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        if group is not None:  # renamed with the others at the end of written_together()
            group.append((Path(tmp), path))
            tmp = None
            return
        check_not_stopping()  # a signal whose exception was lost on the way leaves the previous file too
        with deferred_signals() as pending:
            if not pending:  # a signal that came just before leaves the previous file
                os.replace(tmp, path)
    finally:
        with deferred_signals():
            if tmp is not None and os.path.lexists(tmp):
                os.unlink(tmp)


_GROUP: contextvars.ContextVar[list | None] = contextvars.ContextVar("negplugins_written_together", default=None)


@contextlib.contextmanager
def written_together():
    """Files written with :func:`atomic_writer` in the block appear together when it ends (a run and its sidecar).

    Each is written to its temporary file as usual; none is renamed into place until the block ends, and
    then all are, with SIGINT and SIGTERM held back, so that an interrupted command never leaves a new run
    beside the sidecar of the previous one. If the block fails, or a signal came just before the end, none
    appears and every previous file is left as it was. Read what was written so far with
    :func:`pending_file`.
    """
    group: list[tuple[Path, Path]] = []
    token = _GROUP.set(group)
    try:
        yield
        _GROUP.reset(token)
        token = None
        check_not_stopping()
        with deferred_signals() as pending:
            if not pending:
                for tmp, path in group:
                    os.replace(tmp, path)
    finally:
        if token is not None:
            _GROUP.reset(token)
        with deferred_signals():
            for tmp, _ in group:
                if os.path.lexists(tmp):
                    os.unlink(tmp)


def pending_file(path: str | os.PathLike) -> Path:
    """The file that holds what was last written to ``path`` in :func:`written_together`'s block, else ``path``."""
    where = _where(path)
    for tmp, destination in reversed(_GROUP.get() or []):
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
    """``(record, None)`` for ``folder``'s :data:`MARKER`; ``(None, why)`` when the suite could not have written it.

    Read with the bounded parser (:func:`negplugins.io.jsonfile.read_json`): a marker nested 100,000
    deep, too large, with duplicate keys or not JSON is not the suite's, never a ``RecursionError``.
    ``(None, None)``: there is no marker.
    """
    from .jsonfile import read_json

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


def _owned(folder: Path, legacy: Callable[[Path], bool] | None) -> bool:
    record, _ = _read_marker(folder)
    if record is not None:
        present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}
        return present - {MARKER} <= set(record["files"])
    if any(_legacy_manifest(folder / name) for name in LEGACY_MANIFESTS):
        return True
    return legacy is not None and legacy(folder)


def _legacy_manifest(path: Path) -> bool:
    """Whether ``path`` is an index or shard manifest the suite could have written (a JSON object, bounded read)."""
    from .jsonfile import read_json

    if not path.is_file():
        return False
    try:
        return isinstance(read_json(path, what="index manifest", max_bytes=MAX_MARKER_BYTES), dict)
    except UserError:
        return False


def _nearest_existing(path: Path) -> Path | None:
    """``path`` or its nearest ancestor that exists (``None`` if none can be seen)."""
    for candidate in [path, *path.parents]:
        if os.path.lexists(candidate):
            return candidate
    return None


def check_folder_output(path: str | os.PathLike, legacy: Callable[[Path], bool] | None = None,
                        inputs: Iterable = ()) -> None:
    """Refuse a folder output that the suite may not replace (see the module's description).

    Parameters
    ----------
    path : path
        The folder to create or replace.
    legacy : callable, optional
        ``legacy(folder) -> bool``: also recognise an older output of the calling command (one written
        before :data:`MARKER` existed).
    inputs : iterable of paths
        What the command reads besides its declared inputs; the folder may not be, be inside or hold one.

    Raises
    ------
    OutputError
        With one line naming the folder and why it is not replaced.
    """
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
        above = _nearest_existing(path.parent)
        if above is not None and not above.is_dir():
            raise OutputError(f"{path}: cannot be created, {above} is not a folder")
        check_not_input(path, inputs, folder=True)
        return
    if not path.is_dir():
        raise OutputError(f"{path}: exists and is not a folder")
    if (path / ".git").exists():
        raise OutputError(f"{path}: is a repository root (holds .git); give a new folder as the output")
    if not any(path.iterdir()) or _owned(path, legacy):
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
    """Hold an exclusive lock on ``path`` (a file or folder about to be written) for the block.

    The lock is ``fcntl.flock`` on ``.<name>.lock`` beside ``path``; the file is removed when the lock
    is released (a waiting process notices and locks the new file). Re-entrant within a process.

    Raises
    ------
    OutputError
        Another process held the lock longer than ``NEGPLUGINS_LOCK_TIMEOUT`` seconds.
    """
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
    """Clean up after killed builds of ``path``; only called while holding ``path``'s lock.

    ``.<name>.*.partial`` leftovers are removed, except a previous output that a build killed outright
    (SIGKILL, a power cut) had moved aside (``.<name>.old-*.partial/<name>``) and not yet replaced: when
    ``path`` is missing, that output is put back first.
    """
    for stale in sorted(path.parent.glob(f".{glob_escape(path.name)}.old-*.partial")):
        aside = stale / path.name
        if stale.is_dir() and not stale.is_symlink() and os.path.lexists(aside) and not os.path.lexists(path):
            os.replace(aside, path)
    for stale in path.parent.glob(f".{glob_escape(path.name)}.*.partial"):
        _remove(stale)


def _remove(path: Path) -> None:
    """Remove the file or folder ``path`` if it exists (a folder's symbolic link is removed, not followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def glob_escape(name: str) -> str:
    """``name`` with the glob characters ``*?[`` escaped."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


@contextlib.contextmanager
def scratch_directory(path: str | os.PathLike, label: str = "scratch"):
    """A temporary folder beside ``path`` (``.<name>.<label>-*.partial``), removed when the block ends.

    It is not in the system's temporary folder, so a build killed outright (SIGKILL) leaves it where the
    next build of ``path`` removes it. Use it while holding :func:`output_lock` on ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        with deferred_signals():
            tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.{label}-", suffix=".partial", dir=path.parent))
        yield tmp
    finally:
        with deferred_signals():
            if tmp is not None:
                _remove(tmp)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike, *, legacy: Callable[[Path], bool] | None = None, inputs: Iterable = ()):
    """Yield a temporary directory beside ``path``; it becomes ``path`` only if the block succeeds.

    An existing ``path`` is replaced only if :func:`check_folder_output` allows it (checked before the
    block and again before the swap). :data:`MARKER` is written into the new folder, listing its files.
    The build holds :func:`output_lock` on ``path``; leftovers of interrupted builds
    (``.<name>.*.partial``) are never read, and are removed by the next build.

    The swap is all or nothing, whatever stops the command: the previous folder is moved aside, the new
    one renamed into place, and the previous one removed, with SIGINT and SIGTERM held back
    (:func:`negplugins.io.interrupts.deferred_signals`). A signal that came before the new folder was in
    place, or an error at any step, puts the previous folder back (and removes the new one), so the
    command exits 130 (143) with ``path`` exactly as it was; a signal that came after the new folder was in
    place (while the previous one was being removed) is delivered once the removal is done.

    Parameters
    ----------
    path : path
        The folder to create or replace.
    legacy, inputs : optional
        Passed to :func:`check_folder_output`.
    """
    path = Path(path)
    inputs = [source for source in inputs if source is not None]
    check_folder_output(path, legacy, inputs)
    with output_lock(path):
        _remove_stale_partials(path)
        tmp = None
        try:
            with deferred_signals():
                tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent))
            yield tmp
            write_marker(tmp)
            os.chmod(tmp, 0o777 & ~_umask())
            _swap(tmp, path, legacy)
        finally:
            with deferred_signals():
                if tmp is not None:
                    _remove(tmp)


def _swap(new: Path, path: Path, legacy: Callable[[Path], bool] | None) -> None:
    """Put the folder ``new`` at ``path``, the previous ``path`` removed; on any failure or signal, undo."""
    check_not_stopping()
    with deferred_signals() as pending:
        aside = None
        committed = False
        try:
            if pending:  # a signal came just before: the previous folder stays, untouched
                return
            if os.path.lexists(path):
                check_folder_output(path, legacy)
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
    """Put the previous folder (in ``aside``) back at ``path`` and the new one back at ``new``.

    What moved is read off the file system, so this is right whichever step the swap stopped at.

    Raises
    ------
    OutputError
        The previous folder could not be put back (it stays in ``aside``, where the next build restores it).
    """
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


