"""The dense index on disk: a Pyserini-style faiss index folder, its manifest, its shards and their merging.

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
So are the manifest's ``fingerprint`` (:func:`negplugins.runners.encoding_settings.encoding_fingerprint`: every
file of the model folder, tokenizer and pooling included, the settings and the text as encoded) and
``data_origin`` (the derived copies the corpus was read from). The device is recorded but not compared (float32
on a GPU gives the CPU's vectors up to rounding).

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
resolved as :mod:`negplugins.runners.faiss_search` says) and merges them into the overall top ``hits``,
which is exactly the ranking of the one merged index (tests/runners/test_dense_index_types.py; ComLQ:
benchmarks/bench_sharded_search.py).
Before a shard or an index is written, the disk must have room for it.

The search over these folders is :mod:`negplugins.runners.faiss_search`; the runner that builds and searches
them is :mod:`negplugins.runners.dense`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np

from .. import datasets
from ..errors import UserError
from ..io.files import check_free_space
from ..io.integrity import damage
from .common import MANIFEST, default_index_path, read_index_record, read_manifest
from .encoders import ModelRef, SentenceEncoder, encoder_settings, model_defaults
from .encoding_settings import CALIBRATION_PASSAGES, encoding_fingerprint

SHARD_MANIFEST = "negplugins-shard.json"
INDEX_FORMAT = 1

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


def normalise_index_type(index_type: str | None) -> str:
    text = DEFAULT_INDEX_TYPE if index_type is None else str(index_type).strip()
    if not text or len(text) > 200:
        raise UserError(f"--index-type: expected a faiss index factory string such as Flat, HNSW32 or IVF4096,PQ64, "
                        f"got {index_type!r}")
    return DEFAULT_INDEX_TYPE if text.lower() == "flat" else text


def new_index(index_type: str, dimension: int):
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
    if manifest.get("kind") == "faiss" and manifest.get("format") == INDEX_FORMAT and "pooling" in manifest:
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


def ids_sha256(ids) -> str:
    return hashlib.sha256("".join(f"{i}\n" for i in ids).encode("utf-8")).hexdigest()




def read_shard_manifest(path: Path) -> dict | None:
    """A shard manifest, or ``None`` when there is none the suite could have written (bounded parser)."""
    return read_index_record(path, "shard manifest")


def write_flat_index(folder: Path, ids, vectors: np.ndarray, dimension: int) -> None:
    import faiss

    index = faiss.IndexFlatIP(dimension)
    if len(ids):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    faiss.write_index(index, str(folder / "index"))
    with open(folder / "docid", "w", encoding="utf-8", newline="") as f:
        f.writelines(f"{doc_id}\n" for doc_id in ids)


def pyserini_search_args(encoder, ref: ModelRef) -> list[str] | None:
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



def reusable_layout(path: Path, existing: dict, expected: dict, search_shards: bool, budget: int | None) -> bool:
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


def undamaged(path: Path, manifest: dict) -> bool:
    """Whether an index of the suite about to be reused is whole; a damaged one is encoded again, with a note."""
    for folder in shard_folders(path, manifest) or [path]:
        try:
            check_undamaged(folder)
        except UserError as error:
            print(f"negplugins: note: {str(error).split('; build it again')[0]}; encoding it again", file=sys.stderr,
                  flush=True)
            return False
    return True


def link_tree(source: Path, target: Path) -> None:
    """``target`` as a copy of the folder ``source`` made of hard links (copies where links are refused)."""
    target.mkdir()
    for item in source.iterdir():
        if item.is_dir():
            link_tree(item, target / item.name)
            continue
        try:
            os.link(item, target / item.name)
        except OSError:
            shutil.copy2(item, target / item.name)


def _shard_vectors(folder: Path, dimension: int) -> np.ndarray:
    import faiss

    part = faiss.read_index(str(folder / "index"))
    return part.reconstruct_n(0, part.ntotal) if part.ntotal else np.zeros((0, dimension), dtype=np.float32)


def write_merged_index(folder: Path, shards: list[Path], ids: list[str], dimension: int, index_type: str,
                  train_sample: int | None, budget: int | None, max_index_memory, label: str) -> int | None:
    """Write the one index of ``index_type`` holding the shards' vectors; return the training vectors used."""
    import faiss

    index = new_index(index_type, dimension)
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


def encoder_record(encoder) -> dict:
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
    manifest = read_manifest(folder) or read_shard_manifest(folder / SHARD_MANIFEST)
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


def shard_folders(path: Path, manifest: dict | None) -> list[Path] | None:
    """The shard folders of a sharded index (in order), or ``None`` for one index (``index`` + ``docid``)."""
    if not manifest or manifest.get("layout") != "shards":
        return None
    names = manifest.get("shards")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n and "/" not in n and
                                                            not n.startswith(".") for n in names):
        raise UserError(f"{path}/{MANIFEST}: a sharded index without its list of shard folders; rebuild it "
                        f"(--rebuild)")
    return [path / name for name in names]


