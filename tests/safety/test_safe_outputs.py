"""Outputs never destroy what they did not create (issue 10, part A).

Each case runs a real ``negplugins`` command the way a careless or hostile user would and checks both
the one-line message (``assert_clean_error``) and that nothing was lost (``guard``). Cases work on
copies under ``tmp_path``; the only cases touching the checkout read it without writing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from safety_helpers import PROJECT_ROOT, assert_clean_error

from negplugins.errors import UserError
from negplugins.io.files import MARKER, atomic_directory, output_lock
from negplugins.io.sidecars import write_metadata

DEMO = "negplugins-demo"
DEMO_RUNS = PROJECT_ROOT / "runs" / DEMO


@pytest.fixture
def project(tmp_path):
    """A checkout-like folder: ``runs/negplugins-demo`` (copied) and a user's ``docs/`` folder."""
    root = tmp_path / "project"
    shutil.copytree(DEMO_RUNS, root / "runs" / DEMO)
    (root / "docs").mkdir()
    (root / "docs" / "thesis.txt").write_text("my own notes\n")
    return root


def _git(root: Path, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                            GIT_COMMITTER_EMAIL="t@t"))


@pytest.fixture
def repo(project):
    """``project`` as a git repository with its runs committed."""
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "runs")
    return project


@pytest.fixture
def results_json(tmp_path):
    """BEIR results (``{qid: {docid: score}}``) for the demo, from the committed BM25 run."""
    results = {}
    for line in (DEMO_RUNS / "bm25.trec").read_text().splitlines():
        qid, _, docid, _, score, _ = line.split()
        results.setdefault(qid, {})[docid] = float(score)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    return path


def _run(project):
    return project / "runs" / DEMO / "bm25.trec"


# -- leaderboard build: folders that are not the suite's own ---------------------------------------

@pytest.mark.parametrize("output, fragment", [
    (".", "is the current directory"),
    ("..", "is the current directory or one of its parents"),
    ("runs", "holds runs"),
    ("docs", "holds files negplugins did not write (thesis.txt)"),
    ("runs/negplugins-demo/bm25.trec", "exists and is not a folder"),
])
def test_leaderboard_build_refuses_folders_it_did_not_create(project, main_cli, guard, output, fragment):
    guard.arm(project)
    result = main_cli("leaderboard", "build", "--output", output, cwd=project)
    assert_clean_error(result, output, fragment)
    guard.unchanged(allow_new=False)


def test_leaderboard_build_refuses_a_repository_root(project, repo, main_cli, guard, tmp_path):
    guard.arm(repo)
    result = main_cli("leaderboard", "build", "--runs", repo / "runs", "--output", repo, cwd=tmp_path)
    assert_clean_error(result, "is a repository root (holds .git)")
    guard.unchanged(allow_new=False)


def test_leaderboard_build_refuses_a_symlinked_output_folder(project, main_cli, guard):
    (project / "boards").symlink_to(project / "docs", target_is_directory=True)
    guard.arm(project / "docs", project / "runs")
    result = main_cli("leaderboard", "build", "--output", "boards", cwd=project)
    assert_clean_error(result, "boards: is a symbolic link")
    guard.unchanged(allow_new=False)


def test_leaderboard_rebuilds_its_own_folder_but_not_once_a_user_file_is_added(project, main_cli, guard):
    first = main_cli("leaderboard", "build", "--output", "boards", cwd=project)
    assert first.returncode == 0, first.stderr
    marker = json.loads((project / "boards" / MARKER).read_text())
    assert "index.html" in marker["files"] and MARKER not in marker["files"]
    again = main_cli("leaderboard", "build", "--output", "boards", cwd=project)  # its own output: rebuilt in place
    assert again.returncode == 0, again.stderr
    assert main_cli("leaderboard", "check", "--output", "boards", cwd=project).returncode == 0
    (project / "boards" / "my-notes.txt").write_text("mine\n")
    guard.arm(project)
    result = main_cli("leaderboard", "build", "--output", "boards", cwd=project)
    assert_clean_error(result, "boards: holds files negplugins did not write")
    guard.unchanged(allow_new=False)


