"""A number computed on a derived copy says so: run sidecars, evaluate's outputs, leaderboards, report cards.

The copy is the NevIR fixture copy (tests/datasets/dataset_fixtures.py), pinned for the test; the release fixture
(test.jsonl) is the control, on which nothing is claimed. The run's paired accuracy (2 of 3 pairs) is counted by hand.
"""

import json

import dataset_fixtures as fx
import pytest
from dataset_checks import pin_derived_copy

from ir_datasets_ext.datasets import nevir
from negplugins.cli import main
from negplugins.evaluation import evaluate
from negplugins.io.sidecars import read_metadata, sidecar_problems, write_metadata
from negplugins.leaderboard import build

#: Scores per query: (doc1, doc2). Pairs 1002-3 and 1001-1 right for both queries; 1000-2 wrong for q2.
SCORES = {"1002-3_q1": (0.9, 0.1), "1002-3_q2": (0.2, 0.8), "1001-1_q1": (0.7, 0.3), "1001-1_q2": (0.4, 0.6),
          "1000-2_q1": (0.6, 0.5), "1000-2_q2": (0.6, 0.5)}


def write_pairs_run(path, reproduces=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for query, (one, two) in SCORES.items():
        pair = query.rsplit("_", 1)[0]
        ranked = sorted([(f"{pair}_doc1", one), (f"{pair}_doc2", two)], key=lambda item: -item[1])
        lines += [f"{query} Q0 {doc} {rank} {score:.6f} pairs\n" for rank, (doc, score) in enumerate(ranked, 1)]
    path.write_text("".join(lines), encoding="utf-8")
    write_metadata(path, dataset="nevir/test", runner="external", system="toy pairs", tag="pairs", parameters={},
                   command="by hand", reproduces=reproduces)
    return path


@pytest.fixture
def copy_only(mirror, monkeypatch):
    pin_derived_copy(monkeypatch, nevir._FILES["test"], fx.write_nevir_derived(mirror))
    return nevir._FILES["test"].derived


def test_the_sidecar_records_the_copy(copy_only, tmp_path):
    meta = read_metadata(write_pairs_run(tmp_path / "runs" / "nevir" / "test" / "pairs.trec"))
    (origin,) = meta["data_origin"]
    assert origin == copy_only.to_dict()
    assert origin["kind"] == "derived copy" and origin["file"] == "nevir/derived/NevIR_test_final.json"
    assert list(meta).index("data_origin") == list(meta).index("dataset") + 1


def test_no_origin_is_claimed_for_the_release(mirror, tmp_path):
    fx.write_nevir(mirror)
    meta = read_metadata(write_pairs_run(tmp_path / "pairs.trec"))
    assert "data_origin" not in meta
    assert "data_origin" not in evaluate("nevir/test", tmp_path / "pairs.trec").to_dict()


def test_malformed_origins_in_a_sidecar_are_named():
    base = {"run": "r.trec", "dataset": "negplugins-demo", "runner": "x", "system": "x", "tag": "t", "model": None,
            "parameters": {}, "index": None, "first_stage": None, "versions": {}, "created": "2026-01-01T00:00:00",
            "command": ""}
    assert sidecar_problems({**base, "data_origin": "copy"}) == [
        'field data_origin is "copy", expected a list of objects (kind, file, sha256, source)']
    assert sidecar_problems({**base, "data_origin": [{"kind": "derived copy", "file": "f", "sha256": "x"}]}) == [
        "field data_origin[0] lacks a valid source, sha256"]
    assert sidecar_problems({**base, "data_origin": [nevir.DERIVED_TEST.to_dict()]}) == []


def test_evaluate_names_the_copy_in_every_format(copy_only, tmp_path, capsys):
    run = write_pairs_run(tmp_path / "pairs.trec")
    evaluation = evaluate("nevir/test", run)
    assert evaluation.overall["PairedAcc"] == pytest.approx(2 / 3)
    assert evaluation.data_origin == [copy_only.to_dict()]
    assert evaluation.notes[0] == f"data: {copy_only.describe()}"
    assert main(["evaluate", "nevir/test", str(run)]) == 0
    table = capsys.readouterr().out
    assert "note: data: derived copy nevir/derived/NevIR_test_final.json (sha256 " + copy_only.sha256 in table
    assert "IR_llm_negation_rewriting" in table
    assert main(["evaluate", "nevir/test", str(run), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["data_origin"] == [copy_only.to_dict()]
    assert "note: data: derived copy" in captured.err
    other = write_pairs_run(tmp_path / "other.trec")  # a run is compared with another file, never itself
    assert main(["evaluate", "nevir/test", str(run), str(other), "--format", "json"]) == 0  # a comparison
    record = json.loads(capsys.readouterr().out)
    assert record["data_origin"] == [copy_only.to_dict()] and record["notes"][0].startswith("data: derived copy")


def test_leaderboards_show_the_copy_beside_the_reproduced_row(copy_only, tmp_path):
    runs = tmp_path / "runs"
    write_pairs_run(runs / "nevir" / "test" / "pairs.trec", reproduces="all-mpnet-base-v2")
    out = tmp_path / "leaderboards"
    build(runs, out)
    record = json.loads((out / "nevir-test.json").read_text())
    assert record["data_origin"] == [copy_only.to_dict()]
    (run,) = record["runs"]
    line = f"derived copy nevir/derived/NevIR_test_final.json (sha256 {copy_only.sha256}; from {copy_only.source})"
    assert run["data_origin"] == [line]
    page = (out / "nevir-test.md").read_text()
    shown = f"derived copy nevir/derived/NevIR\\_test\\_final.json (sha256 {copy_only.sha256}; from "  # escaped
    assert f"> Note: data: {shown}" in page and f"  - data: {shown}" in page
    assert "| pairs | all-mpnet-base-v2 | PairedAcc | all | 0.081 | 0.6667 on a derived copy | +0.5857 |" in page
    assert copy_only.sha256 in (out / "nevir-test.html").read_text()
    reproduction = (out / "reproduction.md").read_text()
    row = next(r for r in reproduction.splitlines() if r.startswith("| [nevir/test]") and "| all-mpnet-base-v2 |" in r)
    assert "| 0.081 | pairs 0.6667 (+0.5857 on a derived copy) |" in row
    assert f'Data of the runs marked "on a derived copy": {shown}' in reproduction
    assert "on a derived copy" in (out / "reproduction.html").read_text()
    family = next(f for f in json.loads((out / "reproduction.json").read_text())["benchmarks"] if f["family"] == "nevir")
    assert family["data_origin"] == [line]


def test_report_card_marks_the_copy_and_reruns_only_on_the_same_data(copy_only, mirror, tmp_path, monkeypatch):
    from negplugins.reportcard import run_benchmark

    monkeypatch.chdir(tmp_path)
    result = run_benchmark(benchmarks="nevir", output=tmp_path / "card", progress=False)
    (entry,) = result.summary["benchmarks"]
    assert entry["data_origin"] == [copy_only.to_dict()]
    report = (tmp_path / "card" / "report.md").read_text()
    assert "| <code>nevir/test</code> (derived copy, see Notes) |" in report
    assert ("- NevIR (<code>nevir/test</code>): data: derived copy nevir/derived/NevIR\\_test\\_final.json (sha256 "
            + copy_only.sha256) in report
    assert "(derived copy, see Notes)" in (tmp_path / "card" / "report.html").read_text()
    run = tmp_path / "card" / "nevir-test" / "pairs-bi-encoder-all-MiniLM-L6-v2.trec.gz"
    assert read_metadata(run)["data_origin"] == [copy_only.to_dict()]
    again = run_benchmark(benchmarks="nevir", output=tmp_path / "card", progress=False)
    assert [how for _, how, _ in again.outcomes[0].steps] == ["ran", "reused", "reused"]
    # the release appears: the run and its results were made on the copy, so both are made again
    fx.write_nevir(mirror)
    third = run_benchmark(benchmarks="nevir", output=tmp_path / "card", progress=False)
    assert [how for _, how, _ in third.outcomes[0].steps] == ["ran", "ran", "ran"]
    assert "data_origin" not in read_metadata(run) and "data_origin" not in third.summary["benchmarks"][0]
    assert "derived copy" not in (tmp_path / "card" / "report.md").read_text()

