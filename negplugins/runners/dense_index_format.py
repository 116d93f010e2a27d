"""The dense index on disk: a Pyserini-style faiss index folder, its manifest, its shards and their merging
(docs/runners.md, "Dense retrieval and reranking" and "Large corpora")."""

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
from .encoders import SentenceEncoder
from .encoding_settings import CALIBRATION_PASSAGES, encoder_settings, encoding_fingerprint, model_defaults
from .model_refs import ModelRef

SHARD_MANIFEST = "negplugins-shard.json"
INDEX_FORMAT = 1
#: The files of a faiss index folder whose SHA-256 its manifest records (faiss itself checks nothing).
FAISS_FILES = ("index", "docid")

#: faiss factory string of the default index: exact inner product, Pyserini's layout.
DEFAULT_INDEX_TYPE = "Flat"
#: Training vectors of an index type that needs training, unless ``train_sample`` says otherwise.
DEFAULT_TRAIN_SAMPLE = 100_000
_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
               "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}
_SHAPE = ("pooling", "normalize", "max_length", "prefix")  # the settings that are the model's defaults unless given


class DamagedIndex(UserError):
    """A faiss index folder whose files differ from what its manifest recorded when the suite built it."""

    def __init__(self, folder: Path, what: str):
        super().__init__(f"{folder}: the dense index is damaged ({what}); build it again: rerun the search without "
                         f"--index and with --rebuild (or 'negplugins search dense DATASET --rebuild' with the same "
                         f"options)")


def parse_memory_size(text: str | int, option: str = "--max-index-memory") -> int:
    """Bytes of ``512M``, ``16G``, ``1.5T`` or a plain number of bytes (units of 1024)."""
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


def faiss_error(error: RuntimeError, fallback: str) -> str:
    message = str(error).strip().splitlines()
    return message[-1][:200] if message else fallback


