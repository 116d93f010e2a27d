"""Lucene indexes of registered datasets, built atomically and reused when up to date."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from importlib import metadata
from pathlib import Path

from .. import datasets
from .._compat import jvm
from ..errors import UserError
from ..io.files import MARKER, atomic_directory, check_folder_output, check_free_space, output_lock
from ..io.integrity import damage, file_records
from ..options import MAX_THREADS, check_int
from .common import MANIFEST, default_index_path, read_manifest

__all__ = ["MANIFEST", "anserini_indexer", "check_lucene_index", "check_undamaged", "default_index_path", "lucene_index",
           "open_lucene", "read_manifest"]

_FORMAT = 1

#: Most bytes of JSON documents handed to Anserini at once (one batch, in memory; nothing is written but the index).
BATCH_BYTES = 16 << 20
#: Disk an index takes per byte of its corpus file, an upper bound for the free space check: positions,
#: document vectors and raw documents (``-storePositions -storeDocvectors -storeRaw``) of the synthetic
#: BoolQuestions corpus of ``benchmarks/bench_scale.py`` took 1.65x its ``corpus.jsonl`` at 8.8M passages
#: (5.49 GiB for 3.34 GiB; the peak sampled during the build, merges included, was the same).
INDEX_SIZE_RATIO = 2.0
#: The same for a slim index (postings only, ``--slim``): 0.18x the synthetic corpus of 8.8M passages
#: (629 MiB for 3.3 GiB, build included), with room to spare.
SLIM_INDEX_SIZE_RATIO = 0.3
#: What a full index stores beyond its postings (Pyserini's ``-storePositions -storeDocvectors -storeRaw``);
#: a slim one stores none of it.
STORED = ("positions", "docvectors", "raw")
_STORE_FLAGS = {"positions": "-storePositions", "docvectors": "-storeDocvectors", "raw": "-storeRaw"}
#: Added to every index estimate (Lucene's files of a small index, file system blocks).
INDEX_SIZE_MARGIN = 4 << 20


def check_lucene_index(index: str | os.PathLike) -> Path:
    """Refuse, before Java opens it, an ``--index`` that is not a Lucene index; return it as a path.

    A Lucene index is a folder holding a commit point, ``segments_N`` (every index Anserini or
    Pyserini writes has one, the suite's included); a folder built by the suite also holds
    :data:`MANIFEST`, which must then say ``"kind": "lucene"`` (a faiss index is refused by name).

    Raises
    ------
    UserError
        With one line naming the folder and what was expected.
    """
    path = Path(index)
    if not path.exists():
        raise UserError(f"{path}: index folder not found; expected a Lucene index (built by 'negplugins index' "
                        f"or Pyserini)")
    if not path.is_dir():
        raise UserError(f"{path}: is not a folder; expected a Lucene index folder (built by 'negplugins index' "
                        f"or Pyserini)")
    manifest = read_manifest(path)
    if manifest is not None and manifest.get("kind") != "lucene":
        raise UserError(f"{path}: is a {str(manifest.get('kind'))[:40]} index built by negplugins, not a Lucene "
                        f"index; expected a folder built by 'negplugins index' or Pyserini")
    if not any(p.is_file() for p in path.glob("segments_*")):
        raise UserError(f"{path}: is not a Lucene index (no segments_N file); expected a folder built by "
                        f"'negplugins index' or Pyserini")
    check_undamaged(path, manifest)
    return path


def rebuild_hint(path: Path, manifest: dict | None) -> str:
    """The command that builds the index ``path`` again (its dataset from the manifest, when the suite built it)."""
    if manifest and manifest.get("kind") == "impact":
        return f"rebuild it with 'negplugins search splade {manifest.get('dataset') or 'DATASET'} --index {path} " \
               f"--rebuild ...', or with the Pyserini command that built it"
    dataset = (manifest or {}).get("dataset") or "DATASET"
    return f"rebuild it with 'negplugins index {dataset} --index {path} --rebuild' (or the Pyserini command that " \
           f"built it)"


def check_undamaged(path: Path, manifest: dict | None) -> None:
    """Refuse a Lucene index of the suite whose files differ from those recorded when it was built.

    Raises
    ------
    UserError
        One line naming the index, the damage and the command that rebuilds it.
    """
    damaged = damage(path, (manifest or {}).get("files"))
    if damaged:
        raise UserError(f"{path}: the Lucene index is damaged ({damaged}); {rebuild_hint(path, manifest)}")


#: Java exceptions Lucene raises when it opens an index whose files are damaged, cut short or missing.
DAMAGED_INDEX_EXCEPTIONS = ("CorruptIndexException", "IndexFormatTooOldException", "IndexFormatTooNewException",
                            "IndexNotFoundException", "EOFException", "NoSuchFileException", "FileNotFoundException")


def open_lucene(opener, path: str | os.PathLike):
    """``opener()`` (a Pyserini searcher of the index ``path``), with a damaged index refused in one line.

    Raises
    ------
    UserError
        Lucene found the index damaged: the message names it, Lucene's reason and the command that rebuilds it.
    """
    import pyserini.pyclass  # noqa: F401 - Anserini's jar on the classpath before jnius (below) starts the JVM
    from jnius import JavaException

    try:
        return opener()
    except JavaException as error:
        text = f"{getattr(error, 'classname', '') or ''} {error}"
        found = next((name for name in DAMAGED_INDEX_EXCEPTIONS if name in text), None)
        if found is None:
            raise
        reason = (getattr(error, "innermessage", None) or str(error)).split(" (resource=")[0].strip()
        path = Path(path)
        raise UserError(f"{path}: the Lucene index is damaged ({found}: {reason[:200]}); "
                        f"{rebuild_hint(path, read_manifest(path))}") from None


def _expected_manifest(dataset_id: str, language: str) -> dict:
    return {
        "format": _FORMAT,
        "kind": "lucene",
        "corpus": datasets.docs_root_id(dataset_id),
        "data_origin": datasets.data_origins(datasets.load(dataset_id)),
        "language": language,
        "pyserini": metadata.version("pyserini"),
    }


def _stored(manifest: dict) -> tuple[str, ...]:
    """What an index of the suite stores beyond postings (indexes without ``stored`` are full ones)."""
    stored = manifest.get("stored", list(STORED))
    return tuple(item for item in STORED if isinstance(stored, list) and item in stored)


def lucene_index(dataset_id: str, index: str | os.PathLike | None = None, threads: int = 1,
                 rebuild: bool = False, verbose: bool = False, slim: bool = False,
                 reuse_slim: bool = False) -> tuple[Path, bool]:
    """Build a Lucene index of a dataset's documents, or reuse one built by an earlier call.

    The index is written into a temporary folder beside its destination and renamed into place
    only once Anserini has finished and the manifest is written, so an interrupted build never
    leaves an index that a later search would use. Documents are indexed with positions, document
    vectors and raw text (as Pyserini's own indexes), with the dataset's analyzer language
    (``zh`` for DuReader-retrieval); a slim index (``slim``) has the postings only, as Pyserini's ``-slim``
    prebuilt indexes: BM25 gives the same runs, in a fraction of the disk (phrase queries, RM3 and
    ``doc(id).raw()`` need a full index; the suite reads texts from the dataset, never from the index).

    The documents go to Anserini in memory, in batches of about :data:`BATCH_BYTES`, through Pyserini's
    on-the-fly indexer (``pyserini.index.lucene.LuceneIndexer``, Anserini's ``SimpleIndexer``) with the
    arguments ``pyserini.index.lucene`` takes: no copy of the corpus is written to disk. The index holds the
    same documents, terms, positions, vectors and statistics as one Pyserini's ``IndexCollection`` builds
    from a ``docs.jsonl``, and BM25 gives byte-identical runs (tests/pipeline/test_lucene_bm25.py); only
    Lucene's segment files differ (their ids are random anyway). Documents whose text is blank are left
    out, as ``IndexCollection`` leaves them out. Before anything is written, the disk must have room for
    the index (:data:`INDEX_SIZE_RATIO` times the corpus file, where the dataset tells its size; else each
    batch checks room for its share).

    Parameters
    ----------
    dataset_id : str
        A registered dataset id; subsets share the index of their corpus.
    index : path, optional
        Destination folder; defaults to :func:`default_index_path`.
    threads : int
        Indexing threads.
    rebuild : bool
        Build even when an up-to-date index exists.
    verbose : bool
        Let Anserini log its progress (it is quiet otherwise).
    slim : bool
        Postings only: no positions, document vectors or raw documents. A full index that is up to date is
        reused for a slim request; a slim one is rebuilt for a full request unless ``reuse_slim``.
    reuse_slim : bool
        Reuse an up-to-date slim index even though a full one is asked for (BM25 needs no more); a missing
        index is built full.

    Returns
    -------
    (Path, bool)
        The index folder, and whether it was built now (``False``: reused).
    """
    check_int(threads, "--threads", 1, MAX_THREADS)
    dataset = datasets.load(dataset_id)
    path = Path(index) if index is not None else default_index_path(dataset_id)
    language = datasets.dataset_language(dataset)
    expected = _expected_manifest(dataset_id, language)
    wanted = () if slim else STORED
    noted = []

    def up_to_date() -> bool:
        existing = read_manifest(path)
        if path.exists() and existing is None and any(path.iterdir()):
            raise UserError(f"{path}: exists and is not an index built by negplugins (no readable {MANIFEST}); "
                            f"remove it or choose another --index")
        if rebuild or existing is None or {k: existing.get(k) for k in expected} != expected:
            return False
        if not (reuse_slim or set(_stored(existing)) >= set(wanted)):
            return False
        damaged = damage(path, existing.get("files"))
        if damaged:  # a cache of the suite: rebuilt, with a word about why
            if not noted:
                print(f"negplugins: note: {path}: the Lucene index is damaged ({damaged}); building it again",
                      file=sys.stderr, flush=True)
                noted.append(damaged)
            return False
        return True

    if up_to_date():
        return path, False
    check_folder_output(path)
    with output_lock(path):
        if up_to_date():  # built meanwhile by a command we waited for
            return path, False
        source_bytes = datasets.docs_source_size(dataset)
        ratio = SLIM_INDEX_SIZE_RATIO if slim else INDEX_SIZE_RATIO
        if source_bytes is not None:
            check_free_space(path.parent, int(source_bytes * ratio) + INDEX_SIZE_MARGIN,
                             f"the Lucene index of {expected['corpus']}")
        jvm.configure()
        from pyserini.index.lucene import LuceneIndexer
        from pyserini.pyclass import autoclass

        _reclaim_signals()
        # SimpleIndexer logs its settings at INFO on stdout and, unlike IndexCollection, ignores -quiet
        autoclass("org.apache.logging.log4j.core.config.Configurator").setLevel(
            "io.anserini.index.SimpleIndexer", autoclass("org.apache.logging.log4j.Level").getLevel(
                "INFO" if verbose else "WARN"))
        with atomic_directory(path) as tmp:
            args = ["-index", str(tmp), "-generator", "DefaultLuceneDocumentGenerator",
                    *(_STORE_FLAGS[item] for item in wanted), "-language", language]
            count = 0
            indexer = None
            try:
                for batch, size, seen in _batches(datasets.iter_docs_for_indexing(dataset)):
                    count += seen
                    if not batch:
                        continue
                    if indexer is None:
                        _test_pause()
                        indexer = LuceneIndexer(args=args, threads=threads)
                    if source_bytes is None:
                        check_free_space(tmp, int(size * ratio) + INDEX_SIZE_MARGIN,
                                         f"the Lucene index of {expected['corpus']}")
                    indexer.add_batch_raw(batch)
            finally:
                if indexer is not None:
                    indexer.close()  # commits: into the temporary folder, removed unless the build succeeded
            if count == 0:
                raise UserError(f"{dataset_id}: the dataset has no documents to index")
            manifest = dict(expected, documents=count, dataset=dataset_id, threads=threads, stored=list(wanted),
                            files=file_records(tmp, skip=(MANIFEST, MARKER)))
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path, True


def anserini_indexer():
    """Anserini's ``IndexCollection`` (the indexer ``python -m pyserini.index.lucene`` runs), JVM started.

    Call its ``main(args)`` with Anserini's command-line arguments. Starting the JVM installs its own
    SIGINT and SIGTERM handlers; they are given back to Python here (see :func:`_reclaim_signals`).
    Callers build into a folder of :func:`negplugins.io.files.atomic_directory`, so an interrupted
    build leaves nothing a later search would use.
    """
    jvm.configure()
    from pyserini.pyclass import autoclass

    indexer = autoclass("io.anserini.index.IndexCollection")
    _reclaim_signals()
    return indexer


#: What Java's ``String.trim()`` strips (every character up to U+0020): Anserini's generator refuses a
#: document whose text is nothing else (``EmptyDocumentException``), which ``IndexCollection`` counts and skips.
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def _batches(docs):
    """``(JSON documents, their characters, documents read)`` of about :data:`BATCH_BYTES` characters each.

    Blank documents are read (and counted) but left out of the batches.
    """
    batch, size, seen = [], 0, 0
    for doc_id, contents in docs:
        seen += 1
        if contents.strip(_JAVA_TRIM):
            line = json.dumps({"id": doc_id, "contents": contents}, ensure_ascii=False)
            batch.append(line)
            size += len(line)
            if size >= BATCH_BYTES:
                yield batch, size, seen
                batch, size, seen = [], 0, 0
    if seen:
        yield batch, size, seen


def _reclaim_signals() -> None:
    """Give SIGINT and SIGTERM back to Python once the JVM has started.

    The JVM installs its own handlers for them (it would exit without running the cleanups of this
    process); Python's handlers raise in the main thread instead, once Anserini returns.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if callable(handler) or handler in (signal.SIG_DFL, signal.SIG_IGN):
            signal.signal(signum, handler)


def _test_pause() -> None:
    """Sleep ``NEGPLUGINS_TEST_PAUSE_INDEXING`` seconds before Anserini runs (tests interrupt a build here)."""
    seconds = os.environ.get("NEGPLUGINS_TEST_PAUSE_INDEXING")
    if seconds:
        print(f"negplugins: pausing {seconds} s before indexing (NEGPLUGINS_TEST_PAUSE_INDEXING)", file=sys.stderr,
              flush=True)
        time.sleep(float(seconds))
