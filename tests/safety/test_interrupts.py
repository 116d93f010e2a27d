"""SIGINT and SIGTERM at any moment leave nothing half-done (issue 21, part 2).

Two kinds of test. Deterministic ones drive the one write path (``negplugins.io.files``) and deliver a real
signal to this process just before or just after each file system call it makes (``os.replace``,
``tempfile.mkdtemp``, ``shutil.rmtree``, ``os.unlink``, ...), or make that call fail: every moment of a swap
is covered, not only the ones a timer happens to hit. End-to-end ones start real ``negplugins`` commands
(the JVM included), send SIGINT or SIGTERM at several moments, and check the exit status (130 / 143, within
seconds), that no temporary file, lock or partial folder is left, and that the outputs that existed before
are byte-identical.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from safety_helpers import PROJECT_ROOT, descendant_named, tree_hashes

from negplugins.io import files
from negplugins.io.files import MARKER, atomic_directory, atomic_writer, output_lock
from negplugins.io.interrupts import deferred_signals

DEMO = "negplugins-demo"


class Terminated(BaseException):
    """Stands for the command line's SIGTERM exception (``negplugins.cli.Terminated``)."""


@pytest.fixture
def sigterm_raises():
    """SIGTERM raises :class:`Terminated` in this process, as under the command line."""
    def terminate(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    yield
    signal.signal(signal.SIGTERM, previous)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _previous_output(folder: Path) -> Path:
    """An earlier output of the suite at ``folder/out``: two files, a subfolder and the marker."""
    out = folder / "out"
    with atomic_directory(out) as tmp:
        (tmp / "a.txt").write_text("previous a\n")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.txt").write_text("previous b\n")
    return out


class _Calls:
    """Wraps file system functions of ``negplugins.io.files``; numbers every call, and at call ``at`` acts."""

    NAMES = (("os", "replace"), ("os", "unlink"), ("os", "chmod"), ("tempfile", "mkdtemp"), ("shutil", "rmtree"))

    def __init__(self, monkeypatch, at: int | None, action):
        self.count, self.at, self.action, self.log = 0, at, action, []
        for module, name in self.NAMES:
            real = getattr(getattr(files, module), name)
            monkeypatch.setattr(f"negplugins.io.files.{module}.{name}", self._wrap(f"{module}.{name}", real))

    def _wrap(self, label, real):
        def call(*args, **kwargs):
            self.count += 1
            self.log.append(label)
            if self.count == self.at:
                return self.action(real, *args, **kwargs)
            return real(*args, **kwargs)
        return call


def _signal_before(signum):
    def act(real, *args, **kwargs):
        os.kill(os.getpid(), signum)  # delivered by Python at its next check, unless held back
        return real(*args, **kwargs)
    return act


def _signal_after(signum):
    def act(real, *args, **kwargs):
        try:
            return real(*args, **kwargs)
        finally:  # also when the call fails (``shutil.rmtree`` tries ``os.unlink`` on a folder first)
            os.kill(os.getpid(), signum)
    return act


def _fail(real, *args, **kwargs):
    raise OSError(5, "simulated failure")


def _after_swap(log: list[str], position: int) -> bool:
    """Whether call ``position`` (from 0) came after the swap's second rename (the new folder into place)."""
    renames = [i for i, name in enumerate(log) if name == "os.replace"]
    return len(renames) >= 2 and position > renames[1]


def _build(out: Path):
    with atomic_directory(out) as tmp:
        (tmp / "a.txt").write_text("new a\n")
        (tmp / "c.txt").write_text("new c\n")


def _count_calls(tmp_path, monkeypatch) -> int:
    """How many wrapped calls one replacement of an existing output makes (the moments to interrupt)."""
    folder = tmp_path / "count"
    folder.mkdir()
    out = _previous_output(folder)
    with monkeypatch.context() as patch:
        calls = _Calls(patch, None, None)
        _build(out)
    assert calls.log.count("os.replace") == 2, calls.log  # previous aside, new into place
    return calls.count


MOMENTS = range(1, 14)  # more than the calls a replacement makes (asserted below): every one of them is hit


@pytest.mark.parametrize("signum, exception", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)])
@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("at", MOMENTS)
def test_a_signal_at_any_call_of_a_folder_swap_leaves_the_old_or_the_whole_new_output(
        tmp_path, monkeypatch, sigterm_raises, signum, exception, when, at):
    assert _count_calls(tmp_path, monkeypatch) <= max(MOMENTS)
    folder = tmp_path / "f"
    folder.mkdir()
    out = _previous_output(folder)
    before = tree_hashes(out)
    calls = _Calls(monkeypatch, at, (_signal_before if when == "before" else _signal_after)(signum))
    raised = None
    try:
        _build(out)
    except BaseException as error:  # noqa: BLE001 - which one is the point of the test
        raised = error
    monkeypatch.undo()
    if calls.count < at:  # this replacement makes fewer calls: no signal was sent
        assert raised is None
        return
    assert isinstance(raised, exception), (calls.log, raised)
    after = tree_hashes(out)
    new_in_place = (out / "c.txt").is_file()
    if new_in_place:  # only a signal after the point of no return (the new folder renamed into place)
        assert _after_swap(calls.log, at - 1), calls.log
        assert (out / "a.txt").read_text() == "new a\n" and not (out / "sub").exists()
    else:
        assert after == before, f"the previous output changed: signal {when} call {at} ({calls.log[at - 1]})"
    assert _leftovers(folder) == [], calls.log


