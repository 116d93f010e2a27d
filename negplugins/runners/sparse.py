"""Learned sparse retrieval (SPLADE-style masked language models) with a Lucene impact index, as Pyserini's SPLADE
encoders and ``LuceneImpactSearcher`` compute it; stock Pyserini reproduces the runs (docs/runners.md)."""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from itertools import islice
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from .. import datasets
from .._compat import jvm
from .._compat.fast_tokenizer import token_rows
from ..errors import UserError
from ..io.files import MARKER, atomic_directory, check_folder_output, output_lock, scratch_directory
from ..io.integrity import damage, file_records
from ..io.outputs import check_replaceable_file, check_run_output, write_file_output
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..options import DEFAULT_HITS, MAX_BATCH_SIZE, MAX_HITS, MAX_LENGTH, MAX_THREADS, check_float, check_int
from .common import MANIFEST, default_index_path, pyserini_topic_order, read_manifest
from .encoding_pipeline import EncodingPipeline, TorchForward
from .encoding_settings import token_limits
from .lucene_index import anserini_indexer, check_lucene_folder, open_lucene, search_batches
from .model_refs import ModelRef, load_error, model_load_errors, quiet_transformers, resolve_model

#: Pyserini's SPLADE quantization, ``round(w / 5 * 256)``: a scale of 256 / 5.
QUANTIZATION = 51.2
#: ``LuceneImpactSearcher(min_idf=...)``: -1 keeps every query term found in the index (idf >= 0).
MIN_IDF = -1
SPLADE_DEFAULTS = {"hits": DEFAULT_HITS, "batch_size": 16, "max_length": 512, "query_max_length": 256,
                   "quantization": QUANTIZATION, "threads": 1}

_FORMAT = 1
_CHUNK_DOCS = 2048  # documents encoded and written per collection file (bounds the memory of the encoding)


def quantize(weights: np.ndarray, scale: float = QUANTIZATION) -> np.ndarray:
    """Integer weights as Pyserini computes them, ``round(w / (256 / scale) * 256)`` (half to even) in double
    precision: for the default scale, Pyserini's ``round(w / 5 * 256)``."""
    return np.rint(np.asarray(weights, dtype=np.float64) / (256.0 / scale) * 256.0).astype(np.int64)


def _model_limit(tokenizer, config) -> int | None:
    """The longest input the model takes: the tokenizer's ``model_max_length`` when set, else the positions."""
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000:
        return limit
    positions = getattr(config, "max_position_embeddings", None)
    return int(positions) if positions else None


