"""The MTEB result files ``negplugins benchmark`` writes beside its report (negplugins.mteb.results).

Every file is read back with MTEB's own loaders (``TaskResult.from_disk``, ``ResultCache.load_results``,
``ModelMeta.model_validate_json_resolved``); its main score must be the suite's number, exactly. The other
benchmarks' files (on fixtures) are checked in tests/reportcard/test_benchmark_suite.py, ComLQ's on the real
release there too.
"""

from __future__ import annotations

import json
import os
import shutil
from importlib import metadata

import pytest

from negplugins.errors import UserError
from negplugins.mteb import naming
from negplugins.reportcard import run_benchmark

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

FOLDER = ("mteb", "results", "sentence-transformers__all-MiniLM-L6-v2", "no_revision_available")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The packaged MiniLM on the demo, with ``negplugins benchmark``'s Python API."""
    root = tmp_path_factory.mktemp("mteb_results")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        result = run_benchmark(None, benchmarks="negplugins-demo", output=root / "out", indexes=root / "idx",
                               progress=False)
    return {"root": root, "out": root / "out", "result": result}


def test_the_files_are_in_mteb_s_results_layout_and_mteb_reads_them(demo):
    import mteb
    from mteb.models import ModelMeta
    from mteb.results import TaskResult

    out, result = demo["out"], demo["result"]
    folder = out.joinpath(*FOLDER)
    assert result.mteb == [folder / "NegpluginsDemo.json", folder / "model_meta.json"]
    assert all(path in result.files for path in result.mteb)
    task_result = TaskResult.from_disk(folder / "NegpluginsDemo.json")
    [outcome] = result.done
    assert task_result.task_name == "NegpluginsDemo" and task_result.dataset_revision == naming.NO_REVISION
    assert task_result.get_score() == outcome.evaluation["overall"]["nDCG@10"]  # exactly the suite's number
    [entry] = task_result.scores["test"]
    assert entry["hf_subset"] == "default" and entry["languages"] == ["eng-Latn"]
    assert entry["ndcg_at_10"] == entry["main_score"] and round(entry["main_score"], 4) == 0.7908  # the README's
    overall = outcome.evaluation["overall"]
    for measure in outcome.evaluation["measures"]:
        assert entry[naming.score_key(measure)] == overall[measure]
    provenance = entry["negplugins"]
    assert provenance["dataset"] == "negplugins-demo" and provenance["measures"]["right_rank_at_10"] == "RightRank@10"
    assert (out / provenance["run"]).is_file() and (out / provenance["results"]).is_file()
    assert task_result.mteb_version == metadata.version("mteb")  # the format it was validated against
    meta = ModelMeta.model_validate_json_resolved((folder / "model_meta.json").read_text())
    assert (meta.name, meta.revision) == ("sentence-transformers/all-MiniLM-L6-v2", "no_revision_available")
    assert meta.n_parameters == result.summary["model"]["parameters"]
    # MTEB's result cache, pointed at the folder, finds the model and its result
    loaded = mteb.ResultCache(cache_path=out / "mteb").load_results(include_remote=False)
    [model_result] = loaded.model_results
    assert (model_result.model_name, model_result.model_revision) == (meta.name, meta.revision)
    assert [r.task_name for r in model_result.task_results] == ["NegpluginsDemo"]


def test_the_ledger_knows_the_files_and_a_rerun_rewrites_nothing(demo):
    out = demo["out"]
    summary = json.loads((out / "summary.json").read_text())
    relative = ["/".join(FOLDER + (name,)) for name in ("NegpluginsDemo.json", "model_meta.json")]
    assert all(name in summary["files"] for name in relative)
    before = {name: (out / name).stat().st_mtime_ns for name in relative}
    again = run_benchmark(None, benchmarks="negplugins-demo", output=out, indexes=demo["root"] / "idx", progress=False)
    assert again.mteb == demo["result"].mteb
    assert {name: (out / name).stat().st_mtime_ns for name in relative} == before


def test_a_file_it_did_not_write_is_refused_before_any_work(demo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path.joinpath("out", *FOLDER, "NegpluginsDemo.json")
    mine.parent.mkdir(parents=True)
    mine.write_text("{}\n")
    with pytest.raises(UserError, match="NegpluginsDemo.json: exists and is not what negplugins benchmark last wrote"):
        run_benchmark(None, benchmarks="negplugins-demo", output=tmp_path / "out", indexes=tmp_path / "idx",
                      progress=False)
    assert mine.read_text() == "{}\n" and not (tmp_path / "out" / "negplugins-demo").exists()


def test_without_mteb_the_report_is_written_and_a_note_says_why(demo, tmp_path, monkeypatch, capsys):
    from negplugins.mteb import results

    def unavailable():
        raise results.MtebUnavailable("mteb is not installed (pip install 'negplugins[mteb]')")

    out = tmp_path / "out"
    # its runs are reused (the runs and sidecars only: results files are the output folder's own, in its ledger)
    shutil.copytree(demo["out"] / "negplugins-demo", out / "negplugins-demo",
                    ignore=lambda folder, names: [n for n in names if not n.endswith((".trec.gz", ".meta.json"))])
    monkeypatch.setattr(results, "_mteb_version", unavailable)
    monkeypatch.chdir(tmp_path)
    result = run_benchmark(None, benchmarks="negplugins-demo", output=out, indexes=tmp_path / "idx")
    assert result.mteb == [] and not (out / "mteb").exists() and (out / "report.md").is_file()
    assert "MTEB result files not written: mteb is not installed (pip install 'negplugins[mteb]')" in \
        capsys.readouterr().err
