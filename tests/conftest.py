"""Fixtures shared by the whole suite.

Every test runs with its own ``IR_DATASETS_HOME`` (nothing touches the user's cache) and without a mirror
unless it asks for one. A test that reads the real release through ``comlq_mirror`` (or ``shared_data``) runs
instead in one home shared by the session, whose docstores are built once, before the first such test, and which
no test may change afterwards (:func:`shared_ir_datasets_home`); a test that asks for ``isolated_ir_datasets_home``
or ``mirror`` still gets a fresh one. The session fails if the tests changed the checkout
(:func:`pytest_sessionfinish`). ``shared_data`` is ``../shared/data`` beside the project root, the real ComLQ
release; tests that need it are marked ``realdata``. Without it they are skipped, except in CI
(``CI=true``), where a missing real data folder fails them: CI runs with ``../shared/`` in place, and a
silent skip there would pass a run that checked nothing. :func:`missing_real_data` is that one rule, for the
marker, the ``shared_data`` fixture and any test that finds its real data missing (fixture of the same name).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
REAL_RELEASE = SHARED_DATA / "comlq" / "dataset.zip"

# tests/datasets/dataset_fixtures.py writes every benchmark's files in their real formats, and
# tests/safety/safety_helpers.py holds the helpers of the careless-input tests; all test folders may import them
sys.path.insert(0, str(Path(__file__).resolve().parent / "datasets"))
sys.path.insert(0, str(Path(__file__).resolve().parent / "safety"))

# One OpenMP thread in each xdist worker and in the processes it starts (torch, faiss), unless the developer set
# OMP_NUM_THREADS: the workers already fill the cores, and two workers whose torch each ran one thread a core spent
# their time spinning for each other's cores (the suite took 8% longer, 348 s against 324 s on this 2-core machine).
# Set before anything imports torch; the runners' own thread settings (torch.set_num_threads) still apply.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# A run started in the background by a shell without job control (`pytest &`, nohup) has SIGINT ignored, and so would
# every command the tests start (an ignored signal stays ignored across exec, and Python then installs no
# KeyboardInterrupt handler): the 39 tests of a terminal user's Ctrl-C then failed, each after its timeout. Each
# process of the run takes Python's own handler back, so the commands it starts get SIGINT's default, as from a shell.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


#: Fixtures with which a test reads only the real release, and so may run in the session's shared home.
_REAL_DATA_FIXTURES = {"comlq_mirror", "shared_data", "shared_comlq_index", "copy_of_shared_comlq_index",
                       "shared_comlq_bm25_run"}
#: Fixtures of a test that writes into its home or a mirror of its own: it keeps a fresh home.
_FRESH_HOME_FIXTURES = {"isolated_ir_datasets_home", "mirror"}
#: Tests (files, or single tests) that keep a fresh home though they read the real release: their commands are
#: stopped while they build the caches, or they follow a new user's first steps, caches included.
_FRESH_HOME_TESTS = {"safety/test_interrupts.py",
                     "safety/test_safe_outputs.py::test_readme_workflow_and_demo_leave_a_fresh_clone_clean"}


@pytest.fixture(autouse=True)
def ir_datasets_home(request, tmp_path_factory, monkeypatch):
    """The test's ``IR_DATASETS_HOME``: the session's shared home for a test that reads only the real release, a
    fresh one for every other test."""
    names = set(request.fixturenames)
    file = _test_file(request.node)
    fresh = names & _FRESH_HOME_FIXTURES or {file, f"{file}::{request.node.originalname}"} & _FRESH_HOME_TESTS
    if names & _REAL_DATA_FIXTURES and not fresh:
        home = request.getfixturevalue("shared_ir_datasets_home")
    else:
        home = tmp_path_factory.mktemp("ir_datasets_home")
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    monkeypatch.delenv("IR_DATASETS_EXT_MIRROR", raising=False)
    return home


@pytest.fixture(autouse=True, scope="session")
def _session_work_folder(tmp_path_factory):
    """The session's fixtures run in an empty folder, not in the checkout (see :func:`work_folder`)."""
    folder = tmp_path_factory.mktemp("session_work")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        yield folder


