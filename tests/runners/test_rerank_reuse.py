"""Given ``--index``, the bi-encoder reranker reads the passage vectors of a matching dense index instead of encoding
them again (without it, every document is encoded: tests/runners/test_encoding_fingerprint.py); every model step
shows one progress bar of its own.

The reuse is checked against the path that encodes everything (no index anywhere) on the demo dataset with the
packaged MiniLM; the index is the one ``search dense`` builds (``dense_index`` with its ``DenseEncoder``). The two
runs rank every query's documents in the same order, and their scores agree to the last written digit (1e-6): they
cannot be byte-identical in general, because a model's float32 output depends on the other texts of its batch
(here, 30 of the demo's 36 passages encoded one at a time differ from the same passages encoded together, by up to
9.7e-8), and an index's batches are not the reranker's. On the demo, 3 of the 756 lines differ, each by one unit of
the sixth decimal.
"""

from __future__ import annotations

import re

import pytest

from negplugins.errors import UserError
from negplugins.io.sidecars import read_metadata
from negplugins.runners import encoders
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.rerank import rerank

DEMO = "negplugins-demo"
QUERIES = [f"q{n:02d}" for n in range(1, 22)]


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory):
    """The packaged MiniLM's Flat index of the demo, as ``search dense`` builds it."""
    return dense_index(DEMO, index=tmp_path_factory.mktemp("faiss") / "minilm", progress=False).path


@pytest.fixture
def encoded_texts(monkeypatch):
    """Every text the bi-encoder's SentenceEncoder is asked to encode."""
    seen = []
    original = encoders.SentenceEncoder.encode

    def spy(self, texts, batch_size=64, bar=None):
        seen.extend(texts)
        return original(self, texts, batch_size=batch_size, bar=bar)

    monkeypatch.setattr(encoders.SentenceEncoder, "encode", spy)
    return seen


def _run(path) -> dict[str, list[tuple[str, float]]]:
    run: dict[str, list[tuple[str, float]]] = {}
    for line in path.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, []).append((doc, float(score)))
    return run


def assert_same_ranking_to_the_last_digit(a, b):
    """The same documents in the same order for every query; scores one unit of the sixth decimal apart at most."""
    ra, rb = _run(a), _run(b)
    assert {q: [d for d, _ in docs] for q, docs in ra.items()} == {q: [d for d, _ in docs] for q, docs in rb.items()}
    gaps = [abs(x - y) for q in ra for (_, x), (_, y) in zip(ra[q], rb[q])]
    assert max(gaps) <= 1e-6 + 1e-12
    return sum(gap > 0 for gap in gaps)


def test_reused_vectors_give_the_ranking_of_the_encoding_path(demo_index, first_stage, tmp_path, monkeypatch,
                                                              encoded_texts):
    monkeypatch.chdir(tmp_path)  # no indexes/ here: without --index nothing is reused
    first = first_stage(tmp_path / "first.trec", queries=QUERIES)
    rerank(DEMO, tmp_path / "encoded.trec", run=first, reranker="bi-encoder", progress=False)
    encoded = list(encoded_texts)
    assert len(encoded) == 21 + 36 and read_metadata(tmp_path / "encoded.trec")["index"] is None
    encoded_texts.clear()
    info = rerank(DEMO, tmp_path / "reused.trec", run=first, reranker="bi-encoder", index=demo_index, progress=False)
    differing = assert_same_ranking_to_the_last_digit(tmp_path / "reused.trec", tmp_path / "encoded.trec")
    assert info["lines"] == 21 * 36 and differing <= 10  # 3 measured (module docstring)
    assert len(encoded_texts) == 21  # the queries only: no passage encoded again
    meta = read_metadata(tmp_path / "reused.trec")
    assert meta["index"]["documents_read"] == 36 and meta["index"]["documents_encoded"] == 0
    assert meta["index"]["path"].endswith("minilm")