@pytest.mark.parametrize("at", MOMENTS)
def test_a_failing_call_during_a_folder_swap_leaves_the_previous_output(tmp_path, monkeypatch, at):
    folder = tmp_path / "f"
    folder.mkdir()
    out = _previous_output(folder)
    before = tree_hashes(out)
    calls = _Calls(monkeypatch, at, _fail)
    try:
        _build(out)
    except OSError:
        pass
    monkeypatch.undo()
    if calls.count < at:
        return
    label = calls.log[at - 1]
    if _after_swap(calls.log, at - 1):  # removing the previous output after the swap: the new one is complete
        assert (out / "c.txt").is_file() and (out / MARKER).is_file()
        return
    assert tree_hashes(out) == before, f"the previous output changed when call {at} ({label}) failed"
    assert not (out / "c.txt").exists()
    assert _leftovers(folder) == [], calls.log


def test_a_build_killed_between_the_two_renames_gets_its_previous_output_back(tmp_path):
    """SIGKILL cannot be held back: the next build puts the previous output back before anything else."""
    folder = tmp_path / "f"
    folder.mkdir()
    out = _previous_output(folder)
    before = tree_hashes(out)
    aside = Path(tempfile.mkdtemp(prefix=".out.old-", suffix=".partial", dir=folder))
    os.replace(out, aside / "out")  # what a build killed right after the first rename leaves
    partial = Path(tempfile.mkdtemp(prefix=".out.", suffix=".partial", dir=folder))
    (partial / "half").write_text("x")  # and the new folder it was about to rename
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(out):
            assert tree_hashes(out) == before  # back before the next build's body runs
            raise KeyboardInterrupt
    assert tree_hashes(out) == before
    assert _leftovers(folder) == []


def test_a_new_output_interrupted_in_its_body_leaves_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(tmp_path / "out") as tmp:
            (tmp / "a").write_text("x")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("at", range(1, 5))
def test_a_signal_at_any_call_of_a_file_write_leaves_the_previous_file(tmp_path, monkeypatch, when, at):
    target = tmp_path / "run.trec"
    target.write_text("previous\n")
    calls = _Calls(monkeypatch, at, (_signal_before if when == "before" else _signal_after)(signal.SIGINT))
    raised = None
    try:
        with atomic_writer(target) as f:
            f.write("new\n")
    except KeyboardInterrupt as error:
        raised = error
    monkeypatch.undo()
    if calls.count < at:
        return
    assert raised is not None
    # new only when the signal came with or after the rename (the point of no return)
    assert target.read_text() == "previous\n" or calls.log.index("os.replace") <= at - 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.trec"], calls.log