def test_committed_leaderboards_carry_the_marker():
    """Reads the checkout only: the marker is committed, and lists the files of the build. ``leaderboard check``
    treats it like every other file: it passes on the checkout (tests/leaderboard/test_leaderboard_build.py,
    test_committed_leaderboards_are_current) and, through the command line, in a fresh clone
    (test_readme_workflow_and_demo_leave_a_fresh_clone_clean)."""
    marker = json.loads((PROJECT_ROOT / "leaderboards" / MARKER).read_text())
    assert marker["written_by"] == "negplugins" and "index.html" in marker["files"] and MARKER not in marker["files"]


# -- concurrent writers ----------------------------------------------------------------------------

def _hold_lock(path: Path):
    lock = path.parent / f".{path.name}.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_second_leaderboard_build_waits_then_refuses_and_keeps_the_first_builds_work(project, cli, main_cli, guard):
    assert main_cli("leaderboard", "build", "--output", "boards", cwd=project).returncode == 0  # an earlier build
    partial = project / ".boards.concurrent.partial"  # the first build's work in progress
    partial.mkdir()
    (partial / "index.html").write_text("half done")
    fd = _hold_lock(project / "boards")
    try:
        guard.arm(project / "boards", partial)
        result = cli("leaderboard", "build", "--output", "boards", cwd=project, env={"NEGPLUGINS_LOCK_TIMEOUT": "1"})
        assert_clean_error(result, "another negplugins command is writing it", "waiting for another")
        guard.unchanged(allow_new=False, partials=[partial])  # the first build's output and its work in progress
        assert (partial / "index.html").read_text() == "half done"
        assert json.loads((project / "boards" / MARKER).read_text())["written_by"] == "negplugins"
    finally:
        os.close(fd)
    shutil.rmtree(partial)


def test_a_second_index_build_refuses_while_the_first_holds_the_lock(tmp_path, cli, guard):
    (tmp_path / "mine.txt").write_text("mine\n")
    fd = _hold_lock(tmp_path / "idx")
    try:
        guard.arm(tmp_path / "mine.txt")
        result = cli("index", DEMO, "--index", tmp_path / "idx", cwd=tmp_path, env={"NEGPLUGINS_LOCK_TIMEOUT": "0.5"})
        assert_clean_error(result, "idx: another negplugins command is writing it")
        guard.unchanged()
        assert not (tmp_path / "idx").exists()
    finally:
        os.close(fd)


def test_lock_is_exclusive_and_removed_when_released(tmp_path, monkeypatch):
    monkeypatch.setenv("NEGPLUGINS_LOCK_TIMEOUT", "0.3")
    target = tmp_path / "out"
    with output_lock(target) as lock:
        assert lock.exists()
        child = subprocess.run([os.sys.executable, "-c", "from negplugins.io.files import output_lock\n"
                                f"with output_lock({str(target)!r}): pass"],
                               capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)))
        assert child.returncode != 0 and "another negplugins command is writing it" in child.stderr
        with output_lock(target):  # re-entrant within a process
            pass
    assert not lock.exists()


def test_stale_partials_are_removed_only_by_the_lock_holder(tmp_path):
    stale = tmp_path / ".out.killed.partial"
    stale.mkdir()
    with atomic_directory(tmp_path / "out") as tmp:
        (tmp / "a.txt").write_text("a")
    assert not stale.exists() and (tmp_path / "out" / "a.txt").read_text() == "a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no lock file, no partial left


# -- file outputs onto inputs, folders, devices, FIFOs ---------------------------------------------

@pytest.mark.parametrize("make_output", ["same", "symlink", "hardlink"])
def test_evaluate_output_onto_its_own_run_is_refused(project, main_cli, guard, make_output):
    run = _run(project)
    output = {"same": run, "symlink": project / "report.txt", "hardlink": project / "report.txt"}[make_output]
    if make_output == "symlink":
        output.symlink_to(run)
    elif make_output == "hardlink":
        os.link(run, output)
    guard.arm(project / "runs")
    result = main_cli("evaluate", DEMO, run, "-o", output, cwd=project)
    assert_clean_error(result, "is the same file as the input", str(run))
    guard.unchanged(allow_new=False)


