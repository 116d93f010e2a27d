"""Export a registered dataset in BEIR's folder layout.

``negplugins export beir comlq/negation out/comlq-negation`` writes::

    out/comlq-negation/corpus.jsonl     {"_id", "title", "text"[, "metadata"]}  one document a line
    out/comlq-negation/queries.jsonl    {"_id", "text"[, "metadata"]}           one query a line
    out/comlq-negation/qrels/test.tsv   query-id<TAB>corpus-id<TAB>score, after that header line

Texts are written as the dataset gives them (not re-normalised). A document's ``title`` and ``text`` are
its :func:`negplugins.datasets.document_fields`: the ``title`` field, ``""`` when it has none, and the
``text`` field (``default_text()`` when it has none); extra record fields (ComLQ ``answer``, ``type``,
``structure``, ``num_evidence``, ``has_negation``; BoolQuestions ``question_type``; a document's
``origin``...) go under ``metadata`` with their JSON types, where BEIR's loader ignores them. Every
qrels row is kept in the dataset's order, explicit negatives (``-1``) and zeros included; BEIR's
``GenericDataLoader`` keeps them too (it converts the score with ``int`` and filters nothing), so
``GenericDataLoader(data_folder=DIR).load("test")`` returns the same labels. It returns only the
judged queries, as for any BEIR dataset; ``queries.jsonl`` holds them all.

The folder is built beside its destination and renamed into place only when complete; it carries the
suite's marker (:data:`negplugins.io.files.MARKER`, ignored by BEIR's loader), and an existing folder is
replaced only with ``overwrite`` and only when it holds nothing but an earlier export.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from .. import datasets
from ..errors import UserError
from ..io.files import MARKER, atomic_directory, check_folder_output
from .folder import QRELS_HEADER, read_beir_folder

__all__ = ["export_beir", "BEIR_FILES"]

#: What an exported folder holds (an existing folder with anything else is never replaced).
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


def _extra_fields(record, core) -> dict:
    fields = getattr(record, "_fields", ())
    return {name: _json_value(getattr(record, name)) for name in fields if name not in core}


def _doc_line(doc) -> dict:
    doc_id = _check_id("document", doc.doc_id)
    title, text = datasets.document_fields(doc)
    line = {"_id": doc_id, "title": title, "text": text}
    extra = _extra_fields(doc, _DOC_CORE)
    if extra:
        line["metadata"] = extra
    return line


def _query_line(query) -> dict:
    query_id = _check_id("query", query.query_id)
    line = {"_id": query_id, "text": query.default_text()}
    extra = _extra_fields(query, _QUERY_CORE)
    if extra:
        line["metadata"] = extra
    return line


def _is_beir_export(folder: Path) -> bool:
    """An export written before folders carried the suite's marker: BEIR's files and nothing else."""
    return all(p.name in BEIR_FILES for p in folder.iterdir()) and \
        all(p.name.endswith(".tsv") for p in (folder / "qrels").iterdir() if (folder / "qrels").is_dir())


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
    """Write a registered dataset as a BEIR folder.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id, e.g. ``comlq``, ``comlq/2in`` or ``negplugins-demo``.
    directory : path
        The folder to create. It is written beside its destination and renamed into place at the end.
    split : str
        Name of the qrels file, ``qrels/<split>.tsv`` (``test`` by default, what
        ``GenericDataLoader.load()`` reads).
    overwrite : bool
        Replace an existing, non-empty folder, provided it holds nothing but a BEIR export.
    verify : bool
        Re-read the written folder with :func:`~negplugins.beir.folder.read_beir_folder` before
        renaming it into place, and check the counts.

    Returns
    -------
    dict
        ``dataset``, ``path``, ``docs``, ``queries``, ``judged_queries``, ``qrels`` and the number of
        qrels rows per label (``qrels_label_-1``, ``qrels_label_1``...).

    Raises
    ------
    UserError
        Unknown dataset, a dataset without documents, queries or qrels, an id that a BEIR file cannot
        hold, a duplicate document or query id, qrels for a query the dataset does not have, or a
        destination that exists and may not be replaced.
    """
    if not split or any(c in split for c in "/\\") or split.startswith("."):
        raise UserError(f"split {split!r} must be a plain file name")
    dataset = datasets.load(dataset_id)
    for what, has in (("documents", dataset.has_docs()), ("queries", dataset.has_queries()),
                      ("qrels", dataset.has_qrels())):
        if not has:
            raise UserError(f"{dataset_id} has no {what}; a BEIR folder needs documents, queries and qrels")
    path = Path(directory)
    _check_destination(path, overwrite)
    check_folder_output(path, legacy=_is_beir_export)

    with atomic_directory(path, legacy=_is_beir_export) as tmp:
        doc_ids: set[str] = set()
        with open(tmp / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for doc in dataset.docs_iter():
                line = _doc_line(doc)
                if line["_id"] in doc_ids:
                    raise UserError(f"{dataset_id}: duplicate document id {line['_id']!r}")
                doc_ids.add(line["_id"])
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        query_ids: set[str] = set()
        with open(tmp / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for query in dataset.queries_iter():
                line = _query_line(query)
                if line["_id"] in query_ids:
                    raise UserError(f"{dataset_id}: duplicate query id {line['_id']!r}")
                query_ids.add(line["_id"])
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        (tmp / "qrels").mkdir()
        labels: dict[str, int] = {}
        judged: set[str] = set()
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
                judged.add(query_id)
                labels[str(qrel.relevance)] = labels.get(str(qrel.relevance), 0) + 1
                writer.writerow((query_id, doc_id, int(qrel.relevance)))
        info = {"dataset": dataset_id, "path": str(path), "docs": len(doc_ids), "queries": len(query_ids),
                "judged_queries": len(judged), "qrels": len(pairs),
                **{f"qrels_label_{k}": v for k, v in sorted(labels.items())}}
        if verify:
            counts = read_beir_folder(tmp, split=split, require_docs=False).counts()
            expected = {k: v for k, v in info.items() if k not in ("dataset", "path")}
            if counts != expected:
                raise UserError(f"{dataset_id}: the written BEIR folder reads back differently ({counts} != {expected})")
    return info