@pytest.fixture(autouse=True)
def work_folder(_session_work_folder, tmp_path_factory, monkeypatch):
    """Each test runs in an empty folder of its own: the commands' default outputs (``indexes/``, ``work/``,
    ``results/``, ``topics/``) land there, and nothing a user built in the checkout is read or reused. A test whose
    subject is the checkout names it (``PROJECT_ROOT``) and works on a copy."""
    folder = tmp_path_factory.mktemp("work")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def isolated_ir_datasets_home(ir_datasets_home):
    """A fresh ``IR_DATASETS_HOME`` of this test alone (asking for it keeps the test out of the shared home)."""
    return ir_datasets_home


def _tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """Size and modification time of every file below ``root`` (folders left out: a process that imports
    ir_datasets makes empty folders for stock ir_datasets' own datasets in its home)."""
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if not p.is_dir()}


@pytest.fixture(scope="session")
def shared_ir_datasets_home(tmp_path_factory):
    """One ``IR_DATASETS_HOME`` for the tests that read the real release, read-only once built.

    Built once per run (the xdist workers share it, under a lock): the ComLQ release verified from
    ``../shared/data``, its docstore and its document id set, those of NevIR's derived test pairs and of the
    packaged demo (the committed runs are checked against them). At the end of the session it must be as it was
    after the build: a test that writes into its home must ask for ``isolated_ir_datasets_home``.
    """
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the same folder for every worker
    home = root / "shared_ir_datasets_home"
    with FileLock(str(root / "shared_ir_datasets_home.lock")):
        if not (home / ".built").is_file() and REAL_RELEASE.is_file():
            _build_shared_home(home)
        before = _tree_state(home) if home.is_dir() else {}
    yield home
    changed = sorted(set(_tree_state(home).items()) ^ set(before.items())) if home.is_dir() else []
    if changed:
        pytest.fail(f"tests changed the shared IR_DATASETS_HOME {home} (a test that writes there must ask for "
                    f"isolated_ir_datasets_home): {sorted({path for path, _ in changed})}", pytrace=False)


def _build_shared_home(home: Path) -> None:
    import ir_datasets

    from negplugins.evaluation.validation import doc_id_set

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(home))
        patch.setenv("IR_DATASETS_EXT_MIRROR", str(SHARED_DATA))
        ir_datasets.load("comlq").docs_store().build()
        for dataset_id in ("comlq", "nevir/test", "negplugins-demo"):
            doc_id_set(dataset_id)
    (home / ".built").write_text("")


def _built_once(home: Path, name: str, done: str, build, what: str, real: bool = True):
    """Body of a session fixture: the folder ``name`` beside the shared home, built by ``build(folder)`` (in that
    home; the real release served as the mirror where ``real``) by the first xdist worker that asks, under a lock,
    once ``done`` (a path in it) is there; the others reuse it. At the end of the session it must be as built."""
    from filelock import FileLock

    if real and not REAL_RELEASE.is_file():
        missing_real_data(f"{REAL_RELEASE} is missing")
    folder = home.parent / name
    with FileLock(str(home.parent / f"{name}.lock")):
        if not (folder / done).exists():
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("IR_DATASETS_HOME", str(home))
                if real:
                    patch.setenv("IR_DATASETS_EXT_MIRROR", str(SHARED_DATA))
                else:
                    patch.delenv("IR_DATASETS_EXT_MIRROR", raising=False)
                build(folder)
        before = _tree_state(folder)
    yield folder
    changed = sorted(set(_tree_state(folder).items()) ^ set(before.items()))
    if changed:
        pytest.fail(f"tests changed {what} {folder} (copy it first): {sorted({path for path, _ in changed})}",
                    pytrace=False)


@pytest.fixture(scope="session")
def shared_comlq_index(shared_ir_datasets_home):
    """The Lucene index of the real ComLQ release (``negplugins index comlq``), built once per run and read-only.

    Built under a lock by the first xdist worker that asks, in the session's shared home; the others reuse it. A
    test that searches ComLQ but whose subject is not the index build takes this one; a test that changes an
    index copies it first (:func:`copy_of_shared_comlq_index`). At the end of the session it must be as built.
    """
    from negplugins.runners.common import MANIFEST
    from negplugins.runners.lucene_index import lucene_index

    yield from _built_once(shared_ir_datasets_home, "shared_comlq_index", MANIFEST,
                           lambda folder: lucene_index("comlq", folder, threads=2), "the shared ComLQ index")


