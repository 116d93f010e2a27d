"""Dense retrieval: encode a dataset's documents into a Pyserini-style faiss index (:func:`dense_index`), in this
process or on Ray (:mod:`~negplugins.runners.ray_engine`), and search it (:func:`dense_search`); docs/runners.md."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.files import MARKER, atomic_directory, check_free_space
from ..io.integrity import damage, file_records
from ..io.interrupts import deferred_signals
from ..io.outputs import check_run_output
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..options import progress_bar
from . import ray_engine
from .common import MANIFEST, pyserini_topic_order, read_index_record, read_manifest
from .dense_index_format import (
    DEFAULT_INDEX_TYPE,
    FAISS_FILES,
    INDEX_FORMAT,
    SHARD_MANIFEST,
    DamagedIndex,
    calibration_texts,
    default_dense_index_path,
    encoders_path,
    ids_sha256,
    index_encoding,
    link_tree,
    new_index,
    normalise_index_type,
    note_damaged,
    open_dense_index,
    parse_memory_size,
    pyserini_search_args,
    reusable_layout,
    shard_bounds,
    shards_path,
    undamaged,
    write_flat_index,
    write_merged_index,
)
from .dense_options import EncodingOptions, IndexOptions, split_options
from .encoders import DenseEncoder, encode_texts
from .encoding_pipeline import length_groups
from .encoding_settings import encoder_settings, encoding_fingerprint, model_defaults
from .faiss_search import search_index_folder
from .model_refs import ModelRef, resolve_model


@dataclass
class DenseIndex:
    """Outcome of :func:`dense_index`."""

    path: Path
    complete: bool  # the merged index exists
    built: bool  # something was encoded or merged by this call
    shards_done: list[int]
    shard_num: int
    manifest: dict | None


def _encode_shard(encoder, texts, batch_size, desc, progress):
    # longest texts first over the whole shard, in the groups a Ray worker gets (the batches never span two)
    groups = length_groups([len(text) for text in texts], batch_size)
    vectors = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
    with progress_bar(len(texts), desc, progress) as bar:
        texts_of = ([texts[i] for i in rows] for rows in groups)
        if hasattr(encoder, "encode_groups"):  # a DenseEncoder: the next groups are tokenized while the model runs
            encoded = encoder.encode_groups(texts_of, batch_size=batch_size, progress=bar.update)
        else:
            encoded = (encode_texts(encoder, group, batch_size, bar) for group in texts_of)
        for rows, group_vectors in zip(groups, encoded):
            vectors[rows] = group_vectors
    return vectors


def dense_index(dataset_id: str, model: str | os.PathLike | None = None, index: str | os.PathLike | None = None, *,
                encoder: DenseEncoder | None = None, **options) -> DenseIndex:
    """Encode the documents of ``dataset_id`` into a faiss index, or reuse the one made from the same corpus, data and
    encoding; ``options``: the fields of ``IndexOptions`` and the passage side of ``EncodingOptions``."""
    settings, encoding = split_options("dense_index", options, (IndexOptions, EncodingOptions))
    for name in ("query_encoder", "query_prefix"):
        if getattr(encoding, name) is not None:
            raise TypeError(f"dense_index() encodes passages only: {name} is an option of dense_search()")
    return _dense_index(dataset_id, model, index, encoder, settings, encoding)


def _dense_index(dataset_id: str, model, index, encoder, options: IndexOptions, encoding: EncodingOptions,
                 hashes: bool = True) -> DenseIndex:
    """:func:`dense_index`; with ``hashes`` a reused index's files are checked by SHA-256, else by size (as a search
    that reads them follows)."""
    batch_size, shard_num, shard_id = options.batch_size, options.shard_num, options.shard_id
    index_type = normalise_index_type(options.index_type)
    budget = None if options.max_index_memory is None else parse_memory_size(options.max_index_memory)
    if options.search_shards and index_type != DEFAULT_INDEX_TYPE:
        raise UserError(f"--search-shards: searches the shards of a Flat index exactly; --index-type {index_type} "
                        f"is searched as one index (leave out --search-shards, or use --index-type Flat)")
    on_ray = ray_engine.engine_of(options.engine)
    dataset = datasets.load(dataset_id)
    ref = encoder.ref if encoder is not None else resolve_model(model)
    if on_ray is not None and ref.path is None:
        raise UserError(f"--engine ray: the Ray workers load the model from its folder, and encoder {ref.name!r} "
                        f"is a model object with none; save it to a folder, or encode with engine='single'")
    settings = encoder.settings if encoder is not None else encoder_settings(
        ref, prefix=encoding.passage_prefix, role="passage", pooling=encoding.pooling, normalize=encoding.normalize,
        max_length=encoding.max_length, backend=encoding.backend or "torch", dtype=encoding.dtype or "float32")
    path = Path(index) if index is not None else default_dense_index_path(dataset_id, ref, settings)
    corpus = datasets.docs_root_id(dataset_id)
    made_from = {"fingerprint": encoding_fingerprint(ref, settings), "data_origin": datasets.data_origins(dataset)}
    expected = {"format": INDEX_FORMAT, "kind": "faiss", "corpus": corpus, "model_sha256": ref.sha256,
                "index_type": index_type, **made_from}
    existing = read_manifest(path)
    if not options.rebuild and existing is not None and index_encoding(existing) == settings \
            and reusable_layout(path, existing, expected, options.search_shards, budget) \
            and undamaged(path, existing, hashes):
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
    calibration = getattr(encoder, "calibration", None) if encoder is not None \
        else calibration_texts(dataset_id, settings)
    if encoder is None:
        encoder = DenseEncoder(ref, role="passage", device=encoding.device, cache=encoders_path(path),
                               calibration=calibration, **settings)
    new_index(index_type, encoder.dimension)  # a bad factory string fails before any encoding
    vector_bytes = len(ids) * encoder.dimension * 4
    keep_shards = options.search_shards or (index_type == DEFAULT_INDEX_TYPE and budget is not None
                                            and vector_bytes > budget)
    if keep_shards and budget is not None and -(-vector_bytes // shard_num) > budget:
        needed = -(-vector_bytes // budget)
        if shard_id is not None:
            raise UserError(f"--max-index-memory {options.max_index_memory}: {len(ids):,} vectors of "
                            f"{encoder.dimension} dimensions need --shard-num {needed} or more for each shard to fit, "
                            f"got {shard_num}")
        shard_num = min(max(shard_num, needed), len(ids))
    shard_root = shards_path(path)
    if options.rebuild and shard_root.exists():
        shutil.rmtree(shard_root)
    shard_expected = {"format": INDEX_FORMAT, "kind": "faiss-shard", "corpus": corpus, "model_sha256": ref.sha256,
                      "shard_num": shard_num, "total": len(ids), "dimension": encoder.dimension,
                      "max_length": encoder.max_length, "encoding": settings, **made_from}

    def shard_folder(i):
        return shard_root / f"shard-{i:05d}-of-{shard_num:05d}"

    def finished(i):
        start, end = shard_bounds(len(ids), i, shard_num)
        want = dict(shard_expected, shard_id=i, start=start, end=end, docids_sha256=ids_sha256(ids[start:end]))
        have = read_index_record(shard_folder(i) / SHARD_MANIFEST, "shard manifest")
        done = have is not None and {k: have.get(k) for k in want} == want \
            and (shard_folder(i) / "index").is_file() and (shard_folder(i) / "docid").is_file()
        damaged = damage(shard_folder(i), have.get("files"), hashes=False) if done else None  # sizes: cheap
        if damaged:
            raise UserError(f"{shard_folder(i)}: this finished shard of the dense index {path} is damaged "
                            f"({damaged}); remove the shard folder to have it encoded again, or rerun with --rebuild")
        return done

    built = False
    todo = [i for i in ([shard_id] if shard_id is not None else range(shard_num)) if not finished(i)]

    def encoded_here():
        for i in todo:
            start, end = shard_bounds(len(ids), i, shard_num)
            yield i, _encode_shard(encoder, [text for _, text in docs[start:end]], batch_size,
                                   f"encoding {corpus} shard {i + 1}/{shard_num}", options.progress)

    if on_ray is None:
        encoded = encoded_here()
    else:  # shards are yielded as they complete, in any order
        encoded = ray_engine.encode_shards(
            on_ray, dataset_id, ref, {i: shard_bounds(len(ids), i, shard_num) for i in todo}, corpus_ids,
            encoder.dimension, batch_size, settings=settings, cache=encoders_path(path),
            calibration=calibration, progress=options.progress,
            desc=f"encoding {corpus} ({len(todo)} of {shard_num} shards)")
    for i, vectors in encoded:
        start, end = shard_bounds(len(ids), i, shard_num)
        check_free_space(shard_root, (end - start) * (encoder.dimension * 4 + 64) + (1 << 20),
                         f"shard {i + 1}/{shard_num} of the faiss index {path}")
        with atomic_directory(shard_folder(i)) as tmp:
            write_flat_index(tmp, ids[start:end], vectors, encoder.dimension)
            manifest = dict(shard_expected, shard_id=i, start=start, end=end,
                            docids_sha256=ids_sha256(ids[start:end]), documents=end - start, batch_size=batch_size,
                            encoder={"device": encoder.device, "export": encoder.export},
                            engine=ray_engine.describe(options.engine)["name"],
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
        encoded_by.append((read_index_record(folder / SHARD_MANIFEST, "shard manifest") or {}).get("encoder"))
    if merged_ids != ids:
        raise UserError(f"{shard_root}: the shards do not hold the documents of {corpus} in order; rerun with "
                        f"--rebuild")
    manifest = dict(expected, encoding=settings, dataset=dataset_id, documents=len(ids), dimension=encoder.dimension,
                    metric="inner_product", normalized=settings["normalize"], pooling=encoder.pooling,
                    max_length=encoder.max_length, shard_num=shard_num, batch_size=batch_size,
                    engine=ray_engine.describe(options.engine), model=ref.metadata(),
                    encoder=encoded_by[0] if len(set(map(json.dumps, encoded_by))) == 1 else encoded_by,
                    docids_sha256=ids_sha256(ids), layout="shards" if keep_shards else "merged",
                    pyserini_search=pyserini_search_args(encoder, ref))
    if keep_shards:
        with atomic_directory(path) as tmp:
            for folder in folders:  # hard links: no second copy on disk, and the shards stay until the swap
                link_tree(folder, tmp / folder.name)
            manifest["shards"] = [folder.name for folder in folders]
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    else:
        with atomic_directory(path) as tmp:
            manifest["train_sample"] = write_merged_index(tmp, folders, ids, encoder.dimension, index_type,
                                                          options.train_sample, budget, options.max_index_memory,
                                                          label=str(path))
            manifest["files"] = file_records(tmp, hashed=FAISS_FILES, skip=(MANIFEST, MARKER))
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    with deferred_signals():  # the shards are in the index now: no half-removed copy is left
        shutil.rmtree(shard_root, ignore_errors=True)
    return DenseIndex(path, True, True, list(range(shard_num)), shard_num, manifest)


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


def _check_made_like(index_path: Path, manifest: dict | None, ref: ModelRef, passage: dict, dataset) -> None:
    """Refuse an index of the suite made from other model files or other data than the search would use."""
    recorded = (manifest or {}).get("fingerprint")
    if recorded is not None and recorded != encoding_fingerprint(ref, passage):
        raise UserError(f"{index_path}: the index was encoded with other files of model {ref.id!r} than its folder "
                        f"holds now (its tokenizer, configuration or pooling changed since); leave out --index to "
                        f"encode the documents again")
    origins = (manifest or {}).get("data_origin")
    if origins is not None and origins != datasets.data_origins(dataset):
        raise UserError(f"{index_path}: the index was encoded from other data files of its corpus than the dataset "
                        f"reads now (a derived copy, or the release); leave out --index to encode the documents again")


def _query_side(encoder):
    """The query encoder of a given passage encoder: the same model with the model's query prompt."""
    if isinstance(encoder, DenseEncoder) and encoder.ref.path is not None:
        return encoder.with_prefix(model_defaults(encoder.ref).query_prefix, "query")
    return encoder  # a SentenceEncoder: queries and passages alike, without a prompt