@pytest.mark.parametrize("at", range(1, 4))
def test_a_signal_while_taking_or_releasing_a_lock_leaves_no_lock_file(tmp_path, monkeypatch, at):
    real_open = os.open
    count = 0

    def signal_after_open(*args, **kwargs):
        nonlocal count
        count += 1
        fd = real_open(*args, **kwargs)
        if count == at:
            os.kill(os.getpid(), signal.SIGINT)
        return fd

    monkeypatch.setattr("negplugins.io.files.os.open", signal_after_open)
    with pytest.raises(KeyboardInterrupt):
        with output_lock(tmp_path / "idx"):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_deferred_signals_deliver_the_first_signal_after_the_block(sigterm_raises):
    steps = []
    with pytest.raises(Terminated):
        with deferred_signals() as pending:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            steps.append(bool(pending))
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("not cut")
    assert steps == [True, "not cut"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_old_output_marker_is_kept_by_an_interrupted_swap(tmp_path, monkeypatch):
    folder = tmp_path / "f"
    folder.mkdir()
    out = _previous_output(folder)
    marker = (out / MARKER).read_bytes()
    _Calls(monkeypatch, 4, _signal_before(signal.SIGINT))  # the previous folder about to be moved aside
    with pytest.raises(KeyboardInterrupt):
        _build(out)
    monkeypatch.undo()
    assert (out / MARKER).read_bytes() == marker


# -- real commands, real signals -----------------------------------------------------------------

_CHILDREN: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_child_left_running():
    """A command a failed test left running (one that hung on a signal, say) is killed when the test ends."""
    yield
    while _CHILDREN:
        child = _CHILDREN.pop()
        if child.poll() is None:
            child.kill()
            child.communicate()


def _start(args, cwd, env=None):
    full_env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), **(env or {}))
    child = subprocess.Popen([sys.executable, "-m", "negplugins", *map(str, args)], cwd=cwd, env=full_env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _CHILDREN.append(child)
    return child


def _stop(child, signum, after: float) -> tuple[int, str, float]:
    time.sleep(after)
    child.send_signal(signum)
    sent = time.monotonic()
    _, stderr = child.communicate(timeout=60)
    return child.returncode, stderr, time.monotonic() - sent


def _wait_for(child, ready, what: str, timeout: float = 240.0) -> None:
    """Poll, while the command runs, until ``ready()``: an observable sign (a file) of the moment to signal."""
    deadline = time.monotonic() + timeout
    while not ready():
        if child.poll() is not None:
            _, stderr = child.communicate()
            pytest.fail(f"the command ended (status {child.returncode}) before {what}: {stderr}")
        assert time.monotonic() < deadline, f"no sign of {what} within {timeout} s"
        time.sleep(0.05)


def _last_line(stderr: str) -> str:
    return (stderr.strip().splitlines() or [""])[-1]


def _hidden(folder: Path) -> list[str]:
    """The suite's temporary files, locks and partial folders (``.<name>.*``) anywhere under ``folder``.

    Lucene's own ``write.lock``, which every Lucene index keeps, is not one of them.
    """
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*")
                  if p.name.endswith((".tmp", ".partial", ".lock")) or ".old-" in p.name)


EXIT = {signal.SIGINT: (130, "negplugins: interrupted"), signal.SIGTERM: (143, "negplugins: terminated")}


def _wait_for_line(child, text: str) -> None:
    """Read the command's standard error until a line holding ``text``."""
    seen = []
    while not seen or text not in seen[-1]:
        line = child.stderr.readline()
        assert line, f"the command ended before printing {text!r}: {''.join(seen)}"
        seen.append(line)


