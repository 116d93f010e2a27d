"""What a command reads, and the one rule that keeps every output off it (``--force`` replaces a previous output,
never an input): the inputs its code passes, and those declared for the whole command with :func:`reading` (the
datasets' files and the paths of the options it reads).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

from ..errors import OutputError

__all__ = ["Source", "SUITE_CACHE", "reading", "dataset_files", "options_read", "command_inputs",
           "check_not_input", "same_file", "inside"]

#: The suite's own caches in the ir_datasets home (document id sets): written by the suite, no dataset's file.
SUITE_CACHE = "negplugins"


class Source(NamedTuple):
    """Something a command reads: a file or folder, how messages name it, and folders inside it the suite writes."""

    path: Path
    what: str = ""
    holes: tuple[Path, ...] = ()

    def named(self) -> str:
        return f"{self.what} {self.path}" if self.what else str(self.path)


_DECLARED: contextvars.ContextVar[tuple[Source, ...]] = contextvars.ContextVar("negplugins_command_inputs", default=())


def _source(item) -> Source:
    return item if isinstance(item, Source) else Source(Path(item))


@contextlib.contextmanager
def reading(*sources):
    """Declare what the code in the block reads (paths, :class:`Source`, ``None`` skipped): no output may be one."""
    token = _DECLARED.set(_DECLARED.get() + tuple(_source(s) for s in sources if s is not None))
    try:
        yield
    finally:
        _DECLARED.reset(token)


def dataset_files() -> list[Source]:
    """The datasets' files: each benchmark's folder in the mirror (``IR_DATASETS_EXT_MIRROR``: releases and derived
    copies) and the ir_datasets cache (``IR_DATASETS_HOME``, default ``~/.ir_datasets``), less the suite's own caches
    there (:data:`SUITE_CACHE`)."""
    from ir_datasets_ext.download import MIRROR_ENV, benchmark_folders, mirror_root

    from ..environment import IR_DATASETS_HOME, ir_datasets_home

    mirror = mirror_root()
    folders = benchmark_folders() if mirror is not None else []
    home = ir_datasets_home()
    return [*(Source(mirror / folder, f"the dataset mirror ({MIRROR_ENV})") for folder in folders),
            Source(home, f"the ir_datasets cache ({IR_DATASETS_HOME})", (home / SUITE_CACHE,))]


def options_read(*names: str) -> Callable[[object], list[Path]]:
    """For a command's ``set_defaults(reads=...)``: it reads the paths given to the options ``names`` (a value that
    names nothing on disk, such as a model id of the Hugging Face cache, is left out)."""
    def paths(args) -> list[Path]:
        found = []
        for name in names:
            value = getattr(args, name, None)
            for item in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(item, (str, os.PathLike)) and str(item) and os.path.lexists(item):
                    found.append(Path(item))
        return found
    return paths


def command_inputs(args) -> list[Source]:
    """Everything the parsed command ``args`` reads: the datasets' files and its ``reads`` (:func:`options_read`)."""
    reads = getattr(args, "reads", None)
    return [*dataset_files(), *map(_source, reads(args) if reads is not None else [])]


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name the same file: same inode (links followed) or same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def inside(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether ``path`` lies inside ``folder`` (links resolved, so ``idx/../idx/x`` is inside ``idx``)."""
    try:
        real, root = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return False
    return root in real.parents


def _conflict(path: Path, source: Source, folder: bool) -> str | None:
    """Why the output ``path`` may not be written given that the command reads ``source`` (``None``: it may)."""
    if same_file(path, source.path):
        if folder:
            return f"is {source.named()}, which this command reads; give a new folder as the output"
        return f"is the same file as the input {source.named()}; write the output to another file"
    if inside(path, source.path) and not any(same_file(path, hole) or inside(path, hole) for hole in source.holes):
        return (f"is inside {source.named()}, which this command reads; write the output elsewhere "
                f"(--force replaces a previous output, never an input of the same command)")
    if folder and inside(source.path, path):
        return (f"holds {source.named()}, which this command reads (replacing the folder would delete it); "
                f"give a new folder as the output")
    return None


def check_not_input(path: str | os.PathLike, inputs: Iterable = (), *, folder: bool = False) -> None:
    """Refuse the output ``path`` that is, is inside or (a ``folder``) holds one of ``inputs`` or :func:`reading`'s."""
    path = Path(path)
    for source in [*(_source(s) for s in inputs if s is not None), *_DECLARED.get()]:
        problem = _conflict(path, source, folder)
        if problem:
            raise OutputError(f"{path}: {problem}")
