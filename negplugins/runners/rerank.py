"""Rerank the top k documents of a first-stage run (or a dataset's scoreddocs) with a cross-encoder, a monoT5, a
bi-encoder or a ColBERT model; documents below the top k are dropped (docs/runners.md)."""

from __future__ import annotations

import os
from functools import partial

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.outputs import check_run_output
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..io.sidecars import file_sha256
from ..io.trec import ranked, read_run
from ..options import MAX_BATCH_SIZE, MAX_HITS, MAX_LENGTH, check_int, progress_bar
from . import ray_engine
from .common import pyserini_topic_order
from .dense_index_format import reusable_passage_index
from .encoders import SentenceEncoder, encode_texts
from .encoding_settings import check_token_limit, model_defaults
from .faiss_search import stored_passage_vectors
from .late_interaction import ColbertScorer, colbert_settings
from .model_refs import ModelRef, load_error, model_load_errors, quiet_transformers, resolve_model

RERANKERS = ("cross-encoder", "monot5", "bi-encoder", "colbert")
RERANK_DEFAULTS = {"top_k": 100, "batch_size": 32}
MONOT5_TEMPLATE = "Query: {query} Document: {document} Relevant:"


def detect_reranker(ref: ModelRef) -> str:
    """The reranker kind of a model folder: ColBERT checkpoint, encoder-decoder (monoT5),
    ``...ForSequenceClassification`` (cross-encoder), else bi-encoder."""
    if colbert_settings(ref.path)["source"] != "defaults":
        return "colbert"
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(str(ref.path), local_files_only=True)
    except model_load_errors() as error:
        raise load_error(ref, error, "model (reading config.json)") from None
    if getattr(config, "is_encoder_decoder", False):
        return "monot5"
    if any(arch.endswith("ForSequenceClassification") for arch in (getattr(config, "architectures", None) or [])):
        return "cross-encoder"
    return "bi-encoder"


class _PairScorer:
    """Scores ``(query, document)`` pairs with a transformers ``auto_model``, in batches sorted by length (for speed;
    the order is fixed); inputs are cut at ``max_length`` tokens, else the model's limit, at most 512."""

    auto_model: str
    what: str

    def __init__(self, ref: ModelRef, batch_size: int, max_length: int | None = None):
        self.ref = ref
        self.batch_size = batch_size
        try:
            import transformers

            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(ref.path), local_files_only=True)
            self.model = getattr(transformers, self.auto_model).from_pretrained(str(ref.path), local_files_only=True)
        except model_load_errors() as error:
            raise load_error(ref, error, self.what) from None
        self.model.eval()
        self.limit = int(max_length or min(getattr(self.tokenizer, "model_max_length", None) or 512, 512))

    def score(self, pairs: list[tuple[str, str]], progress: bool | None = False) -> list[float]:
        """The score of each pair; ``progress`` shows a bar over the pairs."""
        import torch

        order = sorted(range(len(pairs)), key=lambda i: (-(len(pairs[i][0]) + len(pairs[i][1])), i))
        scores = [0.0] * len(pairs)
        with torch.inference_mode(), progress_bar(len(pairs), f"scoring with {self.ref.name}", progress,
                                                  "pairs") as bar:
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                values = self._score_batch([pairs[i] for i in batch])
                for i, value in zip(batch, values):
                    scores[i] = float(value)
                bar.update(len(batch))
        return scores


class CrossEncoderScorer(_PairScorer):
    """Score: the logit of a one-label model, else the log-probability of the last label ("relevant")."""

    auto_model, what = "AutoModelForSequenceClassification", "cross-encoder"

    def _score_batch(self, pairs):
        import torch

        inputs = self.tokenizer([q for q, _ in pairs], [d for _, d in pairs], padding=True, truncation="longest_first",
                                max_length=self.limit, return_tensors="pt")
        logits = self.model(**inputs).logits
        if logits.shape[-1] == 1:
            return logits[:, 0].tolist()
        return torch.log_softmax(logits, dim=-1)[:, -1].tolist()


