"""BM25 over a Chinese dataset (DuReader-retrieval dev-100k fixture) uses Anserini's Chinese analyzer."""

from __future__ import annotations

import dataset_fixtures as fx
import pytest

from ir_datasets_ext.datasets import dureader_retrieval as du
from negplugins.io.sidecars import read_metadata
from negplugins.runners.bm25 import bm25_search
from negplugins.runners.common import read_manifest
from negplugins.runners.lucene_index import lucene_index


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


def test_chinese_index_equals_stock_pyserini_index_collection(mirror, tmp_path, monkeypatch):
    """The documents handed to Anserini in memory are analysed as ``pyserini.index.lucene --language zh`` does."""
    import json
    import subprocess
    import sys

    from pyserini.index.lucene import LuceneIndexReader

    from negplugins import datasets

    for download in du.CMTEB_FILES.values():
        monkeypatch.setattr(download, "sha256", None)
        monkeypatch.setattr(download, "size", None)
    fx.write_cmteb(mirror)
    ours, _ = lucene_index("dureader-retrieval/dev-100k", tmp_path / "ours")
    (tmp_path / "collection").mkdir()
    with open(tmp_path / "collection" / "docs.jsonl", "w", encoding="utf-8") as f:
        for doc_id, contents in datasets.iter_docs_for_indexing(datasets.load("dureader-retrieval/dev-100k")):
            f.write(json.dumps({"id": doc_id, "contents": contents}, ensure_ascii=False) + "\n")
    subprocess.run([sys.executable, "-m", "pyserini.index.lucene", "--collection", "JsonCollection", "--input",
                    str(tmp_path / "collection"), "--index", str(tmp_path / "stock"), "--generator",
                    "DefaultLuceneDocumentGenerator", "--threads", "1", "--storePositions", "--storeDocvectors",
                    "--storeRaw", "--language", "zh"], check=True, capture_output=True)

    def contents(path):
        reader = LuceneIndexReader(str(path))
        ids = sorted(reader.convert_internal_docid_to_collection_docid(i) for i in range(reader.stats()["documents"]))
        return reader.stats()["total_terms"], {i: (reader.doc_raw(i), reader.get_document_vector(i)) for i in ids}

    total_terms, docs = contents(ours)
    assert (total_terms, docs) == contents(tmp_path / "stock") and total_terms > 0
    assert any(len(term) == 2 for vector in (v for _, v in docs.values()) for term in vector)  # CJK bigrams
