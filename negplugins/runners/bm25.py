"""BM25 over a registered dataset with Anserini's Lucene searcher, called as Pyserini's ``LuceneSearcher`` calls it.

The output is the same, byte for byte, as stock ``python -m pyserini.search.lucene --bm25`` with the
suite's topic file, index and parameters: queries in Pyserini's order (numerically when every id is an
integer, else as strings), the same searcher calls, scores with six decimals and the run tag
``Anserini`` unless another is given.

Ties: Anserini orders documents with equal BM25 scores by external document id, ascending
(lexicographic: ``10`` before ``9`` before ``a``), and lowers each tied score by 1e-6 per position, so
that trec_eval, ir_measures and the negation measures, which re-sort by score, keep that order. A run
is therefore deterministic for a given index. NevIR's two candidates often tie under BM25: after the
nudge ``<pair>_doc1`` scores 1e-6 above ``<pair>_doc2``, so q1 looks right and q2 wrong, and the pair,
which needs both, counts as wrong, as a true tie would.
"""

from __future__ import annotations

import os

from .. import datasets
from .._compat import jvm
from .._compat.anserini import lucene_searcher
from ..io.outputs import check_run_output
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..options import DEFAULT_HITS, MAX_BATCH_SIZE, MAX_HITS, MAX_THREADS, check_float, check_int, tqdm_disable
from .common import default_index_path, pyserini_topic_order, read_manifest
from .lucene_index import check_lucene_index, lucene_index, open_lucene

__all__ = ["BM25_DEFAULTS", "bm25_search"]

#: Pyserini's own defaults for ``--bm25``.
BM25_DEFAULTS = {"k1": 0.9, "b": 0.4, "hits": DEFAULT_HITS}


def bm25_search(dataset_id: str, output: str | os.PathLike, index: str | os.PathLike | None = None,
                k1: float = BM25_DEFAULTS["k1"], b: float = BM25_DEFAULTS["b"], hits: int = BM25_DEFAULTS["hits"],
                threads: int = 1, batch_size: int = 64, run_tag: str = "Anserini", command: str | None = None,
                force: bool = False, progress: bool | None = None) -> RunResult:
    """Rank the documents of ``dataset_id`` for each of its queries with BM25 and write a TREC run.

    The run's metadata sidecar (:mod:`negplugins.io.sidecars`) is written beside it.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    output : path
        The run file to write (atomically).
    index : path, optional
        Lucene index folder; built (or reused) from the dataset when not given.
    k1, b : float
        BM25 parameters (Pyserini's defaults 0.9 and 0.4).
    hits : int
        Documents per query.
    threads, batch_size : int
        Pyserini's batch search settings; they do not change the output.
    run_tag : str
        Last column of the run.
    command : str, optional
        Recorded in the metadata; defaults to this process's command line.
    force : bool
        Replace an existing run that is committed or was not written by the suite
        (see :func:`negplugins.io.outputs.check_run_output`).
    progress : bool, optional
        Show a progress bar of the queries searched on standard error (as stock Pyserini does); by default
        only when standard error is a terminal.

    Returns
    -------
    RunResult
        What was written (:class:`negplugins.io.run_writer.RunResult`); its ``details``: dataset, index, language,
        parameters, queries and lines written.
    """
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

    def results(bar):
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            found = searcher.batch_search([texts[q] for q in batch], batch, hits, threads)
            for query_id in batch:
                yield query_id, [(hit.docid.strip(), hit.score) for hit in found[query_id]]
            bar.update(len(batch))

    parameters = {"k1": k1, "b": b, "hits": hits}
    sidecar = Sidecar(dataset=dataset_id, runner="bm25", system=f"BM25 (Anserini) k1={k1} b={b}", tag=run_tag,
                      parameters=parameters, index={"path": str(index), "manifest": read_manifest(index)},
                      language=language, command=command)
    with tqdm(total=len(order), desc=f"BM25 {dataset_id}", unit=" queries", disable=tqdm_disable(progress),
              leave=False) as bar:
        return write_run_and_sidecar(output, results(bar), sidecar, queries=len(order), details={
            "dataset": dataset_id, "index": str(index), "language": language, **parameters, "queries": len(order),
            "lines": None, "run_tag": run_tag})