@pytest.fixture(scope="session")
def shared_comlq_bm25_run(shared_ir_datasets_home, shared_comlq_index):
    """The suite's BM25 run of the real ComLQ release at Pyserini's defaults, top 100 (``negplugins search bm25
    comlq --hits 100`` over :func:`shared_comlq_index`): ``bm25.trec.gz`` and its sidecar, written once per run and
    read-only.

    Written under a lock by the first xdist worker that asks (about 11 s of CPU); the BM25 anchor
    (tests/pipeline/test_lucene_bm25.py) checks it, and the report card's ComLQ test is given it as its finished
    BM25 baseline. At the end of the session it must be as written.
    """
    from negplugins.runners.bm25 import bm25_search

    def build(folder):
        bm25_search("comlq", folder / "bm25.trec.gz", index=shared_comlq_index, hits=100, threads=2)

    for folder in _built_once(shared_ir_datasets_home, "shared_comlq_bm25", "bm25.trec.gz", build,
                              "the shared ComLQ BM25 run"):
        yield folder / "bm25.trec.gz"


@pytest.fixture(scope="session")
def demo_lucene_index(tmp_path_factory):
    """The suite's Lucene index of the packaged demo (``negplugins index negplugins-demo``), built once per run with
    a cache of its own, and read-only: a test that damages or rebuilds an index copies it first."""
    from negplugins.runners.common import MANIFEST
    from negplugins.runners.lucene_index import lucene_index

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    home = root / "demo_ir_datasets_home"
    yield from _built_once(home, "demo_lucene_index", MANIFEST,
                           lambda folder: lucene_index("negplugins-demo", folder), "the demo's Lucene index", real=False)


@pytest.fixture(scope="session")
def minilm_encoder():
    """The packaged all-MiniLM-L6-v2 as the suite's runners load it (``DenseEncoder``), once per worker."""
    from negplugins.runners.encoders import DenseEncoder
    from negplugins.runners.model_refs import resolve_model

    return DenseEncoder(resolve_model(None), device="cpu")


@pytest.fixture(scope="session")
def plain_minilm():
    """The packaged all-MiniLM-L6-v2 loaded by sentence-transformers alone: the independent reference of the
    suite's encodings, once per worker."""
    from sentence_transformers import SentenceTransformer

    from negplugins.runners.model_refs import default_model_path

    return SentenceTransformer(str(default_model_path()), device="cpu")


@pytest.fixture
def copy_of_shared_comlq_index(shared_comlq_index, tmp_path) -> Path:
    """A copy of :func:`shared_comlq_index` of this test alone, to damage, rebuild or stop a command on."""
    import shutil

    return Path(shutil.copytree(shared_comlq_index, tmp_path / "comlq-index", copy_function=shutil.copy2))


@pytest.fixture(autouse=True, scope="module")
def jvm_keeps_its_crash_handlers(request):
    """Fail the module after which the JVM that runs Lucene in this process no longer handles its own faults.

    Without this check, a module that lets a library replace them (Ray's ``ray.init`` did) crashes the whole run
    later, in whichever Lucene test first makes the JVM fault (negplugins/_compat/crash_handlers.py).
    """
    from negplugins._compat.crash_handlers import jvm_handles_segv

    yield
    if jvm_handles_segv() is False:
        pytest.fail(f"{request.node.nodeid} left the JVM without its SIGSEGV handler; wrap what replaced it in "
                    f"negplugins._compat.crash_handlers.keep_crash_handlers()", pytrace=False)


def _checkout_state() -> dict[str, tuple] | None:
    """What ``git status`` shows of the checkout, ignored files included, with each listed path's size and newest
    modification; ``None`` outside a git checkout. Python's and the tools' caches are left out."""
    import subprocess

    done = subprocess.run(["git", "status", "--porcelain", "--ignored", "-z"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    state = {}
    for entry in filter(None, done.stdout.split("\0")):
        path = entry[3:].rstrip("/")
        if path in (".venv", ".pytest_cache", ".ruff_cache") or path.split("/")[-1] == "__pycache__":
            continue
        target = PROJECT_ROOT / path
        files = [target, *target.rglob("*")] if target.is_dir() else [target]
        stats = [f.lstat() for f in files if f.exists() or f.is_symlink()]
        state[path] = (entry[:2], len(stats), sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats),
                                                                                  default=0))
    return state


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # once per run: in the xdist controller or a plain run
        session.config.stash[_CHECKOUT] = _checkout_state()


