"""BEIR results (``{qid: {docid: score}}``) to TREC runs with the suite's metadata sidecar."""

from __future__ import annotations

import json

import pytest

from negplugins.beir.results import BeirResultsError, load_results, results_to_run
from negplugins.evaluation.scoring import evaluate
from negplugins.io.sidecars import file_sha256, metadata_path, read_metadata
from negplugins.io.trec import read_run

RESULTS = {
    "q01": {"d03": 0.5, "d01": 0.9, "d02": 0.5, "d04": 0.1},  # d02 and d03 tie: d03 first (the one ranking)
    "q02": {"d05": 2.0, "d04": 3.0},
}


def run_lines(path):
    return [line.split() for line in path.read_text(encoding="utf-8").splitlines()]


def test_dict_to_run_ranked_with_ties_by_doc_id(tmp_path):
    run = tmp_path / "beir.trec"
    info = results_to_run(RESULTS, "negplugins-demo", run, system="My BEIR system", model="my/model")
    assert info["lines"] == 6 and info["queries"] == 2 and info["tag"] == "My-BEIR-system"
    assert [line[:5] for line in run_lines(run)] == [
        ["q01", "Q0", "d01", "1", "0.900000"], ["q01", "Q0", "d03", "2", "0.500000"],
        ["q01", "Q0", "d02", "3", "0.500000"], ["q01", "Q0", "d04", "4", "0.100000"],
        ["q02", "Q0", "d04", "1", "3.000000"], ["q02", "Q0", "d05", "2", "2.000000"]]
    meta = read_metadata(run)
    assert meta["runner"] == "beir" and meta["system"] == "My BEIR system" and meta["dataset"] == "negplugins-demo"
    assert meta["model"] == {"id": "my/model", "revision": None, "sha256": None}
    assert meta["run_sha256"] == file_sha256(run) and meta["first_stage"] is None and meta["index"] is None
    assert evaluate("negplugins-demo", run, measures=["nDCG@10"]).overall["nDCG@10"] >= 0


def test_json_file_and_hits(tmp_path):
    source = tmp_path / "results.json"
    source.write_text(json.dumps(RESULTS), encoding="utf-8")
    run = tmp_path / "beir.trec"
    results_to_run(source, "negplugins-demo", run, hits=1, tag="x")
    assert read_run(run) == {"q01": {"d01": 0.9}, "q02": {"d04": 3.0}}
    meta = json.loads(metadata_path(run).read_text())
    assert meta["parameters"]["results"] == str(source) and meta["parameters"]["hits"] == 1
    assert meta["parameters"]["results_sha256"] == file_sha256(source)
    assert meta["model"] is None and meta["tag"] == "x"


def test_numpy_scores(tmp_path):
    np = pytest.importorskip("numpy")
    results = {"q01": {"d01": np.float32(0.25), "d02": np.float64(0.75)}}
    results_to_run(results, "negplugins-demo", tmp_path / "r.trec")
    assert read_run(tmp_path / "r.trec") == {"q01": {"d02": 0.75, "d01": 0.25}}


def test_malformed_json_names_file_and_position(tmp_path):
    source = tmp_path / "results.json"
    source.write_text('{"q01": {"d01": 1.0,\n "d02": }}\n', encoding="utf-8")
    with pytest.raises(BeirResultsError, match=r"results.json:2:9: not valid JSON \(Expecting value"):
        load_results(source)
    with pytest.raises(BeirResultsError, match="results file not found"):
        load_results(tmp_path / "missing.json")


@pytest.mark.parametrize("results, message", [
    ([1, 2], "expected an object"),
    ({"q01": [1]}, r"query 'q01': expected an object"),
    ({"q01": {"d01": "high"}}, r"score \"high\" is not a number"),
    ({"q01": {"d01": True}}, r"score true is not a number"),
    ({"q01": {"d01": float("nan")}}, "not finite"),
    ({"q01": {"d 1": 1.0}}, "without white space"),
    ({}, "no results"),
])
def test_malformed_results(tmp_path, results, message):
    with pytest.raises(BeirResultsError, match=message):
        results_to_run(results, "negplugins-demo", tmp_path / "r.trec")
    assert not (tmp_path / "r.trec").exists()


def test_unknown_queries_and_documents(tmp_path):
    with pytest.raises(BeirResultsError, match=r"2 query id\(s\) not in negplugins-demo: 'nope1', 'nope2'"):
        results_to_run({"q01": {"d01": 1.0}, "nope1": {"d01": 1.0}, "nope2": {"d01": 1.0}}, "negplugins-demo",
                       tmp_path / "r.trec")
    with pytest.raises(BeirResultsError, match=r"1 doc id\(s\) not in the corpus of negplugins-demo: 'x99'"):
        results_to_run({"q01": {"d01": 1.0, "x99": 0.5}}, "negplugins-demo", tmp_path / "r.trec")
    results_to_run({"q01": {"d01": 1.0, "x99": 0.5}}, "negplugins-demo", tmp_path / "r.trec", check_docs=False)
    assert read_run(tmp_path / "r.trec") == {"q01": {"d01": 1.0, "x99": 0.5}}


def test_cli(tmp_path, cli, capsys):
    source = tmp_path / "results.json"
    source.write_text(json.dumps(RESULTS), encoding="utf-8")
    run = tmp_path / "runs" / "beir.trec"
    assert cli(["import", "beir", str(source), "--dataset", "negplugins-demo", "--output", str(run),
                "--system", "SPLADE via BEIR", "--model", "naver/splade", "--hits", "3"]) == 0
    assert "wrote 5 lines for 2 queries" in capsys.readouterr().out
    meta = read_metadata(run)
    assert meta["system"] == "SPLADE via BEIR" and meta["model"]["id"] == "naver/splade" and meta["runner"] == "beir"
    assert meta["command"]  # the command line that produced the run
    source.write_text("{oops", encoding="utf-8")
    assert cli(["import", "beir", str(source), "-d", "negplugins-demo", "-o", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("negplugins: error: ") and "results.json:1:2" in err and err.count("\n") == 1
    assert cli(["import", "beir", str(source), "-d", "comlqq", "-o", str(run)]) == 2
