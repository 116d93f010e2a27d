"""Export a registered dataset as a BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.
Extra record fields go under ``metadata``; every qrels row is kept, ``-1`` and ``0`` included. See docs/runners.md.
"""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from pathlib import Path

from .. import datasets
from ..errors import UserError
from ..io.files import MARKER, atomic_directory, check_folder_output
from .folder import QRELS_HEADER, read_beir_folder

__all__ = ["export_beir", "BEIR_FILES"]

#: What an exported folder holds (a folder with anything else is never replaced).
BEIR_FILES = ("corpus.jsonl", "queries.jsonl", "qrels")

_DOC_CORE = ("doc_id", "title", "text")
_QUERY_CORE = ("query_id", "text", "query")


def _check_id(kind: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise UserError(f"{kind} id {value!r} is not a non-empty string; cannot write it to a BEIR folder")
    if any(c in value for c in "\t\r\n"):
        raise UserError(f"{kind} id {value!r} contains a tab or line break; cannot write it to a BEIR qrels file")
    return value


def _json_value(value):
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return str(value)


def _line(record, core, **fields) -> dict:
    """``fields``, with the record's other fields under ``metadata`` when it has any."""
    extra = {name: _json_value(getattr(record, name)) for name in getattr(record, "_fields", ()) if name not in core}
    return {**fields, "metadata": extra} if extra else fields


def _doc_line(doc) -> dict:
    doc_id = _check_id("document", doc.doc_id)
    title, text = datasets.document_fields(doc)
    return _line(doc, _DOC_CORE, _id=doc_id, title=title, text=text)


def _query_line(query) -> dict:
    return _line(query, _QUERY_CORE, _id=_check_id("query", query.query_id), text=query.default_text())


def _write_jsonl(path: Path, lines, dataset_id: str, kind: str) -> set[str]:
    """Write one JSON object a line; the ids written (a UserError on a duplicate ``_id``)."""
    ids: set[str] = set()
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            if line["_id"] in ids:
                raise UserError(f"{dataset_id}: duplicate {kind} id {line['_id']!r}")
            ids.add(line["_id"])
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return ids


def _check_destination(path: Path, overwrite: bool) -> None:
    if path.exists() and not path.is_dir():
        raise UserError(f"{path}: exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        if not overwrite:
            raise UserError(f"{path}: folder exists and is not empty (use --overwrite to replace an exported "
                            f"BEIR folder)")
        strangers = sorted(p.name for p in path.iterdir() if p.name not in (*BEIR_FILES, MARKER))
        if strangers:
            raise UserError(f"{path}: not replacing a folder that holds more than a BEIR export "
                            f"({', '.join(strangers[:3])}{'...' if len(strangers) > 3 else ''})")


def export_beir(dataset_id: str, directory: str | os.PathLike, split: str = "test", overwrite: bool = False,
                verify: bool = True) -> dict:
    """Write a registered dataset as a BEIR folder, built beside it and renamed into place when complete (``verify``:
    once read back with the same counts); the counts. ``overwrite`` replaces only an earlier export."""
    if not split or any(c in split for c in "/\\") or split.startswith("."):
        raise UserError(f"split {split!r} must be a plain file name")
    dataset = datasets.load(dataset_id)
    for what, has in (("documents", dataset.has_docs()), ("queries", dataset.has_queries()),
                      ("qrels", dataset.has_qrels())):
        if not has:
            raise UserError(f"{dataset_id} has no {what}; a BEIR folder needs documents, queries and qrels")
    path = Path(directory)
    _check_destination(path, overwrite)
    check_folder_output(path)

    with atomic_directory(path) as tmp:
        doc_ids = _write_jsonl(tmp / "corpus.jsonl", map(_doc_line, dataset.docs_iter()), dataset_id, "document")
        query_ids = _write_jsonl(tmp / "queries.jsonl", map(_query_line, dataset.queries_iter()), dataset_id, "query")
        (tmp / "qrels").mkdir()
        labels: Counter[str] = Counter()
        pairs: set[tuple[str, str]] = set()
        with open(tmp / "qrels" / f"{split}.tsv", "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
            writer.writerow(QRELS_HEADER)
            for qrel in dataset.qrels_iter():
                query_id, doc_id = _check_id("query", qrel.query_id), _check_id("document", qrel.doc_id)
                if query_id not in query_ids:
                    raise UserError(f"{dataset_id}: qrels judge query {query_id!r}, which is not among its queries "
                                    f"(BEIR's loader would fail with a KeyError)")
                if (query_id, doc_id) in pairs:
                    raise UserError(f"{dataset_id}: query {query_id!r}, document {doc_id!r} is judged twice")
                pairs.add((query_id, doc_id))
                labels[str(qrel.relevance)] += 1
                writer.writerow((query_id, doc_id, int(qrel.relevance)))
        info = {"dataset": dataset_id, "path": str(path), "docs": len(doc_ids), "queries": len(query_ids),
                "judged_queries": len({query_id for query_id, _ in pairs}), "qrels": len(pairs),
                **{f"qrels_label_{k}": v for k, v in sorted(labels.items())}}
        if verify:
            counts = read_beir_folder(tmp, split=split, require_docs=False).counts()
            expected = {k: v for k, v in info.items() if k not in ("dataset", "path")}
            if counts != expected:
                raise UserError(f"{dataset_id}: the written BEIR folder reads back differently ({counts} != {expected})")
    return info