class SparseEncoder:
    """A SPLADE-style encoder: ``AutoModelForMaskedLM`` and its tokenizer, loaded offline on a torch ``device``.

    A term is the tokenizer's token of a vocabulary id; ids without a token and tokens with white space never are."""

    def __init__(self, ref: ModelRef, device: str = "cpu"):
        quiet_transformers()
        self.ref = ref
        try:
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(str(ref.path), local_files_only=True)
            self.model, info = AutoModelForMaskedLM.from_pretrained(str(ref.path), local_files_only=True,
                                                                    output_loading_info=True)
        except model_load_errors() as error:
            raise load_error(ref, error, "SPLADE (masked language) model") from None
        missing = sorted(info.get("missing_keys") or [])
        if missing:  # e.g. a checkpoint without its MLM head: transformers would fill it with random weights
            raise UserError(f"model {ref.id!r} cannot be loaded as a SPLADE (masked language) model: its checkpoint "
                            f"lacks {len(missing)} weight(s) of one ({missing[0]}, ...), which would be random")
        self.device = _device(device)
        self.model.to(self.device).eval()
        self.vocab_size = int(self.model.config.vocab_size)
        self.terms: list[str | None] = [None] * self.vocab_size
        for token, token_id in self.tokenizer.get_vocab().items():
            if 0 <= token_id < self.vocab_size:
                self.terms[token_id] = token
        self.allowed = np.array([bool(t) and not any(c.isspace() for c in t) for t in self.terms], dtype=bool)
        self.limit = _model_limit(self.tokenizer, self.model.config)

    def length(self, max_length: int | None, default: int, option: str = "--max-length") -> int:
        """``max_length`` (or ``default``), at most what the model takes; one line naming ``option`` when it leaves
        no room for text beside the tokenizer's special tokens."""
        least = token_limits(self.ref)[0]
        if max_length and int(max_length) < least:
            raise UserError(f"{option} {max_length}: model {self.ref.id!r} takes at least {least} tokens per text "
                            f"({least - 1} special tokens and one of text)")
        length = int(max_length) if max_length else default
        return min(length, self.limit) if self.limit else length

    def weights(self, texts: list[str], max_length: int, batch_size: int, bar=None):
        """Unquantized ``float32`` weights of shape ``(vocabulary,)``, one per text, in order; batches of at most
        ``batch_size x max_length`` padded tokens, sorted by length."""
        pipeline = EncodingPipeline(token_rows(self.tokenizer, max_length, False), TorchForward(self._pooled,
                                    self.device), token_budget=max(1, batch_size) * max_length,
                                    row_shape=(self.vocab_size,), pad_id=self.tokenizer.pad_token_id,
                                    left=self.tokenizer.padding_side == "left")
        return list(next(pipeline.run([texts], None if bar is None else bar.update)))

    def _pooled(self, input_ids, attention_mask):
        """``log(1 + relu(max over the real tokens of the MLM logits))``, one row per text: the same numbers as the
        max of ``log(1 + relu(logit))``, which never decreases, without a second ``tokens x vocabulary`` copy."""
        import torch

        logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        if logits.shape[-1] != self.vocab_size:
            raise UserError(f"model {self.ref.id!r}: its logits have {logits.shape[-1]} columns but its "
                            f"config says vocab_size {self.vocab_size}")
        padding = attention_mask.unsqueeze(-1) == 0
        top = logits.float().masked_fill(padding, float("-inf")).amax(dim=1)
        return torch.log(1 + torch.relu(top))

    def encode(self, texts: list[str], max_length: int, batch_size: int,
               quantization: float = QUANTIZATION, bar=None) -> list[dict[str, int]]:
        """``{term: integer weight}`` per text (weights > 0 only, terms in vocabulary id order)."""
        rows = (quantize(row, quantization) for row in self.weights(texts, max_length, batch_size, bar))
        return [{self.terms[j]: int(q[j]) for j in np.flatnonzero((q > 0) & self.allowed)} for q in rows]


def _device(device: str):
    import torch

    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise UserError(f"--device: {device!r} is not a torch device ({str(error).splitlines()[0]}); expected cpu, "
                        f"cuda, cuda:N or mps") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise UserError(f"--device: {device!r} asked for, but torch sees no CUDA device here; use --device cpu")
    if resolved.type == "mps" and not torch.backends.mps.is_available():
        raise UserError(f"--device: {device!r} asked for, but torch sees no MPS device here; use --device cpu")
    return resolved


def default_splade_index_path(dataset_id: str, model: ModelRef) -> Path:
    """``indexes/splade/<corpus>/<model name>``."""
    return default_index_path(dataset_id, "splade") / datasets.slug(model.name)


class SparseIndex(NamedTuple):
    path: Path
    built: bool  # False: an up-to-date index was reused
    manifest: dict


def _expected_manifest(dataset_id: str, ref: ModelRef, max_length: int, quantization: float) -> dict:
    return {"format": _FORMAT, "kind": "impact", "corpus": datasets.docs_root_id(dataset_id),
            "data_origin": datasets.data_origins(datasets.load(dataset_id)), "model_sha256": ref.sha256,
            "model_files_sha256": ref.files_sha256, "quantization": quantization, "max_length": max_length,
            "pyserini": metadata.version("pyserini")}


def _check_settings(batch_size, max_length, query_max_length, quantization, threads) -> float:
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    if max_length is not None:
        check_int(max_length, "--max-length", 1, MAX_LENGTH)
    if query_max_length is not None:
        check_int(query_max_length, "--query-max-length", 1, MAX_LENGTH)
    check_int(threads, "--threads", 1, MAX_THREADS)
    quantization = check_float(quantization, "--quantization", 0)
    if quantization == 0:
        raise UserError("--quantization: expected a scale above 0 (weights are multiplied by it), got 0")
    return quantization


