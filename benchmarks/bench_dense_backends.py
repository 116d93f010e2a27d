"""Encoding throughput of ``search dense``'s backends and dtypes on the CPU, as ratios to PyTorch float32.

Run by hand (not a test)::

    IR_DATASETS_EXT_MIRROR=/work/shared/data .venv/bin/python benchmarks/bench_dense_backends.py \\
        [--texts 2000] [--batch-size 64] [--blocks 4] [--model MODEL] [--only torch:float32,openvino:bfloat16]

Every variant encodes the same texts (the first N ComLQ passages, or synthetic passages without ComLQ) with
the same model and batch size, through the suite's own shard-encoding path (:func:`negplugins.runners.dense.
_encode_shard`), in one process. The baseline, PyTorch float32, is measured in the same run, interleaved
with the others: the texts are cut into ``--blocks`` blocks and every variant encodes each block in turn, the
order rotating from block to block, so that a change in the machine's load (other processes) falls on every
variant alike. Passages/s = texts / the variant's summed time over all blocks; each variant is warmed up
(one batch) first. The last column is the lowest cosine between a passage's vector and its PyTorch float32
vector (the vectors' agreement; retrieval quality is measured with ``negplugins evaluate``).

ONNX exports are cached under ``--cache`` (default: a temporary folder), as ``search dense`` caches them beside
its index.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_dense_encoding import comlq_passages, synthetic_passages  # noqa: E402

VARIANTS = [("torch", "float32"), ("torch", "bfloat16"), ("onnx", "float32"), ("onnx", "int8"),
            ("openvino", "float32"), ("openvino", "bfloat16"), ("openvino", "int8")]


def cpu_description() -> str:
    from negplugins.runners.backends import cpu_bf16

    name = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), name)
    except OSError:
        pass
    bf16 = {True: "with bf16 instructions", False: "without bf16 instructions", None: "bf16 unknown"}[cpu_bf16()]
    return f"{name}, {os.cpu_count()} logical cores, {bf16}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=4, help="interleaving blocks (default: 4)")
    parser.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    parser.add_argument("--only", help="comma-separated backend:dtype variants (torch:float32 is always run)")
    parser.add_argument("--cache", help="folder for the ONNX exports (default: a temporary folder)")
    parser.add_argument("--synthetic", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import numpy as np
    import torch

    from negplugins.runners.dense import _encode_shard
    from negplugins.runners.encoders import DenseEncoder
    from negplugins.runners.encoding_settings import CALIBRATION_PASSAGES
    from negplugins.runners.model_refs import resolve_model

    variants = VARIANTS
    if args.only:
        wanted = [tuple(v.split(":")) for v in args.only.split(",")]
        variants = [("torch", "float32")] + [v for v in wanted if v != ("torch", "float32")]
    texts = None if args.synthetic else comlq_passages(args.texts)
    source = "ComLQ passages" if texts else "synthetic passages"
    texts = texts or synthetic_passages(args.texts)
    ref = resolve_model(args.model)
    scratch = None if args.cache else tempfile.TemporaryDirectory(prefix="negplugins-bench-")  # removed at exit
    cache = args.cache or scratch.name
    encoders = {}
    for backend, dtype in variants:
        start = time.perf_counter()
        # OpenVINO int8 is calibrated as search dense calibrates it: on the corpus's first passages (these texts
        # are ComLQ's first passages, and MiniLM has no passage prefix)
        calibration = texts[:CALIBRATION_PASSAGES] if (backend, dtype) == ("openvino", "int8") else None
        encoder = DenseEncoder(ref, backend=backend, dtype=dtype, device="cpu", cache=cache, calibration=calibration)
        _encode_shard(encoder, texts[: args.batch_size], args.batch_size, "warm-up", progress=False)
        encoders[(backend, dtype)] = encoder
        print(f"loaded {backend} {dtype} in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    size = -(-len(texts) // args.blocks)
    blocks = [texts[i:i + size] for i in range(0, len(texts), size)]
    seconds = dict.fromkeys(encoders, 0.0)
    vectors = {key: [] for key in encoders}
    keys = list(encoders)
    for b, block in enumerate(blocks):
        for key in keys[b % len(keys):] + keys[: b % len(keys)]:  # the order rotates from block to block
            start = time.perf_counter()
            vectors[key].append(_encode_shard(encoders[key], block, args.batch_size, "bench", progress=False))
            seconds[key] += time.perf_counter() - start
        print(f"block {b + 1}/{len(blocks)} done", file=sys.stderr)

    base_key = ("torch", "float32")
    base = np.concatenate(vectors[base_key])
    rate = {key: len(texts) / seconds[key] for key in keys}
    print(f"model {ref.name}, {len(texts)} {source}, batch size {args.batch_size}, {len(blocks)} interleaved blocks; "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads); {cpu_description()}")
    print()
    print("| backend | dtype | passages/s | ratio to torch float32 | lowest cosine to torch float32 |")
    print("|---|---|---:|---:|---:|")
    for key in keys:
        cosine = float((np.concatenate(vectors[key]) * base).sum(1).min())
        print(f"| {key[0]} | {key[1]} | {rate[key]:.1f} | {rate[key] / rate[base_key]:.2f}x | {cosine:.5f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
