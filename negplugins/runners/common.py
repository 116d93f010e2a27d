"""What several runners need: Pyserini's topic order, an index's default folder and the manifest the suite writes
into every index it builds (Lucene, SPLADE, ColBERT, faiss).
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import datasets
from ..errors import UserError
from ..io.jsonfile import read_json

__all__ = ["MANIFEST", "MAX_MANIFEST_BYTES", "default_index_path", "pyserini_topic_order", "read_index_record",
           "read_manifest"]

#: File inside every index the suite builds; an index without it is never reused.
MANIFEST = "negplugins-index.json"
#: Largest index manifest read (the suite writes a few hundred bytes).
MAX_MANIFEST_BYTES = 1024 * 1024


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
    """The manifest of an index the suite built, or ``None`` (none, or not one the suite could have written).

    Read with the bounded parser (:func:`negplugins.io.jsonfile.read_json`), so a hostile manifest
    (nested 100,000 deep, huge, duplicate keys) is not an index of the suite, never a ``RecursionError``.
    """
    return read_index_record(Path(index) / MANIFEST, "index manifest")


def read_index_record(path: Path, what: str) -> dict | None:
    """The JSON object at ``path`` that the suite wrote into an index (a manifest, a shard's manifest), or ``None``
    when there is none it could have written; ``what`` names it in the bounded parser's errors."""
    if not path.is_file():
        return None
    try:
        record = read_json(path, what=what, max_bytes=MAX_MANIFEST_BYTES)
    except UserError:
        return None
    return record if isinstance(record, dict) else None
