"""``--engine ray``: the same index, vectors and runs as the single-process path, resuming after a failed worker.

One local Ray (2 CPUs) serves the whole module; the engine uses it and leaves it running. Without Ray the
module is skipped, except in CI (``CI=true``), where Ray is installed by the README's command and a
missing Ray fails.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import numpy as np
import pytest

try:
    import ray
except ImportError:
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail("Ray is not installed (pip install -e '.[ray]'); CI=true, where it must be", pytrace=False)
    pytest.skip("Ray is not installed (pip install -e '.[ray]')", allow_module_level=True)

from negplugins.cli import main
from negplugins.errors import UserError
from negplugins.io.sidecars import read_metadata
from negplugins.runners import ray_cluster, ray_engine
from negplugins.runners.dense import dense_index, dense_search, load_dense_index
from negplugins.runners.lucene_index import MANIFEST
from negplugins.runners.ray_engine import FAIL_ONCE_ENV, RayEngine, RayJobError
from negplugins.runners.rerank import rerank

# Ray Data's own deprecated settings, read when it copies its context
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")

DEMO = "negplugins-demo"
DEMO_DOCS = [f"d{n:02d}" for n in range(1, 37)]
TWO = RayEngine(workers=2)


@pytest.fixture(scope="module")
def fail_flag(tmp_path_factory):
    """The local Ray of this module; the path of its workers' fail-once flag file (absent unless a test writes it)."""
    flag = tmp_path_factory.mktemp("ray-flag") / "fail-once"
    previous = os.environ.get(FAIL_ONCE_ENV)
    os.environ[FAIL_ONCE_ENV] = str(flag)  # read by the workers, which inherit the environment of ray.init
    with ray_engine.keep_crash_handlers():  # the JVM of the Lucene tests in this process needs its handlers
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    yield flag
    with ray_engine.keep_crash_handlers():
        ray.shutdown()
    if previous is None:
        del os.environ[FAIL_ONCE_ENV]
    else:
        os.environ[FAIL_ONCE_ENV] = previous


@pytest.fixture(scope="module")
def single(tmp_path_factory, fail_flag):
    """The single-process reference: the demo encoded in 3 shards and searched, hits 10."""
    folder = tmp_path_factory.mktemp("single")
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(home))
        built = dense_index(DEMO, index=folder / "index", shard_num=3, progress=False)
        dense_search(DEMO, folder / "run.trec", index=built.path, hits=10, progress=False)
    return {"index": built.path, "run": folder / "run.trec"}


def _vectors(path):
    index, ids = load_dense_index(path)
    return index.reconstruct_n(0, index.ntotal), ids


def test_dense_search_on_ray_gives_the_same_index_and_run(tmp_path, monkeypatch, single):
    monkeypatch.chdir(tmp_path)
    info = dense_search(DEMO, "ray.trec", hits=10, shard_num=3, progress=False, engine=TWO)
    assert info["complete"] and info["lines"] == 21 * 10
    ours, our_ids = _vectors(info["index"])
    theirs, their_ids = _vectors(single["index"])
    assert our_ids == their_ids == DEMO_DOCS  # same doc ids, same order
    assert np.abs(ours - theirs).max() <= 1e-5
    # the workers encode the same batches as the single process, so the run is the same, byte for byte
    assert Path("ray.trec").read_bytes() == single["run"].read_bytes()
    assert sorted(p.name for p in Path(info["index"]).iterdir()) == ["docid", "index", MANIFEST,
                                                                    "negplugins-output.json"]
    manifest = json.loads((Path(info["index"]) / MANIFEST).read_text())
    assert manifest["engine"]["name"] == "ray" and manifest["shard_num"] == 3 and manifest["documents"] == 36
    engine = read_metadata("ray.trec")["parameters"]["engine"]
    assert engine["name"] == "ray" and engine["workers"] == 2 and engine["address"] == "local"
    assert engine["ray"] == ray.__version__ and "same index and run" in engine["output"]
    assert read_metadata(single["run"])["parameters"]["engine"] == {"name": "single"}


