"""BEIR's DenseRetrievalExactSearch and Rerank run through the suite, writing TREC runs with metadata."""

from __future__ import annotations

import pytest

from negplugins.errors import UserError
from negplugins.evaluation.scoring import evaluate
from negplugins.io.sidecars import file_sha256, read_metadata
from negplugins.io.trec import RunFormatError, read_run

pytest.importorskip("beir")

# BEIR's models, evaluator and reranker import sentence-transformers and torch (seconds): imported by the tests that
# run them, not when pytest collects this file
from beir.datasets.data_loader import GenericDataLoader  # noqa: E402

from negplugins.beir.export import export_beir  # noqa: E402
from negplugins.beir.results import results_to_run  # noqa: E402
from negplugins.runners import beir as retrieval  # noqa: E402
from negplugins.runners.beir import beir_dense_search, beir_rerank  # noqa: E402
from negplugins.runners.model_refs import resolve_model  # noqa: E402


@pytest.fixture(scope="module")
def demo_beir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("beir") / "demo"
    export_beir("negplugins-demo", folder)
    return GenericDataLoader(data_folder=str(folder)).load("test")


@pytest.fixture(scope="module")
def dense_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("runs") / "beir-dense.trec"
    info = beir_dense_search("negplugins-demo", run, hits=10, device="cpu")
    return run, info


def test_dense_run_equals_beir_on_the_exported_folder(dense_run, demo_beir, minilm):
    from beir.retrieval.evaluation import EvaluateRetrieval
    from beir.retrieval.models import SentenceBERT
    from beir.retrieval.search.dense import DenseRetrievalExactSearch

    run, info = dense_run
    corpus, queries, _ = demo_beir
    expected = EvaluateRetrieval(DenseRetrievalExactSearch(SentenceBERT(str(minilm), device="cpu"), batch_size=128),
                                 k_values=[10], score_function="cos_sim").retrieve(corpus, queries)
    got = read_run(run)
    assert got.keys() == expected.keys()
    for query_id, docs in expected.items():
        assert got[query_id].keys() == docs.keys()
        for doc_id, score in docs.items():
            assert got[query_id][doc_id] == pytest.approx(score, abs=1e-5)
    assert info["lines"] == 10 * len(expected)


def test_dense_run_metadata_and_order(dense_run, minilm):
    run, _ = dense_run
    meta = read_metadata(run)
    assert meta["runner"] == "beir-dense" and meta["dataset"] == "negplugins-demo"
    assert meta["model"]["id"] == "all-MiniLM-L6-v2"
    assert meta["model"]["sha256"] == file_sha256(minilm / "model.safetensors")
    assert meta["parameters"]["hits"] == 10 and meta["parameters"]["score_function"] == "cos_sim"
    lines = [line.split() for line in run.read_text().splitlines()]
    by_query = {}
    for qid, _, doc, _rank, score, tag in lines:
        by_query.setdefault(qid, []).append((-float(score), doc))
        assert tag == "beir-dense-all-MiniLM-L6-v2"
    assert all(hits == sorted(hits) for hits in by_query.values())
    scores = evaluate("negplugins-demo", run, measures=["nDCG@10", "R@10"]).overall
    assert 0 < scores["nDCG@10"] <= 1


def test_dense_single_query(tmp_path, monkeypatch):
    # BEIR's exact search indexes row 1 of the score matrix, so one query needs a padding query.
    real = retrieval.beir_queries
    monkeypatch.setattr(retrieval, "beir_queries", lambda dataset: dict(list(real(dataset).items())[:1]))
    info = beir_dense_search("negplugins-demo", tmp_path / "one.trec", hits=3, device="cpu")
    assert info["queries"] == 1 and list(read_run(tmp_path / "one.trec")) == ["q01"]


