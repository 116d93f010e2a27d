"""``--engine ray``: the same index, vectors and runs as the single-process path, resuming after a failed worker.

One local Ray (2 CPUs) serves the whole module; the engine uses it and leaves it running. Each Ray job has a
fixed cost (fresh worker processes that import torch and load the model, Ray Data's scheduling: 14-19 s on 2
shared cores), so each test runs the jobs its subject needs and checks all it can on their output. The tests without a Ray job are ``test_runners_ray_setup.py``.
Without Ray the module is skipped, except in CI (``CI=true``), where Ray is installed by the README's command and
a missing Ray fails.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
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
from negplugins.io.sidecars import read_metadata
from negplugins.runners import ray_engine
from negplugins.runners.common import MANIFEST
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.dense_index_format import load_dense_index
from negplugins.runners.ray_engine import FAIL_ONCE_ENV, RayEngine, RayJobError
from negplugins.runners.rerank import rerank

# Ray Data's own deprecated settings, read when it copies its context
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")

DEMO = "negplugins-demo"
DEMO_DOCS = [f"d{n:02d}" for n in range(1, 37)]
#: Each worker is a fresh process that imports torch and loads the model (about 7 s of CPU): the tests whose subject
#: is what one worker computes use one; the resume test and the cross-encoder's use two
ONE = RayEngine(workers=1)
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
    """The single-process reference: the demo encoded in 6 shards and searched, hits 10."""
    folder = tmp_path_factory.mktemp("single")
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(home))
        built = dense_index(DEMO, index=folder / "index", shard_num=6, progress=False)
        dense_search(DEMO, folder / "run.trec", index=built.path, hits=10, progress=False)
    return {"index": built.path, "run": folder / "run.trec"}


def _vectors(path):
    index, ids = load_dense_index(path)
    return index.reconstruct_n(0, index.ntotal), ids


def test_ray_workers_build_the_single_process_encoder_with_its_settings(tmp_path, single):
    # not the model's defaults: a passage prefix, CLS pooling, no normalisation, 64 tokens, ONNX Runtime; the
    # worker must encode as the single process does (the vectors of the default settings would differ by far
    # more than the tolerance: CLS vs mean pooling, the prefix and the norm all move them). One worker encodes both
    # shards (each worker is built from the same arguments; two workers: the resume test and the cross-encoder's)
    settings = dict(passage_prefix="passage: ", pooling="cls", normalize=False, max_length=64, backend="onnx")
    home = tmp_path / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(home))
        here = dense_index(DEMO, index=tmp_path / "single", shard_num=2, progress=False, **settings)
        there = dense_index(DEMO, index=tmp_path / "ray", shard_num=2, progress=False, engine=ONE, **settings)
    ours, our_ids = _vectors(there.path)
    theirs, their_ids = _vectors(here.path)
    plain, _ = _vectors(single["index"])  # the model's defaults
    assert our_ids == their_ids == DEMO_DOCS
    assert np.abs(ours - theirs).max() <= 1e-5
    assert np.abs(ours - plain).max() > 0.1  # the settings did change the vectors
    assert np.linalg.norm(ours, axis=1).min() > 1.5  # not normalised: MiniLM's CLS vectors are longer than 1
    built = json.loads((Path(there.path) / MANIFEST).read_text())
    assert built["encoding"] == json.loads((Path(here.path) / MANIFEST).read_text())["encoding"] == {
        "pooling": "cls", "normalize": False, "max_length": 64, "prefix": "passage: ", "backend": "onnx",
        "dtype": "float32"}
    assert built["engine"]["name"] == "ray" and built["encoder"]["export"]["kind"] == "onnx-encoder"
    assert built["layout"] == "merged" and not (tmp_path / "ray.shards").exists()  # Ray's shards, merged
    assert sorted(p.name for p in Path(there.path).iterdir()) == ["docid", "index", MANIFEST, "negplugins-output.json"]


def test_ray_workers_take_openvino_int8_calibrated_as_the_single_process(tmp_path, fail_flag):
    # the workers are given the single process's calibration texts: the same quantized graph, the same vectors
    home = tmp_path / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(home))
        here = dense_index(DEMO, index=tmp_path / "single", progress=False, backend="openvino", dtype="int8")
        there = dense_index(DEMO, index=tmp_path / "ray", progress=False, backend="openvino", dtype="int8",
                            engine=ONE)
    ours, our_ids = _vectors(there.path)
    theirs, their_ids = _vectors(here.path)
    assert our_ids == their_ids == DEMO_DOCS and np.abs(ours - theirs).max() <= 1e-5
    exports = [json.loads((Path(built.path) / MANIFEST).read_text())["encoder"]["export"] for built in (here, there)]
    assert exports[0]["variant"] == exports[1]["variant"] == "int8-static"
    assert exports[0]["calibration_sha256"] == exports[1]["calibration_sha256"]
    assert exports[0]["bin_sha256"] == exports[1]["bin_sha256"]


def test_a_failed_worker_is_resumed_to_a_sharded_index_searched_to_the_single_process_run(tmp_path, monkeypatch,
                                                                                         single, fail_flag):
    # the job fails at shard 5; the same command run again (on two workers) encodes only the shards not finished
    # (and two removed by hand, so that both workers have shards to encode).
    # main's --search-shards layout: the shard folders Ray encoded (in either job) are moved into the index as they
    # are, and hold the single process's vectors, so the exact search over them gives its run, byte for byte (the
    # merged layout of Ray's shards: test_ray_workers_build_the_single_process_encoder_with_its_settings)
    monkeypatch.chdir(tmp_path)
    target = Path("indexes/faiss/negplugins-demo/all-MiniLM-L6-v2")
    shards = target.with_name(target.name + ".shards")
    names = [f"shard-{i:05d}-of-00006" for i in range(6)]
    fail_flag.write_text("5")  # the worker that meets shard 5 (read last) deletes the flag and fails
    with pytest.raises(RayJobError, match=r"\(RuntimeError: simulated worker failure on shard 5 .*\); the shards "
                                          r"finished so far are kept: run the same command again to resume"):
        dense_search(DEMO, "ray.trec", hits=10, shard_num=6, progress=False, engine=ONE,
                     search_shards=True)
    assert not fail_flag.exists() and not target.exists() and not Path("ray.trec").exists()
    kept = sorted(p.name for p in shards.iterdir())
    finished = {int(name.split("-")[1]) for name in kept}
    assert finished and 5 not in finished  # shards encoded before the failure were written; nothing half-written
    for name in kept[:2]:  # as the message of a damaged shard says: a shard folder removed is encoded again
        shutil.rmtree(shards / name)
    finished -= {int(name.split("-")[1]) for name in kept[:2]}

    asked = []
    real = ray_engine.encode_shards

    def recording(engine, dataset_id, ref, todo, *args, **kwargs):
        asked.append(sorted(todo))
        yield from real(engine, dataset_id, ref, todo, *args, **kwargs)

    monkeypatch.setattr(ray_engine, "encode_shards", recording)
    info = dense_search(DEMO, "ray.trec", hits=10, shard_num=6, progress=False, engine=TWO, search_shards=True)
    assert asked == [sorted(set(range(6)) - finished)]  # only the shards the failed job did not finish
    assert info["complete"] and info["lines"] == 21 * 10 and Path(info["index"]) == target and not shards.exists()
    assert sorted(p.name for p in target.iterdir()) == [MANIFEST, "negplugins-output.json", *names]
    parts = [_vectors(target / name) for name in names]
    theirs, their_ids = _vectors(single["index"])
    assert sum((ids for _, ids in parts), []) == their_ids == DEMO_DOCS  # same doc ids, same order
    assert np.array_equal(np.concatenate([vectors for vectors, _ in parts]), theirs)  # resumed or not: the same
    # the workers encode the same batches as the single process, so the run is the same, byte for byte
    assert Path("ray.trec").read_bytes() == single["run"].read_bytes()
    manifest = json.loads((target / MANIFEST).read_text())
    assert manifest["layout"] == "shards" and manifest["shards"] == names
    assert manifest["engine"]["name"] == "ray" and manifest["shard_num"] == 6 and manifest["documents"] == 36
    parameters = read_metadata("ray.trec")["parameters"]
    engine = parameters["engine"]
    assert parameters["index_layout"] == "shards"
    assert engine["name"] == "ray" and engine["workers"] == 2 and engine["address"] == "local"
    assert engine["ray"] == ray.__version__ and "same index and run" in engine["output"]
    assert read_metadata(single["run"])["parameters"]["engine"] == {"name": "single"}


def test_rerank_on_ray_gives_the_same_run_bi_encoder(first_stage, tmp_path, monkeypatch, fail_flag):
    """The same bytes on either engine, with the model's dense index at its default folder (as search dense builds
    it, read by neither engine) and with that index given as --index (read by both)."""
    monkeypatch.chdir(tmp_path)
    default = dense_index(DEMO, progress=False).path  # indexes/faiss/negplugins-demo/all-MiniLM-L6-v2, here
    first = first_stage(tmp_path / "first.trec", queries=[f"q{n:02d}" for n in range(1, 22)])
    options = {"run": first, "top_k": 36, "batch_size": 8}
    here = rerank(DEMO, tmp_path / "single.trec", **options)
    there = rerank(DEMO, tmp_path / "ray.trec", engine=ONE, **options)
    assert here["reranker"] == there["reranker"] == "bi-encoder" and here["lines"] == there["lines"] == 756
    assert (tmp_path / "ray.trec").read_bytes() == (tmp_path / "single.trec").read_bytes()
    assert read_metadata(tmp_path / "ray.trec")["parameters"]["engine"]["name"] == "ray"
    rerank(DEMO, tmp_path / "single-index.trec", index=default, **options)
    rerank(DEMO, tmp_path / "ray-index.trec", index=default, engine=ONE, **options)
    assert (tmp_path / "ray-index.trec").read_bytes() == (tmp_path / "single-index.trec").read_bytes()
    records = [read_metadata(tmp_path / f"{side}-index.trec")["index"] for side in ("single", "ray")]
    assert records[0] == records[1] and records[0]["documents_read"] == 36


def test_rerank_on_ray_from_the_command_line_cross_encoder(first_stage, tmp_path, monkeypatch, capsys,
                                                           tiny_cross_encoder, fail_flag):
    monkeypatch.chdir(tmp_path)
    first = first_stage(tmp_path / "first.trec")
    rerank(DEMO, "single.trec", model=str(tiny_cross_encoder), run=first, top_k=20, batch_size=3)
    assert main(["search", "rerank", DEMO, "--run", str(first), "--model", str(tiny_cross_encoder), "--top-k", "20",
                 "--batch-size", "3", "--engine", "ray", "--ray-workers", "2", "-o", "ray.trec"]) == 0
    assert "reranked 60 pairs of 3 queries with cross-encoder" in capsys.readouterr().out
    assert Path("ray.trec").read_bytes() == Path("single.trec").read_bytes()