class OpenDenseIndex:
    """A faiss index folder, checked, with its first part read: the one index, or the first shard of a sharded one.

    The part read on opening is handed to the search (:meth:`read`), so that a search over an index reads each of
    its ``index`` files once (:func:`open_dense_index`).

    Attributes
    ----------
    path : Path
        The index folder.
    shards : list of Path or None
        The shard folders of a sharded index, in order; ``None`` for one index.
    dimension : int
        The vectors' dimension.
    """

    def __init__(self, path: Path, shards: list[Path] | None, first: tuple):
        import faiss

        self.path, self.shards, self._first = path, shards, first
        self.dimension = int(faiss.downcast_index(first[0]).d)

    @property
    def parts(self) -> list[Path]:
        """The folders holding an ``index`` and a ``docid``: the shards, or the index folder itself."""
        return self.shards if self.shards is not None else [self.path]

    def read(self, position: int):
        """``(faiss index, doc ids)`` of part ``position``; the part read on opening is given once, not read again."""
        if position == 0 and self._first is not None:
            first, self._first = self._first, None
            return first
        return load_dense_index(self.parts[position])


def open_dense_index(path: str | os.PathLike) -> OpenDenseIndex:
    """Refuse a folder that is not a faiss index (one, or sharded); read its first part.

    A sharded index is checked by its files and its first shard only (the others are read while searching).

    Raises
    ------
    UserError
        One line naming the folder and what was expected.
    """
    path = Path(path)
    shards = shard_folders(path, read_manifest(path))
    for shard in shards or []:
        if not (shard / "index").is_file() or not (shard / "docid").is_file():
            raise UserError(f"{shard}: shard of the sharded index {path} not found (expected its files 'index' and "
                            f"'docid'); rebuild the index (--rebuild)")
    return OpenDenseIndex(path, shards, load_dense_index((shards or [path])[0]))


def check_dense_index(path: str | os.PathLike) -> int:
    """Refuse a folder that is not a faiss index (one, or sharded); return the vectors' dimension.

    See :func:`open_dense_index`, which keeps what it read for the search.
    """
    return open_dense_index(path).dimension



def reusable_passage_index(dataset_id: str, ref: ModelRef, settings: dict,
                           index: str | os.PathLike) -> tuple[Path | None, str]:
    """A dense index whose stored passage vectors are the ones a bi-encoder with ``settings`` would compute.

    ``index`` is reusable when its manifest records the same corpus and data origin, the same model weights
    (SHA-256), the same encoding settings (pooling, normalisation, token limit, passage prefix, backend, dtype) and
    the same fingerprint (:func:`~negplugins.runners.encoding_settings.encoding_fingerprint`: every file of the model,
    the settings, the text as encoded), and its type stores the vectors exactly: ``Flat`` (one index or sharded).
    Other types (HNSW, IVF, PQ, ...) are not reused: faiss either cannot give back a vector by its position or gives
    a lossy one.

    Returns
    -------
    (Path, "") or (None, why)
        The index folder, or why there is none to reuse (``why`` is ``""`` when no index is there at all).
    """
    path = Path(index)
    manifest = read_manifest(path)
    if manifest is None:
        return None, "" if not path.exists() else f"{path}: not a dense index built by negplugins (no {MANIFEST})"
    corpus = datasets.docs_root_id(dataset_id)
    built_with = index_encoding(manifest)
    if manifest.get("kind") != "faiss" or manifest.get("corpus") != corpus:
        why = f"it indexes {manifest.get('corpus')!r}, not the documents of {dataset_id} ({corpus})"
    elif manifest.get("data_origin") != datasets.data_origins(datasets.load(dataset_id)):
        why = "it was encoded from other data files of its corpus than the dataset reads now"
    elif manifest.get("model_sha256") != ref.sha256:
        why = f"it was encoded by other weights ({str(manifest.get('model_sha256'))[:12]}, not {ref.sha256[:12]})"
    elif built_with != settings:
        why = f"it was encoded with {built_with}, not with the reranker's {settings}"
    elif manifest.get("fingerprint") != encoding_fingerprint(ref, settings):
        why = ("it was encoded with other files of the model than its folder holds now (its tokenizer, configuration "
               "or pooling), or by an earlier version that did not record them")
    elif manifest.get("index_type", DEFAULT_INDEX_TYPE) != DEFAULT_INDEX_TYPE:
        why = f"its type {manifest.get('index_type')} does not keep the vectors exactly (only Flat is reused)"
    else:
        return path, ""
    return None, f"{path}: {why}"