def splade_index(dataset_id: str, model: str | os.PathLike | None = None, index: str | os.PathLike | None = None,
                 batch_size: int = SPLADE_DEFAULTS["batch_size"], max_length: int | None = None,
                 quantization: float = QUANTIZATION, threads: int = 1, rebuild: bool = False,
                 progress: bool = True, device: str = "cpu", encoder: SparseEncoder | None = None) -> SparseIndex:
    """Encode the documents of ``dataset_id`` into an Anserini ``JsonVectorCollection`` (in chunks, in a scratch
    folder) and index it with ``-impact -pretokenized``, or reuse an up-to-date index of the suite."""
    quantization = _check_settings(batch_size, max_length, None, quantization, threads)
    dataset = datasets.load(dataset_id)
    ref = encoder.ref if encoder is not None else resolve_model(model)
    path = Path(index) if index is not None else default_splade_index_path(dataset_id, ref)
    wanted_length = int(max_length) if max_length else SPLADE_DEFAULTS["max_length"]

    def reusable(expected):
        existing = read_manifest(path)
        if existing is None and path.is_dir() and any(path.iterdir()):
            raise UserError(f"{path}: exists and is not an index built by negplugins (no readable {MANIFEST}); "
                            f"remove it or choose another --index")
        if not rebuild and existing is not None and {k: existing.get(k) for k in expected} == expected:
            damaged = damage(path, existing.get("files"))
            if not damaged:
                return existing
            print(f"negplugins: note: {path}: the impact index is damaged ({damaged}); building it again",
                  file=sys.stderr, flush=True)
        return None

    # the manifest records the length actually used, which needs the model's limit: loading the tokenizer
    # alone would do, but an up-to-date index is recognised without loading anything when the asked length fits
    existing = reusable(_expected_manifest(dataset_id, ref, wanted_length, quantization))
    if existing is not None:
        return SparseIndex(path, False, existing)
    if encoder is None:
        encoder = SparseEncoder(ref, device=device)
    length = encoder.length(max_length, SPLADE_DEFAULTS["max_length"])
    expected = _expected_manifest(dataset_id, ref, length, quantization)
    existing = reusable(expected)
    if existing is not None:
        return SparseIndex(path, False, existing)
    check_folder_output(path)
    with output_lock(path):
        existing = reusable(expected)  # built meanwhile by a command we waited for
        if existing is not None:
            return SparseIndex(path, False, existing)
        indexer = anserini_indexer()
        with atomic_directory(path) as tmp, scratch_directory(path, "collection") as collection:
            count, empty = _write_collection(dataset, encoder, collection, length, batch_size, quantization,
                                             progress, f"encoding {expected['corpus']}")
            if count == 0:
                raise UserError(f"{dataset_id}: the dataset has no documents to index")
            # absolute paths: the JVM keeps the working directory the process had when the JVM started
            args = ["-collection", "JsonVectorCollection", "-generator", "DefaultLuceneDocumentGenerator",
                    "-input", str(collection.resolve()), "-index", str(tmp.resolve()), "-threads", str(threads),
                    "-impact", "-pretokenized", "-quiet"]
            indexer.main(args)
            manifest = dict(expected, dataset=dataset_id, documents=count, documents_without_terms=empty,
                            files=file_records(tmp, skip=(MANIFEST, MARKER)),
                            batch_size=batch_size, model=ref.metadata(), pooling="max",
                            activation="log(1 + relu(logits))", excluded_vocabulary=int((~encoder.allowed).sum()),
                            min_idf=MIN_IDF, pyserini_search=["--impact", "--min-idf", str(MIN_IDF)])
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return SparseIndex(path, True, manifest)


