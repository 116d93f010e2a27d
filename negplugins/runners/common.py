"""What several runners share: Pyserini's topic order, an index's default folder and the manifest the suite writes
into every index it builds."""

from __future__ import annotations

import os
from pathlib import Path

from .. import datasets
from ..errors import UserError
from ..io.jsonfile import read_json

#: File inside every index the suite builds; an index without it is never reused.
MANIFEST = "negplugins-index.json"


def pyserini_topic_order(query_ids) -> list[str]:
    """Order topics as Pyserini does: integer ids numerically, otherwise as strings."""
    ids = list(query_ids)
    if all(query_id.isdigit() for query_id in ids):
        return sorted(ids, key=int)
    return sorted(ids)


def default_index_path(dataset_id: str, kind: str = "lucene") -> Path:
    """``indexes/<kind>/<corpus>``, where corpus is the shortest dataset id with the same documents."""
    return Path("indexes") / kind / datasets.slug(datasets.docs_root_id(dataset_id))


def read_manifest(index: str | os.PathLike) -> dict | None:
    """The manifest of an index the suite built, or ``None`` (none, or one the suite could not have written)."""
    return read_index_record(Path(index) / MANIFEST, "index manifest")


def read_index_record(path: Path, what: str) -> dict | None:
    """The JSON object the suite wrote at ``path`` in an index (bounded parser: a hostile file is ``None``)."""
    if not path.is_file():
        return None
    try:
        record = read_json(path, what=what, max_bytes=1024 * 1024)  # the suite writes a few hundred bytes
    except UserError:
        return None
    return record if isinstance(record, dict) else None
