"""Dense retrieval: Pyserini index layout, stock ``pyserini.search.faiss`` parity, shards, resume, runs."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from negplugins.errors import UserError
from negplugins.io.sidecars import file_sha256, read_metadata
from negplugins.runners import dense
from negplugins.runners.common import MANIFEST
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.dense_index_format import load_dense_index, shard_bounds
from negplugins.runners.faiss_search import search_vectors
from negplugins.runners.model_refs import default_model_path

DEMO = "negplugins-demo"
DEMO_DOCS = [f"d{n:02d}" for n in range(1, 37)]


def _lines(path):
    return [line.split() for line in Path(path).read_text().splitlines()]


def test_shard_bounds_as_pyserini():
    assert [shard_bounds(10, i, 3) for i in range(3)] == [(0, 3), (3, 6), (6, 10)]
    assert [shard_bounds(2, i, 3) for i in range(3)] == [(0, 0), (0, 0), (0, 2)]


def test_ties_are_broken_by_doc_id_across_the_cut():
    import faiss

    index = faiss.IndexFlatIP(2)
    vectors = np.array([[1, 0], [0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [0, 1]], dtype=np.float32)
    index.add(vectors)
    ids = ["a", "e", "d", "c", "b", "f"]
    [hits] = search_vectors(index, ids, np.array([[0.6, 0.8]], dtype=np.float32), 3)
    assert [doc for doc, _ in hits] == ["b", "c", "d"]  # four tie at 1.0: doc id ascending, cut at 3


@pytest.mark.java
def test_index_layout_and_stock_pyserini_faiss_parity(tmp_path, monkeypatch, minilm_encoder):
    monkeypatch.chdir(tmp_path)
    info = dense_search(DEMO, "run.trec", hits=10, progress=False)
    index = Path(info["index"])
    assert index == Path("indexes/faiss/negplugins-demo/all-MiniLM-L6-v2")
    assert sorted(p.name for p in index.iterdir()) == ["docid", "index", MANIFEST, "negplugins-output.json"]
    assert (index / "docid").read_text().splitlines() == DEMO_DOCS
    faiss_index, ids = load_dense_index(index)
    assert type(faiss_index).__name__ == "IndexFlatIP" and faiss_index.ntotal == 36 and faiss_index.d == 384
    manifest = json.loads((index / MANIFEST).read_text())
    assert manifest["kind"] == "faiss" and manifest["corpus"] == DEMO and manifest["documents"] == 36
    assert manifest["model_sha256"] == file_sha256(default_model_path() / "model.safetensors")
    # the vectors are sentence-transformers' own
    texts = [doc.text for doc in __import__("ir_datasets").load(DEMO).docs_iter()]
    assert np.allclose(faiss_index.reconstruct_n(0, 36), minilm_encoder.encode(texts), atol=1e-5)

    from negplugins.io.topics import write_topics

    write_topics(DEMO, "topics/demo.tsv")
    stock = subprocess.run(
        [sys.executable, "-m", "pyserini.search.faiss", "--index", str(index), "--topics", "topics/demo.tsv",
         "--encoder", str(default_model_path()), "--encoder-class", "auto", "--pooling", "mean", "--l2-norm",
         "--hits", "10", "--output", "stock.trec"],
        capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=300)
    assert stock.returncode == 0, stock.stderr[-2000:]
    ours, theirs = _lines("run.trec"), _lines("stock.trec")
    assert len(ours) == len(theirs) == 21 * 10
    # same ranking; scores equal up to float noise (Pyserini encodes each query alone)
    assert [(q, d, r) for q, _, d, r, _, _ in ours] == [(q, d, r) for q, _, d, r, _, _ in theirs]
    assert max(abs(float(a[4]) - float(b[4])) for a, b in zip(ours, theirs)) < 1e-5


def test_sharded_encoding_merge_and_resume(tmp_path, monkeypatch, minilm_encoder):
    whole = dense_index(DEMO, index=tmp_path / "whole", progress=False, encoder=minilm_encoder)
    assert whole.complete and whole.built

    target = tmp_path / "sharded"
    one = dense_index(DEMO, index=target, shard_num=3, shard_id=1, progress=False, encoder=minilm_encoder)
    assert not one.complete and one.shards_done == [1] and not target.exists()
    shard_dirs = sorted(p.name for p in (tmp_path / "sharded.shards").iterdir())
    assert shard_dirs == ["shard-00001-of-00003"]

    calls = []
    real = dense._encode_shard

    def interrupted(encoder, texts, batch_size, desc, progress):
        calls.append(desc)
        if len(calls) == 2:
            raise KeyboardInterrupt  # killed while encoding the second missing shard
        return real(encoder, texts, batch_size, desc, progress)

    monkeypatch.setattr(dense, "_encode_shard", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dense_index(DEMO, index=target, shard_num=3, progress=False, encoder=minilm_encoder)
    assert calls == ["encoding negplugins-demo shard 1/3", "encoding negplugins-demo shard 3/3"]
    assert not target.exists()
    assert sorted(p.name for p in (tmp_path / "sharded.shards").iterdir()) == \
        ["shard-00000-of-00003", "shard-00001-of-00003"]  # nothing half-written

    calls.clear()
    monkeypatch.setattr(dense, "_encode_shard", lambda *a: (calls.append(a[3]), real(*a))[1])
    resumed = dense_index(DEMO, index=target, shard_num=3, progress=False, encoder=minilm_encoder)
    assert calls == ["encoding negplugins-demo shard 3/3"]  # only the unfinished shard
    assert resumed.complete and resumed.built and not (tmp_path / "sharded.shards").exists()
    a, a_ids = load_dense_index(target)
    b, b_ids = load_dense_index(tmp_path / "whole")
    assert a_ids == b_ids == DEMO_DOCS
    assert np.allclose(a.reconstruct_n(0, 36), b.reconstruct_n(0, 36), atol=1e-5)
    assert json.loads((target / MANIFEST).read_text())["shard_num"] == 3

    calls.clear()
    again = dense_index(DEMO, index=target, shard_num=3, progress=False, encoder=minilm_encoder)
    assert not again.built and calls == []  # reused


def test_search_run_metadata_and_determinism(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = dense_search(DEMO, "a.trec", hits=5, progress=False, command="test")
    second = dense_search(DEMO, "b.trec", hits=5, progress=False)
    gz = dense_search(DEMO, "c.trec.gz", hits=5, progress=False)
    assert first["lines"] == second["lines"] == gz["lines"] == 21 * 5
    assert Path("a.trec").read_bytes() == Path("b.trec").read_bytes()
    assert gzip.decompress(Path("c.trec.gz").read_bytes()) == Path("a.trec").read_bytes()
    assert all(line[5] == "dense-all-MiniLM-L6-v2" for line in _lines("a.trec"))
    meta = read_metadata("a.trec")
    assert meta["runner"] == "dense" and meta["tag"] == "dense-all-MiniLM-L6-v2" and meta["command"] == "test"
    assert meta["model"]["id"] == "all-MiniLM-L6-v2"
    assert meta["model"]["sha256"] == file_sha256(default_model_path() / "model.safetensors")
    assert meta["index"]["manifest"]["corpus"] == DEMO and meta["parameters"]["hits"] == 5
    assert meta["run_sha256"] == file_sha256("a.trec") and meta["language"] == "en"
    assert read_metadata("c.trec.gz")["run_sha256"] == file_sha256("c.trec.gz")

    # the same index searched through --index gives the same run
    dense_search(DEMO, "d.trec", hits=5, index=first["index"], progress=False)
    assert Path("d.trec").read_bytes() == Path("a.trec").read_bytes()

    from negplugins.evaluation.scoring import evaluate

    assert evaluate(DEMO, "a.trec", measures=["nDCG@10"]).overall["nDCG@10"] > 0.5


@pytest.mark.parametrize("model, message", [
    ("no-such-org/no-such-model", "unknown model 'no-such-org/no-such-model'"),
    ("./missing-folder", "model './missing-folder': no such folder"),
])
def test_unknown_model(tmp_path, monkeypatch, model, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(".", r"\.")):
        dense_search(DEMO, "run.trec", model=model, progress=False)
    assert not Path("run.trec").exists() and not Path("indexes").exists()


def test_model_folder_without_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "not-a-model").mkdir()
    with pytest.raises(UserError, match="not-a-model.*no config.json"):
        dense_search(DEMO, "run.trec", model=str(tmp_path / "not-a-model"), progress=False)
    assert not Path("run.trec").exists()


def test_missing_or_foreign_index(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="nowhere: dense index folder not found"):
        dense_search(DEMO, "run.trec", index="nowhere", progress=False)
    Path("empty").mkdir()
    with pytest.raises(UserError, match="empty: dense index not found"):
        dense_search(DEMO, "run.trec", index="empty", progress=False)
    Path("other").mkdir()
    Path("other/notes.txt").write_text("x")
    with pytest.raises(UserError, match="other: exists and is not an index built by negplugins"):
        dense_index(DEMO, index="other", progress=False)
    assert not Path("run.trec").exists()


def test_bad_numbers():
    with pytest.raises(UserError, match="--hits: expected an integer from 1 to 100000, got 0"):
        dense_search(DEMO, "x.trec", hits=0)
    with pytest.raises(UserError, match=r"--shard-id: expected an integer from 0 to 1, got 2 \(for --shard-num 2\)"):
        dense_search(DEMO, "x.trec", shard_num=2, shard_id=2)
