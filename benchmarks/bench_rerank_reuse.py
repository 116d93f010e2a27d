"""Bi-encoder reranking that reads a dense index's passage vectors, against the same reranking encoding them.

Run by hand (not a test)::

    IR_DATASETS_EXT_MIRROR=/work/shared/data .venv/bin/python benchmarks/bench_rerank_reuse.py \\
        --index indexes/faiss/comlq/all-MiniLM-L6-v2 [--dataset comlq/pni] [--run runs/comlq/bm25.trec.gz] \\
        [--top-k 100] [--model all-MiniLM-L6-v2]

``--index`` is a dense index of the model (``negplugins search dense``, default settings). Both sides are
``negplugins.runners.rerank.rerank`` with the bi-encoder in this process, the model loaded once before either is
timed: the baseline encodes every candidate passage (no index), the other reads the vectors from ``--index``. It
prints both times, their ratio, and how the two runs compare: the positions whose document differs (target 0) and
the lines whose score differs (by one unit of the sixth decimal at most; a model's vectors depend in their last bits
on their batch). Measured on ComLQ's ``pni`` (122 queries, 6,489 distinct passages in the BM25 top 100), the
packaged MiniLM, 2 shared cores, as two commands: 1218.9 s encoding, 37.5 s reading the index (32.5x); the same
ranking everywhere, 179 of 12,200 lines one unit of the sixth decimal apart; nDCG@10 0.5043 both.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _run(path: Path) -> list[tuple[str, str, float]]:
    return [(q, d, float(s)) for q, _, d, _, s, _ in (line.split() for line in path.read_text().splitlines())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True, help="a dense index of --model (negplugins search dense)")
    parser.add_argument("--dataset", default="comlq/pni")
    parser.add_argument("--run", default="runs/comlq/bm25.trec.gz")
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--model", default=None)
    args = parser.parse_args(argv)

    from negplugins.runners.rerank import load_reranker, rerank

    loaded = load_reranker(args.model, "bi-encoder")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        times = {}
        for side, index in (("encoding", None), ("reading the index", args.index)):
            start = time.perf_counter()
            info = rerank(args.dataset, folder / f"{side}.trec", run=args.run, top_k=args.top_k, loaded=loaded,
                          index=index, progress=False)
            times[side] = time.perf_counter() - start
            print(f"{side}: {times[side]:.1f} s ({info['pairs']} pairs of {info['queries']} queries)")
        encoded, reused = _run(folder / "encoding.trec"), _run(folder / "reading the index.trec")
    moved = sum(1 for a, b in zip(encoded, reused) if a[:2] != b[:2])
    differing = sum(1 for a, b in zip(encoded, reused) if a != b)
    gap = max((abs(a[2] - b[2]) for a, b in zip(encoded, reused) if a[:2] == b[:2]), default=0.0)
    print(f"ratio: {times['encoding'] / times['reading the index']:.1f}x faster reading the index")
    print(f"runs: {len(encoded)} lines, {moved} positions with another document, {differing} lines differing, "
          f"largest score gap {gap:.1e}")
    return 0 if moved == 0 and gap <= 1e-6 + 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