def new_index(index_type: str, dimension: int):
    """An empty faiss index of ``index_type`` (inner product) for ``dimension``-dimensional vectors."""
    import faiss

    if index_type == DEFAULT_INDEX_TYPE:
        return faiss.IndexFlatIP(dimension)
    try:
        return faiss.index_factory(dimension, index_type, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as error:
        raise UserError(f"--index-type {index_type!r}: not a faiss index factory string for {dimension}-dimensional "
                        f"vectors ({faiss_error(error, 'refused by faiss')}); examples: Flat, HNSW32, "
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
    """An upper bound of the disk (and memory) an index of ``count`` vectors of ``index``'s type takes."""
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


def default_dense_index_path(dataset_id: str, model: ModelRef, settings: dict | None = None) -> Path:
    """``indexes/faiss/<corpus>/<model name>[.<backend>][.<dtype>][.<hash>]``: another backend or dtype than torch
    float32 is named; pooling, normalisation, token limit or prefix other than the model's own add a hash of them."""
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


def shards_path(index: str | os.PathLike) -> Path:
    index = Path(index)
    return index.with_name(index.name + ".shards")


def calibration_texts(dataset_id: str, settings: dict) -> list[str] | None:
    """OpenVINO int8's calibration texts (the corpus's first passages with the passage prefix); else ``None``."""
    if (settings.get("backend"), settings.get("dtype")) != ("openvino", "int8"):
        return None
    first = itertools.islice(datasets.iter_docs_for_indexing(datasets.load(dataset_id)), CALIBRATION_PASSAGES)
    return [settings["prefix"] + text for _, text in first]


def index_encoding(manifest: dict | None) -> dict | None:
    """The encoding settings an index was built with, ``None`` if unknown; a manifest of format 1 without
    ``encoding`` means PyTorch float32, L2-normalised, without a prefix."""
    if not manifest:
        return None
    if isinstance(manifest.get("encoding"), dict):
        return manifest["encoding"]
    if manifest.get("kind") == "faiss" and manifest.get("format") == INDEX_FORMAT and "pooling" in manifest:
        pooling = {"last": "last-token"}.get(manifest["pooling"], manifest["pooling"])
        return {"pooling": pooling, "normalize": True, "max_length": manifest.get("max_length"), "prefix": "",
                "backend": "torch", "dtype": "float32"}
    return None


def shard_bounds(total: int, shard_id: int, shard_num: int) -> tuple[int, int]:
    """``[start, end)`` of a shard, exactly as ``pyserini.encode``'s ``JsonlCollectionIterator``."""
    size = int(total / shard_num)
    start = shard_id * size
    end = total if shard_id == shard_num - 1 else min(start + size, total)
    return start, end


def ids_sha256(ids) -> str:
    return hashlib.sha256("".join(f"{i}\n" for i in ids).encode("utf-8")).hexdigest()


def write_ids(folder: Path, ids) -> None:
    with open(folder / "docid", "w", encoding="utf-8", newline="") as f:
        f.writelines(f"{doc_id}\n" for doc_id in ids)


def write_flat_index(folder: Path, ids, vectors: np.ndarray, dimension: int) -> None:
    import faiss

    index = faiss.IndexFlatIP(dimension)
    if len(ids):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    faiss.write_index(index, str(folder / "index"))
    write_ids(folder, ids)


def pyserini_search_args(encoder, ref: ModelRef) -> list[str] | None:
    """Stock ``pyserini.search.faiss`` arguments that encode queries as this index expects, when it can."""
    defaults = model_defaults(ref) if ref.path is not None else None
    if defaults is None or encoder.pooling not in ("mean", "cls") or defaults.dense or defaults.lowercase:
        return None
    args = ["--encoder", str(ref.path), "--encoder-class", "auto", "--pooling", encoder.pooling]
    args += ["--l2-norm"] if encoder.normalize else []
    prefix = defaults.query_prefix
    if prefix:
        if not prefix.endswith(" "):  # Pyserini joins prefix and query with a space
            return None
        args += ["--query-prefix", prefix[:-1]]
    return args


def reusable_layout(path: Path, existing: dict, expected: dict, search_shards: bool, budget: int | None) -> bool:
    """Whether the index at ``path`` (manifest ``existing``) is the one asked for, in a layout that fits."""
    have = {k: existing.get(k) for k in expected}
    have["index_type"] = existing.get("index_type", DEFAULT_INDEX_TYPE)  # a manifest without it: Flat
    if have != expected:
        return False
    if existing.get("layout") == "shards":
        return all((path / str(name) / "index").is_file() and (path / str(name) / "docid").is_file()
                   for name in existing.get("shards") or [None])
    if not ((path / "index").is_file() and (path / "docid").is_file()) or search_shards:
        return False
    vector_bytes = int(existing.get("documents") or 0) * int(existing.get("dimension") or 0) * 4
    return budget is None or expected["index_type"] != DEFAULT_INDEX_TYPE or vector_bytes <= budget


def note_damaged(error: DamagedIndex) -> None:
    print(f"negplugins: note: {str(error).split('; build it again')[0]}; encoding it again", file=sys.stderr,
          flush=True)


def undamaged(path: Path, manifest: dict, hashes: bool = True) -> bool:
    """Whether an index of the suite about to be reused is whole (``hashes``: its bytes too, else its sizes)."""
    for folder in shard_folders(path, manifest) or [path]:
        what = damage(folder, _records(folder), hashes=hashes)
        if what:
            note_damaged(DamagedIndex(folder, what))
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


def _training_sample(shards: list[Path], total: int, count: int, dimension: int) -> np.ndarray:
    """``count`` of the shards' ``total`` vectors drawn at random (seed 0), one shard in memory at a time."""
    rows = np.sort(np.random.default_rng(0).choice(total, size=count, replace=False))
    sample, start = [], 0
    for shard in shards:
        vectors = _shard_vectors(shard, dimension)
        end = start + len(vectors)
        sample.append(vectors[rows[(rows >= start) & (rows < end)] - start])
        start = end
        del vectors
    return np.ascontiguousarray(np.concatenate(sample), dtype=np.float32)


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
        try:
            index.train(_training_sample(shards, len(ids), count, dimension))
        except RuntimeError as error:
            raise UserError(f"--index-type {index_type}: training on {count:,} vectors failed "
                            f"({faiss_error(error, 'refused by faiss')}); a larger --train-sample "
                            f"(at most the {len(ids):,} documents) or fewer IVF lists") from None
        trained_on = count
    for shard in shards:  # one shard in memory at a time, beside the index
        vectors = _shard_vectors(shard, dimension)
        if len(vectors):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        del vectors
    faiss.write_index(index, str(folder / "index"))
    write_ids(folder, ids)
    return trained_on


def _records(folder: Path) -> dict:
    """The sizes and SHA-256 its manifest recorded for a folder's files (none for Pyserini's own indexes)."""
    manifest = read_manifest(folder) or read_index_record(folder / SHARD_MANIFEST, "shard manifest")
    records = (manifest or {}).get("files")
    return records if isinstance(records, dict) else {}


def _recorded_sha256(records: dict, name: str) -> str | None:
    record = records.get(name)
    return record.get("sha256") if isinstance(record, dict) and isinstance(record.get("sha256"), str) else None


def _read_faiss(path: Path, sha256: str | None):
    """``faiss.read_index`` of the file ``path``; with ``sha256``, the bytes faiss reads are hashed as it reads them
    and an index whose bytes differ is refused before it is used."""
    import faiss

    if sha256 is None:
        try:
            return faiss.read_index(str(path))
        except RuntimeError as error:
            raise UserError(f"{path}: not a readable faiss index ({str(error).splitlines()[0]})") from None
    digest, failed = hashlib.sha256(), None
    with open(path, "rb") as f:
        def read(size: int) -> bytes:
            block = f.read(size)
            digest.update(block)
            return block

        try:
            index = faiss.read_index(faiss.PyCallbackIOReader(read, 1 << 20))
        except RuntimeError as error:
            failed = error
        while block := f.read(1 << 20):  # bytes past the index that faiss did not ask for
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise DamagedIndex(path.parent, f"{path.name} does not hold the bytes it was built with (SHA-256 differs)")
    if failed is not None:
        raise UserError(f"{path}: not a readable faiss index ({str(failed).splitlines()[0]})")
    return index


def load_dense_index(path: str | os.PathLike):
    """``(faiss index, doc ids)`` of a faiss index folder (``index`` + ``docid``), each file read once; the sizes
    and SHA-256 its manifest recorded are checked on the bytes read (:class:`DamagedIndex`)."""
    path = Path(path)
    if not (path / "index").is_file() or not (path / "docid").is_file():
        raise UserError(f"{path}: dense index not found (expected the files 'index' and 'docid' of a faiss index "
                        f"folder; leave out --index to build one)")
    records = _records(path)
    what = damage(path, records, hashes=False)
    if what:
        raise DamagedIndex(path, what)
    docid = (path / "docid").read_bytes()
    if _recorded_sha256(records, "docid") not in (None, hashlib.sha256(docid).hexdigest()):
        raise DamagedIndex(path, "docid does not hold the bytes it was built with (SHA-256 differs)")
    index = _read_faiss(path / "index", _recorded_sha256(records, "index"))
    ids = [doc_id.strip() for doc_id in docid.decode("utf-8").splitlines()]
    if index.ntotal != len(ids):
        raise UserError(f"{path}: the faiss index holds {index.ntotal} vectors but 'docid' lists {len(ids)} ids")
    return index, ids


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
    """A faiss index folder, checked, with its first part (the one index, or the first shard) read; the search
    is handed that part (:meth:`read`), so that it reads each ``index`` file once."""

    def __init__(self, path: Path, shards: list[Path] | None, first: tuple):
        self.path, self.shards, self._first = path, shards, first
        self.dimension = int(first[0].d)

    def read(self, position: int):
        """``(faiss index, doc ids)`` of part ``position``; the part read on opening is given once, not read again."""
        if position == 0 and self._first is not None:
            first, self._first = self._first, None
            return first
        return load_dense_index((self.shards or [self.path])[position])


def open_dense_index(path: str | os.PathLike) -> OpenDenseIndex:
    """Refuse a folder that is not a faiss index (one, or sharded); read its first part (the search reads the rest)."""
    path = Path(path)
    shards = shard_folders(path, read_manifest(path))
    for shard in shards or []:
        if not (shard / "index").is_file() or not (shard / "docid").is_file():
            raise UserError(f"{shard}: shard of the sharded index {path} not found (expected its files 'index' and "
                            f"'docid'); rebuild the index (--rebuild)")
    return OpenDenseIndex(path, shards, load_dense_index((shards or [path])[0]))


def reusable_passage_index(dataset_id: str, ref: ModelRef, settings: dict,
                           index: str | os.PathLike) -> tuple[Path | None, str]:
    """``(index folder, "")`` when ``index`` stores exactly the passage vectors a bi-encoder with ``settings`` would
    compute (a Flat index of the same corpus, data, weights and encoding), else ``(None, why)`` (``""``: no index)."""
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