def test_ray_shards_are_kept_as_a_sharded_index_searched_to_the_same_run(tmp_path, monkeypatch, single):
    # main's --search-shards layout built from shards that Ray encoded: the shard folders are moved into the
    # index as they are, and the exact search over them gives the single process's run, byte for byte
    monkeypatch.chdir(tmp_path)
    info = dense_search(DEMO, "ray.trec", hits=10, shard_num=3, progress=False, engine=TWO, search_shards=True)
    assert info["complete"]
    manifest = json.loads((Path(info["index"]) / MANIFEST).read_text())
    assert manifest["layout"] == "shards" and manifest["engine"]["name"] == "ray"
    assert manifest["shards"] == [f"shard-{i:05d}-of-00003" for i in range(3)]
    assert Path("ray.trec").read_bytes() == single["run"].read_bytes()
    assert read_metadata("ray.trec")["parameters"]["index_layout"] == "shards"


def test_ray_workers_build_the_single_process_encoder_with_its_settings(tmp_path, fail_flag):
    # not the model's defaults: a passage prefix, CLS pooling, no normalisation, 64 tokens, ONNX Runtime; every
    # worker must encode as the single process does (the vectors of the default settings would differ by far
    # more than the tolerance: CLS vs mean pooling, the prefix and the norm all move them)
    settings = dict(passage_prefix="passage: ", pooling="cls", normalize=False, max_length=64, backend="onnx")
    home = tmp_path / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(home))
        here = dense_index(DEMO, index=tmp_path / "single", shard_num=2, progress=False, **settings)
        there = dense_index(DEMO, index=tmp_path / "ray", shard_num=2, progress=False, engine=TWO, **settings)
        default = dense_index(DEMO, index=tmp_path / "default", shard_num=1, progress=False)
    ours, our_ids = _vectors(there.path)
    theirs, their_ids = _vectors(here.path)
    plain, _ = _vectors(default.path)
    assert our_ids == their_ids == DEMO_DOCS
    assert np.abs(ours - theirs).max() <= 1e-5
    assert np.abs(ours - plain).max() > 0.1  # the settings did change the vectors
    assert np.linalg.norm(ours, axis=1).min() > 1.5  # not normalised: MiniLM's CLS vectors are longer than 1
    built = json.loads((Path(there.path) / MANIFEST).read_text())
    assert built["encoding"] == json.loads((Path(here.path) / MANIFEST).read_text())["encoding"] == {
        "pooling": "cls", "normalize": False, "max_length": 64, "prefix": "passage: ", "backend": "onnx",
        "dtype": "float32"}
    assert built["engine"]["name"] == "ray" and built["encoder"]["export"]["kind"] == "onnx-encoder"


def test_ray_workers_take_openvino_int8_calibrated_as_the_single_process(tmp_path, fail_flag):
    # the workers are given the single process's calibration texts: the same quantized graph, the same vectors
    home = tmp_path / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(home))
        here = dense_index(DEMO, index=tmp_path / "single", progress=False, backend="openvino", dtype="int8")
        there = dense_index(DEMO, index=tmp_path / "ray", progress=False, backend="openvino", dtype="int8",
                            engine=RayEngine(workers=1))
    ours, our_ids = _vectors(there.path)
    theirs, their_ids = _vectors(here.path)
    assert our_ids == their_ids == DEMO_DOCS and np.abs(ours - theirs).max() <= 1e-5
    exports = [json.loads((Path(built.path) / MANIFEST).read_text())["encoder"]["export"] for built in (here, there)]
    assert exports[0]["variant"] == exports[1]["variant"] == "int8-static"
    assert exports[0]["calibration_sha256"] == exports[1]["calibration_sha256"]
    assert exports[0]["bin_sha256"] == exports[1]["bin_sha256"]


