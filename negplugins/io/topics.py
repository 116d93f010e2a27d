"""Pyserini topics and qrels for any registered dataset: topic files (``qid<TAB>text``), topic and qrels names.

:func:`write_topics` writes the file ``negplugins topics`` makes; :func:`pyserini_topics` gives the same
topics as Pyserini's ``get_topics`` returns them, which is what ``--topics comlq`` resolves to in stock
Pyserini once the import hook is installed (:mod:`negplugins._compat.pyserini_topics`).
:func:`pyserini_qrels_file` is what a qrels name (``python -m pyserini.eval.trec_eval ... comlq run.trec``)
resolves to there: a TREC qrels file of the dataset's judgements, kept in the ir_datasets cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import datasets

__all__ = ["default_topics_path", "write_topics", "is_topic_name", "pyserini_topics", "pyserini_qrels_file",
           "QRELS_FOLDER"]

#: Folder below ``$IR_DATASETS_HOME/<family>/`` of the qrels files written for Pyserini's qrels names.
QRELS_FOLDER = "trec-qrels"


def default_topics_path(dataset_id: str) -> Path:
    """``topics/<dataset id with / as ->.tsv``, e.g. ``topics/comlq-negation.tsv``."""
    return Path("topics") / f"{datasets.slug(dataset_id)}.tsv"


def write_topics(dataset_id: str, output: str | os.PathLike | None = None, force: bool = False) -> tuple[Path, int]:
    """Write the queries of ``dataset_id`` as a TSV topic file that Pyserini reads as-is.

    Query text is put on one line (tabs and newlines become spaces), so the file always has two
    columns. Pyserini reads a path containing ``beir`` or ``cacm`` with another topic reader, so
    such paths are refused.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    output : path, optional
        Destination; defaults to :func:`default_topics_path` (generated, git-ignored; see ``topics/README.md``).
    force : bool
        Replace an existing destination that holds anything else (by default it is replaced only when
        it already holds exactly these topics: then it is left untouched, see
        :func:`negplugins.io.outputs.write_file_output`), even one tracked by git.

    Returns
    -------
    (Path, int)
        The file written and the number of topics in it.
    """
    from ..errors import UserError
    from .outputs import check_replaceable_file, write_file_output

    path = Path(output) if output is not None else default_topics_path(dataset_id)
    if "beir" in str(path) or "cacm" in str(path):
        raise UserError(f"{path}: Pyserini reads topic paths containing 'beir' or 'cacm' with a special reader; "
                        f"choose another name")
    check_replaceable_file(path, force=force)
    texts = datasets.query_texts(datasets.load(dataset_id))
    write_file_output(path, "".join(f"{query_id}\t{text}\n" for query_id, text in texts.items()), force=force)
    return path, len(texts)


def is_topic_name(name: str) -> bool:
    """Whether ``name`` is a dataset id of the suite registered with ir_datasets (``comlq``, ``excluir/test``).

    Ids of ir_datasets' own datasets are not topic names of the suite: Pyserini keeps its own meaning for them.
    """
    import ir_datasets

    return isinstance(name, str) and name in ir_datasets.registry and datasets.benchmark_of(name) is not None


def pyserini_topics(dataset_id: str) -> dict:
    """The queries of ``dataset_id`` as Pyserini's ``get_topics`` returns topics: ``{qid: {"title": text}}``.

    The text is the one :func:`write_topics` puts in the topic file (on one line), and the ids are what
    Pyserini makes of that file's: an id of digits becomes an ``int`` (Pyserini then orders the queries
    numerically), every other id stays a string. An id of digits with a leading zero (``"007"``) is kept a
    string, where Pyserini, reading a file, would turn it into ``7`` and write that id into the run.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id with queries.

    Returns
    -------
    dict
        ``{qid: {"title": text}}`` in the dataset's order.

    Raises
    ------
    ValueError
        The dataset has no queries (a corpus-only id such as ``excluir``); the message names the ids that have.
    """
    dataset = _with_part(dataset_id, "queries")
    return {_pyserini_id(query_id): {"title": text} for query_id, text in datasets.query_texts(dataset).items()}


def _with_part(dataset_id: str, part: str):
    """The dataset, when it has ``part`` (``queries``, ``qrels``); else the ValueError Pyserini's callers expect,
    naming the ids that have it (``dataset 'excluir' has no queries: use excluir/test``)."""
    dataset = datasets.load(dataset_id)
    if not getattr(dataset, f"has_{part}")():
        having = datasets.ids_with(dataset_id, part)
        hint = f": use {', '.join(having)}" if having else ""
        raise ValueError(f"negplugins: dataset {dataset_id!r} has no {part}{hint}")
    return dataset


def _pyserini_id(query_id: str):
    return int(query_id) if query_id.isascii() and query_id.isdigit() and str(int(query_id)) == query_id else query_id


def pyserini_qrels_file(dataset_id: str) -> Path:
    """A TREC qrels file (``qid 0 docid relevance``) of ``dataset_id``'s judgements, for Pyserini's qrels names.

    Pyserini's ``get_qrels_file(name)`` (what ``pyserini.eval.trec_eval`` calls for a qrels argument that is no
    file) returns a file it caches under ``~/.cache/pyserini``. The suite's datasets get theirs in the ir_datasets
    cache, beside the dataset's docstore: ``$IR_DATASETS_HOME/<family>/trec-qrels/<dataset id, / as ->.qrels``,
    one line per judgement in the dataset's order, labels as they are (ComLQ's 1 and 2, explicit negatives -1).
    It is written (atomically, with a plain file's permissions) when absent or when it no longer holds exactly
    the dataset's judgements, so a changed dataset never leaves a stale file; otherwise it is left untouched.

    Raises
    ------
    ValueError
        The dataset has no qrels (a corpus-only id such as ``excluir``); the message names the ids that have.
    """
    import ir_datasets

    from .files import atomic_writer

    dataset = _with_part(dataset_id, "qrels")
    text = "".join(f"{q.query_id} 0 {q.doc_id} {q.relevance}\n" for q in dataset.qrels_iter()).encode("utf-8")
    path = ir_datasets.util.home_path() / dataset_id.split("/")[0] / QRELS_FOLDER / f"{datasets.slug(dataset_id)}.qrels"
    if not (path.is_file() and path.stat().st_size == len(text) and path.read_bytes() == text):
        with atomic_writer(path, "wb") as f:
            f.write(text)
    return path