@pytest.mark.java
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("moment", ["before the JVM", "in the JVM", "after the index"])
def test_index_then_search_interrupted_at_several_moments(tmp_path, ir_datasets_home, signum, moment):
    """``search bm25`` builds the demo's index (JVM) and searches: stopped before, during or after the JVM.

    Each moment is an observable sign, not a fixed time: the first folders in the fresh ``IR_DATASETS_HOME`` (the
    command line's handlers in place, ir_datasets imported while the parser is built, the JVM seconds away), the
    line of ``NEGPLUGINS_TEST_PAUSE_INDEXING`` (the JVM started, the partial index made, Anserini next), the
    finished index in place (the search under way).
    """
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.trec").write_text("1 Q0 d 1 1.0 mine\n")
    before = tree_hashes(work)
    index = work / "indexes" / "lucene" / DEMO
    child = _start(["search", "bm25", DEMO, "-o", "mine.trec", "--force"], work,
                   env={"NEGPLUGINS_TEST_PAUSE_INDEXING": "3"} if moment == "in the JVM" else None)
    if moment == "before the JVM":
        _wait_for(child, lambda: any(ir_datasets_home.iterdir()), "ir_datasets' folders in IR_DATASETS_HOME")
    elif moment == "in the JVM":
        _wait_for_line(child, "before indexing (NEGPLUGINS_TEST_PAUSE_INDEXING)")
    else:
        _wait_for(child, (index / "negplugins-index.json").exists, "the index in place")
    code, stderr, took = _stop(child, signum, 0.0)
    assert (code, _last_line(stderr)) == EXIT[signum], (code, took, stderr)
    assert "Traceback" not in stderr and took < 30, (took, stderr)
    assert _hidden(work) == []
    assert not index.exists() or (index / "negplugins-index.json").is_file()  # none, or a whole one
    assert {k: v for k, v in tree_hashes(work).items() if not k.startswith(str(index))} == before


def _lucene_writing(folder: Path, pattern: str) -> bool:
    """Whether Anserini's indexer has written segment files into a partial index ``folder/pattern``."""
    try:
        return any(p.name.startswith("_") for partial in folder.glob(pattern) for p in partial.iterdir())
    except FileNotFoundError:  # the partial folder was renamed into place or removed meanwhile
        return False


def _run_being_written(folder: Path, pattern: str) -> bool:
    """Whether a run's temporary file ``folder/pattern`` holds lines: Anserini answered a first batch of queries."""
    try:
        return any(p.stat().st_size > 0 for p in folder.glob(pattern))
    except FileNotFoundError:
        return False


@pytest.mark.java
@pytest.mark.realdata
@pytest.mark.parametrize("signum, phase", [(signal.SIGTERM, "indexing"), (signal.SIGINT, "searching")])
def test_bm25_search_over_comlq_interrupted_while_anserini_works(tmp_path, comlq_mirror, shared_comlq_index, signum,
                                                                 phase):
    """The command of issue 21's report, stopped while Anserini's Java threads index or search ComLQ.

    Before ``-Xrs`` the JVM's own SIGINT handler ran ``System.exit`` on a Java thread: 25 s in, with the
    index reused and Anserini searching, the process hung (only SIGKILL ended it); at 15 s it exited but
    left ``.bm25.trec.XXXX.tmp``. The signal comes at an observable sign of Anserini at work, not after a
    fixed time: Lucene's segment files in the partial index (indexing, from a fresh folder), or the first
    lines in the run's temporary file (searching the next batch, over a copy of the session's ComLQ index,
    which must come out unchanged). The ``IR_DATASETS_HOME`` is fresh: the command builds its caches too.
    Each signal while Java threads work: SIGINT (the report's) while Anserini searches, SIGTERM while it indexes;
    both signals at every moment of a command are covered on the demo above, whose Java work takes milliseconds.
    """
    work = tmp_path / "work"
    work.mkdir()
    lucene = work / "indexes" / "lucene"
    if phase == "searching":  # the index the command finds and reuses, as in the report
        shutil.copytree(shared_comlq_index, lucene / "comlq", copy_function=shutil.copy2)
    index_before = tree_hashes(lucene)
    child = _start(["search", "bm25", "comlq", "-o", "bm25.trec", "--threads", "2"], work)
    if phase == "indexing":
        _wait_for(child, lambda: _lucene_writing(lucene, ".comlq.*.partial") or (lucene / "comlq").exists(),
                  "Lucene segment files in the partial index")
        if (lucene / "comlq").exists():
            pytest.skip("the index was built between two looks at its partial folder")
    else:
        _wait_for(child, lambda: _run_being_written(work, ".bm25.trec.*.tmp"), "lines in the run's temporary file")
    code, stderr, took = _stop(child, signum, 0.0)
    assert (code, _last_line(stderr)) == EXIT[signum], stderr
    assert "Traceback" not in stderr and took < 30, (took, stderr)
    assert _hidden(work) == [] and not (work / "bm25.trec").exists()
    assert tree_hashes(lucene) == index_before  # no index (building) or the reused one unchanged (searching)