def pytest_sessionfinish(session, exitstatus):
    """Fail the run when the tests changed the checkout (a file written, removed or altered, ignored ones too)."""
    before = session.config.stash.get(_CHECKOUT, None)
    if before is None:
        return
    after = _checkout_state() or {}
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    if changed:
        session.config.get_terminal_writer().line()
        session.config.get_terminal_writer().line(
            f"the tests changed the checkout {PROJECT_ROOT}: {', '.join(changed)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_CHECKOUT = pytest.StashKey[dict]()


def real_data_required() -> bool:
    """Whether a missing real data folder fails a test instead of skipping it: in CI (``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def missing_real_data(reason: str):
    """End a test whose real data is not here: skipped, or failed when :func:`real_data_required`."""
    if real_data_required():
        pytest.fail(f"{reason}; CI=true, where the real data must be present", pytrace=False)
    pytest.skip(reason)


#: Test files whose subject is a runner or a benchmark of the packaged all-MiniLM-L6-v2 (marker ``model``).
_MODEL_FILES = {"runners/test_runners_dense.py", "runners/test_runners_dense_options.py",
                "runners/test_runners_dense_backends.py", "runners/test_dense_index_types.py",
                "runners/test_one_way.py", "runners/test_rerank_reuse.py", "runners/test_runners_ray.py",
                "runners/test_runners_ray_setup.py", "runners/test_runners_cli.py", "beir/test_beir_retrieval.py",
                "reportcard/test_benchmark_suite.py", "reportcard/test_nevir_real_pairs.py", "mteb/test_mteb_comlq.py"}
_MODEL_FIXTURES = {"minilm_encoder", "plain_minilm", "minilm"}


def _test_file(item) -> str:
    """The item's file relative to ``tests/`` (``""`` outside it)."""
    tests = Path(__file__).resolve().parent
    return item.path.relative_to(tests).as_posix() if item.path.is_relative_to(tests) else ""


#: The files that take longest (seconds on this 2-core machine, measured with ``--durations``), longest first. They
#: run first: each xdist worker takes the next file when it is free (``--dist loadfile --no-loadscope-reorder``,
#: pyproject.toml), so the short files left at the end even the workers out. xdist's own order, by number of tests,
#: left a Ray file of five tests (90 s) for last, and one worker ran 40 s after the other had finished.
_LONGEST_FIRST = ("runners/test_runners_ray.py", "safety/test_safe_outputs.py", "safety/test_interrupts.py",
                  "pipeline/test_lucene_bm25.py", "reportcard/test_benchmark_suite.py",
                  "pipeline/test_stock_topics.py", "pipeline/test_quiet_and_progress.py",
                  "runners/test_runners_splade.py", "measures/test_stock_measures_untouched.py",
                  "runners/test_runners_dense_backends.py", "runners/test_dense_index_types.py",
                  "safety/test_user_conditions.py", "runners/test_runners_dense.py", "test_jvm.py",
                  "runners/test_encoding_pipeline.py", "test_autoload.py", "pipeline/test_cli.py",
                  "reportcard/test_nevir_real_pairs.py", "runners/test_runners_ray_setup.py")


#: The full tier (marker ``full``; ``.ci/run`` runs it after the quick one): tests whose subject is a process of its
#: own, the JVM's start, a stock tool's own command line or a signal across processes, besides every test marked
#: ``ray`` and those using the fixtures of :data:`_FULL_TIER_FIXTURES`. docs/testing.md says what each tier covers.
_FULL_TIER_FILES = {"safety/test_interrupts.py", "test_jvm.py", "test_autoload.py", "pipeline/test_stock_topics.py",
                    "measures/test_stock_measures_untouched.py", "reportcard/test_nevir_real_pairs.py"}
_FULL_TIER_TESTS = {f"{file}::{test}" for file, tests in {
    "pipeline/test_lucene_bm25.py": ("test_search_bm25_starts_without_pyserini_search_or_torch",
                                     "test_committed_bm25_run_agrees_with_stock_trec_eval"),
    "pipeline/test_quiet_and_progress.py": ("test_search_bm25_says_nothing_on_stderr_without_v",
                                            "test_reading_comlq_prints_nothing"),
    "runners/test_encoding_pipeline.py": ("test_the_gpu_benchmark_needs_no_ir_measures_ir_datasets_pyserini_or_faiss",),
    "runners/test_runners_dense.py": ("test_index_layout_and_stock_pyserini_faiss_parity",),
    "runners/test_runners_bm25_zh.py": ("test_chinese_index_equals_stock_pyserini_index_collection",),
    "test_ir_datasets_export.py": ("test_other_records_are_exported_as_stock",
                                   "test_stock_ir_datasets_export_writes_has_negation"),
    "safety/test_bounded_inputs.py": ("test_stale_temporary_of_killed_copy_removed",
                                      "test_killed_copy_leaves_nothing_the_next_run_keeps"),
    "safety/test_safe_outputs.py": ("test_readme_workflow_and_demo_leave_a_fresh_clone_clean",
                                    "test_sigterm_during_index_cleans_up_and_the_next_run_builds",
                                    "test_sigint_during_index_exits_130_and_leaves_no_partial_or_corpus_copy",
                                    "test_sigkill_during_index_leaves_partials_that_the_next_run_removes",
                                    "test_a_second_leaderboard_build_waits_then_refuses_and_keeps_the_first_builds_work",
                                    "test_a_second_index_build_refuses_while_the_first_holds_the_lock",
                                    "test_evaluate_output_onto_a_fifo_is_refused_without_blocking",
                                    "test_topics_refuses_a_fifo_and_a_folder"),
    "safety/test_user_conditions.py": (
        "test_an_unusable_ir_datasets_home_is_named_before_ir_datasets_is_imported",
        "test_an_empty_read_only_ir_datasets_home_is_named_when_ir_datasets_fails_to_import",
        "test_a_prepared_read_only_ir_datasets_home_is_accepted", "test_a_java_home_without_a_jvm_is_named",
        "test_a_java_home_without_a_jvm_does_not_stop_a_command_without_java"),
}.items() for test in tests}
#: Stock Pyserini's own command line, as ``python -m`` runs it, in a child process.
_FULL_TIER_FIXTURES = {"stock_commands"}


def pytest_collection_modifyitems(config, items):
    """The longest files first (:data:`_LONGEST_FIRST`); the markers ``model``, ``ray`` and ``full``
    (pyproject.toml), set here so that a new test in those files has them."""
    rank = {file: n for n, file in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_test_file(item), len(rank)))  # stable: the others keep their order
    for item in items:
        file = _test_file(item)
        fixtures = set(getattr(item, "fixturenames", ()))
        if file in _MODEL_FILES or fixtures & _MODEL_FIXTURES:
            item.add_marker(pytest.mark.model)
        if file in ("runners/test_runners_ray.py", "runners/test_runners_ray_setup.py") or "_ray_" in item.name:
            item.add_marker(pytest.mark.ray)
        if (file in _FULL_TIER_FILES or f"{file}::{getattr(item, 'originalname', item.name)}" in _FULL_TIER_TESTS
                or fixtures & _FULL_TIER_FIXTURES or item.get_closest_marker("ray") is not None):
            item.add_marker(pytest.mark.full)