def test_dense_cli(tmp_path, cli, capsys):
    run = tmp_path / "d.trec"
    assert cli(["search", "beir-dense", "negplugins-demo", "--output", str(run), "--hits", "5", "--device", "cpu",
                "--score-function", "dot", "--run-tag", "mine"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert all(len(docs) == 5 for docs in read_run(run).values())
    assert read_metadata(run)["tag"] == "mine"
    with pytest.raises(SystemExit) as exit_info:  # refused while parsing (negplugins.options)
        cli(["search", "beir-dense", "negplugins-demo", "--output", str(run), "--hits", "0"])
    assert exit_info.value.code == 2
    capsys.readouterr()
    # the model is resolved as by every runner (negplugins.runners.encoders.resolve_model), with its message
    assert cli(["search", "beir-dense", "negplugins-demo", "-o", str(run), "--model", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err == f"negplugins: error: model '{tmp_path / 'none'}': no such folder\n"


def test_rerank_equals_beir_rerank(tmp_path, dense_run, demo_beir, tiny_cross_encoder):
    from beir.reranking import Rerank
    from beir.reranking.models import CrossEncoder

    first, _ = dense_run
    out = tmp_path / "rr.trec"
    info = beir_rerank("negplugins-demo", first, out, model=str(tiny_cross_encoder), top_k=3, device="cpu")
    corpus, queries, _ = demo_beir
    all_queries = {**queries}
    expected = Rerank(CrossEncoder(str(tiny_cross_encoder), device="cpu"), batch_size=32).rerank(
        corpus, all_queries, read_run(first), 3)
    got = read_run(out)
    assert got.keys() == expected.keys()
    for query_id, docs in expected.items():
        assert len(docs) == 3 and got[query_id].keys() == docs.keys()
        for doc_id, score in docs.items():
            assert got[query_id][doc_id] == pytest.approx(score, abs=1e-5)
    meta = read_metadata(out)
    assert meta["runner"] == "beir-rerank" and meta["parameters"]["top_k"] == 3
    assert meta["first_stage"] == {"run": str(first), "sha256": file_sha256(first)}
    assert meta["model"]["sha256"] == file_sha256(tiny_cross_encoder / "model.safetensors")
    assert info["lines"] == 3 * len(expected)
    evaluate("negplugins-demo", out, measures=["nDCG@10"])


def test_rerank_cli_and_errors(tmp_path, dense_run, tiny_cross_encoder, cli, capsys):
    first, _ = dense_run
    out = tmp_path / "rr.trec"
    assert cli(["search", "beir-rerank", "negplugins-demo", "--run", str(first), "--model", str(tiny_cross_encoder),
                "--output", str(out), "--top-k", "2", "--device", "cpu"]) == 0
    assert all(len(docs) == 2 for docs in read_run(out).values())
    capsys.readouterr()
    with pytest.raises(RunFormatError, match="run file not found"):
        beir_rerank("negplugins-demo", tmp_path / "missing.trec", out, model=str(tiny_cross_encoder))
    bad = tmp_path / "bad.trec"
    results_to_run({"q01": {"d01": 1.0, "zz": 0.5}}, "negplugins-demo", bad, check_docs=False)
    with pytest.raises(UserError, match=r"doc id\(s\) not in the corpus of negplugins-demo: 'zz'"):
        beir_rerank("negplugins-demo", bad, out, model=str(tiny_cross_encoder))
    with pytest.raises(UserError, match="--top-k: expected an integer from 1 to 100000, got 0"):
        beir_rerank("negplugins-demo", first, out, model=str(tiny_cross_encoder), top_k=0)
    assert cli(["search", "beir-rerank", "negplugins-demo", "--run", str(first), "--model", str(tmp_path / "none"),
                "--output", str(out)]) == 2
    assert capsys.readouterr().err == f"negplugins: error: model '{tmp_path / 'none'}': no such folder\n"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(UserError, match="no weight files"):
        beir_rerank("negplugins-demo", first, out, model=str(tmp_path / "empty"))


def test_dense_matches_the_suites_dense_runner_on_demo(tmp_path, monkeypatch, dense_run):
    """BEIR's exact search and the suite's faiss runner score the demo alike (the ComLQ comparison is
    benchmarks/beir_dense_parity.py)."""
    dense = pytest.importorskip("negplugins.runners.dense")
    monkeypatch.chdir(tmp_path)  # the suite's index goes under ./indexes
    suite_run = tmp_path / "dense.trec"
    dense.dense_search("negplugins-demo", suite_run, hits=10, progress=False)
    ours, theirs = read_run(dense_run[0]), read_run(suite_run)
    assert ours.keys() == theirs.keys()
    for query_id in ours:
        assert list(ours[query_id]) == list(theirs[query_id])  # same documents in the same order
        for doc_id, score in ours[query_id].items():
            assert score == pytest.approx(theirs[query_id][doc_id], abs=2e-6)
    measures = ["nDCG@10", "R@10", "RR@10"]
    a = evaluate("negplugins-demo", dense_run[0], measures=measures).overall
    b = evaluate("negplugins-demo", suite_run, measures=measures).overall
    assert a == pytest.approx(b, abs=1e-9)


def test_model_aliases_mean_the_packaged_model(minilm):
    assert resolve_model("all-MiniLM-L6-v2").metadata() == resolve_model(None).metadata()
    assert str(resolve_model("sentence-transformers/all-MiniLM-L6-v2").path) == str(minilm)