class MonoT5Scorer(_PairScorer):
    """Score: the log-softmax of the ``true`` token's logit against the ``false`` token's at the first decoding step."""

    auto_model, what = "AutoModelForSeq2SeqLM", "monoT5 (sequence-to-sequence) model"

    def __init__(self, ref, batch_size, max_length=None):
        super().__init__(ref, batch_size, max_length)
        self.token_ids = [self._single_token("true"), self._single_token("false")]
        start = self.model.config.decoder_start_token_id
        if start is None:
            start = self.tokenizer.pad_token_id
        if start is None:
            raise UserError(f"model {ref.id!r}: no decoder start token (config.decoder_start_token_id)")
        self.decoder_start = int(start)

    def _single_token(self, word):
        ids = self.tokenizer(word, add_special_tokens=False).input_ids
        if len(ids) != 1 or ids[0] == self.tokenizer.unk_token_id:
            raise UserError(f"model {self.ref.id!r}: its tokenizer has no single token for {word!r}, "
                            f"so it cannot be used as a monoT5 reranker")
        return ids[0]

    def _score_batch(self, pairs):
        import torch

        texts = [MONOT5_TEMPLATE.format(query=q, document=d) for q, d in pairs]
        inputs = self.tokenizer(texts, padding=True, truncation=True, max_length=self.limit, return_tensors="pt")
        decoder = torch.full((len(texts), 1), self.decoder_start, dtype=torch.long)
        logits = self.model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                            decoder_input_ids=decoder).logits
        pair = logits[:, 0, self.token_ids]
        return torch.log_softmax(pair, dim=-1)[:, 0].tolist()


class BiEncoderScorer:
    def __init__(self, ref, batch_size, max_length=None, encoder: SentenceEncoder | None = None):
        self.encoder = encoder if encoder is not None else SentenceEncoder(ref)
        self.model = self.encoder.model
        self.ref = self.encoder.ref
        if max_length:
            self.encoder.model.max_seq_length = max_length
            self.encoder.max_length = int(max_length)  # its settings, compared with a dense index's
        self.batch_size = batch_size

    def score(self, pairs, progress: bool | None = False, known: dict | None = None):
        """Cosine of each pair's vectors; ``known`` maps document texts to vectors already computed (read from a
        dense index), which are not encoded again. ``progress`` shows a bar over the texts encoded."""
        queries = sorted({q for q, _ in pairs})
        known = known or {}
        docs = sorted({d for _, d in pairs if d not in known})
        with progress_bar(len(queries) + len(docs), f"encoding with {self.ref.name}", progress, "texts") as bar:
            q_vectors = dict(zip(queries, encode_texts(self.encoder, queries, self.batch_size, bar)))
            d_vectors = {**known, **dict(zip(docs, encode_texts(self.encoder, docs, self.batch_size, bar)))}
        return [float(np.dot(q_vectors[q], d_vectors[d])) for q, d in pairs]


def load_reranker(model: str | os.PathLike | None, reranker: str | None = None,
                  batch_size: int = RERANK_DEFAULTS["batch_size"], max_length: int | None = None):
    """Resolve and load a reranker; returns ``(scorer, kind, ModelRef)``. ``scorer.score(pairs)`` -> floats."""
    if reranker is not None and reranker not in RERANKERS:
        raise UserError(f"unknown reranker {reranker!r}; choose one of {', '.join(RERANKERS)}")
    ref = resolve_model(model)
    kind = reranker or detect_reranker(ref)
    check_max_length(ref, kind, max_length)
    return make_scorer(ref, kind, batch_size, max_length), kind, ref


def make_scorer(ref: ModelRef, kind: str, batch_size: int = RERANK_DEFAULTS["batch_size"],
                max_length: int | None = None):
    """Load the scorer of ``kind`` for a resolved model (what :func:`load_reranker` returns first)."""
    quiet_transformers()
    scorer = {"cross-encoder": CrossEncoderScorer, "monot5": MonoT5Scorer, "bi-encoder": BiEncoderScorer,
              "colbert": ColbertScorer}[kind]
    return scorer(ref, batch_size, max_length)


def _stored_passages(dataset_id, ref, settings, *, index, wanted, doc_texts) -> tuple[dict, dict]:
    """``(document text -> stored vector, the sidecar's index record)`` from the dense index ``index``, which the
    bi-encoder with ``settings`` must be able to reuse (else a UserError with the reason)."""
    path, why = reusable_passage_index(dataset_id, ref, settings, index)
    if path is None:
        raise UserError(f"--index {why or f'{index}: no dense index there'}; leave out --index to encode the "
                        f"documents")
    vectors = stored_passage_vectors(path, wanted)
    known = {doc_texts[doc_id]: vectors[doc_id] for doc_id in wanted if doc_id in vectors}
    read = sum(1 for doc_id in wanted if doc_id in vectors)
    return known, {"path": str(path), "passage_vectors": "read from this dense index", "documents_read": read,
                   "documents_encoded": len(wanted) - read}