def test_ray_needs_a_model_folder_not_a_model_object(tmp_path):
    from types import SimpleNamespace

    from negplugins.runners.encoders import ModelRef

    encoder = SimpleNamespace(ref=ModelRef("object", None, "object"))  # as SentenceEncoder.from_model gives
    with pytest.raises(UserError, match="--engine ray: the Ray workers load the model from its folder"):
        dense_index(DEMO, index=tmp_path / "index", encoder=encoder, engine=TWO, progress=False)


def test_a_failed_worker_leaves_finished_shards_and_the_rerun_encodes_only_the_rest(tmp_path, monkeypatch, fail_flag):
    reference = dense_index(DEMO, index=tmp_path / "single", shard_num=6, progress=False)
    target = tmp_path / "index"
    shards = tmp_path / "index.shards"
    fail_flag.write_text("5")  # the worker that meets shard 5 (read last) deletes the flag and fails
    with pytest.raises(RayJobError, match=r"\(RuntimeError: simulated worker failure on shard 5 .*\); the shards "
                                          r"finished so far are kept: run the same command again to resume"):
        dense_index(DEMO, index=target, shard_num=6, progress=False, engine=RayEngine(workers=1))
    assert not fail_flag.exists() and not target.exists()
    kept = sorted(p.name for p in shards.iterdir())
    finished = {int(name.split("-")[1]) for name in kept}
    assert finished and 5 not in finished  # shards encoded before the failure were written; nothing half-written

    asked = []
    real = ray_engine.encode_shards

    def recording(engine, dataset_id, ref, todo, *args, **kwargs):
        asked.append(sorted(todo))
        yield from real(engine, dataset_id, ref, todo, *args, **kwargs)

    monkeypatch.setattr(ray_engine, "encode_shards", recording)
    resumed = dense_index(DEMO, index=target, shard_num=6, progress=False, engine=RayEngine(workers=1))
    assert asked == [sorted(set(range(6)) - finished)]  # only the shards the failed job did not finish
    assert resumed.complete and resumed.built and not shards.exists()
    ours, our_ids = _vectors(target)
    theirs, their_ids = _vectors(reference.path)
    assert our_ids == their_ids == DEMO_DOCS
    assert np.array_equal(ours, theirs)  # resumed or not, the vectors of the single process


def test_rerank_on_ray_gives_the_same_run_bi_encoder(first_stage, tmp_path, fail_flag):
    first = first_stage(tmp_path / "first.trec")
    one = rerank(DEMO, tmp_path / "single.trec", run=first, top_k=20, batch_size=8)
    two = rerank(DEMO, tmp_path / "ray.trec", run=first, top_k=20, batch_size=8, engine=TWO)
    assert one["reranker"] == two["reranker"] == "bi-encoder" and one["lines"] == two["lines"] == 60
    assert (tmp_path / "ray.trec").read_bytes() == (tmp_path / "single.trec").read_bytes()
    assert read_metadata(tmp_path / "ray.trec")["parameters"]["engine"]["name"] == "ray"


def test_rerank_on_ray_from_the_command_line_cross_encoder(first_stage, tmp_path, monkeypatch, capsys,
                                                           tiny_cross_encoder, fail_flag):
    monkeypatch.chdir(tmp_path)
    first = first_stage(tmp_path / "first.trec")
    rerank(DEMO, "single.trec", model=str(tiny_cross_encoder), run=first, top_k=20, batch_size=3)
    assert main(["search", "rerank", DEMO, "--run", str(first), "--model", str(tiny_cross_encoder), "--top-k", "20",
                 "--batch-size", "3", "--engine", "ray", "--ray-workers", "2", "-o", "ray.trec"]) == 0
    assert "reranked 60 pairs of 3 queries with cross-encoder" in capsys.readouterr().out
    assert Path("ray.trec").read_bytes() == Path("single.trec").read_bytes()


# -- options, resources, missing Ray (no Ray job) ------------------------------------------------------------

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