def _write_collection(dataset, encoder, folder: Path, max_length, batch_size, quantization, progress, desc):
    """Encode the documents chunk by chunk into ``folder/docs-NNNNN.jsonl``; ``(documents, without terms)``."""
    from ..options import progress_bar

    count = empty = 0
    docs = iter(datasets.iter_docs_for_indexing(dataset))
    with progress_bar(None, desc, progress) as bar:
        for part, chunk in enumerate(iter(lambda: list(islice(docs, _CHUNK_DOCS)), [])):
            vectors = encoder.encode([text for _, text in chunk], max_length, batch_size, quantization, bar)
            with open(folder / f"docs-{part:05d}.jsonl", "w", encoding="utf-8", newline="") as f:
                for (doc_id, _), vector in zip(chunk, vectors):
                    empty += not vector
                    f.write(json.dumps({"id": doc_id, "contents": "", "vector": vector}, ensure_ascii=False) + "\n")
            count += len(chunk)
    return count, empty


def encoded_topics(order: list[str], vectors: list[dict[str, int]]) -> str:
    """Anserini's pre-encoded topic format: ``qid<TAB>term term ...``, each term repeated weight times; a query
    without any term gets no line (Pyserini's topic reader refuses an empty query)."""
    return "".join(f"{query_id}\t{' '.join(' '.join([term] * weight) for term, weight in vector.items())}\n"
                   for query_id, vector in zip(order, vectors) if vector)


def _check_topics_output(path, output, index, force) -> Path:
    path = Path(path)
    if not path.name.endswith((".tsv", ".txt")):
        raise UserError(f"--encoded-queries {path}: expected a file name ending in .tsv or .txt (Pyserini reads "
                        f"topic files by their extension)")
    if "beir" in str(path) or "cacm" in str(path):
        raise UserError(f"--encoded-queries {path}: Pyserini reads topic paths containing 'beir' or 'cacm' with a "
                        f"special reader; choose another name")
    if path.resolve() == Path(output).resolve():
        raise UserError(f"--encoded-queries {path}: is the run --output too; give another file")
    check_replaceable_file(path, inputs=[index], force=force)  # never into the index it searches
    return path


def _index_settings(path: Path, model, quantization) -> tuple[ModelRef, dict | None, float]:
    """The manifest, model and quantization of the impact index ``--index``; those given must match it."""
    if not path.is_dir():
        raise UserError(f"{path}: impact index folder not found (leave out --index to build one)")
    manifest = check_lucene_folder(path, "impact", "SPLADE impact index",
                                   "'negplugins search splade' or 'pyserini.index.lucene --impact'")
    if model is None and manifest and isinstance(manifest.get("model"), dict):
        model = manifest["model"].get("path")
    if model is None:
        raise UserError(f"{path}: not an index built by negplugins, so give the --model that encoded it")
    ref = resolve_model(model)
    if manifest and manifest.get("model_sha256") not in (None, ref.sha256):
        raise UserError(f"{path}: the index was encoded with model "
                        f"{(manifest.get('model') or {}).get('id')!r}, not {ref.id!r}")
    if manifest and manifest.get("model_files_sha256") not in (None, ref.files_sha256):
        raise UserError(f"{path}: the index was encoded with other files of model {ref.id!r} than its "
                        f"folder holds now (its tokenizer or configuration changed since); leave out --index to "
                        f"encode the documents again")
    if quantization is None:
        quantization = (manifest or {}).get("quantization", QUANTIZATION)
    elif manifest and manifest.get("quantization") not in (None, quantization):
        raise UserError(f"{path}: the index's weights were quantized with scale "
                        f"{manifest.get('quantization')}, not {quantization}")
    return ref, manifest, quantization