def test_evaluate_output_onto_the_baseline_is_refused(project, main_cli, guard):
    runs = sorted(str(p) for p in (project / "runs" / DEMO).glob("*.trec"))
    guard.arm(project / "runs")
    result = main_cli("evaluate", DEMO, *runs, "--baseline", runs[0], "-o", runs[0], "--permutations", "10", cwd=project)
    assert_clean_error(result, "is the same file as the input")
    guard.unchanged(allow_new=False)


def test_evaluate_output_onto_a_fifo_is_refused_without_blocking(project, cli, guard):
    fifo = project / "pipe"
    os.mkfifo(fifo)
    guard.arm(project / "runs")
    result = cli("evaluate", DEMO, _run(project), "-o", fifo, cwd=project, timeout=60)
    assert_clean_error(result, "pipe: is a FIFO")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    guard.unchanged(allow_new=False)


def test_evaluate_output_onto_a_folder_is_refused(project, main_cli, guard):
    guard.arm(project)
    result = main_cli("evaluate", DEMO, _run(project), "-o", "docs", cwd=project)
    assert_clean_error(result, "docs: is a folder")
    guard.unchanged(allow_new=False)


def test_evaluate_writes_through_dev_null_without_replacing_it(project, main_cli, guard):
    before = os.stat("/dev/null")
    guard.arm(project)
    result = main_cli("evaluate", DEMO, _run(project), "-o", "/dev/null", cwd=project)
    assert result.returncode == 0, result.stderr
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino and after.st_rdev == before.st_rdev
    assert not list(Path("/dev").glob(".null.*.tmp"))
    guard.unchanged(allow_new=False)


def test_evaluate_report_onto_a_committed_file_needs_force(repo, main_cli, guard):
    committed = repo / "runs" / DEMO / "bm25-negfilter.trec"
    guard.arm(repo / "runs")
    result = main_cli("evaluate", DEMO, _run(repo), "-o", committed, cwd=repo)
    assert_clean_error(result, "bm25-negfilter.trec: is tracked by git", "--force")
    guard.unchanged(allow_new=False)


def test_topics_refuses_a_fifo_and_a_folder(project, cli, main_cli, guard):
    os.mkfifo(project / "pipe")
    guard.arm(project)
    assert_clean_error(cli("topics", DEMO, "-o", "pipe", cwd=project, timeout=60), "pipe: is a FIFO")
    assert_clean_error(main_cli("topics", DEMO, "-o", "docs", cwd=project), "docs: is a folder")
    guard.unchanged(allow_new=False)


def test_topics_does_not_replace_a_committed_topic_file(repo, main_cli, guard):
    (repo / "topics").mkdir()
    (repo / "topics" / f"{DEMO}.tsv").write_text("q1\tmy hand-edited topics\n")
    _git(repo, "add", "topics")
    _git(repo, "commit", "-q", "-m", "topics")
    guard.arm(repo / "topics")
    result = main_cli("topics", DEMO, cwd=repo)
    assert_clean_error(result, f"topics/{DEMO}.tsv: is tracked by git", "--force")
    guard.unchanged(allow_new=False)


# -- other file outputs: replaced only with --force, unless they already hold the same bytes -------

def test_evaluate_report_onto_an_untracked_user_file_needs_force(project, main_cli, guard):
    mine = project / "docs" / "thesis.txt"  # not tracked (no repository at all): only --force replaces it
    guard.arm(project)
    result = main_cli("evaluate", DEMO, _run(project), "-o", mine, cwd=project)
    assert_clean_error(result, "docs/thesis.txt: exists and differs from what this command writes", "--force")
    guard.unchanged(allow_new=False)
    printed = main_cli("evaluate", DEMO, _run(project), cwd=project)
    forced = main_cli("evaluate", DEMO, _run(project), "-o", mine, "--force", cwd=project)
    assert printed.returncode == 0 and forced.returncode == 0, forced.stderr
    assert mine.read_text() == printed.stdout  # the report replaced the file, exactly as it is printed