def check_max_length(ref: ModelRef, kind: str, max_length: int | None) -> None:
    """Refuse a ``--max-length`` the reranker's tokenizer cannot honour (ColBERT checks its own lengths)."""
    if max_length is not None and kind != "colbert":
        check_token_limit(ref, int(max_length), pair=kind == "cross-encoder")


def _first_stage(dataset, dataset_id: str, run) -> tuple[dict, str, dict]:
    """``(scored documents per query, their source in messages, the sidecar's first_stage)`` of a run, or of the
    dataset's scoreddocs when ``run`` is ``None``."""
    if run is not None:
        return read_run(run), str(run), {"run": str(run), "sha256": file_sha256(run)}
    if not dataset.has_scoreddocs():
        raise UserError(f"{dataset_id}: the dataset has no scoreddocs (candidate lists); give a first-stage --run")
    candidates: dict[str, dict[str, float]] = {}
    for scored in dataset.scoreddocs_iter():
        candidates.setdefault(scored.query_id, {})[scored.doc_id] = float(scored.score)
    if not candidates:
        raise UserError(f"{dataset_id}: the dataset's scoreddocs are empty")
    return candidates, f"{dataset_id} scoreddocs", {"run": f"scoreddocs:{dataset_id}", "sha256": None}


def _scores(scorer, pairs, index, stored, progress) -> tuple[list[float], dict | None]:
    """The scores of ``pairs`` in this process, and the sidecar's index record (passage vectors read from ``index``)."""
    if index is not None and not isinstance(scorer, BiEncoderScorer):
        raise UserError("--index: the given scorer is not the suite's bi-encoder; its vectors cannot be "
                        "replaced by a dense index's")
    if isinstance(scorer, BiEncoderScorer):
        known, reused = stored(scorer.ref, scorer.encoder.settings) if index is not None else ({}, None)
        return scorer.score(pairs, progress=progress, known=known), reused
    if isinstance(scorer, (_PairScorer, ColbertScorer)):
        return scorer.score(pairs, progress=progress), None
    return scorer.score(pairs), None  # a scorer of the caller's (loaded=): score(pairs) is all it is known to take


def _scores_on_ray(on_ray, ref, kind, pairs, batch_size, max_length, index, stored) -> tuple[list[float], dict | None]:
    """The scores of ``pairs`` with the model loaded by the Ray workers only, and the sidecar's index record."""
    if kind != "bi-encoder":
        return ray_engine.score_pairs(on_ray, partial(make_scorer, ref, kind, batch_size, max_length), pairs,
                                      batch_size), None
    known, reused = {}, None
    if index is not None:  # the settings of the encoder the workers load, read from its files, not loaded
        defaults = model_defaults(ref)
        settings = SentenceEncoder.own_settings(defaults.pooling or "mean",
                                                int(max_length) if max_length else defaults.max_length)
        known, reused = stored(ref, settings)
    return ray_engine.bi_encoder_scores(on_ray, ref, pairs, batch_size, max_length, known=known), reused