#: Files the leaderboard build writes into a fresh ``IR_DATASETS_HOME``, in this order: ComLQ's release verified (its
#: caches are being built), then ComLQ's document id set (its runs are being evaluated; the demo's and NevIR's follow).
_LEADERBOARD_MOMENTS = {"building the caches": "comlq/.dataset.zip.verified",
                        "evaluating the runs": "negplugins/docids/comlq.npz"}


@pytest.mark.realdata
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_leaderboard_build_interrupted_keeps_the_committed_leaderboards(tmp_path, comlq_mirror, ir_datasets_home,
                                                                        signum):
    """A copy of the checkout's runs and leaderboards; the build is stopped at two moments of its work.

    The moments are observable signs in the test's fresh ``IR_DATASETS_HOME`` (:data:`_LEADERBOARD_MOMENTS`), each
    build in a home of its own, not fixed times: a signal while the interpreter is still importing ``negplugins``,
    before the command line's handlers exist, ends it with Python's default behaviour, nothing written yet. The
    moment of the swap itself is covered call by call above.
    """
    project = tmp_path / "project"
    shutil.copytree(PROJECT_ROOT / "runs", project / "runs")
    shutil.copytree(PROJECT_ROOT / "leaderboards", project / "leaderboards")
    before = tree_hashes(project / "leaderboards")
    for moment, sign in _LEADERBOARD_MOMENTS.items():
        home = ir_datasets_home / moment.replace(" ", "-")
        child = _start(["leaderboard", "build"], project, env={"IR_DATASETS_HOME": str(home)})
        _wait_for(child, (home / sign).exists, f"{home / sign} ({moment})")
        code, stderr, took = _stop(child, signum, 0.0)
        assert "Traceback" not in stderr and took < 30, stderr
        assert _hidden(project) == []
        if code == 0:
            continue  # finished first: rebuilt with the same bytes
        assert (code, _last_line(stderr)) == EXIT[signum], stderr
        assert tree_hashes(project / "leaderboards") == before, f"stopped while {moment}"


def test_sigterm_while_ray_runs_exits_143_not_rays_15(tmp_path):
    """``ray.init`` sets a SIGTERM handler of its own (``sys.exit(15)``); the command line's is given back."""
    pytest.importorskip("ray")
    child = _start(["search", "dense", DEMO, "--engine", "ray", "--shard-num", "4", "-o", "run.trec", "--no-progress"],
                   tmp_path)
    deadline = time.monotonic() + 240
    while descendant_named(child.pid, "raylet") is None:
        assert child.poll() is None and time.monotonic() < deadline, "the command ended before Ray started"
        time.sleep(0.5)
    code, stderr, took = _stop(child, signal.SIGTERM, 2.0)
    if code == 0:
        pytest.skip("the command finished within 2 s of Ray's start")
    assert (code, _last_line(stderr)) == EXIT[signal.SIGTERM], stderr
    assert _hidden(tmp_path) == [] and not (tmp_path / "run.trec").exists()


def _run_and_sidecar(folder: Path):
    from negplugins.io.files import written_together

    with written_together():
        with atomic_writer(folder / "a.trec") as f:
            f.write("new run\n")
        time.sleep(0.01)  # where a runner hashes the run and builds the sidecar: a signal may come here
        with atomic_writer(folder / "a.meta.json") as f:
            f.write("new sidecar\n")


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("at", range(1, 8))
def test_a_run_and_its_sidecar_appear_together_or_not_at_all(tmp_path, monkeypatch, when, at):
    (tmp_path / "a.trec").write_text("old run\n")
    (tmp_path / "a.meta.json").write_text("old sidecar\n")
    calls = _Calls(monkeypatch, at, (_signal_before if when == "before" else _signal_after)(signal.SIGINT))
    try:
        _run_and_sidecar(tmp_path)
    except KeyboardInterrupt:
        pass
    monkeypatch.undo()
    pair = ((tmp_path / "a.trec").read_text(), (tmp_path / "a.meta.json").read_text())
    assert pair in (("old run\n", "old sidecar\n"), ("new run\n", "new sidecar\n")), (pair, calls.log)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.meta.json", "a.trec"], calls.log