def test_evaluate_report_rerun_is_a_no_op_and_another_report_needs_force(project, main_cli, guard):
    report = project / "work" / "report.json"
    args = ("evaluate", DEMO, _run(project), project / "runs" / DEMO / "bm25-negfilter.trec", "--json",
            "--permutations", "100", "-o", report)
    first = main_cli(*args, cwd=project)
    assert first.returncode == 0 and first.stdout == f"wrote {report}\n", first.stderr
    before = os.stat(report)
    guard.arm(project)
    again = main_cli(*args, cwd=project)  # the same report: nothing written (same inode, same mtime)
    assert again.returncode == 0 and again.stdout == f"{report} already holds this report; left unchanged\n"
    assert os.stat(report).st_ino == before.st_ino and os.stat(report).st_mtime_ns == before.st_mtime_ns
    guard.unchanged(allow_new=False)
    other = main_cli("evaluate", DEMO, _run(project), "-m", "P@5", "-o", report, cwd=project)
    assert_clean_error(other, "report.json: exists and differs from what this command writes", "--force")
    guard.unchanged(allow_new=False)


def test_topics_over_an_untracked_user_file_needs_force_and_a_rerun_is_a_no_op(project, main_cli, guard):
    mine = project / "topics" / f"{DEMO}.tsv"
    mine.parent.mkdir()
    mine.write_text("q1\tmy hand-edited topics\n")
    guard.arm(project)
    result = main_cli("topics", DEMO, cwd=project)
    assert_clean_error(result, f"topics/{DEMO}.tsv: exists and differs from what this command writes", "--force")
    guard.unchanged(allow_new=False)
    forced = main_cli("topics", DEMO, "--force", cwd=project)
    assert forced.returncode == 0 and forced.stdout == f"wrote 21 topics to topics/{DEMO}.tsv\n", forced.stderr
    assert len(mine.read_text().splitlines()) == 21  # the demo's 21 queries (as evaluate's table counts them)
    guard.arm(project)
    again = main_cli("topics", DEMO, cwd=project)
    assert again.returncode == 0 and "already holds these 21 topics; left unchanged" in again.stdout
    guard.unchanged(allow_new=False)


@pytest.mark.parametrize("command", ["topics", "evaluate"])
def test_output_help_states_the_file_rule(capsys, command):
    from negplugins.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "is replaced only with --force, unless it already holds exactly" in text, text
    assert "even one tracked by git" in text, text


# -- run outputs: inputs, sidecars, committed and hand-made runs ----------------------------------

def test_import_beir_onto_its_results_file_is_refused(results_json, main_cli, guard, tmp_path):
    guard.arm(results_json)
    result = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", results_json, cwd=tmp_path)
    assert_clean_error(result, "results.json: is the same file as the input")
    guard.unchanged(allow_new=False)


def test_import_beir_whose_sidecar_would_replace_the_results_file_is_refused(results_json, main_cli, guard, tmp_path):
    results = results_json.rename(tmp_path / "system.meta.json")
    guard.arm(results)
    result = main_cli("import", "beir", results, "--dataset", DEMO, "-o", tmp_path / "system.trec", cwd=tmp_path)
    assert_clean_error(result, "system.meta.json: is the same file as the input")
    guard.unchanged(allow_new=False)
    assert not (tmp_path / "system.trec").exists()


@pytest.mark.parametrize("second", ["a.trec.gz", "a.run", "a.txt"])
def test_sidecar_collision_between_runs_named_alike_is_refused(results_json, main_cli, guard, tmp_path, second):
    first = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", tmp_path / "a.trec", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    guard.arm(tmp_path / "a.trec", tmp_path / "a.meta.json")
    for force in ([], ["--force"]):  # --force replaces a run, never another run's sidecar
        result = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", tmp_path / second, *force, cwd=tmp_path)
        assert_clean_error(result, "a.meta.json describes another run", "a.trec")
    guard.unchanged()
    assert not (tmp_path / second).exists()


