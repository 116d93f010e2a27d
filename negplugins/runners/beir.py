"""BEIR's own retrieval classes over a registered dataset, writing TREC runs: ``DenseRetrievalExactSearch`` with a
sentence-transformers model and ``Rerank`` with a cross-encoder, given the corpus as :mod:`negplugins.beir.export`
writes it (docs/runners.md, "BEIR"). They need the ``beir`` extra; importing this module does not."""

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
from .encoding_settings import check_token_limit
from .model_refs import load_error, model_load_errors, resolve_model


def _require_beir():
    try:
        import beir  # noqa: F401
    except ImportError:
        raise UserError("the BEIR runners need the beir package: pip install 'negplugins[beir]'") from None


def beir_corpus(dataset) -> dict[str, dict[str, str]]:
    """``{doc_id: {"title", "text"}}``, as in an exported ``corpus.jsonl``."""
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


def _model(model, max_length: int | None, pair: bool = False):
    """``(ModelRef, folder to load, sidecar record)`` of a model whose tokenizer honours ``max_length``."""
    ref = resolve_model(model)
    if max_length is not None:
        check_token_limit(ref, max_length, pair=pair)
    return ref, str(ref.path), ref.metadata()


def _write(results, dataset_id, output, record: dict, parameters: dict, **run) -> RunResult:
    info = results_to_run(results, dataset_id, output, model=record, parameters=parameters, check_docs=False, **run)
    return dataclasses.replace(info, details={**info.details, "model": record, "parameters": parameters})


def beir_dense_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                      hits: int = DEFAULT_HITS, batch_size: int = 128, score_function: str = "cos_sim",
                      corpus_chunk_size: int = 50000, max_length: int | None = None, device: str | None = None,
                      run_tag: str | None = None, show_progress_bar: bool = False, command: str | None = None,
                      force: bool = False) -> RunResult:
    """Exact dense retrieval with BEIR's ``DenseRetrievalExactSearch`` over ``SentenceBERT``; writes a TREC run and
    its sidecar (``score_function``: BEIR's ``cos_sim`` or ``dot``)."""
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
    ref, load_from, record = _model(model, max_length)

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
    return _write(results, dataset_id, output, record, parameters, hits=hits, runner="beir-dense", command=command,
                  system=f"BEIR DenseRetrievalExactSearch {_short(record['id'])} {score_function}",
                  tag=run_tag or f"beir-dense-{_short(record['id'])}", force=force)


class CrossEncoderModel:
    """A sentence-transformers ``CrossEncoder`` with the ``predict(pairs, batch_size)`` BEIR's ``Rerank`` calls: BEIR's
    own wrapper passes ``sentences=``, which sentence-transformers 6 deprecates, and always shows a progress bar."""

    def __init__(self, model: str, max_length: int | None = None, device: str | None = None):
        from sentence_transformers.cross_encoder import CrossEncoder

        given = {"max_length": max_length, "device": device}
        self.model = CrossEncoder(model, local_files_only=True, **{k: v for k, v in given.items() if v})

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
    """Rerank the ``top_k`` best documents per query of a first-stage run with BEIR's ``Rerank`` and a cross-encoder;
    writes a TREC run (of those documents only) and its sidecar."""
    check_int(top_k, "--top-k", 1, MAX_HITS)
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    if max_length is not None:
        check_int(max_length, "--max-length", 1, MAX_LENGTH)
    check_run_output(output, inputs=[first_stage], force=force)
    _require_beir()
    run = check_results(read_run(first_stage), dataset_id, check_docs=True, source=str(first_stage))
    dataset = datasets.load(dataset_id)
    ref, load_from, record = _model(model, max_length, pair=True)

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
    return _write(results, dataset_id, output, record, parameters, runner="beir-rerank", command=command,
                  system=f"BEIR Rerank {_short(record['id'])} top-{top_k}",
                  tag=run_tag or f"beir-rerank-{_short(record['id'])}", force=force,
                  first_stage={"run": str(first_stage), "sha256": file_sha256(first_stage)})
