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

_FORMAT = 1

#: Most bytes of JSON documents handed to Anserini at once (one batch, in memory).
BATCH_BYTES = 16 << 20
#: Disk an index takes per byte of its corpus file, upper bounds for the free space check (measured: 1.65x for a
#: full index, 0.18x for a slim one, on benchmarks/bench_scale.py's 8.8M passages).
INDEX_SIZE_RATIO = 2.0
SLIM_INDEX_SIZE_RATIO = 0.3
#: What a full index stores beyond its postings; a slim one stores none of it.
STORED = ("positions", "docvectors", "raw")
_STORE_FLAGS = {"positions": "-storePositions", "docvectors": "-storeDocvectors", "raw": "-storeRaw"}
#: Added to every index estimate (Lucene's files of a small index, file system blocks).
INDEX_SIZE_MARGIN = 4 << 20


def check_lucene_index(index: str | os.PathLike) -> Path:
    """Refuse, before Java opens it, an ``--index`` that is not a Lucene index; return it as a path."""
    path = Path(index)
    if not path.exists():
        raise UserError(f"{path}: index folder not found; expected a Lucene index (built by 'negplugins index' "
                        f"or Pyserini)")
    if not path.is_dir():
        raise UserError(f"{path}: is not a folder; expected a Lucene index folder (built by 'negplugins index' "
                        f"or Pyserini)")
    check_lucene_folder(path, "lucene", "Lucene index", "'negplugins index' or Pyserini")
    return path


def check_lucene_folder(path: Path, kind: str, what: str, built_by: str) -> dict | None:
    """Refuse a folder without a Lucene commit point (``segments_N``), another kind of the suite's indexes or a
    damaged one; return the suite's manifest, if any."""
    manifest = read_manifest(path)
    if manifest is not None and manifest.get("kind") != kind:
        raise UserError(f"{path}: is a {str(manifest.get('kind'))[:40]} index built by negplugins, not a {what}; "
                        f"expected a folder built by {built_by}")
    if not any(p.is_file() for p in path.glob("segments_*")):
        raise UserError(f"{path}: is not a Lucene index (no segments_N file); expected a folder built by {built_by}")
    damaged = damage(path, (manifest or {}).get("files"))
    if damaged:
        raise UserError(f"{path}: the Lucene index is damaged ({damaged}); {rebuild_hint(path, manifest)}")
    return manifest


def rebuild_hint(path: Path, manifest: dict | None) -> str:
    """The command that builds the index ``path`` again (its dataset from the manifest, when the suite built it)."""
    if manifest and manifest.get("kind") == "impact":
        return f"rebuild it with 'negplugins search splade {manifest.get('dataset') or 'DATASET'} --index {path} " \
               f"--rebuild ...', or with the Pyserini command that built it"
    dataset = (manifest or {}).get("dataset") or "DATASET"
    return f"rebuild it with 'negplugins index {dataset} --index {path} --rebuild' (or the Pyserini command that " \
           f"built it)"


#: Java exceptions Lucene raises when it opens an index whose files are damaged, cut short or missing.
DAMAGED_INDEX_EXCEPTIONS = ("CorruptIndexException", "IndexFormatTooOldException", "IndexFormatTooNewException",
                            "IndexNotFoundException", "EOFException", "NoSuchFileException", "FileNotFoundException")


def open_lucene(opener, path: str | os.PathLike):
    """``opener()`` (a Pyserini searcher of the index ``path``), with a damaged index refused in one line."""
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


def search_batches(searcher, queries: dict, order: list[str], hits: int, threads: int, batch_size: int = 64, bar=None):
    """``(query id, [(doc id, score), ...])`` in ``order``, searched ``batch_size`` queries at a time."""
    for start in range(0, len(order), batch_size):
        batch = order[start:start + batch_size]
        found = searcher.batch_search([queries[q] for q in batch], batch, hits, threads)
        for query_id in batch:
            yield query_id, [(hit.docid.strip(), hit.score) for hit in found.get(query_id, [])]
        if bar is not None:
            bar.update(len(batch))


def _expected_manifest(dataset_id: str, language: str) -> dict:
    return {"format": _FORMAT, "kind": "lucene", "corpus": datasets.docs_root_id(dataset_id),
            "data_origin": datasets.data_origins(datasets.load(dataset_id)), "language": language,
            "pyserini": metadata.version("pyserini")}


def lucene_index(dataset_id: str, index: str | os.PathLike | None = None, threads: int = 1,
                 rebuild: bool = False, verbose: bool = False, slim: bool = False,
                 reuse_slim: bool = False) -> tuple[Path, bool]:
    """Build a Lucene index of a dataset's documents atomically (in memory batches through Pyserini's
    ``LuceneIndexer``), or reuse an up-to-date one; ``(folder, built now)``. See docs/runners.md, "Large corpora"."""
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
        stored = existing.get("stored", list(STORED))  # indexes without "stored" are full ones
        if not (reuse_slim or all(isinstance(stored, list) and item in stored for item in wanted)):
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
            count, indexer = 0, None
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
    """Anserini's ``IndexCollection`` (what ``pyserini.index.lucene`` runs), the JVM started, signals reclaimed."""
    jvm.configure()
    from pyserini.pyclass import autoclass

    indexer = autoclass("io.anserini.index.IndexCollection")
    _reclaim_signals()
    return indexer


#: What Java's ``String.trim()`` strips (every character up to U+0020): Anserini's generator refuses a
#: document whose text is nothing else (``EmptyDocumentException``), which ``IndexCollection`` counts and skips.
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def _batches(docs):
    """``(JSON documents, their characters, documents read)`` of about :data:`BATCH_BYTES` characters each; blank
    documents are counted but left out."""
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
    """Give SIGINT and SIGTERM back to Python once the JVM has started (the JVM's would exit without cleanups)."""
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
