"""Ray itself failing during a job of ``--engine ray`` (a worker, a node, this machine's raylet): one line that says
what happened, which step failed and what was kept; Ray's traceback only with ``-v``.

The fast tests run the engine's real job loop with Ray's cluster left out (``session``, the worker plan and the Ray
Data pipeline stand-ins) and raise Ray's real exception types from the pipeline, or kill a process standing in for
the raylet while the job waits on Ray. The last test kills the real raylet of a local Ray under ``search dense``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from safety_helpers import descendant_named, import_ray_or_skip

from negplugins.io import interrupts
from negplugins.runners import ray_engine, ray_failures
from negplugins.runners.ray_cluster import WorkerPlan

ray = import_ray_or_skip()

DEMO = "negplugins-demo"
#: The tests that wake the main thread with a real SIGUSR1 run in a pytest process of their own (started by
#: test_the_raylet_watch_runs_in_a_process_of_its_own): in a worker that earlier tests shared, one killed the worker.
_OWN_PROCESS = os.environ.get("NEGPLUGINS_TEST_OWN_PROCESS") == "1"
own_process = pytest.mark.skipif(not _OWN_PROCESS, reason="run in a process of its own by "
                                 "test_the_raylet_watch_runs_in_a_process_of_its_own")


class _Pipeline:
    """Stands in for the Ray dataset of a job: its batches end with ``fail()``."""

    def __init__(self, fail):
        self.fail = fail

    def iter_batches(self, **kwargs):
        yield from ()
        self.fail()


@pytest.fixture
def no_cluster(monkeypatch):
    """The engine's job loop without a Ray cluster; ``no_cluster(fail)`` sets what the job's pipeline does."""
    @contextlib.contextmanager
    def session(engine):
        yield SimpleNamespace(data=SimpleNamespace(from_items=lambda rows, **kwargs: rows))

    monkeypatch.setattr(ray_engine, "session", session)
    monkeypatch.setattr(ray_engine, "worker_plan", lambda *args, **kwargs: WorkerPlan(1, 1, 0))
    monkeypatch.setattr(interrupts, "_no_teardown", False)

    def pipeline(fail):
        monkeypatch.setattr(ray_engine, "_map", lambda *args, **kwargs: _Pipeline(fail))
    return pipeline


def _raise(error):
    def fail():
        raise error
    return fail


@pytest.mark.parametrize("error, happened", [
    (ray.exceptions.ActorDiedError(), "a Ray worker process died (ActorDiedError: The actor died unexpectedly"),
    (ray.exceptions.WorkerCrashedError(), "a Ray worker process died (WorkerCrashedError: The worker died"),
    (ray.exceptions.NodeDiedError("node 3f2a is dead"), "a node of the Ray cluster died (NodeDiedError: node 3f2a"),
    (ray.exceptions.LocalRayletDiedError(), "the Ray raylet of this machine died (LocalRayletDiedError:"),
], ids=["actor", "worker", "node", "raylet"])
def test_rays_own_failure_is_one_line_naming_it_the_step_and_what_was_kept(tmp_path, main_cli, first_stage,
                                                                           no_cluster, error, happened):
    no_cluster(_raise(error))
    first = first_stage(tmp_path / "first.trec")
    result = main_cli("search", "rerank", DEMO, "--run", first, "--model", "all-MiniLM-L6-v2", "--top-k", "5",
                      "--engine", "ray", "-o", "out.trec",
                      cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"negplugins: error: encoding the bi-encoder's texts on Ray failed: {happened}"), line
    assert line.endswith("; nothing was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.trec"]


def test_rays_traceback_is_shown_with_verbose(tmp_path, main_cli, first_stage, no_cluster):
    no_cluster(_raise(ray.exceptions.ActorDiedError()))
    first = first_stage(tmp_path / "first.trec")
    result = main_cli("search", "rerank", DEMO, "--run", first, "--model", "all-MiniLM-L6-v2", "--top-k", "5",
                      "--engine", "ray", "-o", "out.trec",
                      "-v", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback (most recent call last)" in result.stderr and "ray.exceptions.ActorDiedError" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("negplugins: error: encoding the bi-encoder's texts")


@pytest.fixture
def fake_raylet(monkeypatch):
    """A process standing in for this machine's raylet, watched by the engine; killed by ``fake_raylet.kill()``."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    monkeypatch.setattr(ray_failures, "_raylet_pid", lambda ray: process.pid)
    yield process
    process.kill()
    process.wait()


