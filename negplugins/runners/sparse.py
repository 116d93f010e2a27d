"""Learned sparse retrieval (SPLADE-style masked language models) with a Lucene impact index.

Encoding (the formula of SPLADE and of Pyserini's ``SpladeDocumentEncoder`` / ``SpladeQueryEncoder``): a
text is tokenized (truncated to ``max_length`` tokens, special tokens added), the model's masked-language
logits are computed for every token, and the weight of vocabulary term ``j`` is
``max over the text's tokens t of log(1 + relu(logit[t, j]))`` (padding excluded). Because
``log(1 + relu(x))`` never decreases as ``x`` grows, it is applied once to the largest logit of each term
rather than to every logit (the same numbers, without a second copy of the ``tokens x vocabulary`` logits).
Weights are quantized to integers as Pyserini's SPLADE encoders quantize them: ``round(w / 5 * 256)``
(a scale of 51.2; another ``quantization`` scale ``s`` is computed as ``round(w / (256 / s) * 256)``, Python's
round half to even), and terms of weight 0 are left out. The term of vocabulary id ``j`` is the tokenizer's
token for ``j`` (``##s``, ``[CLS]`` and the like included, as Pyserini writes them); ids without a token and
tokens containing white space (which would not survive a white-space separated topic file) are never terms.

Index: the documents (:func:`negplugins.datasets.iter_docs_for_indexing`, the text the Lucene and dense
indexes see) are encoded in chunks into an Anserini ``JsonVectorCollection`` (one
``{"id", "contents": "", "vector": {term: weight}}`` per line, one file per chunk, in a scratch folder
beside the index that is removed afterwards) and indexed by Anserini's ``IndexCollection`` with
``-impact -pretokenized``, as ``python -m pyserini.index.lucene`` does, into
``indexes/splade/<corpus>/<model name>/`` with the suite's manifest (``kind: "impact"``, the corpus's data origin,
the model's fingerprints: its weights' and its whole folder's, tokenizer included, the quantization and the maximum
length); an index built otherwise is never reused.
Anserini does not index a document none of whose weights is positive (it could match no query anyway).

Search: queries (:func:`negplugins.datasets.query_texts`, at most ``query_max_length`` tokens, 256 as
Pyserini's ``SpladeQueryEncoder``) are encoded the same way and searched with Pyserini's
``LuceneImpactSearcher``: the score of a document is the sum over the query's terms of query weight times
document weight (integers, so exact). ``LuceneImpactSearcher`` keeps only the query terms whose
``log(N / df)`` exceeds ``min_idf``; the suite uses ``min_idf = -1``, which keeps every term of the index,
so the score is SPLADE's full dot product (Pyserini's default, 0, would drop the terms of every document).
Hits are written as Anserini returns them (equal scores by document id ascending, as the BM25 runner; the suite's
measures score its one ranking, standard measures their stock providers' order), queries in Pyserini's topic order.

Stock Pyserini searches the index the suite builds and writes the same bytes (a test compares them)::

    negplugins search splade DATASET --model MODEL --encoded-queries topics/x.splade.tsv --run-tag Anserini -o run
    python -m pyserini.search.lucene --index indexes/splade/<corpus>/<model> --topics topics/x.splade.tsv \\
        --impact --min-idf -1 --output run

``--encoded-queries`` writes the encoded queries in the format of Anserini's pre-encoded topics: ``qid``,
a tab, and each term repeated as many times as its weight (Pyserini's ``--impact`` without ``--encoder``
counts the words back into weights); a query with no term of positive weight has no line (and no hits).
With the default quantization, stock Pyserini's own SPLADE query encoder gives the same query weights too
(``--encoder MODEL_FOLDER``, whose path must contain ``splade``), so ``--impact --encoder MODEL --min-idf -1``
with the suite's plain topic file (``negplugins topics``) reproduces the run as well.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.files import MARKER, atomic_directory, check_folder_output, output_lock, scratch_directory
from ..io.integrity import damage, file_records
from ..io.outputs import check_replaceable_file, check_run_output, write_file_output
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..options import DEFAULT_HITS, MAX_BATCH_SIZE, MAX_HITS, MAX_LENGTH, MAX_THREADS, check_float, check_int
from .common import MANIFEST, default_index_path, pyserini_topic_order, read_manifest
from .encoders import ModelRef, load_error, model_load_errors, quiet_transformers, resolve_model
from .encoding_settings import token_limits
from .lucene_index import anserini_indexer, check_undamaged, open_lucene

__all__ = ["MIN_IDF", "QUANTIZATION", "SPLADE_DEFAULTS", "SparseEncoder", "SparseIndex", "default_splade_index_path",
           "encoded_topics", "quantize", "splade_index", "splade_search"]

#: Pyserini's SPLADE quantization, ``round(w / 5 * 256)``: a scale of 256 / 5.
QUANTIZATION = 51.2
#: ``LuceneImpactSearcher(min_idf=...)``: -1 keeps every query term found in the index (idf >= 0).
MIN_IDF = -1
SPLADE_DEFAULTS = {"hits": DEFAULT_HITS, "batch_size": 16, "max_length": 512, "query_max_length": 256,
                   "quantization": QUANTIZATION, "threads": 1}

_FORMAT = 1
_CHUNK_DOCS = 2048  # documents encoded and written per collection file (bounds the memory of the encoding)


def quantize(weights: np.ndarray, scale: float = QUANTIZATION) -> np.ndarray:
    """Integer weights as Pyserini computes them: ``round(w / (256 / scale) * 256)`` in double precision.

    For the default scale 51.2, ``256 / scale`` is exactly 5.0, so this is Pyserini's ``round(w / 5 * 256)``
    (``SpladeEncoder._get_encoded_query_token_wight_dicts``), round half to even as Python's ``round``.
    """
    return np.rint(np.asarray(weights, dtype=np.float64) / (256.0 / scale) * 256.0).astype(np.int64)


def _model_limit(tokenizer, config) -> int | None:
    """The longest input the model takes: the tokenizer's ``model_max_length`` when set, else the positions."""
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000:
        return limit
    positions = getattr(config, "max_position_embeddings", None)
    return int(positions) if positions else None


