"""Dense retrieval: encode a dataset's documents into a Pyserini-style faiss index and search it.

Index layout (the same as ``python -m pyserini.encode ... output --to-faiss``)::

    indexes/faiss/<corpus>/<model>/
        index                   faiss IndexFlatIP of the L2-normalised document vectors
        docid                   one document id per line, in the order of the vectors
        negplugins-index.json   manifest: corpus, model fingerprint, pooling, dimension, documents

so stock Pyserini searches it too::

    python -m pyserini.search.faiss --index indexes/faiss/<corpus>/<model> --topics topics/x.tsv \\
        --encoder <model folder> --encoder-class auto --pooling mean --l2-norm --output run.trec

Encoding is split into shards as ``pyserini.encode`` splits a collection (``--shard-id`` /
``--shard-num``: shard ``i`` of ``n`` holds documents ``i * (N // n)`` up to the next shard's start, the
last shard takes the remainder). Every finished shard is written atomically, with a small manifest, under
``<index>.shards/``; a rerun skips the finished ones, so an interrupted encoding resumes from its last
finished shard. When all shards are there they are merged (in order) into the index, atomically, and the
shard folders are removed.

``engine="ray"`` (``--engine ray``) encodes the shards on a Ray cluster instead
(:mod:`negplugins.runners.ray_engine`): the same shards, index and run as this process with the same
``shard_num`` (a shard's texts are sorted by length and batched as a whole, so the shard count, not the engine,
decides the batches), a shard written as soon as all its documents are encoded.

Ranking: documents by decreasing score as written in the run (inner product = cosine similarity,
six decimals), equal scores by document id ascending (as :func:`negplugins.io.trec.ranked` and Anserini);
the search asks faiss for more than ``hits`` documents whenever a tie crosses the cut, so the run does
not depend on faiss's order among equal scores. The same inputs give byte-identical runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.files import atomic_directory
from ..io.jsonfile import read_json
from ..io.outputs import check_run_output
from ..io.sidecars import write_metadata
from ..io.trec import write_run
from ..options import DEFAULT_HITS, MAX_BATCH_SIZE, MAX_HITS, MAX_SHARDS, check_int
from . import ray_engine
from .bm25 import pyserini_topic_order
from .encoders import ModelRef, SentenceEncoder, resolve_model
from .lucene_index import MANIFEST, MAX_MANIFEST_BYTES, dataset_language, default_index_path, read_manifest

__all__ = ["DENSE_DEFAULTS", "DenseIndex", "default_dense_index_path", "dense_index", "dense_search",
           "load_dense_index", "search_vectors", "shard_bounds"]

DENSE_DEFAULTS = {"hits": DEFAULT_HITS, "batch_size": 64, "shard_num": 1}

SHARD_MANIFEST = "negplugins-shard.json"
_FORMAT = 1
_CHUNK_BATCHES = 16  # batches encoded per call to the model (the progress bar moves per call)


def default_dense_index_path(dataset_id: str, model: ModelRef) -> Path:
    """``indexes/faiss/<corpus>/<model name>``."""
    return default_index_path(dataset_id, "faiss") / datasets.slug(model.name)


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


def _encode_shard(encoder, texts, batch_size, desc, progress):
    from tqdm.auto import tqdm

    # longest texts first over the whole shard (as sentence-transformers sorts one call's texts), so the
    # chunks, which are whole batches, pad as little as one big call would
    chunk = max(1, batch_size * _CHUNK_BATCHES)
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    vectors = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
    with tqdm(total=len(texts), desc=desc, unit="doc", disable=not progress, mininterval=1.0) as bar:
        for start in range(0, len(texts), chunk):
            rows = order[start:start + chunk]
            vectors[rows] = encoder.encode([texts[i] for i in rows], batch_size=batch_size)
            bar.update(len(rows))
    return vectors


def dense_index(dataset_id: str, model: str | os.PathLike | None = None, index: str | os.PathLike | None = None,
                batch_size: int = DENSE_DEFAULTS["batch_size"], shard_num: int = DENSE_DEFAULTS["shard_num"],
                shard_id: int | None = None, rebuild: bool = False, progress: bool = True,
                encoder: SentenceEncoder | None = None, engine="single") -> DenseIndex:
    """Encode the documents of ``dataset_id`` into a faiss index, or reuse one built earlier.

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
    encoder : SentenceEncoder, optional
        An already loaded encoder of ``model`` (avoids loading it twice).
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
    on_ray = ray_engine.engine_of(engine)
    dataset = datasets.load(dataset_id)
    ref = encoder.ref if encoder is not None else resolve_model(model)
    path = Path(index) if index is not None else default_dense_index_path(dataset_id, ref)
    corpus = datasets.docs_root_id(dataset_id)
    expected = {"format": _FORMAT, "kind": "faiss", "corpus": corpus, "model_sha256": ref.sha256}
    existing = read_manifest(path)
    if not rebuild and existing is not None and {k: existing.get(k) for k in expected} == expected \
            and (path / "index").is_file() and (path / "docid").is_file():
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
    if encoder is None:
        encoder = SentenceEncoder(ref)
    shard_root = shards_path(path)
    if rebuild and shard_root.exists():
        shutil.rmtree(shard_root)
    shard_expected = {"format": _FORMAT, "kind": "faiss-shard", "corpus": corpus, "model_sha256": ref.sha256,
                      "shard_num": shard_num, "total": len(ids), "dimension": encoder.dimension,
                      "max_length": encoder.max_length}

    def shard_folder(i):
        return shard_root / f"shard-{i:05d}-of-{shard_num:05d}"

    def finished(i):
        start, end = shard_bounds(len(ids), i, shard_num)
        want = dict(shard_expected, shard_id=i, start=start, end=end, docids_sha256=_ids_sha256(ids[start:end]))
        have = _read_json(shard_folder(i) / SHARD_MANIFEST)
        return have is not None and {k: have.get(k) for k in want} == want \
            and (shard_folder(i) / "index").is_file() and (shard_folder(i) / "docid").is_file()

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
            encoder.dimension, batch_size, max_length=encoder.max_length, progress=progress,
            desc=f"encoding {corpus} ({len(todo)} of {shard_num} shards)")
    for i, vectors in encoded:
        start, end = shard_bounds(len(ids), i, shard_num)
        with atomic_directory(shard_folder(i)) as tmp:
            _write_faiss(tmp, ids[start:end], vectors, encoder.dimension)
            manifest = dict(shard_expected, shard_id=i, start=start, end=end,
                            docids_sha256=_ids_sha256(ids[start:end]), documents=end - start, batch_size=batch_size,
                            engine=ray_engine.describe(engine)["name"])
            (tmp / SHARD_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        built = True

    done = [i for i in range(shard_num) if finished(i)]
    if len(done) < shard_num:
        return DenseIndex(path, False, built, done, shard_num, None)

    import faiss

    with atomic_directory(path) as tmp:
        parts, merged_ids = [], []
        for i in range(shard_num):
            part = faiss.read_index(str(shard_folder(i) / "index"))
            parts.append(part.reconstruct_n(0, part.ntotal) if part.ntotal else
                         np.zeros((0, encoder.dimension), dtype=np.float32))
            merged_ids += (shard_folder(i) / "docid").read_text(encoding="utf-8").splitlines()
        if merged_ids != ids:
            raise UserError(f"{shard_root}: the shards do not hold the documents of {corpus} in order; rerun with --rebuild")
        _write_faiss(tmp, merged_ids, np.concatenate(parts), encoder.dimension)
        manifest = dict(expected, dataset=dataset_id, documents=len(ids), dimension=encoder.dimension,
                        metric="inner_product", normalized=True, pooling=encoder.pooling,
                        max_length=encoder.max_length, shard_num=shard_num, batch_size=batch_size,
                        engine=ray_engine.describe(engine), model=ref.metadata(), docids_sha256=_ids_sha256(ids),
                        pyserini_search=["--encoder", str(ref.path), "--encoder-class", "auto",
                                         "--pooling", encoder.pooling, "--l2-norm"])
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(shard_root, ignore_errors=True)
    return DenseIndex(path, True, True, list(range(shard_num)), shard_num, manifest)


def load_dense_index(path: str | os.PathLike):
    """Read a faiss index folder (``index`` + ``docid``) and return ``(faiss index, doc ids)``."""
    import faiss

    path = Path(path)
    if not (path / "index").is_file() or not (path / "docid").is_file():
        raise UserError(f"{path}: dense index not found (expected the files 'index' and 'docid' of a faiss index "
                        f"folder; leave out --index to build one)")
    try:
        index = faiss.read_index(str(path / "index"))
    except RuntimeError as error:
        raise UserError(f"{path}/index: not a readable faiss index ({str(error).splitlines()[0]})") from None
    ids = (path / "docid").read_text(encoding="utf-8").splitlines()
    ids = [doc_id.strip() for doc_id in ids]
    if index.ntotal != len(ids):
        raise UserError(f"{path}: the faiss index holds {index.ntotal} vectors but 'docid' lists {len(ids)} ids")
    return index, ids


def _key(doc_id: str, score: float):
    return (-float(f"{score:.6f}"), doc_id)


def search_vectors(index, ids: list[str], queries: np.ndarray, hits: int) -> list[list[tuple[str, float]]]:
    """Top ``hits`` ``(doc_id, score)`` per query vector, ties (at six decimals) by doc id ascending."""
    total = index.ntotal
    if total == 0 or len(queries) == 0:
        return [[] for _ in range(len(queries))]
    want = min(hits, total)
    k = min(want + 1, total)
    scores, positions = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    results = []
    for row in range(len(queries)):
        row_scores, row_positions = scores[row], positions[row]
        k_row = k
        # a tie across the cut: fetch more until the score below the cut differs (or everything is fetched)
        while k_row < total and f"{row_scores[k_row - 1]:.6f}" == f"{row_scores[want - 1]:.6f}":
            k_row = min(2 * k_row, total)
            more_scores, more_positions = index.search(queries[row:row + 1], k_row)
            row_scores, row_positions = more_scores[0], more_positions[0]
        found = [(ids[p], float(s)) for p, s in zip(row_positions, row_scores) if p >= 0]
        results.append(sorted(found, key=lambda item: _key(*item))[:want])
    return results


def dense_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                 index: str | os.PathLike | None = None, hits: int = DENSE_DEFAULTS["hits"],
                 batch_size: int = DENSE_DEFAULTS["batch_size"], shard_num: int = DENSE_DEFAULTS["shard_num"],
                 shard_id: int | None = None, rebuild: bool = False, run_tag: str | None = None,
                 command: str | None = None, progress: bool = True, force: bool = False, engine="single") -> dict:
    """Rank the documents of ``dataset_id`` for each of its queries by embedding similarity; write a TREC run.

    The query and document encoder is the same model. Without ``index`` the documents are encoded
    (or a matching index is reused) with :func:`dense_index`. Queries are written in Pyserini's topic
    order; see the module documentation for the tie order. The metadata sidecar is written beside the run.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    output : path
        The run file to write (atomically; ``.gz`` is compressed).
    model : str or path, optional
        Encoder (folder or cached Hugging Face id); defaults to the model the index was built with,
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
    engine : {"single", "ray"} or RayEngine
        Where the documents are encoded (see :func:`dense_index`); recorded in the sidecar's parameters.

    Returns
    -------
    dict
        What was run; ``lines`` is ``None`` (no run written) when sharded encoding is not finished.
    """
    check_int(hits, "--hits", 1, MAX_HITS)
    check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    _check_shards(shard_id, shard_num)
    ray_engine.engine_of(engine)
    check_run_output(output, force=force)
    dataset = datasets.load(dataset_id)
    texts = datasets.query_texts(dataset)
    order = pyserini_topic_order(texts)
    manifest = None
    if index is not None:
        index_path = Path(index)
        if not index_path.is_dir():
            raise UserError(f"{index_path}: dense index folder not found (leave out --index to build one)")
        manifest = read_manifest(index_path)
        if model is None and manifest and isinstance(manifest.get("model"), dict):
            model = manifest["model"].get("path")
        ref = resolve_model(model)
        if manifest and manifest.get("model_sha256") not in (None, ref.sha256):
            raise UserError(f"{index_path}: the index was encoded with model "
                            f"{manifest.get('model', {}).get('id')!r}, not {ref.id!r}")
        load_dense_index(index_path)  # fail before loading the model
        encoder = SentenceEncoder(ref)
    else:
        ref = resolve_model(model)
        encoder = SentenceEncoder(ref)
        built = dense_index(dataset_id, index=None, batch_size=batch_size, shard_num=shard_num, shard_id=shard_id,
                            rebuild=rebuild, progress=progress, encoder=encoder, engine=engine)
        index_path = built.path
        if not built.complete:
            missing = sorted(set(range(shard_num)) - set(built.shards_done))
            return {"dataset": dataset_id, "index": str(index_path), "complete": False, "shards_done": built.shards_done,
                    "shards_missing": missing, "shard_num": shard_num, "lines": None, "queries": len(order)}
        manifest = built.manifest
    faiss_index, ids = load_dense_index(index_path)
    if faiss_index.d != encoder.dimension:
        raise UserError(f"{index_path}: index vectors have {faiss_index.d} dimensions but model {ref.id!r} "
                        f"gives {encoder.dimension}")
    query_vectors = encoder.encode([texts[q] for q in order], batch_size=batch_size)
    ranking = search_vectors(faiss_index, ids, query_vectors, hits)
    tag = run_tag or f"dense-{datasets.slug(ref.name)}"
    lines = write_run(output, zip(order, ranking), tag)
    parameters = {"hits": hits, "batch_size": batch_size, "max_length": encoder.max_length,
                  "pooling": encoder.pooling, "normalized": True, "similarity": "inner_product",
                  "shard_num": (manifest or {}).get("shard_num", shard_num)}
    parameters["engine"] = ray_engine.describe(engine)
    write_metadata(output, dataset=dataset_id, runner="dense",
                   system=f"dense {ref.name} (faiss IndexFlatIP, {encoder.pooling} pooling, L2-normalised)",
                   tag=tag, parameters=parameters, model=ref.metadata(),
                   index={"path": str(index_path), "manifest": manifest},
                   language=dataset_language(dataset), command=command)
    return {"dataset": dataset_id, "index": str(index_path), "complete": True, "model": ref.id, **parameters,
            "queries": len(order), "lines": lines, "run_tag": tag}