def dense_search(dataset_id: str, output: str | os.PathLike, model: str | os.PathLike | None = None,
                 index: str | os.PathLike | None = None, *, encoder: DenseEncoder | None = None,
                 **options) -> RunResult:
    """Rank the documents of ``dataset_id`` for each of its queries by embedding similarity; write a TREC run (in
    Pyserini's topic order) and its sidecar once every shard is encoded. Without ``index`` a matching index is reused
    or built; ``options``: the fields of :mod:`~negplugins.runners.dense_options` (``hits=10``, ...)."""
    encoding, options, search = split_options("dense_search", options)
    backend, dtype = encoding.backend, encoding.dtype
    inputs = () if index is None else [index, shards_path(index)]  # never into the index it searches, even with --force
    check_run_output(output, inputs=inputs, force=search.force)
    dataset = datasets.load(dataset_id)
    texts = datasets.query_texts(dataset)
    order = pyserini_topic_order(texts)
    shape = {"pooling": encoding.pooling, "normalize": encoding.normalize, "max_length": encoding.max_length}
    if encoder is not None and encoding.given():
        raise UserError(f"dense_search: a loaded encoder brings its own settings; leave out "
                        f"{', '.join(encoding.given())}")
    query_ref = resolve_model(encoding.query_encoder) if encoding.query_encoder is not None else None
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
            passage = encoder.settings
            if built_with is not None and built_with != passage:
                raise UserError(f"{index_path}: the index was encoded with {built_with}, not with the given "
                                f"encoder's {passage}; give another --index or leave it out")
        else:
            backend = backend or (built_with or {}).get("backend") or "torch"
            dtype = dtype or (built_with or {}).get("dtype") or "float32"
            passage = _settings_for_index(index_path, built_with, ref, dict(shape, prefix=encoding.passage_prefix,
                                                                            backend=backend, dtype=dtype))
        _check_made_like(index_path, manifest, ref, passage, dataset)
        opened = open_dense_index(index_path)  # fail before loading the model
        if encoder is not None:
            query = _query_side(encoder)
        else:
            # one pooling and normalisation on both sides (the index's); the index's token limit for the same model
            limit = encoding.max_length if encoding.max_length is not None or query_ref is not None \
                else passage["max_length"]
            query = DenseEncoder(query_ref or ref, role="query", prefix=encoding.query_prefix,
                                 pooling=passage["pooling"], normalize=passage["normalize"], max_length=limit,
                                 backend=backend, dtype=dtype, device=encoding.device,
                                 cache=encoders_path(index_path), calibration=calibration_texts(dataset_id, passage))
    else:
        if encoder is not None:
            ref, passage, query = encoder.ref, encoder.settings, _query_side(encoder)
        else:
            ref = resolve_model(model)
            backend, dtype = backend or "torch", dtype or "float32"
            passage = encoder_settings(ref, prefix=encoding.passage_prefix, role="passage", backend=backend,
                                       dtype=dtype, **shape)
            index_path = default_dense_index_path(dataset_id, ref, passage)
            check_run_output(output, inputs=[index_path, shards_path(index_path)], force=search.force)
            calibration = calibration_texts(dataset_id, passage)
            encoder = DenseEncoder(ref, role="passage", device=encoding.device, cache=encoders_path(index_path),
                                   calibration=calibration, **passage)
            notes += encoder.notes
            if query_ref is None:
                prefix = model_defaults(ref).query_prefix if encoding.query_prefix is None else encoding.query_prefix
                query = encoder.with_prefix(prefix, "query")
            else:
                query = DenseEncoder(query_ref, role="query", prefix=encoding.query_prefix, pooling=passage["pooling"],
                                     normalize=passage["normalize"], max_length=encoding.max_length, backend=backend,
                                     dtype=dtype, device=encoding.device, cache=encoders_path(index_path),
                                     calibration=calibration)
        built = _dense_index(dataset_id, None, None, encoder, options, EncodingOptions(), hashes=False)
        index_path = built.path
        if not built.complete:
            missing = sorted(set(range(options.shard_num)) - set(built.shards_done))
            return RunResult(run=None, sidecar=None, dataset=dataset_id, tag=None, lines=None, queries=len(order),
                             notes=tuple(notes), complete=False, details={
                                 "dataset": dataset_id, "index": str(index_path), "complete": False,
                                 "shards_done": built.shards_done, "shards_missing": missing,
                                 "shard_num": options.shard_num, "lines": None, "queries": len(order), "notes": notes})
        manifest, opened = built.manifest, None
    query_vectors = None
    while True:
        try:
            opened = opened or open_dense_index(index_path)
            if opened.dimension != query.dimension:
                raise UserError(f"{index_path}: index vectors have {opened.dimension} dimensions but the query "
                                f"encoder {query.ref.id!r} gives {query.dimension}")
            if query_vectors is None:
                desc = f"encoding the queries of {dataset_id}"
                with progress_bar(len(order), desc, options.progress, "queries") as bar:
                    query_vectors = encode_texts(query, [texts[q] for q in order], options.batch_size, bar)
            ranking = search_index_folder(opened, query_vectors, search.hits, search.search_params)
            break
        except DamagedIndex as error:  # an index reused unread: encoded again, once
            if index is not None or built.built:
                raise
            note_damaged(error)
            built = _dense_index(dataset_id, None, None, encoder, dataclasses.replace(options, rebuild=True),
                                 EncodingOptions())
            manifest, opened = built.manifest, None
    tag = search.run_tag or f"dense-{datasets.slug(ref.name)}"
    built_type = (manifest or {}).get("index_type", DEFAULT_INDEX_TYPE if manifest else None)
    layout = (manifest or {}).get("layout", "merged")
    parameters = {"hits": search.hits, "batch_size": options.batch_size, "max_length": passage["max_length"],
                  "pooling": passage["pooling"], "normalized": passage["normalize"], "similarity": "inner_product",
                  "shard_num": (manifest or {}).get("shard_num", options.shard_num), "index_type": built_type,
                  "index_layout": layout, "search_params": search.search_params, "backend": passage["backend"],
                  "dtype": passage["dtype"], "device": query.device, "passage_prefix": passage["prefix"],
                  "query_prefix": query.prefix, "passage_encoding": passage,
                  "query_encoding": {"model": query.ref.metadata(), **query.metadata()}}
    parameters["engine"] = ray_engine.describe(options.engine)
    described = "IndexFlatIP" if built_type == DEFAULT_INDEX_TYPE else built_type or "index"
    if layout == "shards":
        described += f", exact search over {len((manifest or {}).get('shards') or [])} shards"
    normalised = ", L2-normalised" if passage["normalize"] else ""
    queries_by = f", queries by {query.ref.name}" if query_ref is not None else ""
    sidecar = Sidecar(dataset=dataset_id, runner="dense",
                      system=f"dense {ref.name}{queries_by} (faiss {described}, {passage['pooling']} pooling"
                             f"{normalised}, {passage['backend']} {passage['dtype']})",
                      tag=tag, parameters=parameters, model=ref.metadata(),
                      index={"path": str(index_path), "manifest": manifest},
                      language=datasets.dataset_language(dataset), command=search.command)
    notes = list(dict.fromkeys(notes + list(query.notes)))
    return write_run_and_sidecar(output, zip(order, ranking), sidecar, queries=len(order), notes=notes, details={
        "dataset": dataset_id, "index": str(index_path), "complete": True, "model": ref.id,
        "query_encoder": query.ref.id, **parameters, "queries": len(order), "lines": None, "run_tag": tag,
        "notes": notes})
