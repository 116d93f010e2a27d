"""BM25 with Anserini's Lucene searcher, called as Pyserini's ``LuceneSearcher`` calls it: the same bytes as stock
``python -m pyserini.search.lucene --bm25`` (ties: docs/runners.md)."""

from __future__ import annotations

import os

from .. import datasets
from .._compat import jvm
from .._compat.anserini import lucene_searcher
from ..io.outputs import check_run_output
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..options import DEFAULT_HITS, MAX_BATCH_SIZE, MAX_HITS, MAX_THREADS, check_float, check_int, tqdm_disable
from .common import default_index_path, pyserini_topic_order, read_manifest
from .lucene_index import check_lucene_index, lucene_index, open_lucene, search_batches


def bm25_search(dataset_id: str, output: str | os.PathLike, index: str | os.PathLike | None = None,
                k1: float = 0.9, b: float = 0.4, hits: int = DEFAULT_HITS,
                threads: int = 1, batch_size: int = 64, run_tag: str = "Anserini", command: str | None = None,
                force: bool = False, progress: bool | None = None) -> RunResult:
    """Rank the documents of ``dataset_id`` with BM25 and write a TREC run and its sidecar; without ``index`` the
    dataset's Lucene index is built or reused."""
    k1 = check_float(k1, "--k1", 0)
    b = check_float(b, "--b", 0, 1)
    check_int(hits, "--hits", 1, MAX_HITS)
    check_int(threads, "--threads", 1, MAX_THREADS)
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    check_run_output(output, inputs=[index], force=force)  # never into the index it searches, even with --force
    dataset = datasets.load(dataset_id)
    if index is None:
        check_run_output(output, inputs=[default_index_path(dataset_id)], force=force)
        index, _ = lucene_index(dataset_id, threads=threads, reuse_slim=True)  # BM25 needs postings only
    else:
        check_lucene_index(index)
    language = datasets.dataset_language(dataset)
    texts = datasets.query_texts(dataset)
    order = pyserini_topic_order(texts)

    jvm.configure()
    searcher = open_lucene(lambda: lucene_searcher(index), index)  # LuceneSearcher's calls, without torch
    if language != "en":
        searcher.set_language(language)
    searcher.set_bm25(k1, b)

    from tqdm.auto import tqdm

    parameters = {"k1": k1, "b": b, "hits": hits}
    sidecar = Sidecar(dataset=dataset_id, runner="bm25", system=f"BM25 (Anserini) k1={k1} b={b}", tag=run_tag,
                      parameters=parameters, index={"path": str(index), "manifest": read_manifest(index)},
                      language=language, command=command)
    with tqdm(total=len(order), desc=f"BM25 {dataset_id}", unit=" queries", disable=tqdm_disable(progress),
              leave=False) as bar:
        results = search_batches(searcher, texts, order, hits, threads, batch_size, bar)
        return write_run_and_sidecar(output, results, sidecar, queries=len(order), details={
            "dataset": dataset_id, "index": str(index), "language": language, **parameters, "queries": len(order),
            "lines": None, "run_tag": run_tag})