def test_an_index_encoded_otherwise_is_refused(first_stage, tmp_path, monkeypatch, encoded_texts):
    monkeypatch.chdir(tmp_path)
    first = first_stage(tmp_path / "first.trec", queries=QUERIES[:2])
    other = dense_index(DEMO, index=tmp_path / "short", max_length=32, progress=False).path
    with pytest.raises(UserError, match=r"^--index .*short: it was encoded with .*'max_length': 32.*not with the "
                                        r"reranker's .*'max_length': 256"):
        rerank(DEMO, tmp_path / "out.trec", run=first, reranker="bi-encoder", index=other, progress=False)
    hnsw = dense_index(DEMO, index=tmp_path / "hnsw", index_type="HNSW32", progress=False).path
    with pytest.raises(UserError, match=r"its type HNSW32 does not keep the vectors exactly \(only Flat is reused\)"):
        rerank(DEMO, tmp_path / "out.trec", run=first, reranker="bi-encoder", index=hnsw, progress=False)
    with pytest.raises(UserError, match=r"reused by the bi-encoder reranker only"):
        rerank(DEMO, tmp_path / "out.trec", run=first, reranker="cross-encoder", index=other, progress=False)
    assert not (tmp_path / "out.trec").exists() and encoded_texts == []


def test_a_sharded_index_is_read_shard_by_shard(first_stage, tmp_path, monkeypatch, encoded_texts):
    monkeypatch.chdir(tmp_path)
    sharded = dense_index(DEMO, index=tmp_path / "sharded", shard_num=3, search_shards=True, progress=False).path
    first = first_stage(tmp_path / "first.trec", queries=QUERIES[:4])
    rerank(DEMO, tmp_path / "encoded.trec", run=first, reranker="bi-encoder", progress=False)
    encoded_texts.clear()
    rerank(DEMO, tmp_path / "reused.trec", run=first, reranker="bi-encoder", index=sharded, progress=False)
    assert_same_ranking_to_the_last_digit(tmp_path / "reused.trec", tmp_path / "encoded.trec")
    assert len(encoded_texts) == 4 and read_metadata(tmp_path / "reused.trec")["index"]["documents_read"] == 36


def test_the_reused_vectors_are_the_stored_ones(demo_index):
    """What the reranker reads is the index's own float32 rows, by doc id (faiss reconstruct agrees)."""
    import numpy as np

    from negplugins.runners.dense_index_format import load_dense_index
    from negplugins.runners.faiss_search import stored_passage_vectors

    index, ids = load_dense_index(demo_index)
    found = stored_passage_vectors(demo_index, ["d07", "d01", "nope"])
    assert sorted(found) == ["d01", "d07"]
    for doc_id, vector in found.items():
        assert vector.dtype == np.float32 and np.array_equal(vector, index.reconstruct(ids.index(doc_id)))


# -- one progress bar per model step --------------------------------------------------------------------------

_BAR = re.compile(r"(\d+)/(\d+) \[[0-9:]+<[0-9:?]+, +[0-9.?]+ (\w+)/s\]")


def _bars(err: str) -> list[tuple[str, str, str]]:
    """``(done, total, unit)`` of each tqdm bar's last state in captured stderr."""
    return [match.groups() for match in _BAR.finditer(err.replace("\r", "\n"))]


def test_rerank_shows_one_bar_with_rate_and_time_left(demo_index, first_stage, tmp_path, capsys,
                                                      tiny_cross_encoder):
    first = first_stage(tmp_path / "first.trec", queries=QUERIES[:2])
    rerank(DEMO, tmp_path / "a.trec", run=first, reranker="bi-encoder", top_k=5, progress=True)
    bars = _bars(capsys.readouterr().err)
    assert bars and bars[-1] == ("7", "7", "texts")  # 2 queries + their 5 distinct documents, in one bar
    rerank(DEMO, tmp_path / "b.trec", run=first, model=tiny_cross_encoder, reranker="cross-encoder", top_k=5,
           progress=True)
    assert _bars(capsys.readouterr().err)[-1] == ("10", "10", "pairs")
    rerank(DEMO, tmp_path / "c.trec", run=first, reranker="bi-encoder", top_k=5, progress=False)
    rerank(DEMO, tmp_path / "d.trec", run=first, reranker="bi-encoder", top_k=5)  # default: stderr is no terminal
    assert _bars(capsys.readouterr().err) == []


def test_dense_search_shows_a_bar_for_passages_and_for_queries(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default index folder, indexes/, is written here
    dense_search(DEMO, tmp_path / "run.trec", index=None, hits=3, progress=True)
    units = {(total, unit) for _, total, unit in _bars(capsys.readouterr().err)}
    assert ("36", "passages") in units and ("21", "queries") in units