def test_write_metadata_never_replaces_the_sidecar_of_another_run(tmp_path):
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 1.0 t\n")
    write_metadata(tmp_path / "a.trec", dataset=DEMO, runner="x", system="x", tag="t", parameters={})
    (tmp_path / "a.trec.gz").write_bytes(b"")
    before = (tmp_path / "a.meta.json").read_bytes()
    with pytest.raises(UserError, match="describes another run"):
        write_metadata(tmp_path / "a.trec.gz", dataset=DEMO, runner="x", system="x", tag="t", parameters={})
    assert (tmp_path / "a.meta.json").read_bytes() == before


def test_import_beir_over_a_hand_made_run_needs_force(results_json, main_cli, guard, tmp_path):
    mine = tmp_path / "mine.trec"
    mine.write_text("q01 Q0 d01 1 1.0 hand\n")
    guard.arm(mine)
    result = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", mine, cwd=tmp_path)
    assert_clean_error(result, "mine.trec: exists and was not written by negplugins", "--force")
    guard.unchanged(allow_new=False)
    forced = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", mine, "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr


def test_a_rerun_over_the_suites_own_untracked_run_is_allowed(results_json, main_cli, tmp_path):
    for _ in range(2):
        result = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", tmp_path / "work" / "a.trec",
                     cwd=tmp_path)
        assert result.returncode == 0, result.stderr


def test_import_beir_onto_a_committed_run_needs_force(repo, results_json, main_cli, guard):
    guard.arm(repo / "runs")
    result = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", _run(repo), cwd=repo)
    assert_clean_error(result, "bm25.trec: is a committed run file (tracked by git)", "--force")
    guard.unchanged(allow_new=False)


def test_a_run_onto_dev_null_is_refused(results_json, main_cli, tmp_path):
    result = main_cli("import", "beir", results_json, "--dataset", DEMO, "-o", "/dev/null", cwd=tmp_path)
    assert_clean_error(result, "/dev/null: is not a regular file")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and not Path("/dev/null.meta.json").exists()


def test_search_rerank_onto_its_first_stage_is_refused_before_loading_a_model(project, main_cli, guard):
    guard.arm(project / "runs")
    result = main_cli("search", "rerank", DEMO, "--run", _run(project), "--model", "no-such-model", "-o", _run(project),
                 cwd=project)
    assert_clean_error(result, "is the same file as the input")
    guard.unchanged(allow_new=False)


def test_search_beir_rerank_onto_its_first_stage_is_refused(project, main_cli, guard):
    pytest.importorskip("beir")
    guard.arm(project / "runs")
    result = main_cli("search", "beir-rerank", DEMO, "--run", _run(project), "--model", "no-such-model",
                 "-o", _run(project), cwd=project)
    assert_clean_error(result, "is the same file as the input")
    guard.unchanged(allow_new=False)


def test_search_dense_onto_a_committed_run_is_refused_before_encoding(repo, main_cli, guard):
    guard.arm(repo / "runs")
    result = main_cli("search", "dense", DEMO, "-o", repo / "runs" / DEMO / "bm25-k1.2-b0.75.trec", cwd=repo)
    assert_clean_error(result, "is a committed run file (tracked by git)")
    guard.unchanged(allow_new=False)


def test_search_bm25_onto_a_folder_is_refused_before_indexing(project, main_cli, guard):
    guard.arm(project)
    result = main_cli("search", "bm25", DEMO, "-o", "docs", cwd=project)
    assert_clean_error(result, "docs: is a folder")
    guard.unchanged(allow_new=False)


