"""``--engine ray`` without a Ray job: its options, the workers' resources, a missing Ray or cluster, and the JVM's
crash handlers in a process that runs Ray (in processes of their own).

Kept apart from ``test_runners_ray.py`` (the Ray jobs, on the local Ray of that module) so that pytest-xdist's
``--dist loadfile`` can run the two files on two workers. Without Ray the module is skipped, except in CI
(``CI=true``), where Ray is installed by the README's command and a missing Ray fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from safety_helpers import import_ray_or_skip

from negplugins.cli import main
from negplugins.errors import UserError
from negplugins.runners import ray_cluster, ray_engine
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.ray_engine import RayEngine
from negplugins.runners.rerank import rerank

import_ray_or_skip()

DEMO = "negplugins-demo"


@pytest.mark.parametrize("argv, message", [
    (["--ray-address", "auto"], "--ray-address: only with --engine ray"),
    (["--ray-workers", "2"], "--ray-workers: only with --engine ray"),
    (["--ray-address", "auto", "--ray-workers", "2", "--engine", "single"],
     "--ray-address and --ray-workers: only with --engine ray"),
])
def test_ray_options_need_the_ray_engine(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(["search", "dense", DEMO, "-o", "run.trec", *argv]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"negplugins: error: {message}" and not Path("run.trec").exists()


def test_ray_needs_a_model_folder_not_a_model_object(tmp_path):
    from types import SimpleNamespace

    from negplugins.runners.model_refs import ModelRef

    encoder = SimpleNamespace(ref=ModelRef("object", None, "object"))  # as SentenceEncoder.from_model gives
    with pytest.raises(UserError, match="--engine ray: the Ray workers load the model from its folder"):
        dense_index(DEMO, index=tmp_path / "index", encoder=encoder, engine=RayEngine(workers=2), progress=False)


def test_bad_engine_values():
    with pytest.raises(UserError, match="unknown engine 'spark'; choose one of single, ray"):
        dense_search(DEMO, "x.trec", engine="spark")
    with pytest.raises(UserError, match="--ray-workers: expected an integer from 1 to 4096, got 0"):
        rerank(DEMO, "x.trec", candidates=True, engine=RayEngine(workers=0))


class _Cluster:
    """Stands in for ``ray`` in :func:`ray_cluster.worker_plan`: nodes with the given resources."""

    def __init__(self, *nodes):
        self._nodes = [{"Alive": True, "Resources": resources} for resources in nodes]

    def nodes(self):
        return self._nodes


def test_worker_plan_one_gpu_each_else_cpus_shared_out():
    plan = ray_cluster.worker_plan
    # GPUs: one worker per GPU by default, each with one GPU (and one CPU to feed it)
    gpus = _Cluster({"CPU": 16, "GPU": 4}, {"CPU": 8, "GPU": 2})
    assert (plan(gpus, RayEngine()).workers, plan(gpus, RayEngine()).num_gpus) == (6, 1)
    assert plan(gpus, RayEngine(workers=3)) == ray_cluster.WorkerPlan(3, 1, 1) and plan(gpus, RayEngine()).device == "cuda"
    with pytest.raises(UserError, match="--ray-workers 7: the Ray cluster has 6 GPU"):
        plan(gpus, RayEngine(workers=7))
    assert plan(gpus, RayEngine(), gpus=False) == ray_cluster.WorkerPlan(2, 8, 0)  # scorers stay on CPUs
    # CPUs: by default one worker per node; workers never span nodes
    cpus = _Cluster({"CPU": 2})
    assert plan(cpus, RayEngine()) == ray_cluster.WorkerPlan(1, 2, 0) and plan(cpus, RayEngine()).device == "cpu"
    assert plan(cpus, RayEngine(workers=2)) == ray_cluster.WorkerPlan(2, 1, 0)
    with pytest.raises(UserError, match="--ray-workers 3: the Ray cluster has 2 CPU"):
        plan(cpus, RayEngine(workers=3))
    assert plan(_Cluster({"CPU": 2}, {"CPU": 8}), RayEngine(workers=2)) == ray_cluster.WorkerPlan(2, 4, 0)  # both on the 8
    assert plan(_Cluster({"CPU": 3}, {"CPU": 3}), RayEngine(workers=3)) == ray_cluster.WorkerPlan(3, 1, 0)


def test_without_ray_the_engine_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(UserError, match=r"--engine ray needs Ray Data: pip install 'negplugins\[ray\]'"):
        ray_engine.score_pairs("ray", None, [("query", "document")], 8)


def test_an_address_nobody_answers_at_fails_at_once():
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(UserError, match=rf"--ray-address 127.0.0.1:{port}: no Ray cluster answers there"):
        ray_cluster.check_reachable(f"127.0.0.1:{port}", timeout=2)
    ray_cluster.check_reachable("auto")  # not HOST:PORT: left to Ray


# A Java StackOverflowError starts as a SIGSEGV that only the JVM's own handler turns into the Java error.
_JVM_AND_RAY = """
import logging, sys, warnings
warnings.simplefilter("always")
from negplugins._compat import jvm
from negplugins._compat.crash_handlers import jvm_handles_segv
jvm.configure()
from jnius import autoclass
from negplugins.runners import ray_cluster, ray_engine

def overflow(when):
    try:
        autoclass("java.util.regex.Pattern").compile("(a|b)*").matcher("ab" * 200000).matches()
    except Exception as error:
        print(when, type(error).__name__, str(error).split(":")[0], jvm_handles_segv(), flush=True)

overflow("before")
if sys.argv[1] == "engine":
    with ray_cluster.session(ray_engine.RayEngine(num_cpus=1)):
        overflow("during")
else:  # the caller starts Ray itself, without keep_crash_handlers
    import ray
    ray.init(num_cpus=1, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    with ray_cluster.session(ray_engine.RayEngine(num_cpus=1)):
        pass
overflow("after")
"""


@pytest.mark.parametrize("who", ["engine", "caller"])
def test_the_jvm_survives_ray_in_its_process(tmp_path, who):
    """Ray 2.60.0 replaces the JVM's crash handlers (exit 134 at the JVM's next fault); the engine puts them back.

    The second case is the measurement behind negplugins/_compat/crash_handlers.py: the caller's own ``ray.init``
    (what the CI run of 50033dc did in this module's fixture, which crashed the suite with exit 139 in a later
    Lucene test) kills the process at the first Java StackOverflowError, and the engine warns of it beforehand.
    """
    import subprocess

    script = tmp_path / "jvm_and_ray.py"
    script.write_text(_JVM_AND_RAY)
    done = subprocess.run([sys.executable, str(script), who], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    lines = done.stdout.splitlines()
    if who == "engine":
        assert done.returncode == 0, done.stderr[-2000:]
        assert lines == [f"{when} JavaException JVM exception occurred True" for when in ("before", "during", "after")]
    else:
        assert done.returncode in (-6, 134), (done.returncode, done.stderr[-2000:])  # SIGABRT from Ray's handler
        assert lines[0] == "before JavaException JVM exception occurred True"
        assert not any(line.startswith("after") for line in lines)  # the JVM's fatal error report follows instead
        assert "A fatal error has been detected by the Java Runtime Environment" in done.stdout
        assert "started without keep_crash_handlers()" in done.stderr