def pytest_runtest_setup(item):
    """Every test marked ``realdata`` needs the real ComLQ release, whether or not it asks for ``shared_data``."""
    if item.get_closest_marker("realdata") is not None and not REAL_RELEASE.is_file():
        missing_real_data(f"the real ComLQ release is not at {REAL_RELEASE}")


@pytest.fixture(name="missing_real_data")
def missing_real_data_fixture():
    """:func:`missing_real_data`, for a test that finds out during its run that its real data is missing."""
    return missing_real_data


@pytest.fixture
def shared_data():
    if not REAL_RELEASE.is_file():
        missing_real_data(f"the real ComLQ release is not at {REAL_RELEASE}")
    return SHARED_DATA


@pytest.fixture
def comlq_mirror(shared_data, monkeypatch):
    """The real ComLQ release, served through the offline mirror variable."""
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(shared_data))
    return shared_data


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """An empty mirror folder set as ``IR_DATASETS_EXT_MIRROR``; tests write fixture files into it."""
    root = tmp_path / "mirror"
    root.mkdir()
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(root))
    return root


def write_trec(path: Path, ranking: dict, tag: str = "t") -> Path:
    """``{query_id: [doc_id, ...]}`` (best first) as a TREC run with decreasing scores."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for query_id, docs in ranking.items():
        for rank, doc_id in enumerate(docs, start=1):
            lines.append(f"{query_id} Q0 {doc_id} {rank} {100 - rank:.6f} {tag}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def trec():
    """The :func:`write_trec` helper."""
    return write_trec


class CommandTimeout(BaseException):
    """A command run by ``main_cli`` that did not end in time (a read blocked on a FIFO, a loop): the test fails."""


def _timed_out(signum, frame):
    raise CommandTimeout("the command did not end within its timeout")


@pytest.fixture
def main_cli(capfd, monkeypatch):
    """``negplugins ARGS`` in this process (:func:`negplugins.cli.main`, what the console script calls).

    For a case whose subject is the command's message and what it writes, not the process (its signals, its
    import-time checks, the exit status of the real program keep a child process: tests/safety/conftest.py's
    ``run_cli``). Returns what ``run_cli`` returns: the status (argparse's ``SystemExit`` included) and both streams, captured at the file descriptors so
    that what the JVM prints counts too. As ``run_cli``, a command that has not ended after ``timeout`` seconds
    fails the test (``SIGALRM`` raises :class:`CommandTimeout` in the Python code it waits in, a blocking ``open``
    included). The process-wide settings the command changes (the logging switch, its environment variable) are put
    back; ``sys.argv`` is the command's own (``negplugins ARGS``), as the sidecars it writes record it.
    """
    import logging
    import signal
    from types import SimpleNamespace

    from negplugins.cli import main

    def run(*args, cwd=None, env=None, timeout=120):
        progress_bars, logging_switch = os.environ.get("IR_DATASETS_DL_DISABLE_PBAR"), logging.root.manager.disable
        capfd.readouterr()
        alarm = signal.signal(signal.SIGALRM, _timed_out)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        with monkeypatch.context() as scoped:
            scoped.chdir(cwd or os.getcwd())
            for name, value in (env or {}).items():
                scoped.setenv(name, value)
            scoped.setattr(sys, "argv", ["negplugins", *map(str, args)])  # the command line a sidecar records
            try:
                status = main([str(arg) for arg in args])
            except SystemExit as exit:  # argparse's usage errors and --help end the program so
                status = exit.code
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, alarm)
                logging.disable(logging_switch)
                if progress_bars is None:  # the command sets it for itself
                    os.environ.pop("IR_DATASETS_DL_DISABLE_PBAR", None)
                sys.stdout.flush()
                sys.stderr.flush()
        out, err = capfd.readouterr()
        return SimpleNamespace(returncode=status, stdout=out, stderr=err)

    return run


@pytest.fixture(scope="module")
def stock_commands(tmp_path_factory):
    """One child process for the stock commands of a test module (:class:`stock_commands.StockCommands`)."""
    from stock_commands import StockCommands

    commands = StockCommands(tmp_path_factory.mktemp("stock") / "output.log")
    yield commands
    commands.close()


_WORDS = ("which what was used except in not country throughout nickel the a of is city capital france paris "
          "query document relevant true false metal and or but").split()
_CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789?.,:'-")


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A randomly initialised 1-layer BERT sequence classifier (1 label) with its WordPiece vocabulary.

    No trained cross-encoder weights are reachable offline: the cross-encoder code paths run on this.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS, *_CHARS, *(f"##{c}" for c in _CHARS)]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=512, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_monot5(tmp_path_factory) -> Path:
    """A randomly initialised 1-layer T5 with a real ``T5Tokenizer`` whose vocabulary has ``true`` / ``false``."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer

    folder = tmp_path_factory.mktemp("tiny-monot5")
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -3.0),
             *((f"\u2581{w}", -1.0) for w in _WORDS), *((c, -5.0) for c in _CHARS + list("QDRAEIOUN"))]
    tokenizer = T5Tokenizer(vocab=vocab, extra_ids=0)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=37, num_layers=1, num_decoder_layers=1,
                      num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder
