"""No input is ever an output: ``--force`` replaces a previous output of the suite, never what the command reads.

Each case names, as the output, something the command reads (the dataset's release in the mirror, a file of the
ir_datasets cache, the dense index a reranker reads its vectors from, the runs folder of the leaderboards) and checks
the one-line refusal, exit 2, and that every file read is as it was. The rule is
:func:`negplugins.io.command_inputs.check_not_input`; each command declares what it reads
(``set_defaults(reads=...)``), which the last test checks for every command of the parser.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import dataset_fixtures as fx
import pytest

DEMO = "negplugins-demo"
SHARED_RELEASE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "comlq" / "dataset.zip"


def _refused(result, *fragments):
    """Exit 2 and one line ``negplugins: error: ...`` holding ``fragments``."""
    lines = [line for line in result.stderr.splitlines() if line.strip() and "%|" not in line]
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert lines and lines[-1].startswith("negplugins: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[-1], (fragment, result.stderr)


@pytest.fixture
def comlq_release(shared_data, mirror):
    """A copy of the real ComLQ release in this test's own mirror (``IR_DATASETS_EXT_MIRROR``)."""
    release = mirror / "comlq" / "dataset.zip"
    release.parent.mkdir()
    shutil.copyfile(shared_data / "comlq" / "dataset.zip", release)
    return release


def _comlq_run(path: Path) -> Path:
    """A valid one-line ComLQ run: the first judged document of the first judged query."""
    import ir_datasets

    judged = next(ir_datasets.load("comlq").qrels_iter())
    path.write_text(f"{judged.query_id} Q0 {judged.doc_id} 1 1.0 t\n")
    return path


@pytest.mark.realdata
@pytest.mark.parametrize("command", [["evaluate", "comlq", "run.trec"], ["topics", "comlq"]])
def test_force_never_replaces_the_release_the_command_reads(comlq_release, tmp_path, main_cli, guard, command):
    _comlq_run(tmp_path / "run.trec")
    guard.arm(comlq_release)
    result = main_cli(*command, "-o", comlq_release, "--force", cwd=tmp_path)
    _refused(result, f"{comlq_release}: is inside the dataset mirror (IR_DATASETS_EXT_MIRROR)",
             "which this command reads")
    guard.unchanged()


def test_force_never_replaces_a_file_of_the_ir_datasets_cache(isolated_ir_datasets_home, tmp_path, main_cli, guard):
    import ir_datasets

    ir_datasets.load(DEMO).docs_store().build()
    docstore = isolated_ir_datasets_home / DEMO / "docs.pklz4"
    guard.arm(docstore)
    result = main_cli("topics", DEMO, "-o", docstore / "bin", "--force", cwd=tmp_path)
    _refused(result, "is inside the ir_datasets cache (IR_DATASETS_HOME)")
    guard.unchanged()


def test_import_beir_never_writes_its_run_over_the_release(mirror, tmp_path, main_cli, guard):
    release = fx.write_nevir(mirror) / "test.jsonl"
    import ir_datasets

    results = {}
    for judged in ir_datasets.load("nevir/test").qrels_iter():
        results.setdefault(judged.query_id, {})[judged.doc_id] = float(judged.relevance)
    (tmp_path / "results.json").write_text(json.dumps(results))
    guard.arm(mirror)
    result = main_cli("import", "beir", "results.json", "--dataset", "nevir/test", "-o", release, "--force",
                      cwd=tmp_path)
    _refused(result, f"{release}: is inside the dataset mirror (IR_DATASETS_EXT_MIRROR)")
    guard.unchanged()


def test_a_mirror_around_the_work_folder_keeps_only_the_benchmarks_folders_off_limits(tmp_path, monkeypatch,
                                                                                       main_cli, guard):
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(tmp_path))  # the data beside the user's own files
    fx.write_nevir(tmp_path)
    guard.arm(tmp_path / "nevir")
    assert main_cli("topics", "nevir/test", "-o", "topics.tsv", cwd=tmp_path).returncode == 0
    _refused(main_cli("topics", "nevir/test", "-o", "nevir/topics.tsv", cwd=tmp_path),
             "nevir/topics.tsv: is inside the dataset mirror (IR_DATASETS_EXT_MIRROR)")
    guard.unchanged()


@pytest.fixture(scope="module")
def demo_dense(tmp_path_factory):
    """The demo's dense index (the packaged all-MiniLM-L6-v2), as ``search dense`` builds it."""
    from negplugins.runners.dense import dense_index

    folder = tmp_path_factory.mktemp("dense")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(tmp_path_factory.mktemp("ir_datasets_home")))
        dense_index(DEMO, index=folder / "idx", progress=False)
    return folder / "idx"


def test_a_bi_encoder_never_writes_its_run_into_the_dense_index_it_reads(demo_dense, tmp_path, main_cli, guard):
    index = Path(shutil.copytree(demo_dense, tmp_path / "idx"))
    with open(tmp_path / "first.trec", "w") as f:
        for rank in range(1, 37):
            f.write(f"q01 Q0 d{rank:02d} {rank} {100 - rank}.0 first\n")
    guard.arm(index)
    result = main_cli("search", "rerank", DEMO, "--run", "first.trec", "--reranker", "bi-encoder", "--model",
                      "default", "--index", "idx", "-o", "idx/docid", "--force", "--no-progress", cwd=tmp_path)
    _refused(result, "idx/docid: is inside idx, which this command reads")
    guard.unchanged()


def test_the_leaderboards_are_never_built_inside_the_runs_they_read(tmp_path, main_cli):
    (tmp_path / "runs").mkdir()
    result = main_cli("leaderboard", "build", "--runs", "runs", "--output", "runs/boards", cwd=tmp_path)
    _refused(result, "runs/boards: is inside runs, which this command reads")
    assert list((tmp_path / "runs").iterdir()) == []


def _leaf_commands(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaf_commands(sub, (*prefix, name))
            return
    yield " ".join(prefix), parser


#: Options that name something a command reads, when the command has them.
_READ_OPTIONS = {"run", "baseline", "index", "model", "query_encoder", "results", "runs"}
#: Where the option of that name is no input: an output (built or written by the command), or a name recorded.
_NOT_READ = {("index", "index"), ("benchmark", "runs"), ("leaderboard sidecar", "model"), ("import beir", "model")}


def test_every_command_declares_the_paths_it_reads(tmp_path):
    from negplugins.cli import build_parser

    existing = tmp_path / "exists"
    existing.write_text("")
    for name, parser in _leaf_commands(build_parser()):
        options = {action.dest for action in parser._actions} & _READ_OPTIONS
        expected = {option for option in options if (name, option) not in _NOT_READ}
        reads = parser.get_default("reads")
        if not expected:
            continue
        assert reads is not None, f"negplugins {name}: declares nothing it reads"
        for option in expected:
            args = argparse.Namespace(**{dest: None for dest in options})
            setattr(args, option, [str(existing)] if option == "run" else str(existing))
            assert reads(args) == [existing], f"negplugins {name}: --{option} is read, not declared"
