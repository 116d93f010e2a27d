"""faiss index types (factory strings, training on a sample) and exact search over shards beyond memory."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from negplugins.errors import UserError
from negplugins.io.sidecars import read_metadata
from negplugins.runners import dense, dense_index_format
from negplugins.runners.common import MANIFEST
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.dense_index_format import load_dense_index, parse_memory_size
from negplugins.runners.faiss_search import search_index_folder, search_vectors

DEMO = "negplugins-demo"


def _sharded_folder(root: Path, parts: list[tuple[list[str], np.ndarray]]) -> Path:
    """An index folder in the sharded layout, written as dense_index writes it (shard folders + manifest)."""
    root.mkdir()
    names = []
    for i, (ids, vectors) in enumerate(parts):
        name = f"shard-{i:05d}-of-{len(parts):05d}"
        (root / name).mkdir()
        dense_index_format.write_flat_index(root / name, ids, vectors, vectors.shape[1])
        names.append(name)
    (root / MANIFEST).write_text(json.dumps({"kind": "faiss", "layout": "shards", "shards": names}))
    return root


def _single_folder(root: Path, ids, vectors) -> Path:
    root.mkdir()
    dense_index_format.write_flat_index(root, ids, vectors, vectors.shape[1])
    return root


@pytest.mark.parametrize("hits", [1, 3, 7, 40])
def test_merged_top_hits_of_shards_equal_the_one_index(tmp_path, hits):
    """Random vectors with many exact ties (repeated rows, spread over the shards, ids not in shard order)."""
    rng = np.random.default_rng(7)
    base = rng.normal(size=(12, 8)).astype(np.float32)
    vectors = base[rng.integers(0, 12, size=60)]  # every row repeated about 5 times: ties at every cut
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"doc{n:03d}" for n in rng.permutation(60)]
    queries = rng.normal(size=(9, 8)).astype(np.float32)
    cuts = [0, 7, 23, 24, 51, 60]  # uneven shards, one of a single document
    sharded = _sharded_folder(tmp_path / "sharded", [(ids[a:b], vectors[a:b]) for a, b in zip(cuts, cuts[1:])])
    single = _single_folder(tmp_path / "single", ids, vectors)
    index, single_ids = load_dense_index(single)
    expected = search_vectors(index, single_ids, queries, hits)
    assert search_index_folder(sharded, queries, hits) == expected == search_index_folder(single, queries, hits)
    assert all(len(found) == min(hits, 60) for found in expected)


def test_scores_do_not_depend_on_where_a_document_is_stored(tmp_path):
    """ComLQ's shape (11,251 unit vectors of 384 dimensions in 4 shards, 1000 hits): faiss's float32 scores of a
    (query, document) pair differ in the last bit between the layouts, and at six decimals that reordered 5 of
    these 300 rankings when the run took faiss's scores (faiss 1.15.1); the float64 rescoring leaves none."""
    rng = np.random.default_rng(3)
    n, d = 11251, 384
    vectors = rng.normal(size=(n, d)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[rng.choice(n, 300)] + 0.3 * rng.normal(size=(300, d)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    ids = [f"d{i:05d}" for i in range(n)]
    cuts = [0, 2812, 5624, 8436, n]  # shard_bounds(11251, i, 4)
    sharded = _sharded_folder(tmp_path / "sharded", [(ids[a:b], vectors[a:b]) for a, b in zip(cuts, cuts[1:])])
    single = _single_folder(tmp_path / "single", ids, vectors)
    one = search_index_folder(single, queries, 1000)
    assert search_index_folder(sharded, queries, 1000) == one
    # the scores are the float64 inner products of the stored float32 vectors
    row = one[0]
    exact = vectors[[int(doc[1:]) for doc, _ in row]].astype(np.float64) @ queries[0].astype(np.float64)
    assert np.allclose([score for _, score in row], exact, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def demo_indexes(tmp_path_factory, minilm_encoder):
    """The demo encoded in 4 shards: kept as a sharded index, and merged into one flat index."""
    root = tmp_path_factory.mktemp("dense-types")
    sharded = dense_index(DEMO, index=root / "sharded", shard_num=4, search_shards=True, progress=False,
                          encoder=minilm_encoder)
    merged = dense_index(DEMO, index=root / "merged", shard_num=4, progress=False, encoder=minilm_encoder)
    return sharded, merged


def test_sharded_exact_search_gives_the_run_of_one_flat_index(demo_indexes, tmp_path, monkeypatch, minilm_encoder):
    sharded, merged = demo_indexes
    assert sorted(p.name for p in sharded.path.iterdir()) == [
        MANIFEST, "negplugins-output.json", *(f"shard-{i:05d}-of-00004" for i in range(4))]
    assert sharded.manifest["layout"] == "shards" and sharded.manifest["index_type"] == "Flat"
    assert merged.manifest["layout"] == "merged" and not (merged.path.parent / "merged.shards").exists()
    assert not (sharded.path.parent / "sharded.shards").exists()  # moved into the index (hard links), not copied
    # the same vectors, so the comparison is of the search alone
    flat, flat_ids = load_dense_index(merged.path)
    parts = [load_dense_index(sharded.path / name) for name in sharded.manifest["shards"]]
    assert sum((ids for _, ids in parts), []) == flat_ids
    assert np.array_equal(np.concatenate([ix.reconstruct_n(0, ix.ntotal) for ix, _ in parts]),
                          flat.reconstruct_n(0, flat.ntotal))

    monkeypatch.chdir(tmp_path)
    for hits in (5, 1000):  # the loaded model (a search that loads it: test_a_search_reads_each_faiss_file_once)
        dense_search(DEMO, f"sharded-{hits}.trec", index=sharded.path, hits=hits, progress=False,
                     encoder=minilm_encoder)
        dense_search(DEMO, f"merged-{hits}.trec", index=merged.path, hits=hits, progress=False,
                     encoder=minilm_encoder)
        assert Path(f"sharded-{hits}.trec").read_bytes() == Path(f"merged-{hits}.trec").read_bytes()
    meta = read_metadata("sharded-5.trec")
    assert meta["parameters"]["index_type"] == "Flat" and meta["parameters"]["index_layout"] == "shards"
    assert "exact search over 4 shards" in meta["system"]
    assert read_metadata("merged-5.trec")["parameters"]["index_layout"] == "merged"

    # a rerun reuses the sharded index; each shard is a Pyserini faiss index of its own
    again = dense_index(DEMO, index=sharded.path, shard_num=4, search_shards=True, progress=False,
                        encoder=None, model=None)
    assert not again.built



def test_a_search_reads_each_faiss_file_once(demo_indexes, tmp_path, monkeypatch, minilm_encoder):
    """Each byte of a faiss ``index`` file (one index, or each shard of a sharded one) is read once by a search,
    its SHA-256 computed from the bytes faiss reads: counted at ``open``, the one way to its bytes."""
    import builtins

    sharded, merged = demo_indexes
    real_open, read = builtins.open, {}

    class Counted:
        def __init__(self, handle, name):
            self.handle, self.name = handle, name

        def read(self, size=-1):
            block = self.handle.read(size)
            read[self.name] = read.get(self.name, 0) + len(block)
            return block

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.handle.__exit__(*exc)

        def __getattr__(self, name):
            return getattr(self.handle, name)

    def counted(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if Path(str(file)).name != "index" or "b" not in mode:
            return handle
        return Counted(handle, Path(str(file)).parent.name)

    monkeypatch.setattr(builtins, "open", counted)
    monkeypatch.chdir(tmp_path)

    def sizes(*folders):
        return {folder.name: (folder / "index").stat().st_size for folder in folders}

    dense_search(DEMO, "merged.trec", index=merged.path, hits=5, progress=False)
    assert read == sizes(merged.path)
    read.clear()
    dense_search(DEMO, "sharded.trec", index=sharded.path, hits=5, progress=False)
    assert read == sizes(*(sharded.path / name for name in sharded.manifest["shards"]))
    read.clear()
    dense_search(DEMO, "given.trec", index=merged.path, hits=5, progress=False, encoder=minilm_encoder)
    assert read == sizes(merged.path)
    assert Path("given.trec").read_bytes() == Path("merged.trec").read_bytes()

    built = dense_search(DEMO, "built.trec", hits=5, progress=False, encoder=minilm_encoder)  # ./indexes/faiss/...
    read.clear()
    reused = dense_search(DEMO, "reused.trec", hits=5, progress=False, encoder=minilm_encoder)
    assert reused["index"] == built["index"] and read == sizes(Path(built["index"]))
    assert Path("reused.trec").read_bytes() == Path("built.trec").read_bytes()


def test_a_reused_index_found_damaged_by_the_search_is_encoded_again(demo_indexes, tmp_path, monkeypatch, capsys,
                                                                       minilm_encoder):
    monkeypatch.chdir(tmp_path)
    built = dense_search(DEMO, "built.trec", hits=5, progress=False, encoder=minilm_encoder)
    index = Path(built["index"]) / "index"
    data = bytearray(index.read_bytes())
    data[len(data) // 2] ^= 0x7F  # one float of one vector: the same size, other bytes
    index.write_bytes(bytes(data))
    capsys.readouterr()
    again = dense_search(DEMO, "again.trec", hits=5, progress=False, encoder=minilm_encoder)
    assert "the dense index is damaged (index does not hold the bytes it was built with" in capsys.readouterr().err
    assert again["index"] == built["index"] and Path("again.trec").read_bytes() == Path("built.trec").read_bytes()
    with pytest.raises(UserError, match="the dense index is damaged"):
        index.write_bytes(bytes(data))
        dense_search(DEMO, "given.trec", index=index.parent, hits=5, progress=False, encoder=minilm_encoder)


@pytest.mark.java
def test_each_shard_and_an_hnsw_index_load_in_stock_pyserini(demo_indexes, tmp_path, minilm_encoder):
    from negplugins._compat import jvm

    jvm.configure()
    from pyserini.search.faiss import FaissSearcher

    sharded, _ = demo_indexes
    query = minilm_encoder.encode(["Which metal was used in the Statue of Liberty?"])  # one row: as FaissSearcher takes it
    for name in sharded.manifest["shards"]:
        searcher = FaissSearcher(str(sharded.path / name), query_encoder=None)
        ids = (sharded.path / name / "docid").read_text().split()
        assert searcher.num_docs == 9 and {hit.docid for hit in searcher.search(query, k=3)} <= set(ids)
    hnsw = dense_index(DEMO, index=tmp_path / "hnsw", index_type="HNSW32", progress=False, encoder=minilm_encoder)
    searcher = FaissSearcher(str(hnsw.path), query_encoder=None)
    assert type(searcher.index).__name__ == "IndexHNSWFlat" and searcher.num_docs == 36


def test_memory_budget_keeps_a_flat_index_as_shards_that_fit(tmp_path, minilm_encoder):
    # 36 vectors x 384 dimensions x 4 bytes = 55,296 bytes: within 20 KiB per shard takes 3 shards
    built = dense_index(DEMO, index=tmp_path / "budget", max_index_memory="20K", progress=False,
                        encoder=minilm_encoder)
    assert built.manifest["layout"] == "shards" and built.shard_num == 3
    for name in built.manifest["shards"]:
        index, _ = load_dense_index(built.path / name)
        assert index.ntotal * index.d * 4 <= 20 * 1024
    # within the budget: one merged index
    assert dense_index(DEMO, index=tmp_path / "fits", max_index_memory="1M", progress=False,
                       encoder=minilm_encoder).manifest["layout"] == "merged"
    with pytest.raises(UserError, match=r"--max-index-memory 20K: .* need --shard-num 3 or more .* got 2"):
        dense_index(DEMO, index=tmp_path / "by-hand", max_index_memory="20K", shard_num=2, shard_id=0,
                    progress=False, encoder=minilm_encoder)


def test_trained_index_type_records_its_type_and_sample(tmp_path, monkeypatch, minilm_encoder):
    built = dense_index(DEMO, index=tmp_path / "ivf", index_type="IVF4,Flat", train_sample=30, progress=False,
                        encoder=minilm_encoder)
    manifest = json.loads((built.path / MANIFEST).read_text())
    assert manifest["index_type"] == "IVF4,Flat" and manifest["train_sample"] == 30
    assert manifest["layout"] == "merged"
    index, ids = load_dense_index(built.path)
    assert type(index).__name__ == "IndexIVFFlat" and index.ntotal == 36 and index.nlist == 4
    flat = dense_index(DEMO, index=tmp_path / "flat", progress=False, encoder=minilm_encoder)
    monkeypatch.chdir(tmp_path)
    # every list probed: the IVF index finds what the flat one finds
    dense_search(DEMO, "ivf.trec", index=built.path, hits=10, search_params="nprobe=4", progress=False,
                 encoder=minilm_encoder)
    dense_search(DEMO, "flat.trec", index=flat.path, hits=10, progress=False, encoder=minilm_encoder)

    def ranking(name):
        return [line.split()[:4] for line in Path(name).read_text().splitlines()]

    assert ranking("ivf.trec") == ranking("flat.trec")
    meta = read_metadata("ivf.trec")
    assert meta["parameters"]["index_type"] == "IVF4,Flat" and meta["parameters"]["search_params"] == "nprobe=4"
    assert "faiss IVF4,Flat" in meta["system"]
    # an index of another type is not reused for Flat, and the other way round
    assert dense_index(DEMO, index=built.path, progress=False, encoder=minilm_encoder).built
    assert json.loads((built.path / MANIFEST).read_text())["index_type"] == "Flat"


def test_bad_index_options_fail_before_encoding(tmp_path, monkeypatch, minilm_encoder):
    monkeypatch.setattr(dense, "_encode_shard", lambda *a: pytest.fail("encoded despite a bad option"))
    with pytest.raises(UserError, match=r"--index-type 'NoSuchIndex': not a faiss index factory string"):
        dense_index(DEMO, index=tmp_path / "a", index_type="NoSuchIndex", encoder=minilm_encoder)
    with pytest.raises(UserError, match=r"--index-type 'IVF16,PQ7': not a faiss index factory string for "
                                        r"384-dimensional"):
        dense_index(DEMO, index=tmp_path / "a", index_type="IVF16,PQ7", encoder=minilm_encoder)
    with pytest.raises(UserError, match="--search-shards: searches the shards of a Flat index exactly"):
        dense_index(DEMO, index=tmp_path / "a", index_type="HNSW32", search_shards=True, encoder=minilm_encoder)
    with pytest.raises(UserError, match=r"--train-sample: expected an integer from 1 to"):
        dense_index(DEMO, index=tmp_path / "a", train_sample=0, encoder=minilm_encoder)
    assert not (tmp_path / "a").exists()


def test_training_on_too_few_vectors_is_a_user_error(tmp_path, minilm_encoder):
    with pytest.raises(UserError, match=r"--index-type IVF64,Flat: training on 36 vectors failed .*--train-sample"):
        dense_index(DEMO, index=tmp_path / "ivf", index_type="IVF64,Flat", progress=False, encoder=minilm_encoder)
    assert not (tmp_path / "ivf").exists()


@pytest.mark.parametrize("text, size", [("512M", 512 << 20), ("16G", 16 << 30), ("1.5T", int(1.5 * (1 << 40))),
                                        ("2048", 2048), ("20 KiB", 20 << 10), (4096, 4096)])
def test_memory_sizes(text, size):
    assert parse_memory_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0", "1Q", "nanG", "inf"])
def test_bad_memory_sizes(text):
    with pytest.raises(UserError, match=r"--max-index-memory: expected a size such as 512M"):
        parse_memory_size(text)


def test_bad_search_params(demo_indexes, tmp_path, monkeypatch):
    _, merged = demo_indexes
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=r"--search-params 'nprobe=x': 'nprobe=x' is not NAME=NUMBER"):
        dense_search(DEMO, "run.trec", index=merged.path, search_params="nprobe=x", progress=False)
    with pytest.raises(UserError, match=r"--search-params 'nprobe=4': not accepted by the faiss index"):
        dense_search(DEMO, "run.trec", index=merged.path, search_params="nprobe=4", progress=False)
    assert not Path("run.trec").exists()
