"""What a cache of the suite held when it was built, checked before it is used again.

Indexes are rebuilt from the datasets, so a damaged one (a copy cut short, a disk error, flipped bytes)
should be rebuilt, not searched: a truncated Lucene index was reported "up-to-date", and a dense index with
flipped bytes was searched without complaint (scores of 2.3e27 for L2-normalised vectors). At build time the
manifest records each file's size (:func:`file_records`), and for the files whose bytes are searched without
any check of their own (the faiss ``index`` and its ``docid`` list) their SHA-256 too; :func:`damage`
compares them on open. Sizes cost a ``stat`` per file; a SHA-256 reads the file once (about 1 GB/s on one
core), which for a dense index is the same order as faiss reading it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable

__all__ = ["file_records", "damage", "sha256_of"]

_BLOCK = 1 << 20


def sha256_of(path: str | os.PathLike) -> str:
    """The SHA-256 of the file ``path`` (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def file_records(folder: str | os.PathLike, skip: Iterable[str] = (), hashed: Iterable[str] = ()) -> dict:
    """``{name: {"bytes": size[, "sha256": hash]}}`` for every file directly in ``folder`` except ``skip``.

    Parameters
    ----------
    folder : path
        A folder just built.
    skip : iterable of str
        Names left out (the manifest being written, the suite's marker).
    hashed : iterable of str
        Names whose SHA-256 is recorded as well.
    """
    folder = Path(folder)
    skip, hashed = set(skip), set(hashed)
    records = {}
    for path in sorted(folder.iterdir()):
        if path.name in skip or not path.is_file():
            continue
        record = {"bytes": path.stat().st_size}
        if path.name in hashed:
            record["sha256"] = sha256_of(path)
        records[path.name] = record
    return records


def damage(folder: str | os.PathLike, records, hashes: bool = True) -> str | None:
    """What differs between ``folder`` and the ``records`` of :func:`file_records`, or ``None``.

    Parameters
    ----------
    folder : path
        The folder to check.
    records : dict
        Its manifest's records; anything else (an older manifest without them) is not checked.
    hashes : bool
        Also compare the recorded SHA-256 (reads those files).

    Returns
    -------
    str or None
        The first difference, e.g. ``"_0.fdm has 78 bytes, 157 when built"``.
    """
    if not isinstance(records, dict):
        return None
    folder = Path(folder)
    for name, record in records.items():
        if not isinstance(record, dict) or "/" in str(name):
            continue
        path = folder / str(name)
        try:
            size = path.stat().st_size
        except OSError:
            return f"{name} is missing"
        if isinstance(record.get("bytes"), int) and size != record["bytes"]:
            return f"{name} has {size:,} bytes, {record['bytes']:,} when built"
        if hashes and isinstance(record.get("sha256"), str) and sha256_of(path) != record["sha256"]:
            return f"{name} does not hold the bytes it was built with (SHA-256 differs)"
    return None
