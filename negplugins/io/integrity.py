"""What a cache of the suite held when it was built, checked before it is used again: each file's size and, for the
files searched without a check of their own (a faiss ``index`` and its ``docid`` list), its SHA-256. A damaged
index is rebuilt, never searched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from .sidecars import file_sha256

__all__ = ["file_records", "damage"]


def file_records(folder: str | os.PathLike, skip: Iterable[str] = (), hashed: Iterable[str] = ()) -> dict:
    """``{name: {"bytes": size[, "sha256": hash]}}`` for every file directly in ``folder`` but ``skip``, with the
    SHA-256 of those ``hashed``."""
    folder = Path(folder)
    skip, hashed = set(skip), set(hashed)
    records = {}
    for path in sorted(folder.iterdir()):
        if path.name in skip or not path.is_file():
            continue
        record = {"bytes": path.stat().st_size}
        if path.name in hashed:
            record["sha256"] = file_sha256(path)
        records[path.name] = record
    return records


def damage(folder: str | os.PathLike, records, hashes: bool = True) -> str | None:
    """The first difference between ``folder`` and the ``records`` of :func:`file_records` (``"_0.fdm has 78 bytes,
    157 when built"``), or ``None``; ``hashes`` also compares the SHA-256 (reading those files)."""
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
        if hashes and isinstance(record.get("sha256"), str) and file_sha256(path) != record["sha256"]:
            return f"{name} does not hold the bytes it was built with (SHA-256 differs)"
    return None