class SparseEncoder:
    """A SPLADE-style encoder: ``AutoModelForMaskedLM`` and its tokenizer, loaded offline.

    :meth:`encode` gives each text's quantized term weights (see the module documentation).

    Parameters
    ----------
    ref : ModelRef
        The resolved model (:func:`~negplugins.runners.encoders.resolve_model`).
    device : str
        torch device the model runs on (``cpu``, ``cuda``, ``cuda:1``, ``mps``).
    """

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
        terms: list[str | None] = [None] * self.vocab_size
        for token, token_id in self.tokenizer.get_vocab().items():
            if 0 <= token_id < self.vocab_size:
                terms[token_id] = token
        self.terms = terms
        self.allowed = np.array([bool(t) and not any(c.isspace() for c in t) for t in terms], dtype=bool)
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
        """Unquantized weights, ``float32`` arrays of shape ``(vocabulary,)``, one per text, in order (``bar``, a
        progress bar, advanced by each batch's texts).

        The texts run through :class:`~negplugins.runners.encoding_pipeline.EncodingPipeline` as one group: sorted by
        token count, in batches of at most ``batch_size x max_length`` padded tokens."""
        from .._compat.fast_tokenizer import token_rows
        from .encoding_pipeline import EncodingPipeline, TorchForward

        pipeline = EncodingPipeline(token_rows(self.tokenizer, max_length, False), TorchForward(self._pooled,
                                    self.device), token_budget=max(1, batch_size) * max_length,
                                    row_shape=(self.vocab_size,), pad_id=self.tokenizer.pad_token_id,
                                    left=self.tokenizer.padding_side == "left")
        return list(next(pipeline.run([texts], None if bar is None else bar.update)))

    def _pooled(self, input_ids, attention_mask):
        """``log(1 + relu(max over the real tokens of the MLM logits))``, one row per text."""
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
        vectors = []
        for row in self.weights(texts, max_length, batch_size, bar):
            quantized = quantize(row, quantization)
            ids = np.flatnonzero((quantized > 0) & self.allowed)
            vectors.append({self.terms[j]: int(quantized[j]) for j in ids})
        return vectors


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
    """Outcome of :func:`splade_index`."""

    path: Path
    built: bool  # False: an up-to-date index was reused
    manifest: dict


