"""BM25 over a Chinese dataset (DuReader-retrieval dev-100k fixture) uses Anserini's Chinese analyzer."""

from __future__ import annotations

import dataset_fixtures as fx
import pytest

from ir_datasets_ext.datasets import dureader_retrieval as du
from negplugins.io.sidecars import read_metadata
from negplugins.runners.bm25 import bm25_search
from negplugins.runners.lucene_index import lucene_index, read_manifest


@pytest.mark.java
def test_dureader_bm25_chinese_analyzer(mirror, tmp_path, monkeypatch):
    for download in du.CMTEB_FILES.values():  # fixture parquet files: trust on first use
        monkeypatch.setattr(download, "sha256", None)
        monkeypatch.setattr(download, "size", None)
    fx.write_cmteb(mirror)
    index, built = lucene_index("dureader-retrieval/dev-100k", tmp_path / "index")
    assert built and read_manifest(index)["language"] == "zh"
    run = tmp_path / "bm25.trec"
    info = bm25_search("dureader-retrieval/dev-100k", run, index=index, hits=10)
    assert info["language"] == "zh" and info["queries"] == 2
    lines = [line.split() for line in run.read_text().splitlines()]
    top = {q: d for q, _, d, rank, _, _ in lines if rank == "1"}
    # with the Chinese analyzer (CJK bigrams) the matching passages rank first; a whitespace
    # analyzer would see each sentence as one token and match nothing
    assert top == {"q1": "c1", "q2": "c3"}
    meta = read_metadata(run)
    assert meta["language"] == "zh" and meta["index"]["manifest"]["language"] == "zh"
