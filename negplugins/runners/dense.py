"""Dense retrieval: encode a dataset's documents into a Pyserini-style faiss index and search it.

Index layout (the same as ``python -m pyserini.encode ... output --to-faiss``)::

    indexes/faiss/<corpus>/<model>[.<backend>][.<dtype>][.<hash>]/
        index                   faiss IndexFlatIP of the document vectors (L2-normalised unless --no-normalize)
        docid                   one document id per line, in the order of the vectors
        negplugins-index.json   manifest: corpus, model fingerprint, encoding settings, dimension, documents
    indexes/faiss/<corpus>/<...>.encoders/   ONNX exports of the model (--backend onnx / openvino only)

so stock Pyserini searches it too (the manifest's ``pyserini_search`` holds the arguments, where Pyserini
can encode the queries the same way: mean or CLS pooling, a prefix ending with a space)::

    python -m pyserini.search.faiss --index indexes/faiss/<corpus>/<model> --topics topics/x.tsv \\
        --encoder <model folder> --encoder-class auto --pooling mean --l2-norm --output run.trec

Encoding settings: everything that shapes the vectors (pooling, normalisation, token limit, passage prefix,
backend, dtype; see :func:`negplugins.runners.encoders.encoder_settings`) is the manifest's ``encoding``, part
of the default index folder's name (:func:`default_dense_index_path`), and compared before an index is reused:
an index encoded otherwise is encoded again (or, given with ``--index``, refused when an option contradicts it).
The device is recorded but not compared (float32 on a GPU gives the CPU's vectors up to rounding).

Encoding is split into shards as ``pyserini.encode`` splits a collection (``--shard-id`` /
``--shard-num``: shard ``i`` of ``n`` holds documents ``i * (N // n)`` up to the next shard's start, the
last shard takes the remainder). Every finished shard is written atomically, with a small manifest, under
``<index>.shards/``; a rerun skips the finished ones, so an interrupted encoding resumes from its last
finished shard. When all shards are there they are merged (in order) into the index, atomically, and the
shard folders are removed.

Index types: ``index_type`` (``--index-type``) is a faiss factory string, inner-product metric: ``Flat`` (the
default, exact, the layout above), ``HNSW32``, ``IVF65536,PQ64``, ... Types that need training are trained
on ``train_sample`` vectors (``--train-sample``, default ``min(documents, 100,000)``) drawn at random (seed 0)
from the encoded shards; the vectors are then added shard by shard. The manifest records ``index_type`` and
``train_sample``; stock Pyserini reads every type (``faiss.read_index``); ``search_params``
(``--search-params``, faiss ``ParameterSpace`` syntax such as ``nprobe=64`` or ``efSearch=128``) tunes an
approximate index at search time.

Beyond memory: a flat index larger than RAM is searched exactly over its shards. With ``search_shards``
(``--search-shards``), or automatically when the vectors (documents x dimension x 4 bytes) would exceed
``max_index_memory`` (``--max-index-memory``, which then also sets the number of shards so that each one
fits), the encoded shards are not merged: they are moved into the index folder as they are::

    indexes/faiss/<corpus>/<model>/
        negplugins-index.json        manifest: "layout": "shards", the shard folders in order
        shard-00000-of-00004/        index + docid (+ its shard manifest): each one a Pyserini faiss index
        ...

and a search loads one shard at a time, takes each shard's top ``hits`` (ties across a shard's cut
resolved as below) and merges them into the overall top ``hits``, which is exactly the ranking of the
one merged index (tests/runners/test_dense_index_types.py; ComLQ: benchmarks/bench_sharded_search.py).
Before a shard or an index is written, the disk must have room for it.

``engine="ray"`` (``--engine ray``) encodes the shards on a Ray cluster instead
(:mod:`negplugins.runners.ray_engine`): the same shards, index and run as this process with the same
``shard_num`` (a shard's texts are sorted by length and batched as a whole, so the shard count, not the engine,
decides the batches), a shard written as soon as all its documents are encoded.

Ranking: documents by decreasing score as written in the run (inner product = cosine similarity,
six decimals), equal scores by document id ascending (as :func:`negplugins.io.trec.ranked` and Anserini);
the search asks faiss for more than ``hits`` documents whenever a tie crosses the cut, so the run does
not depend on faiss's order among equal scores. For a flat index the scores written are computed in
float64 from the stored float32 vectors, the same way for every document (faiss's own float32 scores
differ in the last bit with a document's position in the index, which a sharded index changes): faiss
only proposes the candidates. The same inputs give byte-identical runs.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import math
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.files import MARKER, atomic_directory, check_free_space, written_together
from ..io.integrity import damage, file_records
from ..io.interrupts import deferred_signals
from ..io.jsonfile import read_json
from ..io.outputs import check_run_output
from ..io.sidecars import write_metadata
from ..io.trec import write_run
from ..options import DEFAULT_HITS, MAX_BATCH_SIZE, MAX_HITS, MAX_SHARDS, check_int
from . import ray_engine
from .bm25 import pyserini_topic_order
from .encoders import (
    CALIBRATION_PASSAGES,
    DenseEncoder,
    ModelRef,
    SentenceEncoder,
    encode_texts,
    encoder_settings,
    model_defaults,
    resolve_model,
)
from .encoding_pipeline import length_groups
from .lucene_index import MANIFEST, MAX_MANIFEST_BYTES, dataset_language, default_index_path, read_manifest

__all__ = ["DENSE_DEFAULTS", "DEFAULT_INDEX_TYPE", "DenseIndex", "default_dense_index_path", "dense_index",
           "dense_search", "check_dense_index", "load_dense_index", "parse_memory_size", "search_index_folder",
           "search_vectors", "shard_bounds", "reusable_passage_index", "stored_passage_vectors"]

DENSE_DEFAULTS = {"hits": DEFAULT_HITS, "batch_size": 64, "shard_num": 1}

SHARD_MANIFEST = "negplugins-shard.json"
_FORMAT = 1

#: faiss factory string of the default index: exact inner product, Pyserini's layout.
DEFAULT_INDEX_TYPE = "Flat"
#: Training vectors of an index type that needs training, unless ``train_sample`` says otherwise.
DEFAULT_TRAIN_SAMPLE = 100_000
MAX_TRAIN_SAMPLE = 100_000_000
_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
               "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def parse_memory_size(text: str | int, option: str = "--max-index-memory") -> int:
    """Bytes of ``512M``, ``16G``, ``1.5T`` or a plain number of bytes (units of 1024).

    Raises
    ------
    UserError
        One line naming the option, the value and the accepted form.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value, unit = float(text), ""
    else:
        raw = str(text).strip().upper().replace(" ", "")
        number = raw.rstrip("KMGTIB")
        value, unit = None, raw[len(number):]
        try:
            value = float(number)
        except ValueError:
            pass
    if value is None or unit not in _SIZE_UNITS or not value > 0 or value != value or value == float("inf"):
        raise UserError(f"{option}: expected a size such as 512M, 16G or 1.5T (bytes, units of 1024), got {text!r}")
    return int(value * _SIZE_UNITS[unit])


def _normalise_index_type(index_type: str | None) -> str:
    text = DEFAULT_INDEX_TYPE if index_type is None else str(index_type).strip()
    if not text or len(text) > 200:
        raise UserError(f"--index-type: expected a faiss index factory string such as Flat, HNSW32 or IVF4096,PQ64, "
                        f"got {index_type!r}")
    return DEFAULT_INDEX_TYPE if text.lower() == "flat" else text