def test_a_signal_between_the_run_and_its_sidecar_keeps_the_previous_pair(tmp_path, monkeypatch):
    (tmp_path / "a.trec").write_text("old run\n")
    (tmp_path / "a.meta.json").write_text("old sidecar\n")
    monkeypatch.setattr(time, "sleep", lambda seconds: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        _run_and_sidecar(tmp_path)
    assert (tmp_path / "a.trec").read_text() == "old run\n" and (tmp_path / "a.meta.json").read_text() == "old sidecar\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.meta.json", "a.trec"]


def test_the_sidecar_hashes_the_run_written_in_the_same_group(tmp_path):
    from negplugins.io.files import written_together
    from negplugins.io.sidecars import file_sha256, read_metadata, write_metadata
    from negplugins.io.trec import write_run

    with written_together():
        write_run(tmp_path / "r.trec", [("1", [("d1", 2.0), ("d2", 1.0)])], "t")
        assert not (tmp_path / "r.trec").exists()  # not in place before the sidecar
        write_metadata(tmp_path / "r.trec", dataset=DEMO, runner="bm25", system="s", tag="t", parameters={},
                       command="negplugins test")
    assert read_metadata(tmp_path / "r.trec")["run_sha256"] == file_sha256(tmp_path / "r.trec")


@pytest.mark.java
@pytest.mark.parametrize("gap", [0.0, 0.05])
def test_two_signals_at_once_still_exit_130_cleanly(tmp_path, gap):
    """An impatient second Ctrl-C, even one landing while the first is answered, gives the same clean end
    (it ended the process by SIGINT, status -2, once the first had printed its line)."""
    child = _start(["index", DEMO, "--index", "idx"], tmp_path, env={"NEGPLUGINS_TEST_PAUSE_INDEXING": "30"})
    _wait_for_line(child, "before indexing (NEGPLUGINS_TEST_PAUSE_INDEXING)")  # in the pause, the partial index made
    assert list(tmp_path.glob(".idx.*.partial"))
    child.send_signal(signal.SIGINT)
    time.sleep(gap)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert (child.returncode, _last_line(stderr)) == EXIT[signal.SIGINT], stderr
    assert "Traceback" not in stderr and _hidden(tmp_path) == [] and not (tmp_path / "idx").exists()


def test_saying_that_a_signal_ends_the_process_takes_no_lock_a_second_signal_could_wait_for(monkeypatch):
    """A second signal whose handler runs while the first handler is inside ``signal_ends_process`` (in a C call,
    where CPython runs pending handlers) does not wait forever.

    Regression: the flag was a ``threading.Event``, whose ``set()`` holds a lock; a SIGTERM landing while the
    SIGINT handler held it blocked on it for good (a ``negplugins index`` found hung after a test run, its stack
    three handlers deep in ``Event.set``). Here the second call is made at the first C call's return, in a thread
    so that a hang fails the test instead of the run.
    """
    from negplugins.io import interrupts

    monkeypatch.setattr(interrupts, "_ending", False)
    nested = []

    def second_signal(frame, event, arg):
        if event == "c_return" and not nested:
            nested.append(arg)
            interrupts.signal_ends_process()

    def first_signal():
        sys.setprofile(second_signal)  # this thread only
        try:
            interrupts.signal_ends_process()
        finally:
            sys.setprofile(None)

    thread = threading.Thread(target=first_signal, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), f"the second call waited for a lock the first one held (inside {nested})"
    assert interrupts.process_ends_on_signal()


def test_only_the_program_leaves_ray_to_the_end_of_the_process(monkeypatch):
    """A signal ends the process only in the ``negplugins`` program (``cli.run``, which ends it at once after the
    cleanups): only there does the Ray engine leave ``ray.shutdown()`` to the process's end. A caller of
    ``cli.main`` or of the Python API keeps its process, and the engine shuts its local Ray down as before."""
    from negplugins import cli
    from negplugins.io import interrupts

    monkeypatch.setattr(interrupts, "_ending", False)
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        monkeypatch.setattr(cli, "_AS_PROGRAM", False)
        cli._stopping()
        assert not interrupts.process_ends_on_signal()
        monkeypatch.setattr(cli, "_AS_PROGRAM", True)
        cli._stopping()
        assert interrupts.process_ends_on_signal()
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