def splade_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                  index: str | os.PathLike | None = None, hits: int = SPLADE_DEFAULTS["hits"],
                  batch_size: int = SPLADE_DEFAULTS["batch_size"], max_length: int | None = None,
                  query_max_length: int | None = None, quantization: float | None = None,
                  threads: int = SPLADE_DEFAULTS["threads"], rebuild: bool = False,
                  encoded_queries: str | os.PathLike | None = None, run_tag: str | None = None,
                  command: str | None = None, progress: bool = True, device: str = "cpu",
                  force: bool = False) -> RunResult:
    """Rank the documents of ``dataset_id`` with a SPLADE-style model and write a TREC run and its sidecar; without
    ``index`` the documents are encoded and indexed (:func:`splade_index`). ``encoded_queries`` also writes the
    queries as Pyserini's pre-encoded topics."""
    check_int(hits, "--hits", 1, MAX_HITS)
    _check_settings(batch_size, max_length, query_max_length, QUANTIZATION if quantization is None else quantization,
                    threads)
    check_run_output(output, inputs=[index], force=force)  # never into the index it searches, even with --force
    if encoded_queries is not None:
        encoded_queries = _check_topics_output(encoded_queries, output, index, force)
    dataset = datasets.load(dataset_id)
    texts = datasets.query_texts(dataset)
    order = pyserini_topic_order(texts)
    if index is not None:
        index_path = Path(index)
        ref, manifest, quantization = _index_settings(index_path, model, quantization)
    else:
        if model is None:
            raise UserError("give the --model to encode with (a SPLADE-style masked language model folder or "
                            "cached id)")
        quantization = QUANTIZATION if quantization is None else quantization
        ref = resolve_model(model)
        check_run_output(output, inputs=[default_splade_index_path(dataset_id, ref)], force=force)
        if encoded_queries is not None:
            check_replaceable_file(encoded_queries, inputs=[default_splade_index_path(dataset_id, ref)], force=force)
        index_path, manifest = None, None
    quantization = _check_settings(batch_size, max_length, query_max_length, quantization, threads)
    encoder = SparseEncoder(ref, device=device)
    # the queries first: a conflicting --encoded-queries file fails before the documents are encoded
    encoder.length(max_length, SPLADE_DEFAULTS["max_length"])  # refused before the queries are encoded
    q_length = encoder.length(query_max_length, SPLADE_DEFAULTS["query_max_length"], "--query-max-length")
    from ..options import progress_bar

    with progress_bar(len(order), f"encoding the queries of {dataset_id}", progress, "queries") as bar:
        vectors = encoder.encode([texts[q] for q in order], q_length, batch_size, quantization, bar)
    if encoded_queries is not None:
        write_file_output(encoded_queries, encoded_topics(order, vectors), force=force)
    if index_path is None:
        built = splade_index(dataset_id, index=None, batch_size=batch_size, max_length=max_length,
                             quantization=quantization, threads=threads, rebuild=rebuild, progress=progress,
                             encoder=encoder)
        index_path, manifest = built.path, built.manifest
    jvm.configure()
    from pyserini.search.lucene import LuceneImpactSearcher

    precomputed = SimpleNamespace(encode=dict(zip(order, vectors)).__getitem__)  # a query's "text" is its id
    searcher = open_lucene(lambda: LuceneImpactSearcher(str(index_path.resolve()), precomputed, min_idf=MIN_IDF),
                           index_path)
    empty = sum(not vector for vector in vectors)

    tag = run_tag or f"splade-{datasets.slug(ref.name)}"
    parameters = {"hits": hits, "batch_size": batch_size,
                  "max_length": (manifest or {}).get("max_length", max_length), "query_max_length": q_length,
                  "quantization": quantization, "min_idf": MIN_IDF, "pooling": "max",
                  "activation": "log(1 + relu(logits))"}
    if encoded_queries is not None:
        parameters["encoded_queries"] = str(encoded_queries)
    sidecar = Sidecar(dataset=dataset_id, runner="splade",
                      system=f"SPLADE-style {ref.name} (Lucene impact index, weights x{quantization:g} as integers)",
                      tag=tag, parameters=parameters, model=ref.metadata(),
                      index={"path": str(index_path), "manifest": manifest},
                      language=datasets.dataset_language(dataset), command=command)
    results = search_batches(searcher, {q: q for q in order}, order, hits, threads)
    return write_run_and_sidecar(output, results, sidecar, queries=len(order), details={
        "dataset": dataset_id, "index": str(index_path), "model": ref.id, **parameters, "queries": len(order),
        "empty_queries": empty, "lines": None, "run_tag": tag})