def _expected_manifest(dataset_id: str, ref: ModelRef, max_length: int, quantization: float) -> dict:
    from importlib import metadata

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
    """Encode the documents of ``dataset_id`` into a Lucene impact index, or reuse one built earlier.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id; subsets share the index of their corpus.
    model : str or path
        A masked language model (folder or cached Hugging Face id), e.g. a SPLADE checkpoint.
    index : path, optional
        Destination folder; defaults to :func:`default_splade_index_path`.
    batch_size : int
        Texts per forward pass.
    max_length : int, optional
        Document tokens kept (default 512, at most the model's limit).
    quantization : float
        Scale of the integer weights (default Pyserini's 51.2, see :func:`quantize`).
    threads : int
        Anserini's indexing threads.
    rebuild : bool
        Encode and index again even if an up-to-date index exists.
    progress : bool
        Show a progress bar while encoding.
    device : str
        torch device of the model.
    encoder : SparseEncoder, optional
        An already loaded encoder of ``model``.

    Returns
    -------
    SparseIndex
        The folder, whether it was built now, and its manifest.

    Raises
    ------
    UserError
        A bad setting, an unknown dataset, a model that cannot be loaded, a destination that is not an index
        of the suite.
    """
    quantization = _check_settings(batch_size, max_length, None, quantization, threads)
    dataset = datasets.load(dataset_id)
    ref = encoder.ref if encoder is not None else resolve_model(model)
    path = Path(index) if index is not None else default_splade_index_path(dataset_id, ref)
    wanted_length = int(max_length) if max_length else SPLADE_DEFAULTS["max_length"]

    def reusable(expected):
        existing = read_manifest(path)
        if path.exists() and existing is None and path.is_dir() and any(path.iterdir()):
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
                            min_idf=MIN_IDF,
                            pyserini_search=["--impact", "--min-idf", str(MIN_IDF)])
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return SparseIndex(path, True, manifest)


def _write_collection(dataset, encoder, folder: Path, max_length, batch_size, quantization, progress, desc):
    """Encode the documents chunk by chunk into ``folder/docs-NNNNN.jsonl``; ``(documents, without terms)``."""
    from ..options import progress_bar

    count = empty = part = 0
    chunk: list[tuple[str, str]] = []

    def flush():
        nonlocal empty, part
        vectors = encoder.encode([text for _, text in chunk], max_length, batch_size, quantization, bar)
        with open(folder / f"docs-{part:05d}.jsonl", "w", encoding="utf-8", newline="") as f:
            for (doc_id, _), vector in zip(chunk, vectors):
                empty += not vector
                f.write(json.dumps({"id": doc_id, "contents": "", "vector": vector}, ensure_ascii=False) + "\n")
        part += 1
        chunk.clear()

    with progress_bar(None, desc, progress) as bar:
        for doc in datasets.iter_docs_for_indexing(dataset):
            chunk.append(doc)
            count += 1
            if len(chunk) >= _CHUNK_DOCS:
                flush()
        if chunk:
            flush()
    return count, empty


def encoded_topics(order: list[str], vectors: list[dict[str, int]]) -> str:
    """Anserini's pre-encoded topic format: ``qid<TAB>term term ...``, each term repeated weight times.

    Queries without any term get no line (Pyserini's topic reader refuses an empty query).
    """
    lines = []
    for query_id, vector in zip(order, vectors):
        if vector:
            lines.append(f"{query_id}\t{' '.join(' '.join([term] * weight) for term, weight in vector.items())}\n")
    return "".join(lines)


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


def _check_impact_index(path: Path) -> dict | None:
    """Refuse an ``--index`` that is not a Lucene impact index; return the suite's manifest, if any."""
    if not path.is_dir():
        raise UserError(f"{path}: impact index folder not found (leave out --index to build one)")
    manifest = read_manifest(path)
    if manifest is not None and manifest.get("kind") != "impact":
        raise UserError(f"{path}: is a {str(manifest.get('kind'))[:40]} index built by negplugins, not a SPLADE "
                        f"impact index; expected a folder built by 'negplugins search splade' or "
                        f"'pyserini.index.lucene --impact'")
    if not any(p.is_file() for p in path.glob("segments_*")):
        raise UserError(f"{path}: is not a Lucene index (no segments_N file); expected a folder built by "
                        f"'negplugins search splade' or 'pyserini.index.lucene --impact'")
    check_undamaged(path, manifest)
    return manifest


class _Precomputed:
    """The query encoder handed to ``LuceneImpactSearcher``: the query "text" is its id, its vector precomputed."""

    def __init__(self, vectors: dict[str, dict[str, int]]):
        self.vectors = vectors

    def encode(self, query_id, **kwargs):
        return self.vectors[query_id]