def test_leaderboard_sidecar_does_not_replace_a_committed_sidecar(repo, main_cli, guard):
    guard.arm(repo / "runs")
    result = main_cli("leaderboard", "sidecar", _run(repo), "--dataset", DEMO, "--system", "x", "--run-tag", "Anserini",
                 cwd=repo)
    assert_clean_error(result, "bm25.meta.json: is tracked by git", "--force")
    guard.unchanged(allow_new=False)


# -- folder outputs of index, export and demo ------------------------------------------------------

def test_index_into_the_current_directory_is_refused(project, main_cli, guard):
    guard.arm(project)
    result = main_cli("index", DEMO, "--index", ".", cwd=project)
    assert_clean_error(result, "not an index built by negplugins")
    guard.unchanged(allow_new=False)


@pytest.mark.parametrize("target, fragment", [(".", "holds more than a BEIR export (docs, runs)"),
                                              ("runs", "holds more than a BEIR export (negplugins-demo)"),
                                              ("docs", "holds more than a BEIR export (thesis.txt)")])
def test_export_beir_with_overwrite_refuses_folders_it_did_not_create(project, main_cli, guard, target, fragment):
    guard.arm(project)
    result = main_cli("export", "beir", DEMO, target, "--overwrite", cwd=project)
    assert_clean_error(result, fragment)
    guard.unchanged(allow_new=False)


def test_export_beir_replaces_its_own_export(project, main_cli):
    for _ in range(2):
        result = main_cli("export", "beir", DEMO, "out", "--overwrite", cwd=project)
        assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (project / "out").iterdir()) == ["corpus.jsonl", MARKER, "qrels", "queries.jsonl"]


def test_demo_refuses_a_workdir_subfolder_it_did_not_create(project, main_cli, guard):
    (project / DEMO / "keep.txt").parent.mkdir()
    (project / DEMO / "keep.txt").write_text("mine\n")
    guard.arm(project)
    result = main_cli("demo", "--workdir", ".", cwd=project)
    assert_clean_error(result, f"{DEMO}: holds files negplugins did not write (keep.txt)")
    guard.unchanged(allow_new=False)


def test_demo_refuses_a_workdir_that_is_a_file(project, main_cli, guard):
    guard.arm(project)
    result = main_cli("demo", "--workdir", "docs/thesis.txt", cwd=project)
    assert_clean_error(result, "docs/thesis.txt: --workdir is not a folder")
    guard.unchanged(allow_new=False)


@pytest.mark.parametrize("command", [("index", DEMO, "--index"), ("leaderboard", "build", "--output"),
                                     ("export", "beir", DEMO)])
def test_a_folder_output_under_a_file_is_refused(project, main_cli, guard, command):
    guard.arm(project)
    result = main_cli(*command, "docs/thesis.txt/out", cwd=project)
    assert_clean_error(result, "docs/thesis.txt/out: cannot be created, docs/thesis.txt is not a folder")
    guard.unchanged(allow_new=False)


# -- interrupts ------------------------------------------------------------------------------------