@own_process
def test_the_raylet_dying_while_the_job_waits_on_ray_ends_the_command_with_its_line(tmp_path, main_cli, first_stage,
                                                                                    no_cluster, fake_raylet):
    """Ray's core worker ends the process by itself (``_Exit(1)``) seconds after this machine's raylet died, with
    Ray's lines only; the engine notices first, stops the job where it waits on Ray, and the command says so."""
    no_cluster(lambda: time.sleep(60))  # a job waiting on Ray for a batch that will never come
    threading.Timer(1.0, fake_raylet.kill).start()
    first = first_stage(tmp_path / "first.trec")
    started = time.monotonic()
    result = main_cli("search", "rerank", DEMO, "--run", first, "--model", "all-MiniLM-L6-v2", "--top-k", "5",
                      "--engine", "ray", "-o", "out.trec",
                      cwd=tmp_path)
    assert time.monotonic() - started < 30
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"negplugins: error: encoding the bi-encoder's texts on Ray failed: the Ray raylet of this machine died "
        f"(process {fake_raylet.pid}); nothing was written")
    assert interrupts.ends_without_teardown()  # the program ends at once: Ray's exit handler would wait for the raylet
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.trec"]
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL  # the watch's handler is gone with the job


@own_process
def test_the_watch_interrupts_only_a_call_into_ray(fake_raylet):
    with ray_failures.RayletWatch(ray, interval=0.05) as watch:
        fake_raylet.kill()
        time.sleep(1)  # outside a call into Ray: only told
        assert watch.died
        with pytest.raises(KeyboardInterrupt):
            with watch.inside():
                time.sleep(60)


@pytest.mark.skipif(_OWN_PROCESS, reason="the outer run has it")
def test_the_raylet_watch_runs_in_a_process_of_its_own(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "not slow", __file__, "-k",
                           "raylet_dying or watch_interrupts", "--basetemp", str(tmp_path / "base")],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NEGPLUGINS_TEST_OWN_PROCESS="1"))
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


def test_a_killed_ray_raylet_under_search_dense_keeps_the_finished_shards(tmp_path):
    """The real thing: a local Ray's raylet killed once the first shard of the index is written."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    child = subprocess.Popen([sys.executable, "-m", "negplugins", "search", "dense", DEMO, "--engine", "ray",
                              "--shard-num", "8", "-o", "run.trec", "--no-progress"], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    shards = tmp_path / "indexes" / "faiss" / DEMO / "all-MiniLM-L6-v2.shards"
    try:
        deadline = time.monotonic() + 300
        while not list(shards.glob("shard-*")):
            assert child.poll() is None and time.monotonic() < deadline, "the command ended before a shard was written"
            time.sleep(0.1)
        raylet = descendant_named(child.pid, "raylet")
        assert raylet is not None
        os.kill(raylet, signal.SIGKILL)
        _, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    last = stderr.strip().splitlines()[-1]
    if child.returncode == 0:
        pytest.skip("the job finished before the raylet was killed")
    assert child.returncode == 2, stderr
    assert last == (f"negplugins: error: encoding {DEMO} on Ray failed: the Ray raylet of this machine died (process "
                    f"{raylet}); the shards finished so far are kept: run the same command again to resume"), stderr
    assert "Traceback" not in stderr
    kept = sorted(p.name for p in shards.iterdir())
    assert kept and all(name.startswith("shard-") for name in kept)  # whole shards only, nothing half-written
    assert not (tmp_path / "run.trec").exists()