def splade_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                  index: str | os.PathLike | None = None, hits: int = SPLADE_DEFAULTS["hits"],
                  batch_size: int = SPLADE_DEFAULTS["batch_size"], max_length: int | None = None,
                  query_max_length: int | None = None, quantization: float | None = None,
                  threads: int = SPLADE_DEFAULTS["threads"], rebuild: bool = False,
                  encoded_queries: str | os.PathLike | None = None, run_tag: str | None = None,
                  command: str | None = None, progress: bool = True, device: str = "cpu",
                  force: bool = False) -> RunResult:
    """Rank the documents of ``dataset_id`` for each of its queries with a SPLADE-style model; write a TREC run.

    Without ``index`` the documents are encoded and indexed (or a matching index is reused) with
    :func:`splade_index`. See the module documentation for the encoding, the scoring, the order of hits and
    the stock Pyserini command that gives the same run. The metadata sidecar is written beside the run.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    output : path
        The run file to write (atomically; ``.gz`` is compressed).
    model : str or path, optional
        The masked language model (folder or cached id); required unless ``index`` is an index of the suite,
        whose model is then the default.
    index : path, optional
        An existing impact index (the suite's, or one built by ``pyserini.index.lucene --impact``).
    hits : int
        Documents per query.
    batch_size : int
        Texts per forward pass.
    max_length, query_max_length : int, optional
        Document tokens (default 512) and query tokens (default 256) kept, at most the model's limit.
    quantization : float, optional
        Scale of the integer weights (default: the index's, else Pyserini's 51.2).
    threads : int
        Anserini's indexing and search threads.
    rebuild : bool
        Encode and index again even if an up-to-date index exists.
    encoded_queries : path, optional
        Also write the encoded queries as a Pyserini topic file (``.tsv``), for stock
        ``pyserini.search.lucene --impact``.
    run_tag : str, optional
        Last column of the run; default ``splade-<model name>`` (stock Pyserini writes ``Anserini``).
    command : str, optional
        Recorded in the metadata; defaults to this process's command line.
    progress : bool
        Show a progress bar while encoding documents.
    device : str
        torch device of the model.
    force : bool
        Replace an existing run (or encoded query file) that is committed or was not written by the suite.

    Returns
    -------
    RunResult
        What was written (:class:`negplugins.io.run_writer.RunResult`); its ``details``: dataset, index, model,
        parameters, queries, queries without terms, lines written, run tag.

    Raises
    ------
    UserError
        A bad setting; an index that is not an impact index, or was built with another model; a model that
        cannot be loaded as a masked language model offline.
    """
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
        manifest = _check_impact_index(index_path)
        if model is None and manifest and isinstance(manifest.get("model"), dict):
            model = manifest["model"].get("path")
        if model is None:
            raise UserError(f"{index_path}: not an index built by negplugins, so give the --model that encoded it")
        ref = resolve_model(model)
        if manifest and manifest.get("model_sha256") not in (None, ref.sha256):
            raise UserError(f"{index_path}: the index was encoded with model "
                            f"{(manifest.get('model') or {}).get('id')!r}, not {ref.id!r}")
        if manifest and manifest.get("model_files_sha256") not in (None, ref.files_sha256):
            raise UserError(f"{index_path}: the index was encoded with other files of model {ref.id!r} than its "
                            f"folder holds now (its tokenizer or configuration changed since); leave out --index to "
                            f"encode the documents again")
        if quantization is None:
            quantization = (manifest or {}).get("quantization", QUANTIZATION)
        elif manifest and manifest.get("quantization") not in (None, quantization):
            raise UserError(f"{index_path}: the index's weights were quantized with scale "
                            f"{manifest.get('quantization')}, not {quantization}")
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

    from .._compat import jvm

    jvm.configure()
    from pyserini.search.lucene import LuceneImpactSearcher

    searcher = open_lucene(lambda: LuceneImpactSearcher(str(index_path.resolve()), _Precomputed(dict(zip(order, vectors))),
                                                        min_idf=MIN_IDF), index_path)
    empty = sum(not vector for vector in vectors)

    def results():
        for start in range(0, len(order), 64):
            batch = order[start:start + 64]
            found = searcher.batch_search(batch, batch, hits, threads)
            for query_id in batch:
                yield query_id, [(hit.docid.strip(), hit.score) for hit in found.get(query_id, [])]

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
    return write_run_and_sidecar(output, results(), sidecar, queries=len(order), details={
        "dataset": dataset_id, "index": str(index_path), "model": ref.id, **parameters, "queries": len(order),
        "empty_queries": empty, "lines": None, "run_tag": tag})