def rerank(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
           run: str | os.PathLike | None = None, candidates: bool = False, reranker: str | None = None,
           top_k: int = RERANK_DEFAULTS["top_k"], batch_size: int = RERANK_DEFAULTS["batch_size"],
           max_length: int | None = None, run_tag: str | None = None, command: str | None = None,
           force: bool = False, loaded: tuple | None = None, engine="single", index: str | os.PathLike | None = None,
           progress: bool | None = None) -> RunResult:
    """Rerank the top ``top_k`` documents per query of a first-stage ``run`` (or the dataset's scoreddocs, with
    ``candidates``) and write a TREC run and its sidecar. ``loaded`` is ``(scorer, kind, ModelRef)`` as
    :func:`load_reranker` returns it; ``index``, a dense index whose passage vectors the bi-encoder reuses."""
    if (run is None) == (not candidates):
        raise UserError("give exactly one of --run FIRST_STAGE and --candidates")
    check_int(top_k, "--top-k", 1, MAX_HITS)
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    if max_length is not None:
        check_int(max_length, "--max-length", 1, MAX_LENGTH)
    if reranker is not None and reranker not in RERANKERS:
        raise UserError(f"unknown reranker {reranker!r}; choose one of {', '.join(RERANKERS)}")
    on_ray = ray_engine.engine_of(engine)
    if on_ray is not None and loaded is not None:
        raise UserError("engine='ray' loads the model on the Ray workers; give an already loaded scorer (loaded=) "
                        "or engine='ray', not both")
    if index is not None and reranker not in (None, "bi-encoder"):
        raise UserError(f"--index: a dense index's passage vectors are reused by the bi-encoder reranker only, not "
                        f"by --reranker {reranker}")
    check_run_output(output, inputs=[run, index], force=force)  # never onto the run or the index it reads
    dataset = datasets.load(dataset_id)
    first, source, first_stage = _first_stage(dataset, dataset_id, run)
    texts = datasets.query_texts(dataset)
    whole, outside, unknown = datasets.split_outside_subset(dataset_id, [q for q in first if q not in texts])
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise UserError(f"{source}: query {unknown[0]!r}{more} is not a query of {dataset_id}")
    notes = []
    if outside:
        notes.append(f"{source}: {len(outside)} of its {len(first)} queries are queries of {whole} outside "
                     f"{dataset_id}; only the {len(first) - len(outside)} queries of {dataset_id} are reranked")
        first = {q: docs for q, docs in first.items() if q in texts}
        if not first:
            raise UserError(f"{source}: no query of the run is a query of {dataset_id}")
    order = pyserini_topic_order(first)
    top = {q: [doc_id for doc_id, _ in ranked(first[q])[:top_k]] for q in order}
    wanted = sorted({doc_id for docs in top.values() for doc_id in docs})
    if not dataset.has_docs():
        raise UserError(f"{dataset_id}: the dataset has no documents to rerank")
    found = dataset.docs_store().get_many(wanted)
    missing = [doc_id for doc_id in wanted if doc_id not in found]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise UserError(f"{source}: document {missing[0]!r}{more} is not in the documents of {dataset_id}")
    if loaded is not None:
        scorer, kind, ref = loaded
    else:
        ref = resolve_model(model)
        kind = reranker or detect_reranker(ref)
    if index is not None and kind != "bi-encoder":
        raise UserError(f"--index: a dense index's passage vectors are reused by the bi-encoder reranker only, "
                        f"not by a {kind} model")
    if loaded is None:
        check_max_length(ref, kind, max_length)
    # the bi-encoder encodes a document as search dense does (its vectors are those a dense index stores)
    doc_texts = {doc_id: datasets.document_text(found[doc_id], normalise=kind != "bi-encoder") for doc_id in wanted}
    pairs = [(texts[q], doc_texts[doc_id]) for q in order for doc_id in top[q]]
    stored = partial(_stored_passages, dataset_id, index=index, wanted=wanted, doc_texts=doc_texts)
    if on_ray is None:
        if loaded is None:
            scorer = make_scorer(ref, kind, batch_size, max_length)
        values, reused = _scores(scorer, pairs, index, stored, progress)
    else:
        values, reused = _scores_on_ray(on_ray, ref, kind, pairs, batch_size, max_length, index, stored)
        if kind == "colbert":  # its settings (markers, projection, dimension) are read from the loaded model
            scorer = make_scorer(ref, kind, batch_size, max_length)
    scores = iter(values)
    results = []
    for q in order:
        scored = [(doc_id, next(scores)) for doc_id in top[q]]
        # the one ranking, on the scores as written: score descending, ties by doc id descending
        results.append((q, sorted(scored, key=lambda item: (float(f"{item[1]:.6f}"), item[0]), reverse=True)))
    tag = run_tag or f"rerank-{kind}-{datasets.slug(ref.name)}"
    parameters = {"reranker": kind, "top_k": top_k, "batch_size": batch_size, "max_length": max_length,
                  "rest": "dropped", "candidates": "scoreddocs" if candidates else "run",
                  "engine": ray_engine.describe(engine)}
    if kind == "monot5":
        parameters["template"] = MONOT5_TEMPLATE
    if kind == "colbert" or (loaded is not None and callable(getattr(scorer, "parameters", None))):
        parameters.update(scorer.parameters())
    sidecar = Sidecar(dataset=dataset_id, runner="rerank", system=f"rerank top {top_k} with {kind} {ref.name}",
                      tag=tag, parameters=parameters, model=ref.metadata(), first_stage=first_stage,
                      language=datasets.dataset_language(dataset), command=command, index=reused)
    return write_run_and_sidecar(output, results, sidecar, queries=len(order), notes=notes, details={
        "dataset": dataset_id, "model": ref.id, "reranker": kind, "top_k": top_k, "queries": len(order),
        "pairs": len(pairs), "lines": None, "run_tag": tag, "first_stage": first_stage["run"],
        "outside_subset": len(outside), "notes": notes})
