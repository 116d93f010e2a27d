"""The one run writer: a run and its sidecar written together, and the typed result every runner returns."""

from __future__ import annotations

from pathlib import Path

from negplugins.io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from negplugins.io.sidecars import metadata_path, read_metadata
from negplugins.runners.bm25s import bm25s_search

DEMO = "negplugins-demo"


def test_the_writer_writes_run_and_sidecar_and_says_what_it_wrote(tmp_path):
    ranking = (q for q in [("q1", [("d2", 2.0), ("d1", 1.0)]), ("q2", [("d1", 0.5)])])  # a generator, as runners give
    sidecar = Sidecar(dataset=DEMO, runner="test", system="a hand-made ranking", tag="hand", parameters={"hits": 2},
                      command="test")
    result = write_run_and_sidecar(tmp_path / "run.trec", ranking, sidecar, queries=2, notes=["a note"],
                                   details={"dataset": DEMO, "lines": None, "metadata": None, "tag": "hand"})
    assert isinstance(result, RunResult)
    assert (result.run, result.sidecar) == (tmp_path / "run.trec", metadata_path(tmp_path / "run.trec"))
    assert (result.lines, result.queries, result.tag, result.notes, result.complete) == (3, 2, "hand", ("a note",), True)
    assert (tmp_path / "run.trec").read_text().splitlines() == [
        "q1 Q0 d2 1 2.000000 hand", "q1 Q0 d1 2 1.000000 hand", "q2 Q0 d1 1 0.500000 hand"]
    meta = read_metadata(tmp_path / "run.trec")
    assert (meta["runner"], meta["system"], meta["tag"], meta["parameters"], meta["command"]) == (
        "test", "a hand-made ranking", "hand", {"hits": 2}, "test")
    # the runner's own record, its lines and sidecar filled in, read as the dictionary runners returned before
    assert dict(result) == {"dataset": DEMO, "lines": 3, "metadata": str(result.sidecar), "tag": "hand"}
    assert result["lines"] == 3 and result.get("index") is None


def test_a_runner_returns_the_typed_result(tmp_path):
    result = bm25s_search(DEMO, tmp_path / "bm25s.trec", hits=3, command="test")
    assert isinstance(result, RunResult) and result.run == tmp_path / "bm25s.trec"
    assert result.sidecar == metadata_path(tmp_path / "bm25s.trec") and result.sidecar.is_file()
    lines = Path(result.run).read_text().splitlines()
    assert result.lines == result["lines"] == len(lines) and result.queries == result["queries"]
    assert result.tag == result["run_tag"] == lines[0].split()[5]
    assert result["empty_queries"] == 0  # counted while the run was written, then recorded
