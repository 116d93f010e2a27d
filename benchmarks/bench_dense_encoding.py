"""Encoding throughput of the suite's dense encoder relative to plain ``SentenceTransformer.encode``.

Run by hand (not a test)::

    IR_DATASETS_EXT_MIRROR=/work/shared/data .venv/bin/python benchmarks/bench_dense_encoding.py \\
        [--texts 2000] [--batch-size 64] [--rounds 3] [--model MODEL] [--synthetic]

Both sides encode the same texts (the first N ComLQ passages, or synthetic passages when ComLQ is not
available or ``--synthetic`` is given) with the same model weights and batch size, in the same process,
alternating A/B rounds after a warm-up; the best round of each side is compared. The suite's side is the
whole shard-encoding path of ``negplugins search dense`` (its :class:`~negplugins.runners.encoders.DenseEncoder`
with PyTorch in float32, length sorting, chunking, progress bar, copying into the shard's vector array); the
two sides' vectors must agree to 1e-5. Target: ratio >= 0.9. ``bench_dense_backends.py`` compares the
backends and dtypes.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def comlq_passages(n: int) -> list[str] | None:
    if not os.environ.get("IR_DATASETS_EXT_MIRROR"):
        return None
    try:
        from negplugins import datasets

        texts = []
        for _, text in datasets.iter_docs_for_indexing(datasets.load("comlq")):
            texts.append(text)
            if len(texts) == n:
                break
        return texts
    except Exception as error:  # noqa: BLE001 - fall back to synthetic text
        print(f"ComLQ not available ({error}); using synthetic passages", file=sys.stderr)
        return None


def synthetic_passages(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words = ("the of and to in a is that for it as was with be by on not he this are or his from at which but have "
             "an they you were her she there been one all we their has would when if so no more out some what "
             "other about into than them can only new time could these two may then do first any like now my "
             "such over our even most after also made many did before must through back years where much your "
             "way well down should because each just those people how too little state good very make world").split()
    return [" ".join(rng.choice(words) for _ in range(rng.randint(20, 180))) for _ in range(n)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    parser.add_argument("--synthetic", action="store_true")
    args = parser.parse_args(argv)

    import numpy as np
    from sentence_transformers import SentenceTransformer

    from negplugins.runners.dense import _encode_shard
    from negplugins.runners.encoders import DenseEncoder
    from negplugins.runners.model_refs import resolve_model

    texts = None if args.synthetic else comlq_passages(args.texts)
    source = "ComLQ passages" if texts else "synthetic passages"
    texts = texts or synthetic_passages(args.texts)
    encoder = DenseEncoder(resolve_model(args.model), device="cpu")
    model = SentenceTransformer(str(encoder.ref.path), device="cpu", local_files_only=True)

    def plain():
        return model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False)

    def suite():
        return _encode_shard(encoder, texts, args.batch_size, "bench", progress=False)

    model.encode(texts[: 2 * args.batch_size], batch_size=args.batch_size, show_progress_bar=False)  # warm-up
    times = {"plain": [], "suite": []}
    for _ in range(args.rounds):
        for name, fn in (("plain", plain), ("suite", suite)):
            start = time.perf_counter()
            vectors = fn()
            times[name].append(time.perf_counter() - start)
            if name == "plain":
                reference = vectors
            else:
                assert np.allclose(vectors, reference, atol=1e-5), "the two sides disagree"
    import torch

    best = {name: min(values) for name, values in times.items()}
    rate = {name: len(texts) / best[name] for name in best}
    print(f"model {encoder.ref.name}, {len(texts)} {source}, batch size {args.batch_size}, "
          f"torch threads {torch.get_num_threads()}, best of {args.rounds} rounds")
    print(f"  SentenceTransformer.encode : {rate['plain']:8.1f} texts/s  ({best['plain']:.2f} s)")
    print(f"  negplugins dense encoder   : {rate['suite']:8.1f} texts/s  ({best['suite']:.2f} s)")
    print(f"  ratio (suite / plain)      : {rate['suite'] / rate['plain']:.3f}  (target >= 0.9)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
