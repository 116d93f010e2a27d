"""Encoding throughput of ``search dense --engine ray`` (1 and 2 workers) relative to the single-process path.

Run by hand (not a test)::

    IR_DATASETS_EXT_MIRROR=/work/shared/data .venv/bin/python benchmarks/bench_ray_encoding.py \\
        [--texts 2000] [--batch-size 64] [--rounds 2] [--model MODEL] [--backend torch] [--dtype float32]

All sides encode the same texts, the first N ComLQ passages as one shard, with the same model, encoder
settings (the suite's ``DenseEncoder``; ``--backend``/``--dtype`` as ``search dense``) and batch size: the
single-process side is the shard-encoding path of ``negplugins search dense``; the Ray sides are
the engine's whole job (read task, actor pool, streaming the vectors back), on a local Ray started once
beforehand with all of this machine's CPUs (a worker gets ``CPUs / workers`` threads). The sides run in
turn, the order rotating every round, so that load from other processes on the machine is shared out;
the best round of each side is compared. A Ray job's time includes starting its workers and loading the
model in them; the same job on one passage measures that fixed cost, and the rates without it are shown
too (what a long job converges to). Each Ray side's vectors are checked against the single process's.
Target: Ray with 1 worker >= 0.9 x single-process.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    parser.add_argument("--backend", default="torch", choices=("torch", "onnx", "openvino"))
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args(argv)
    if not os.environ.get("IR_DATASETS_EXT_MIRROR"):
        parser.error("set IR_DATASETS_EXT_MIRROR to the folder of the ComLQ release (e.g. /work/shared/data)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import numpy as np
    import ray
    import torch

    from negplugins import datasets
    from negplugins.runners.dense import _encode_shard
    from negplugins.runners.encoders import DenseEncoder
    from negplugins.runners.encoding_settings import encoder_settings
    from negplugins.runners.model_refs import resolve_model
    from negplugins.runners.ray_engine import Corpus, RayEngine, corpus, encode_shards

    dataset = datasets.load("comlq")
    whole = corpus(dataset, "comlq")  # builds the docstore the Ray read tasks look documents up in
    first = Corpus(whole.ids[: args.texts], whole.lengths[: args.texts])
    texts = [text for _, text in islice(datasets.iter_docs_for_indexing(dataset), args.texts)]
    n = len(texts)
    import tempfile

    ref = resolve_model(args.model)
    settings = encoder_settings(ref, role="passage", backend=args.backend, dtype=args.dtype)
    scratch = tempfile.TemporaryDirectory(prefix="bench-ray-onnx-")  # removed at exit
    cache = scratch.name  # the ONNX export, shared by the sides (as beside an index)
    encoder = DenseEncoder(ref, role="passage", device="cpu", cache=cache, **settings)
    cpus = os.cpu_count() or 1
    ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)

    def single():
        return _encode_shard(encoder, texts, args.batch_size, "bench", progress=False)

    def on_ray(workers, size=n):
        [(_, vectors)] = encode_shards(RayEngine(workers=workers), "comlq", encoder.ref, {0: (0, size)}, first,
                                       encoder.dimension, args.batch_size, settings=settings, cache=cache,
                                       progress=False)
        return vectors

    sides = {"single": single, "ray-1": lambda: on_ray(1), "ray-2": lambda: on_ray(2)}
    overhead_of = {"ray-1": lambda: on_ray(1, 1), "ray-2": lambda: on_ray(2, 1)}
    single()  # warm-up (first use of the model in this process)
    times = {name: [] for name in sides}
    overheads = {name: [] for name in overhead_of}
    reference = None
    names = list(sides)
    for round_ in range(args.rounds):
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in order:
            start = time.perf_counter()
            vectors = sides[name]()
            times[name].append(time.perf_counter() - start)
            if name == "single":
                reference = vectors if reference is None else reference
            print(f"  round {round_ + 1}: {name:7s} {times[name][-1]:7.2f} s", file=sys.stderr, flush=True)
            if name in overhead_of:
                start = time.perf_counter()
                overhead_of[name]()
                overheads[name].append(time.perf_counter() - start)
                print(f"  round {round_ + 1}: {name:7s} job on 1 passage {overheads[name][-1]:.2f} s", file=sys.stderr,
                      flush=True)
            if name != "single":
                check = vectors if reference is None else reference
                assert np.array_equal(vectors, check) or np.allclose(vectors, check, atol=1e-5), "the sides disagree"
    ray.shutdown()

    best = {name: min(values) for name, values in times.items()}
    rate = {name: n / best[name] for name in best}
    fixed = {name: min(values) for name, values in overheads.items()}
    print(f"model {encoder.ref.name} ({args.backend} {args.dtype}), {n} ComLQ passages, batch size "
          f"{args.batch_size}, {cpus} CPUs, "
          f"torch threads {torch.get_num_threads()} (single), best of {args.rounds} rounds; no GPU")
    print(f"  single process        : {rate['single']:7.1f} passages/s  ({best['single']:.2f} s)")
    for name, label in (("ray-1", "Ray, 1 worker "), ("ray-2", "Ray, 2 workers")):
        steady = n / max(best[name] - fixed[name], 1e-9)
        per_round = ", ".join(f"{single_time / time_:.2f}" for single_time, time_ in zip(times["single"], times[name]))
        print(f"  {label}        : {rate[name]:7.1f} passages/s  ({best[name]:.2f} s; ratio "
              f"{rate[name] / rate['single']:.3f}; round by round {per_round}); without the job's fixed "
              f"{fixed[name]:.1f} s: {steady:.1f} passages/s, ratio {steady / rate['single']:.3f}")
    print("  target: Ray with 1 worker >= 0.9 x single process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
