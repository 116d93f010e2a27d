"""Pyserini topics and qrels for any registered dataset: the topic files ``negplugins topics`` writes
(``qid<TAB>text``), and what stock Pyserini's topic and qrels names resolve to once the import hook is installed
(docs/stock-tools.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import ir_datasets

from .. import datasets
from ..errors import UserError
from .files import atomic_writer
from .outputs import check_replaceable_file, write_file_output

__all__ = ["default_topics_path", "write_topics", "is_topic_name", "pyserini_topics", "pyserini_qrels_file",
           "QRELS_FOLDER"]

#: Folder below ``$IR_DATASETS_HOME/<family>/`` of the qrels files written for Pyserini's qrels names.
QRELS_FOLDER = "trec-qrels"


def default_topics_path(dataset_id: str) -> Path:
    """``topics/<dataset id with / as ->.tsv``, e.g. ``topics/comlq-negation.tsv``."""
    return Path("topics") / f"{datasets.slug(dataset_id)}.tsv"


def write_topics(dataset_id: str, output: str | os.PathLike | None = None, force: bool = False) -> tuple[Path, int]:
    """Write the queries of ``dataset_id``, each on one line, as a TSV topic file Pyserini reads as-is (not at a
    path holding ``beir`` or ``cacm``, read otherwise by Pyserini); the file and the number of topics."""
    path = Path(output) if output is not None else default_topics_path(dataset_id)
    if "beir" in str(path) or "cacm" in str(path):
        raise UserError(f"{path}: Pyserini reads topic paths containing 'beir' or 'cacm' with a special reader; "
                        f"choose another name")
    check_replaceable_file(path, force=force)
    texts = datasets.query_texts(datasets.load(dataset_id))
    write_file_output(path, "".join(f"{query_id}\t{text}\n" for query_id, text in texts.items()), force=force)
    return path, len(texts)


def is_topic_name(name: str) -> bool:
    """Whether ``name`` is a dataset id of the suite (``comlq``, ``excluir/test``), not one of ir_datasets' own."""
    return isinstance(name, str) and name in ir_datasets.registry and datasets.benchmark_of(name) is not None


def pyserini_topics(dataset_id: str) -> dict:
    """The queries of ``dataset_id`` as Pyserini's ``get_topics`` returns them, ``{qid: {"title": text}}``, an id of
    digits an ``int`` unless it has a leading zero. ValueError for a dataset without queries."""
    dataset = _with_part(dataset_id, "queries")
    return {int(qid) if qid.isascii() and qid.isdigit() and str(int(qid)) == qid else qid: {"title": text}
            for qid, text in datasets.query_texts(dataset).items()}


def _with_part(dataset_id: str, part: str):
    """The dataset, when it has ``part`` (``queries``, ``qrels``); else the ValueError Pyserini's callers expect,
    naming the ids that have it (``dataset 'excluir' has no queries: use excluir/test``)."""
    dataset = datasets.load(dataset_id)
    if not getattr(dataset, f"has_{part}")():
        having = datasets.ids_with(dataset_id, part)
        hint = f": use {', '.join(having)}" if having else ""
        raise ValueError(f"negplugins: dataset {dataset_id!r} has no {part}{hint}")
    return dataset


def pyserini_qrels_file(dataset_id: str) -> Path:
    """The TREC qrels file (``qid 0 docid relevance``) of ``dataset_id`` that Pyserini's qrels names resolve to, in
    the ir_datasets cache; rewritten when it no longer holds the dataset's judgements. ValueError without qrels."""
    dataset = _with_part(dataset_id, "qrels")
    text = "".join(f"{q.query_id} 0 {q.doc_id} {q.relevance}\n" for q in dataset.qrels_iter()).encode("utf-8")
    path = ir_datasets.util.home_path() / dataset_id.split("/")[0] / QRELS_FOLDER / f"{datasets.slug(dataset_id)}.qrels"
    if not (path.is_file() and path.stat().st_size == len(text) and path.read_bytes() == text):
        with atomic_writer(path, "wb") as f:
            f.write(text)
    return path
