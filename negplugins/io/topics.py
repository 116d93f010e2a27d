"""Pyserini topic files (``qid<TAB>text``) for any registered dataset."""

from __future__ import annotations

import os
from pathlib import Path

from .. import datasets

__all__ = ["default_topics_path", "write_topics"]


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