def _start_index(tmp_path, index):
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), TMPDIR=str(tmp_path / "tmp"),
               NEGPLUGINS_TEST_PAUSE_INDEXING="60")
    (tmp_path / "tmp").mkdir(exist_ok=True)
    child = subprocess.Popen([os.sys.executable, "-m", "negplugins", "index", DEMO, "--index", str(index)],
                             cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    seen = []
    while not seen or "before indexing (NEGPLUGINS_TEST_PAUSE_INDEXING)" not in seen[-1]:
        line = child.stderr.readline()  # the command pauses (60 s) once this line is out
        assert line, "the index command ended before its pause: " + "".join(seen)
        seen.append(line)
    assert list(tmp_path.glob(".idx.*.partial"))  # the index being built
    return child


def _leftovers(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if p.name.endswith((".partial", ".lock"))) + \
        sorted(p.name for p in (tmp_path / "tmp").iterdir())


@pytest.mark.java
def test_sigterm_during_index_cleans_up_and_the_next_run_builds(tmp_path, cli):
    index = tmp_path / "idx"
    child = _start_index(tmp_path, index)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 143, stderr
    assert "Traceback" not in stderr and stderr.strip().splitlines()[-1] == "negplugins: terminated"
    assert not index.exists() and _leftovers(tmp_path) == []  # no partial index, nothing in TMPDIR
    again = cli("index", DEMO, "--index", index, cwd=tmp_path)
    assert again.returncode == 0 and "built Lucene index" in again.stdout, again.stderr


@pytest.mark.java
def test_sigint_during_index_exits_130_and_leaves_no_partial_or_corpus_copy(tmp_path, cli, guard):
    (tmp_path / "mine.txt").write_text("mine\n")
    guard.arm(tmp_path / "mine.txt")
    index = tmp_path / "idx"
    child = _start_index(tmp_path, index)  # the JVM has started, the first batch is read: Anserini is next
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.strip().splitlines()[-1] == "negplugins: interrupted"
    assert not index.exists() and _leftovers(tmp_path) == []  # no partial index, no corpus copy, no lock
    guard.unchanged()


@pytest.mark.java
def test_sigkill_during_index_leaves_partials_that_the_next_run_removes(tmp_path, cli):
    index = tmp_path / "idx"
    child = _start_index(tmp_path, index)
    child.kill()
    child.communicate(timeout=60)
    assert list(tmp_path.glob(".idx.*.partial"))  # what a killed build leaves: beside the index only
    assert list((tmp_path / "tmp").iterdir()) == []
    again = cli("index", DEMO, "--index", index, cwd=tmp_path, env={"TMPDIR": str(tmp_path / "tmp")})
    assert again.returncode == 0, again.stderr
    assert _leftovers(tmp_path) == [] and (index / "negplugins-index.json").is_file()


# -- the README's workflow in a fresh clone --------------------------------------------------------

def _block_commands(path, heading: str) -> list[str]:
    """The ``negplugins`` commands of the first bash block after ``heading`` in ``path``."""
    text = (PROJECT_ROOT / path).read_text(encoding="utf-8")
    block = text.split(heading, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    return [c for c in commands if c.startswith("negplugins ")]


def _workflow_commands() -> list[str]:
    """The workflow's commands up to the contribution (the ones that write only git-ignored files), for the demo.

    The steps are those of docs/workflow.md ("The workflow and output safety"); the README's shorter block holds
    the same commands (checked here), and its last two steps, ``leaderboard build`` (contributing into ``runs/``
    on purpose) and ``benchmark`` (a model on every benchmark), are tested in tests/leaderboard and
    tests/reportcard.
    """
    commands = _block_commands("docs/workflow.md", "## Dataset, search, evaluate, contribute, report card")
    readme = _block_commands("README.md", "## The workflow")
    assert [c.split()[1] for c in readme] == ["index", "search", "evaluate", "leaderboard", "benchmark"], readme
    assert all(c in commands for c in readme), (readme, commands)
    commands = commands[:commands.index("negplugins leaderboard build")]
    assert [c.split()[1] for c in commands] == ["topics", "index", "search", "evaluate"], commands
    assert any("--output work/" in c for c in commands), commands
    return [c.replace("comlq", DEMO) for c in commands]


def test_readme_commands_and_help_examples_write_only_into_ignored_folders():
    """Every ``--output`` of the command blocks of the README and the docs, and every example in ``--output`` help,
    is git-ignored.

    A command copied from the README or a documentation page must leave ``git status`` clean: outputs go to
    ``work/`` (ignored), never into the repository root or ``runs/`` (the committed contributions).
    """
    import re

    from negplugins.cli import build_parser

    pages = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    blocks = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)
    outputs = re.findall(r"(?:--output|-o)\s+(\S+)", "\n".join(blocks))
    assert len(outputs) >= 8, outputs
    examples = []

    def walk(parser):
        for action in parser._actions:
            if "--output" in action.option_strings and action.help and "e.g." in action.help:
                examples.append(action.help.split("e.g.", 1)[1].strip(" )"))
            if isinstance(action.choices, dict):  # subcommands
                for sub in set(action.choices.values()):
                    walk(sub)

    walk(build_parser())
    assert len(examples) >= 2, examples  # search bm25 and import beir give one
    ignored = subprocess.run(["git", "-C", str(PROJECT_ROOT), "check-ignore", "--no-index", *outputs, *examples],
                             capture_output=True, text=True).stdout.split()
    assert sorted(set(outputs + examples) - set(ignored)) == [], "outputs that git would show as untracked"
    assert all(path.startswith("work/") for path in outputs + examples), outputs + examples


#: Runs ``negplugins`` commands one after the other in one process (:func:`negplugins.cli.main`, what the program
#: calls); argv: a JSON list of argument lists. Prints a JSON list: each command's exit status, what it printed, and
#: what ``git status --porcelain`` showed of the current directory (the clone) once it had ended.
_COMMANDS_IN_ONE_PROCESS = """
import contextlib, io, json, subprocess, sys
from negplugins.cli import main
results = []
for args in json.loads(sys.argv[1]):
    sys.argv[:] = ["negplugins", *args]  # the command a sidecar records, as the user types it
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(args)
        except SystemExit as exit:
            status = exit.code
    git = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, check=True).stdout
    results.append({"args": args, "returncode": status, "stdout": out.getvalue(), "stderr": err.getvalue(),
                    "git_status": git})
print(json.dumps(results))
"""


@pytest.mark.java
def test_readme_workflow_and_demo_leave_a_fresh_clone_clean(tmp_path, shared_data):
    """A new user's first steps in a fresh clone (and a fresh ``IR_DATASETS_HOME``): git status stays clean.

    The workflow, then its re-run (allowed and, for topics, a no-op), the demo, an export, ``leaderboard check``
    and the README's old command run in one process of the clone's code (the JVM and Pyserini's imports, seconds
    per command, started once), ``git status`` after each: what they write and their exit statuses are the
    subject, not the process (the commands as processes of their own: tests/safety/test_interrupts.py and
    tests/pipeline/test_quiet_and_progress.py).
    """
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(PROJECT_ROOT), str(clone)], check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=str(clone), IR_DATASETS_EXT_MIRROR=str(shared_data))
    committed = {str(p): p.read_bytes() for p in [*(clone / "runs").rglob("*"), *(clone / "leaderboards").rglob("*")]
                 if p.is_file()}
    # the workflow, the workflow again, then the demo and an export, ...
    workflow = [command.split()[1:] for command in [*_workflow_commands(), *_workflow_commands(),
                                                    "negplugins demo --workdir .",
                                                    f"negplugins export beir {DEMO} beir/{DEMO}"]]
    # ... the check of the committed leaderboards, and the README's old command aimed at a committed run
    old = ["search", "bm25", DEMO, "--hits", "100", "--output", f"runs/{DEMO}/bm25.trec"]
    done = subprocess.run([os.sys.executable, "-c", _COMMANDS_IN_ONE_PROCESS,
                           json.dumps([*workflow, ["leaderboard", "check"], old])], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    *results, check, refused = [SimpleNamespace(**result) for result in json.loads(done.stdout)]
    for result in results:
        assert result.returncode == 0, (result.args, result.stderr)
    assert [result.stdout for result in results if result.args[0] == "topics"] == [
        f"wrote 21 topics to topics/{DEMO}.tsv\n", f"topics/{DEMO}.tsv already holds these 21 topics; left unchanged\n"]
    assert (clone / "work" / DEMO / "bm25.trec").is_file() and (clone / DEMO / "runs" / "bm25.trec").is_file()
    assert check.returncode == 0, check.stderr
    assert_clean_error(refused, "is a committed run file (tracked by git)", "--force")
    for result in [*results, check, refused]:  # everything written is git-ignored; the refused command wrote nothing
        assert result.git_status == "", (result.args, result.git_status)
    assert {str(p): p.read_bytes() for p in [*(clone / "runs").rglob("*"), *(clone / "leaderboards").rglob("*")]
            if p.is_file()} == committed