def _new_index(index_type: str, dimension: int):
    """An empty faiss index of ``index_type`` (inner product) for ``dimension``-dimensional vectors."""
    import faiss

    if index_type == DEFAULT_INDEX_TYPE:
        return faiss.IndexFlatIP(dimension)
    try:
        return faiss.index_factory(dimension, index_type, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as error:
        message = str(error).strip().splitlines()
        raise UserError(f"--index-type {index_type!r}: not a faiss index factory string for {dimension}-dimensional "
                        f"vectors ({message[-1][:200] if message else 'refused by faiss'}); examples: Flat, HNSW32, "
                        f"IVF4096,Flat, IVF65536,PQ64") from None


def _code_bytes(index, dimension: int) -> int:
    """Bytes a vector's code takes in ``index`` (its storage's for HNSW; a float vector when faiss cannot say)."""
    import faiss

    try:
        return int(index.sa_code_size())
    except RuntimeError:
        storage = getattr(index, "storage", None)
        return dimension * 4 if storage is None else _code_bytes(faiss.downcast_index(storage), dimension)


def _index_bytes(index, count: int, dimension: int) -> int:
    """Disk (and memory) an index of ``count`` vectors of ``index``'s type takes, an upper-bound estimate."""
    import faiss

    typed = faiss.downcast_index(index)  # a view: ``index`` keeps owning the C++ object
    if isinstance(typed, faiss.IndexFlat):
        return count * dimension * 4 + (1 << 20)
    per_vector = _code_bytes(typed, dimension) + 8  # the code, and an id (IVF lists) or level (HNSW)
    hnsw = getattr(typed, "hnsw", None)
    if hnsw is not None:
        per_vector += int(hnsw.nb_neighbors(0) + hnsw.nb_neighbors(1)) * 4  # links of level 0 and a share above
    ivf = faiss.try_extract_index_ivf(typed)
    centroids = int(ivf.nlist) * dimension * 4 if ivf is not None else 0
    return count * per_vector + centroids + (1 << 20)


_SHAPE = ("pooling", "normalize", "max_length", "prefix")  # the settings that are the model's defaults unless given


def default_dense_index_path(dataset_id: str, model: ModelRef, settings: dict | None = None) -> Path:
    """``indexes/faiss/<corpus>/<model name>[.<backend>][.<dtype>][.<hash>]``.

    The plain model name holds the model's own encoding (its pooling, token limit and passage prompt,
    normalised) with PyTorch in float32; another backend or dtype is named, and other pooling,
    normalisation, token limit or passage prefix add the first 8 hex digits of the SHA-256 of those four
    settings (``settings`` as :func:`~negplugins.runners.encoders.encoder_settings` returns them), so indexes
    encoded differently never share a folder.
    """
    name = datasets.slug(model.name)
    if settings is not None:
        if settings["backend"] != "torch":
            name += f".{settings['backend']}"
        if settings["dtype"] != "float32":
            name += f".{settings['dtype']}"
        own = encoder_settings(model, backend=settings["backend"], dtype=settings["dtype"]) \
            if model.path is not None else SentenceEncoder.own_settings(settings["pooling"])
        if any(settings[k] != own[k] for k in _SHAPE):
            shape = json.dumps({k: settings[k] for k in _SHAPE}, sort_keys=True)
            name += "." + hashlib.sha256(shape.encode("utf-8")).hexdigest()[:8]
    return default_index_path(dataset_id, "faiss") / name


def encoders_path(index: str | os.PathLike) -> Path:
    """``<index>.encoders``: the ONNX exports used to encode ``index`` and its queries (``onnx``, ``openvino``)."""
    index = Path(index)
    return index.with_name(index.name + ".encoders")


def calibration_texts(dataset_id: str, settings: dict) -> list[str] | None:
    """OpenVINO int8's calibration texts: the corpus's first :data:`~negplugins.runners.encoders.CALIBRATION_PASSAGES`
    passages (docstore order) with the passage prefix of ``settings``; ``None`` for every other backend and dtype.

    The same texts calibrate the query side (the query encoder runs the passage encoder's quantized graph, or, with
    ``--query-encoder``, a graph of its own calibrated on these texts), so an index and its searches agree.
    """
    if (settings.get("backend"), settings.get("dtype")) != ("openvino", "int8"):
        return None
    first = itertools.islice(datasets.iter_docs_for_indexing(datasets.load(dataset_id)), CALIBRATION_PASSAGES)
    return [settings["prefix"] + text for _, text in first]


def index_encoding(manifest: dict | None) -> dict | None:
    """The encoding settings an index was built with (its manifest's ``encoding``), ``None`` if unknown.

    Indexes of the first release have no ``encoding``: they were always encoded with PyTorch in float32,
    L2-normalised, without a prefix, with the pooling and token limit their manifest records.
    """
    if not manifest:
        return None
    if isinstance(manifest.get("encoding"), dict):
        return manifest["encoding"]
    if manifest.get("kind") == "faiss" and manifest.get("format") == _FORMAT and "pooling" in manifest:
        pooling = {"last": "last-token"}.get(manifest["pooling"], manifest["pooling"])
        return {"pooling": pooling, "normalize": True, "max_length": manifest.get("max_length"), "prefix": "",
                "backend": "torch", "dtype": "float32"}
    return None


def shards_path(index: str | os.PathLike) -> Path:
    index = Path(index)
    return index.with_name(index.name + ".shards")


def shard_bounds(total: int, shard_id: int, shard_num: int) -> tuple[int, int]:
    """``[start, end)`` of a shard, exactly as ``pyserini.encode``'s ``JsonlCollectionIterator``."""
    size = int(total / shard_num)
    start = shard_id * size
    end = total if shard_id == shard_num - 1 else min(start + size, total)
    return start, end


def _ids_sha256(ids) -> str:
    return hashlib.sha256("".join(f"{i}\n" for i in ids).encode("utf-8")).hexdigest()


def _check_shards(shard_id, shard_num):
    check_int(shard_num, "--shard-num", 1, MAX_SHARDS)
    if shard_id is not None:
        try:
            check_int(shard_id, "--shard-id", 0, shard_num - 1)
        except UserError as error:
            raise UserError(f"{error} (for --shard-num {shard_num})") from None


@dataclass
class DenseIndex:
    """Outcome of :func:`dense_index`."""

    path: Path
    complete: bool  # the merged index exists
    built: bool  # something was encoded or merged by this call
    shards_done: list[int]
    shard_num: int
    manifest: dict | None


def _read_json(path: Path) -> dict | None:
    """A shard manifest, or ``None`` when there is none the suite could have written (bounded parser)."""
    if not path.is_file():
        return None
    try:
        value = read_json(path, what="shard manifest", max_bytes=MAX_MANIFEST_BYTES)
    except UserError:
        return None
    return value if isinstance(value, dict) else None


def _write_faiss(folder: Path, ids, vectors: np.ndarray, dimension: int) -> None:
    import faiss

    index = faiss.IndexFlatIP(dimension)
    if len(ids):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    faiss.write_index(index, str(folder / "index"))
    with open(folder / "docid", "w", encoding="utf-8", newline="") as f:
        f.writelines(f"{doc_id}\n" for doc_id in ids)


def _pyserini_search(encoder, ref: ModelRef) -> list[str] | None:
    """Stock ``pyserini.search.faiss`` arguments that encode queries as this index expects, when it can."""
    if ref.path is None or encoder.pooling not in ("mean", "cls") or model_defaults(ref).dense or model_defaults(ref).lowercase:
        return None
    args = ["--encoder", str(ref.path), "--encoder-class", "auto", "--pooling", encoder.pooling]
    args += ["--l2-norm"] if encoder.normalize else []
    prefix = model_defaults(ref).query_prefix
    if prefix:
        if not prefix.endswith(" "):  # Pyserini joins prefix and query with a space
            return None
        args += ["--query-prefix", prefix[:-1]]
    return args


def _encode_shard(encoder, texts, batch_size, desc, progress):
    from ..options import progress_bar

    # longest texts first over the whole shard, in the groups a Ray worker gets (the batches never span two)
    groups = length_groups([len(text) for text in texts], batch_size)
    vectors = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
    with progress_bar(len(texts), desc, progress) as bar:
        texts_of = ([texts[i] for i in rows] for rows in groups)
        if hasattr(encoder, "encode_groups"):  # a DenseEncoder: the next groups are tokenized while the model runs
            encoded = encoder.encode_groups(texts_of, batch_size=batch_size, progress=bar.update)
        else:
            encoded = (encoder.encode(group, batch_size=batch_size) for group in texts_of)
        for rows, group_vectors in zip(groups, encoded):
            vectors[rows] = group_vectors
            if not hasattr(encoder, "encode_groups"):
                bar.update(len(rows))
    return vectors


def dense_index(dataset_id: str, model: str | os.PathLike | None = None, index: str | os.PathLike | None = None,
                batch_size: int = DENSE_DEFAULTS["batch_size"], shard_num: int = DENSE_DEFAULTS["shard_num"],
                shard_id: int | None = None, rebuild: bool = False, progress: bool = True,
                encoder: DenseEncoder | None = None, index_type: str | None = None,
                train_sample: int | None = None, search_shards: bool = False,
                max_index_memory: int | str | None = None, engine="single", *, device: str | None = None, dtype: str | None = None,
                backend: str | None = None, pooling: str | None = None, normalize: bool | None = None,
                max_length: int | None = None, passage_prefix: str | None = None) -> DenseIndex:
    """Encode the documents of ``dataset_id`` into a faiss index, or reuse one built earlier.

    An index is reused only when its manifest records the same corpus, model weights and encoding settings
    (pooling, normalisation, token limit, passage prefix, backend, dtype); otherwise it is encoded again.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id; subsets share the index of their corpus.
    model : str or path, optional
        sentence-transformers or Hugging Face model (folder or cached id); default all-MiniLM-L6-v2.
    index : path, optional
        Destination folder; defaults to :func:`default_dense_index_path`.
    batch_size : int
        Texts per forward pass.
    shard_num, shard_id : int
        Split the documents into ``shard_num`` shards; with ``shard_id`` encode only that shard (for
        parallel encoding), else every shard not finished yet. The index is merged once all are done.
    rebuild : bool
        Re-encode everything, ignoring an up-to-date index and finished shards.
    progress : bool
        Show a tqdm progress bar per shard.
    encoder : DenseEncoder, optional
        An already loaded passage encoder (avoids loading it twice); the options below are then its own.
    device, dtype, backend, pooling, normalize, max_length, passage_prefix
        The passage encoder's options (:class:`~negplugins.runners.encoders.DenseEncoder`; ``passage_prefix``
        is its ``prefix``); ``None``: the defaults (``auto``, ``float32``, ``torch``, the model's own).
    index_type : str, optional
        faiss factory string (inner product): ``Flat`` (default), ``HNSW32``, ``IVF65536,PQ64``, ...
    train_sample : int, optional
        Vectors an index type that needs training is trained on (default ``min(documents, 100,000)``).
    search_shards : bool
        Keep the shards as the index (``Flat`` only) and search them one at a time (see the module
        documentation), instead of merging them.
    max_index_memory : int or str, optional
        Memory the vectors of one searched index may take (bytes, or ``16G``): a ``Flat`` index over it
        is kept as shards, each within it.
    engine : {"single", "ray"} or RayEngine
        Encode in this process, or on Ray (:mod:`negplugins.runners.ray_engine`; a
        :class:`~negplugins.runners.ray_engine.RayEngine` says which cluster and how many workers). The
        output is the same; give ``shard_num`` > 1 so that an interrupted Ray job resumes from its finished
        shards.

    Returns
    -------
    DenseIndex
        ``complete`` is false only when ``shard_id`` was given and other shards are still missing.
    """
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    _check_shards(shard_id, shard_num)
    index_type = _normalise_index_type(index_type)
    if train_sample is not None:
        check_int(train_sample, "--train-sample", 1, MAX_TRAIN_SAMPLE)
    budget = None if max_index_memory is None else parse_memory_size(max_index_memory)
    if search_shards and index_type != DEFAULT_INDEX_TYPE:
        raise UserError(f"--search-shards: searches the shards of a Flat index exactly; --index-type {index_type} "
                        f"is searched as one index (leave out --search-shards, or use --index-type Flat)")
    on_ray = ray_engine.engine_of(engine)
    dataset = datasets.load(dataset_id)
    ref = encoder.ref if encoder is not None else resolve_model(model)
    if on_ray is not None and ref.path is None:
        raise UserError(f"--engine ray: the Ray workers load the model from its folder, and encoder {ref.name!r} "
                        f"is a model object with none; save it to a folder, or encode with engine='single'")
    settings = encoder.settings if encoder is not None else encoder_settings(
        ref, prefix=passage_prefix, role="passage", pooling=pooling, normalize=normalize, max_length=max_length,
        backend=backend or "torch", dtype=dtype or "float32")
    path = Path(index) if index is not None else default_dense_index_path(dataset_id, ref, settings)
    corpus = datasets.docs_root_id(dataset_id)
    expected = {"format": _FORMAT, "kind": "faiss", "corpus": corpus, "model_sha256": ref.sha256,
                "index_type": index_type}
    existing = read_manifest(path)
    if not rebuild and existing is not None and index_encoding(existing) == settings \
            and _reusable(path, existing, expected, search_shards, budget) and _undamaged(path, existing):
        return DenseIndex(path, True, False, list(range(existing.get("shard_num", 1))),
                          existing.get("shard_num", 1), existing)
    if path.exists() and existing is None and any(path.iterdir()):
        raise UserError(f"{path}: exists and is not an index built by negplugins (no {MANIFEST}); "
                        f"remove it or choose another --index")

    if on_ray is None:
        docs = list(datasets.iter_docs_for_indexing(dataset))
        ids = [doc_id for doc_id, _ in docs]
    else:  # ids and text lengths only: Ray's read tasks read the texts, a group at a time
        corpus_ids = ray_engine.corpus(dataset, dataset_id)
        ids = corpus_ids.ids
    if not ids:
        raise UserError(f"{dataset_id}: the dataset has no documents to index")
    if shard_num > len(ids):  # each shard is a folder: 10,000 of them for 36 documents took 125 MB
        raise UserError(f"--shard-num {shard_num}: more shards than the {len(ids):,} documents of {corpus}; give at "
                        f"most {len(ids):,}")
    # an encoder given by the caller brings its own (one without the attribute has nothing to calibrate)
    calibration = getattr(encoder, "calibration", None) if encoder is not None else calibration_texts(dataset_id, settings)
    if encoder is None:
        encoder = DenseEncoder(ref, role="passage", device=device, cache=encoders_path(path),
                               calibration=calibration, **settings)
    _new_index(index_type, encoder.dimension)  # a bad factory string fails before any encoding
    vector_bytes = len(ids) * encoder.dimension * 4
    keep_shards = search_shards or (index_type == DEFAULT_INDEX_TYPE and budget is not None and vector_bytes > budget)
    if keep_shards and budget is not None and -(-vector_bytes // shard_num) > budget:
        needed = -(-vector_bytes // budget)
        if shard_id is not None:
            raise UserError(f"--max-index-memory {max_index_memory}: {len(ids):,} vectors of {encoder.dimension} "
                            f"dimensions need --shard-num {needed} or more for each shard to fit, got {shard_num}")
        shard_num = min(max(shard_num, needed), len(ids))
    shard_root = shards_path(path)
    if rebuild and shard_root.exists():
        shutil.rmtree(shard_root)
    shard_expected = {"format": _FORMAT, "kind": "faiss-shard", "corpus": corpus, "model_sha256": ref.sha256,
                      "shard_num": shard_num, "total": len(ids), "dimension": encoder.dimension,
                      "max_length": encoder.max_length, "encoding": settings}

    def shard_folder(i):
        return shard_root / f"shard-{i:05d}-of-{shard_num:05d}"

    def finished(i):
        start, end = shard_bounds(len(ids), i, shard_num)
        want = dict(shard_expected, shard_id=i, start=start, end=end, docids_sha256=_ids_sha256(ids[start:end]))
        have = _read_json(shard_folder(i) / SHARD_MANIFEST)
        done = have is not None and {k: have.get(k) for k in want} == want \
            and (shard_folder(i) / "index").is_file() and (shard_folder(i) / "docid").is_file()
        damaged = damage(shard_folder(i), have.get("files"), hashes=False) if done else None  # sizes: cheap
        if damaged:
            raise UserError(f"{shard_folder(i)}: this finished shard of the dense index {path} is damaged ({damaged}); "
                            f"remove the shard folder to have it encoded again, or rerun with --rebuild")
        return done

    built = False
    todo = [i for i in ([shard_id] if shard_id is not None else range(shard_num)) if not finished(i)]

    def encoded_here():
        for i in todo:
            start, end = shard_bounds(len(ids), i, shard_num)
            yield i, _encode_shard(encoder, [text for _, text in docs[start:end]], batch_size,
                                   f"encoding {corpus} shard {i + 1}/{shard_num}", progress)

    if on_ray is None:
        encoded = encoded_here()
    else:  # shards are yielded as they complete, in any order
        encoded = ray_engine.encode_shards(
            on_ray, dataset_id, ref, {i: shard_bounds(len(ids), i, shard_num) for i in todo}, corpus_ids,
            encoder.dimension, batch_size, settings=settings, cache=encoders_path(path),
            calibration=calibration, progress=progress,
            desc=f"encoding {corpus} ({len(todo)} of {shard_num} shards)")
    for i, vectors in encoded:
        start, end = shard_bounds(len(ids), i, shard_num)
        check_free_space(shard_root, (end - start) * (encoder.dimension * 4 + 64) + (1 << 20),
                         f"shard {i + 1}/{shard_num} of the faiss index {path}")
        with atomic_directory(shard_folder(i)) as tmp:
            _write_faiss(tmp, ids[start:end], vectors, encoder.dimension)
            manifest = dict(shard_expected, shard_id=i, start=start, end=end,
                            docids_sha256=_ids_sha256(ids[start:end]), documents=end - start, batch_size=batch_size,
                            encoder=_encoder_record(encoder), engine=ray_engine.describe(engine)["name"],
                            files=file_records(tmp, hashed=FAISS_FILES, skip=(SHARD_MANIFEST, MARKER)))
            (tmp / SHARD_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        built = True

    done = [i for i in range(shard_num) if finished(i)]
    if len(done) < shard_num:
        return DenseIndex(path, False, built, done, shard_num, None)

    folders = [shard_folder(i) for i in range(shard_num)]
    merged_ids, encoded_by = [], []
    for folder in folders:
        merged_ids += (folder / "docid").read_text(encoding="utf-8").splitlines()
        encoded_by.append((_read_json(folder / SHARD_MANIFEST) or {}).get("encoder"))
    if merged_ids != ids:
        raise UserError(f"{shard_root}: the shards do not hold the documents of {corpus} in order; rerun with --rebuild")
    manifest = dict(expected, encoding=settings, dataset=dataset_id, documents=len(ids), dimension=encoder.dimension,
                    metric="inner_product", normalized=settings["normalize"], pooling=encoder.pooling,
                    max_length=encoder.max_length, shard_num=shard_num, batch_size=batch_size,
                    engine=ray_engine.describe(engine), model=ref.metadata(),
                    encoder=encoded_by[0] if len(set(map(json.dumps, encoded_by))) == 1 else encoded_by,
                    docids_sha256=_ids_sha256(ids), layout="shards" if keep_shards else "merged",
                    pyserini_search=_pyserini_search(encoder, ref))
    if keep_shards:
        with atomic_directory(path) as tmp:
            for folder in folders:  # hard links: no second copy on disk, and the shards stay until the swap
                _link_tree(folder, tmp / folder.name)
            manifest["shards"] = [folder.name for folder in folders]
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    else:
        with atomic_directory(path) as tmp:
            manifest["train_sample"] = _write_merged(tmp, folders, ids, encoder.dimension, index_type, train_sample,
                                                     budget, max_index_memory, label=str(path))
            manifest["files"] = file_records(tmp, hashed=FAISS_FILES, skip=(MANIFEST, MARKER))
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    with deferred_signals():  # the shards are in the index now: no half-removed copy is left
        shutil.rmtree(shard_root, ignore_errors=True)
    return DenseIndex(path, True, True, list(range(shard_num)), shard_num, manifest)


def _reusable(path: Path, existing: dict, expected: dict, search_shards: bool, budget: int | None) -> bool:
    """Whether the index at ``path`` (manifest ``existing``) is the one asked for, in a layout that fits."""
    have = {k: existing.get(k) for k in expected}
    have["index_type"] = existing.get("index_type", DEFAULT_INDEX_TYPE)  # indexes of earlier versions: Flat
    if have != expected:
        return False
    if existing.get("layout") == "shards":
        return all((path / str(name) / "index").is_file() and (path / str(name) / "docid").is_file()
                   for name in existing.get("shards") or [None])
    if not ((path / "index").is_file() and (path / "docid").is_file()):
        return False
    if search_shards:
        return False
    vector_bytes = int(existing.get("documents") or 0) * int(existing.get("dimension") or 0) * 4
    return budget is None or expected["index_type"] != DEFAULT_INDEX_TYPE or vector_bytes <= budget


def _undamaged(path: Path, manifest: dict) -> bool:
    """Whether an index of the suite about to be reused is whole; a damaged one is encoded again, with a note."""
    for folder in _layout(path, manifest) or [path]:
        try:
            check_undamaged(folder)
        except UserError as error:
            print(f"negplugins: note: {str(error).split('; build it again')[0]}; encoding it again", file=sys.stderr,
                  flush=True)
            return False
    return True


def _link_tree(source: Path, target: Path) -> None:
    """``target`` as a copy of the folder ``source`` made of hard links (copies where links are refused)."""
    target.mkdir()
    for item in source.iterdir():
        if item.is_dir():
            _link_tree(item, target / item.name)
            continue
        try:
            os.link(item, target / item.name)
        except OSError:
            shutil.copy2(item, target / item.name)


def _shard_vectors(folder: Path, dimension: int) -> np.ndarray:
    import faiss

    part = faiss.read_index(str(folder / "index"))
    return part.reconstruct_n(0, part.ntotal) if part.ntotal else np.zeros((0, dimension), dtype=np.float32)


def _write_merged(folder: Path, shards: list[Path], ids: list[str], dimension: int, index_type: str,
                  train_sample: int | None, budget: int | None, max_index_memory, label: str) -> int | None:
    """Write the one index of ``index_type`` holding the shards' vectors; return the training vectors used."""
    import faiss

    index = _new_index(index_type, dimension)
    size = _index_bytes(index, len(ids), dimension)
    if budget is not None and index_type != DEFAULT_INDEX_TYPE and size > budget:  # Flat: sharded when over it
        from ir_datasets_ext.disk import format_bytes

        raise UserError(f"--max-index-memory {max_index_memory}: a {index_type} index of {len(ids):,} vectors of "
                        f"{dimension} dimensions takes about {format_bytes(size)}; choose a smaller index type "
                        f"(IVF...,PQ...), or Flat, which is then searched over shards")
    check_free_space(folder, size + len(ids) * 64, f"the faiss index {label}")
    trained_on = None
    if not index.is_trained:
        count = min(len(ids), DEFAULT_TRAIN_SAMPLE if train_sample is None else train_sample)
        rows = np.sort(np.random.default_rng(0).choice(len(ids), size=count, replace=False))
        sample, start = [], 0
        for shard in shards:
            vectors = _shard_vectors(shard, dimension)
            end = start + len(vectors)
            picked = rows[(rows >= start) & (rows < end)] - start
            sample.append(vectors[picked])
            start = end
            del vectors
        try:
            index.train(np.ascontiguousarray(np.concatenate(sample), dtype=np.float32))
        except RuntimeError as error:
            message = str(error).strip().splitlines()
            raise UserError(f"--index-type {index_type}: training on {count:,} vectors failed "
                            f"({message[-1][:200] if message else 'refused by faiss'}); a larger --train-sample "
                            f"(at most the {len(ids):,} documents) or fewer IVF lists") from None
        trained_on = count
    for shard in shards:  # one shard in memory at a time, beside the index
        vectors = _shard_vectors(shard, dimension)
        if len(vectors):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        del vectors
    faiss.write_index(index, str(folder / "index"))
    with open(folder / "docid", "w", encoding="utf-8", newline="") as f:
        f.writelines(f"{doc_id}\n" for doc_id in ids)
    return trained_on


def _encoder_record(encoder) -> dict:
    """How a shard was encoded beyond its settings: the device and the ONNX export (``None`` with PyTorch)."""
    return {"device": encoder.device, "export": encoder.export}


def load_dense_index(path: str | os.PathLike):
    """Read a faiss index folder (``index`` + ``docid``) and return ``(faiss index, doc ids)``."""
    import faiss

    path = Path(path)
    if not (path / "index").is_file() or not (path / "docid").is_file():
        raise UserError(f"{path}: dense index not found (expected the files 'index' and 'docid' of a faiss index "
                        f"folder; leave out --index to build one)")
    check_undamaged(path)
    try:
        index = faiss.read_index(str(path / "index"))
    except RuntimeError as error:
        raise UserError(f"{path}/index: not a readable faiss index ({str(error).splitlines()[0]})") from None
    ids = (path / "docid").read_text(encoding="utf-8").splitlines()
    ids = [doc_id.strip() for doc_id in ids]
    if index.ntotal != len(ids):
        raise UserError(f"{path}: the faiss index holds {index.ntotal} vectors but 'docid' lists {len(ids)} ids")
    return index, ids


#: The files of a faiss index folder whose SHA-256 its manifest records (checked on open: faiss checks nothing).
FAISS_FILES = ("index", "docid")
_VERIFIED: dict[str, tuple] = {}


def check_undamaged(folder: Path) -> None:
    """Refuse a faiss index folder (one index, or a shard) whose files differ from its manifest's records.

    The sizes and SHA-256 recorded when the suite built it (indexes built before they were recorded, and
    Pyserini's, are not checked). A folder that passed is not hashed again in this process while its files
    keep their size and modification time.

    Raises
    ------
    UserError
        One line naming the folder, what differs and how to rebuild it.
    """
    manifest = read_manifest(folder) or _read_json(folder / SHARD_MANIFEST)
    records = (manifest or {}).get("files")
    if not isinstance(records, dict):
        return
    try:
        key = tuple((name, (folder / name).stat().st_size, (folder / name).stat().st_mtime_ns) for name in FAISS_FILES)
    except OSError:
        key = None
    if key is not None and _VERIFIED.get(str(folder.resolve())) == key:
        return
    damaged = damage(folder, records)
    if damaged:
        raise UserError(f"{folder}: the dense index is damaged ({damaged}); build it again: rerun the search without "
                        f"--index and with --rebuild (or 'negplugins search dense DATASET --rebuild' with the same "
                        f"options)")
    if key is not None:
        _VERIFIED[str(folder.resolve())] = key


def _layout(path: Path, manifest: dict | None) -> list[Path] | None:
    """The shard folders of a sharded index (in order), or ``None`` for one index (``index`` + ``docid``)."""
    if not manifest or manifest.get("layout") != "shards":
        return None
    names = manifest.get("shards")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n and "/" not in n and
                                                            not n.startswith(".") for n in names):
        raise UserError(f"{path}/{MANIFEST}: a sharded index without its list of shard folders; rebuild it "
                        f"(--rebuild)")
    return [path / name for name in names]


def check_dense_index(path: str | os.PathLike) -> int:
    """Refuse a folder that is not a faiss index (one, or sharded); return the vectors' dimension.

    A sharded index is checked by its files and its first shard only (the others are read while searching).

    Raises
    ------
    UserError
        One line naming the folder and what was expected.
    """
    import faiss

    path = Path(path)
    shards = _layout(path, read_manifest(path))
    if shards is None:
        index, _ = load_dense_index(path)
        return index.d
    for shard in shards:
        if not (shard / "index").is_file() or not (shard / "docid").is_file():
            raise UserError(f"{shard}: shard of the sharded index {path} not found (expected its files 'index' and "
                            f"'docid'); rebuild the index (--rebuild)")
    first, _ = load_dense_index(shards[0])
    return faiss.downcast_index(first).d


#: faiss search parameters that count something (probes, candidates, a factor): 0 or less makes faiss return
#: one hit per query, silently (``efSearch=0`` on HNSW32: 1 hit of the 5 asked).
POSITIVE_SEARCH_PARAMS = frozenset({"nprobe", "efSearch", "quantizer_efSearch", "k_factor", "k_factor_rf"})


def check_search_params(search_params: str | None) -> None:
    """Refuse ``--search-params`` that are not ``name=number`` pairs, or a count below 1.

    Raises
    ------
    UserError
        One line naming the setting and what is expected.
    """
    if not search_params:
        return
    for item in search_params.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not name or number is None or not math.isfinite(number):
            raise UserError(f"--search-params {search_params!r}: {item.strip()!r} is not NAME=NUMBER; e.g. nprobe=64 "
                            f"(IVF) or efSearch=128 (HNSW), several separated by commas")
        if name in POSITIVE_SEARCH_PARAMS and (number < 1 or number != int(number)):
            raise UserError(f"--search-params {search_params!r}: {name} must be a whole number >= 1 (got {value.strip()}; "
                            f"faiss would return one hit per query); e.g. {name}=128")


def _set_search_params(index, search_params: str | None, where: Path) -> None:
    if not search_params:
        return
    check_search_params(search_params)
    import faiss

    try:
        faiss.ParameterSpace().set_index_parameters(index, search_params)
    except RuntimeError as error:
        message = str(error).strip().splitlines()
        raise UserError(f"--search-params {search_params!r}: not accepted by the faiss index {where} "
                        f"({message[-1][:200] if message else 'refused'}); e.g. nprobe=64 (IVF) or efSearch=128 "
                        f"(HNSW)") from None


def search_index_folder(path: str | os.PathLike, queries: np.ndarray, hits: int,
                        search_params: str | None = None) -> list[list[tuple[str, float]]]:
    """Top ``hits`` ``(doc_id, score)`` per query vector from an index folder, one index or sharded.

    A sharded index is searched one shard at a time (only one shard's vectors in memory): each shard's
    top ``hits`` (:func:`search_vectors`, ties across its cut resolved), merged in the order of the run
    (score at six decimals descending, doc id ascending). A document of the overall top ``hits`` is in
    its shard's top ``hits`` under that same order, so the result is the one merged index's.
    """
    path = Path(path)
    shards = _layout(path, read_manifest(path))
    if shards is None:
        index, ids = load_dense_index(path)
        _set_search_params(index, search_params, path)
        return search_vectors(index, ids, queries, hits)
    merged: list[list[tuple[float, str, float]]] = [[] for _ in range(len(queries))]
    for shard in shards:
        index, ids = load_dense_index(shard)
        _set_search_params(index, search_params, shard)
        for row, found in enumerate(_search_ranked(index, ids, queries, hits)):
            merged[row] = list(itertools.islice(heapq.merge(merged[row], found), hits))  # doc ids differ: no ties
        del index, ids
    return [[(doc_id, score) for _, doc_id, score in found] for found in merged]


def reusable_passage_index(dataset_id: str, ref: ModelRef, settings: dict,
                           index: str | os.PathLike | None = None) -> tuple[Path | None, str]:
    """A dense index whose stored passage vectors are the ones a bi-encoder with ``settings`` would compute.

    ``index``, or else the default index of the model and settings (:func:`default_dense_index_path`), is
    reusable when its manifest records the same corpus, the same model weights (SHA-256) and the same encoding
    settings (pooling, normalisation, token limit, passage prefix, backend, dtype), and its type stores the
    vectors exactly: ``Flat`` (one index or sharded). Other types (HNSW, IVF, PQ, ...) are not reused: faiss
    either cannot give back a vector by its position or gives a lossy one.

    Returns
    -------
    (Path, "") or (None, why)
        The index folder, or why there is none to reuse (``why`` is ``""`` when no index is there at all).
    """
    path = Path(index) if index is not None else default_dense_index_path(dataset_id, ref, settings)
    manifest = read_manifest(path)
    if manifest is None:
        return None, "" if not path.exists() else f"{path}: not a dense index built by negplugins (no {MANIFEST})"
    corpus = datasets.docs_root_id(dataset_id)
    built_with = index_encoding(manifest)
    if manifest.get("kind") != "faiss" or manifest.get("corpus") != corpus:
        why = f"it indexes {manifest.get('corpus')!r}, not the documents of {dataset_id} ({corpus})"
    elif manifest.get("model_sha256") != ref.sha256:
        why = f"it was encoded by other weights ({str(manifest.get('model_sha256'))[:12]}, not {ref.sha256[:12]})"
    elif built_with != settings:
        why = f"it was encoded with {built_with}, not with the reranker's {settings}"
    elif manifest.get("index_type", DEFAULT_INDEX_TYPE) != DEFAULT_INDEX_TYPE:
        why = f"its type {manifest.get('index_type')} does not keep the vectors exactly (only Flat is reused)"
    else:
        return path, ""
    return None, f"{path}: {why}"


def stored_passage_vectors(path: str | os.PathLike, doc_ids) -> dict[str, np.ndarray]:
    """The vectors a Flat index folder (one index or sharded) stores for ``doc_ids``, by doc id (as stored, float32).

    Ids the index does not hold are left out. Each shard (or the one index) is read once, and only the rows
    asked for are kept.

    Raises
    ------
    UserError
        The folder is not a Flat inner-product index.
    """
    path = Path(path)
    wanted = set(doc_ids)
    shards = _layout(path, read_manifest(path)) or [path]
    found: dict[str, np.ndarray] = {}
    for shard in shards:
        index, ids = load_dense_index(shard)
        vectors = _flat_vectors(index)
        if vectors is None:
            raise UserError(f"{shard}: not a Flat inner-product faiss index; its vectors cannot be reused")
        for row, doc_id in enumerate(ids):
            if doc_id in wanted:
                found[doc_id] = np.array(vectors[row], dtype=np.float32)
        del index, vectors
    return found


def _key(doc_id: str, score: float):
    return (-float(f"{score:.6f}"), doc_id)


def _flat_vectors(index) -> np.ndarray | None:
    """The stored vectors of an exact inner-product index (a view, no copy), or ``None`` for any other index."""
    import faiss

    typed = faiss.downcast_index(index)
    if type(typed) not in (faiss.IndexFlatIP, faiss.IndexFlat) or typed.metric_type != faiss.METRIC_INNER_PRODUCT:
        return None
    if typed.ntotal == 0:
        return np.zeros((0, typed.d), dtype=np.float32)
    return faiss.rev_swig_ptr(typed.get_xb(), typed.ntotal * typed.d).reshape(typed.ntotal, typed.d)


def _exact_scores(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Inner products computed the same way for every (query, document) pair, wherever the document is stored.

    faiss's float32 kernels process documents in blocks, so the last bit of a score depends on the
    document's position in the index (and a sharded index puts documents elsewhere). Here each product
    of two float32 is exact in float64 and each row is summed by numpy's one pairwise order.
    """
    return np.multiply(vectors.astype(np.float64), query.astype(np.float64)).sum(axis=1)


def _candidate_margin(stored: np.ndarray, query: np.ndarray, max_norm: float) -> float:
    """How far below faiss's score at the cut a document of the exact top hits can be scored by faiss.

    A float32 inner product of length ``d`` is off by at most ``d u / (1 - d u)`` times ``|q| |x|`` (``u =
    2**-24``, whatever the order of summation): faiss's score at the cut and a document's score are each
    off by that much, and a document tied at six decimals with the last one kept may be ``1e-6`` lower.
    """
    d = stored.shape[1]
    gamma = d * 2.0 ** -24 / (1 - d * 2.0 ** -24)
    return 2 * gamma * float(np.linalg.norm(query)) * max_norm + 1e-6


def _more_needed(scores: np.ndarray, fetched: int, want: int, total: int, margin: float | None) -> bool:
    """Whether documents beyond the ``fetched`` ones may belong in the top ``want`` (``scores``: faiss's, best first)."""
    if fetched >= total:
        return False
    if margin is not None:  # an exact index: every document near the cut must be a candidate
        return bool(scores[fetched - 1] >= scores[want - 1] - margin)
    # an approximate one: a tie across the cut, fetch until the score below the cut differs
    return f"{scores[fetched - 1]:.6f}" == f"{scores[want - 1]:.6f}"


def search_vectors(index, ids: list[str], queries: np.ndarray, hits: int) -> list[list[tuple[str, float]]]:
    """Top ``hits`` ``(doc_id, score)`` per query vector, ties (at six decimals) by doc id ascending.

    See :func:`_search_ranked`.
    """
    return [[(doc_id, score) for _, doc_id, score in found] for found in _search_ranked(index, ids, queries, hits)]


def _search_ranked(index, ids: list[str], queries: np.ndarray, hits: int) -> list[list[tuple[float, str, float]]]:
    """Top ``hits`` ``(-score at six decimals, doc_id, score)`` per query vector, in the order of the run.

    For an exact (flat inner-product) index, faiss proposes the candidates (every document that faiss scores
    within :func:`_candidate_margin` of its score at the cut) and the scores written are :func:`_exact_scores`:
    a document's score does not depend on where it is stored, so a sharded index gives the same run as one
    index. An approximate index keeps faiss's scores.
    """
    total = index.ntotal
    if total == 0 or len(queries) == 0:
        return [[] for _ in range(len(queries))]
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    stored = _flat_vectors(index)
    want = min(hits, total)
    if stored is not None:  # room below the cut, so that a second search is rarely needed
        max_norm = 1.001 * float(np.sqrt(np.einsum("ij,ij->i", stored, stored).max()))  # float32 sum: a hair more
        k = min(2 * want + 64, total)
    else:
        k = min(want + 1, total)
    scores, positions = index.search(queries, k)
    results = []
    for row in range(len(queries)):
        row_scores, row_positions = scores[row], positions[row]
        k_row = k
        margin = _candidate_margin(stored, queries[row], max_norm) if stored is not None else None
        while _more_needed(row_scores, k_row, want, total, margin):
            k_row = min(2 * k_row, total)
            more_scores, more_positions = index.search(queries[row:row + 1], k_row)
            row_scores, row_positions = more_scores[0], more_positions[0]
        keep = row_positions >= 0
        if margin is not None:
            keep &= row_scores >= row_scores[want - 1] - margin
            kept = row_positions[keep]
            row_scores = _exact_scores(stored[kept], queries[row])
        else:
            kept, row_scores = row_positions[keep], row_scores[keep]
        results.append(sorted((*_key(ids[p], float(s)), float(s)) for p, s in zip(kept, row_scores))[:want])
    return results


def _settings_for_index(index_path: Path, built_with: dict | None, ref: ModelRef, options: dict) -> dict:
    """The passage settings of an existing index: the options given must agree with its manifest."""
    if built_with is None:  # an index without our manifest (pyserini.encode): trust the options
        return encoder_settings(ref, role="passage", **options)
    flags = {"pooling": "--pooling", "normalize": "--normalize/--no-normalize", "max_length": "--max-length",
             "prefix": "--passage-prefix", "backend": "--backend", "dtype": "--dtype"}
    for key, flag in flags.items():
        if options[key] is not None and options[key] != built_with.get(key):
            raise UserError(f"{index_path}: the index was encoded with {flag} {built_with.get(key)!r}, not "
                            f"{options[key]!r}; leave {flag} out or build another index")
    return built_with


def _query_side(encoder):
    """The query encoder of a given passage encoder: the same model with the model's query prompt."""
    if isinstance(encoder, DenseEncoder) and encoder.ref.path is not None:
        return encoder.with_prefix(model_defaults(encoder.ref).query_prefix, "query")
    return encoder  # a SentenceEncoder: queries and passages alike, without a prompt


def dense_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                 index: str | os.PathLike | None = None, hits: int = DENSE_DEFAULTS["hits"],
                 batch_size: int = DENSE_DEFAULTS["batch_size"], shard_num: int = DENSE_DEFAULTS["shard_num"],
                 shard_id: int | None = None, rebuild: bool = False, run_tag: str | None = None,
                 command: str | None = None, progress: bool = True, force: bool = False,
                 encoder: DenseEncoder | None = None, index_type: str | None = None,
                 train_sample: int | None = None, search_shards: bool = False,
                 max_index_memory: int | str | None = None, search_params: str | None = None,
                 engine="single", *,
                 query_encoder: str | os.PathLike | None = None, device: str | None = None, dtype: str | None = None,
                 backend: str | None = None, pooling: str | None = None, normalize: bool | None = None,
                 max_length: int | None = None, query_prefix: str | None = None,
                 passage_prefix: str | None = None) -> dict:
    """Rank the documents of ``dataset_id`` for each of its queries by embedding similarity; write a TREC run.

    Passages are encoded by ``model``, queries by ``query_encoder`` when given (DPR-style pairs), else by
    ``model`` too. Without ``index`` the documents are encoded (or a matching index is reused) with
    :func:`dense_index`. Queries are written in Pyserini's topic order; see the module documentation for the
    tie order. The metadata sidecar is written beside the run; it records both encoders' settings.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    output : path
        The run file to write (atomically; ``.gz`` is compressed).
    model : str or path, optional
        Passage encoder (folder or cached Hugging Face id); defaults to the model the index was built with,
        else all-MiniLM-L6-v2.
    index : path, optional
        An existing faiss index folder (ours or one written by ``pyserini.encode --to-faiss``).
    hits : int
        Documents per query.
    batch_size : int
        Encoding batch size.
    shard_num, shard_id : int
        Sharded encoding (see :func:`dense_index`). With ``shard_id``, only that shard is encoded and the
        search runs only once every shard is finished.
    rebuild : bool
        Re-encode even if an up-to-date index exists.
    run_tag : str, optional
        Last column of the run; default ``dense-<model name>``.
    command : str, optional
        Recorded in the metadata; defaults to this process's command line.
    force : bool
        Replace an existing run that is committed or was not written by the suite
        (see :func:`negplugins.io.outputs.check_run_output`).
    encoder : DenseEncoder or SentenceEncoder, optional
        An already loaded encoder of passages and queries (``model`` is then not read, and the encoding
        options below must be left out): a model loaded once for several runs, or a model object
        (:meth:`SentenceEncoder.from_model`).
    index_type, train_sample, search_shards, max_index_memory : optional
        The index to build (see :func:`dense_index`); ignored with ``index``, whose own type is searched.
    search_params : str, optional
        faiss ``ParameterSpace`` settings for an approximate index (``nprobe=64``, ``efSearch=128``).
    engine : {"single", "ray"} or RayEngine
        Where the documents are encoded (see :func:`dense_index`); recorded in the sidecar's parameters.
    query_encoder : str or path, optional
        A separate query model.
    device : str, optional
        ``auto`` (default: CUDA when PyTorch sees a GPU, else the CPU), ``cpu``, ``cuda``, ``cuda:N``, ``mps``.
    dtype : {"float32", "float16", "bfloat16", "int8"}, optional
        Default float32, or with ``index`` the index's.
    backend : {"torch", "onnx", "openvino"}, optional
        Default torch, or with ``index`` the index's.
    pooling : {"mean", "cls", "last-token"}, optional
    normalize : bool, optional
        For both encoders; ``None``: the passage model's own pooling (with ``index``: the index's) and
        normalised vectors (with ``index``: as the index).
    max_length : int, optional
        For both encoders; ``None``: each model's own (with ``index``: the index's, for its own model).
    query_prefix, passage_prefix : str, optional
        Prepended to queries / passages; ``None``: the model's prompts ``query`` / ``document``
        (``passage``, ``corpus``) from its ``config_sentence_transformers.json``, else none.

    Returns
    -------
    dict
        What was run; ``lines`` is ``None`` (no run written) when sharded encoding is not finished; ``notes``
        lists remarks for the user (a slow dtype on this machine).
    """
    check_int(hits, "--hits", 1, MAX_HITS)
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    _check_shards(shard_id, shard_num)
    check_search_params(search_params)
    ray_engine.engine_of(engine)
    if index is not None:  # never into the index it searches, even with --force
        check_run_output(output, inputs=[index, shards_path(index)], force=force)
    else:
        check_run_output(output, force=force)
    dataset = datasets.load(dataset_id)
    texts = datasets.query_texts(dataset)
    order = pyserini_topic_order(texts)
    shape = {"pooling": pooling, "normalize": normalize, "max_length": max_length}
    given = {"query_encoder": query_encoder, "device": device, "dtype": dtype, "backend": backend,
             "pooling": pooling, "normalize": normalize, "max_length": max_length, "query_prefix": query_prefix,
             "passage_prefix": passage_prefix}
    if encoder is not None and any(value is not None for value in given.values()):
        raise UserError(f"dense_search: a loaded encoder brings its own settings; leave out "
                        f"{', '.join(k for k, v in given.items() if v is not None)}")
    query_ref = resolve_model(query_encoder) if query_encoder is not None else None
    manifest = None
    notes = []
    if index is not None:
        index_path = Path(index)
        if not index_path.is_dir():
            raise UserError(f"{index_path}: dense index folder not found (leave out --index to build one)")
        manifest = read_manifest(index_path)
        if encoder is None and model is None and manifest and isinstance(manifest.get("model"), dict):
            model = manifest["model"].get("path")
        ref = encoder.ref if encoder is not None else resolve_model(model)
        if manifest and manifest.get("model_sha256") not in (None, ref.sha256):
            raise UserError(f"{index_path}: the index was encoded with model "
                            f"{manifest.get('model', {}).get('id')!r}, not {ref.id!r}")
        built_with = index_encoding(manifest)
        if encoder is not None:
            passage, query = encoder.settings, _query_side(encoder)
            if built_with is not None and built_with != passage:
                raise UserError(f"{index_path}: the index was encoded with {built_with}, not with the given "
                                f"encoder's {passage}; give another --index or leave it out")
            check_dense_index(index_path)
        else:
            backend = backend or (built_with or {}).get("backend") or "torch"
            dtype = dtype or (built_with or {}).get("dtype") or "float32"
            passage = _settings_for_index(index_path, built_with, ref, dict(shape, prefix=passage_prefix,
                                                                            backend=backend, dtype=dtype))
            check_dense_index(index_path)  # fail before loading the model
            # one pooling and normalisation on both sides (the index's); the index's token limit for the same model
            limit = max_length if max_length is not None or query_ref is not None else passage["max_length"]
            query = DenseEncoder(query_ref or ref, role="query", prefix=query_prefix, pooling=passage["pooling"],
                                 normalize=passage["normalize"], max_length=limit, backend=backend, dtype=dtype,
                                 device=device, cache=encoders_path(index_path),
                                 calibration=calibration_texts(dataset_id, passage))
    else:
        if encoder is not None:
            ref, passage, query = encoder.ref, encoder.settings, _query_side(encoder)
        else:
            ref = resolve_model(model)
            backend, dtype = backend or "torch", dtype or "float32"
            passage = encoder_settings(ref, prefix=passage_prefix, role="passage", backend=backend, dtype=dtype,
                                       **shape)
            index_path = default_dense_index_path(dataset_id, ref, passage)
            check_run_output(output, inputs=[index_path, shards_path(index_path)], force=force)
            calibration = calibration_texts(dataset_id, passage)
            encoder = DenseEncoder(ref, role="passage", device=device, cache=encoders_path(index_path),
                                   calibration=calibration, **passage)
            notes += encoder.notes
            if query_ref is None:
                prefix = model_defaults(ref).query_prefix if query_prefix is None else query_prefix
                query = encoder.with_prefix(prefix, "query")
            else:
                query = DenseEncoder(query_ref, role="query", prefix=query_prefix, pooling=passage["pooling"],
                                     normalize=passage["normalize"], max_length=max_length, backend=backend,
                                     dtype=dtype, device=device, cache=encoders_path(index_path),
                                     calibration=calibration)
        built = dense_index(dataset_id, index=None, batch_size=batch_size, shard_num=shard_num, shard_id=shard_id,
                            rebuild=rebuild, progress=progress, encoder=encoder, index_type=index_type,
                            train_sample=train_sample, search_shards=search_shards, max_index_memory=max_index_memory,
                            engine=engine)
        index_path = built.path
        if not built.complete:
            missing = sorted(set(range(shard_num)) - set(built.shards_done))
            return {"dataset": dataset_id, "index": str(index_path), "complete": False, "shards_done": built.shards_done,
                    "shards_missing": missing, "shard_num": shard_num, "lines": None, "queries": len(order),
                    "notes": notes}
        manifest = built.manifest
    dimension = check_dense_index(index_path)
    if dimension != query.dimension:
        raise UserError(f"{index_path}: index vectors have {dimension} dimensions but the query encoder "
                        f"{query.ref.id!r} gives {query.dimension}")
    from ..options import progress_bar

    with progress_bar(len(order), f"encoding the queries of {dataset_id}", progress, "queries") as bar:
        query_vectors = encode_texts(query, [texts[q] for q in order], batch_size, bar)
    ranking = search_index_folder(index_path, query_vectors, hits, search_params)
    tag = run_tag or f"dense-{datasets.slug(ref.name)}"
    with written_together():  # the run and its sidecar appear together, or neither
        lines = write_run(output, zip(order, ranking), tag)
        built_type = (manifest or {}).get("index_type", DEFAULT_INDEX_TYPE if manifest else None)
        layout = (manifest or {}).get("layout", "merged")
        parameters = {"hits": hits, "batch_size": batch_size, "max_length": passage["max_length"],
                      "pooling": passage["pooling"], "normalized": passage["normalize"], "similarity": "inner_product",
                      "shard_num": (manifest or {}).get("shard_num", shard_num), "index_type": built_type,
                      "index_layout": layout, "search_params": search_params, "backend": passage["backend"],
                      "dtype": passage["dtype"], "device": query.device, "passage_prefix": passage["prefix"],
                      "query_prefix": query.prefix, "passage_encoding": passage,
                      "query_encoding": {"model": query.ref.metadata(), **query.metadata()}}
        parameters["engine"] = ray_engine.describe(engine)
        described = "IndexFlatIP" if built_type == DEFAULT_INDEX_TYPE else built_type or "index"
        if layout == "shards":
            described += f", exact search over {len((manifest or {}).get('shards') or [])} shards"
        normalised = ", L2-normalised" if passage["normalize"] else ""
        queries_by = f", queries by {query.ref.name}" if query_ref is not None else ""
        write_metadata(output, dataset=dataset_id, runner="dense",
                       system=f"dense {ref.name}{queries_by} (faiss {described}, {passage['pooling']} pooling{normalised}, "
                              f"{passage['backend']} {passage['dtype']})",
                       tag=tag, parameters=parameters, model=ref.metadata(),
                       index={"path": str(index_path), "manifest": manifest},
                       language=dataset_language(dataset), command=command)
    return {"dataset": dataset_id, "index": str(index_path), "complete": True, "model": ref.id,
            "query_encoder": query.ref.id, **parameters, "queries": len(order), "lines": lines, "run_tag": tag,
            "notes": list(dict.fromkeys(notes + list(query.notes)))}
