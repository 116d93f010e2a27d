"""The variables the command line checks before any work (ir_datasets creates its home folder while it is being
imported, before a failure could be one line), and the caches it may tell the user to remove.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .errors import ERRNO_CAUSES, UserError

__all__ = ["IR_DATASETS_HOME", "check_environment", "ir_datasets_home", "cache_folders", "nearest_existing"]

IR_DATASETS_HOME = "IR_DATASETS_HOME"


def ir_datasets_home() -> Path:
    """ir_datasets' cache folder: ``$IR_DATASETS_HOME``, else ``~/.ir_datasets`` (ir_datasets' own default)."""
    value = os.environ.get(IR_DATASETS_HOME)
    return Path(value) if value else Path.home() / ".ir_datasets"


def nearest_existing(path: Path) -> Path | None:
    """``path`` or its nearest ancestor that exists (``None`` if none can be seen); links are not followed."""
    for candidate in [path, *path.parents]:
        if os.path.lexists(candidate):
            return candidate
    return None


def check_environment() -> None:
    """Refuse, in one line naming the variable, an ``IR_DATASETS_HOME`` that ir_datasets cannot use (a read-only one
    is accepted: a shared cache)."""
    home = ir_datasets_home()
    value = os.environ.get(IR_DATASETS_HOME)
    named = f"{IR_DATASETS_HOME}={value}" if value else f"{home} (ir_datasets' default, {IR_DATASETS_HOME} not set)"
    todo = f"set {IR_DATASETS_HOME} to a folder ir_datasets may create and write"
    try:
        os.stat(home)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):  # ir_datasets creates it: its nearest parent must allow it
            above = nearest_existing(home.parent)
            if above is not None and not above.is_dir():
                raise UserError(f"{named}: cannot be created, {above} is a file, not a folder; {todo}") from None
            if above is not None and not os.access(above, os.W_OK | os.X_OK):
                raise UserError(f"{named}: cannot be created, {above} is not writable (permissions or a read-only "
                                f"file system); {todo}") from None
            return
        what = (ERRNO_CAUSES.get(error.errno) or (error.strerror,))[0]
        raise UserError(f"{named}: {what}; {todo}") from None
    if not home.is_dir():
        raise UserError(f"{named}: is a file, not a folder; {todo}")


def cache_folders() -> list[Path]:
    """Folders of caches the suite rebuilds: the default indexes (``indexes/``) and the ir_datasets cache."""
    return [Path("indexes").absolute(), ir_datasets_home()]
