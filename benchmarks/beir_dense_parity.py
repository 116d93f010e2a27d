"""BEIR's exact dense search vs the suite's dense runner on ComLQ, both with all-MiniLM-L6-v2.

Run by hand (not a test; encoding 11,251 passages twice takes minutes on a few CPU cores)::

    IR_DATASETS_EXT_MIRROR=../shared/data PYTHONPATH=. .venv/bin/python benchmarks/beir_dense_parity.py \\
        [--workdir /tmp/beir-parity] [--dataset comlq] [--hits 100] [--skip-suite] [--beir-run RUN]
        [--suite-run RUN]

It writes ``<workdir>/beir-dense.trec`` with ``negplugins search beir-dense`` (BEIR's
``DenseRetrievalExactSearch`` over ``SentenceBERT``) and ``<workdir>/dense.trec`` with the suite's
``negplugins search dense`` (faiss ``IndexFlatIP`` over L2-normalised mean-pooled vectors, index under
``<workdir>/indexes``); an existing run is reused, and ``--beir-run`` / ``--suite-run`` name runs made
elsewhere (e.g. ``runs/comlq/dense-minilm.trec.gz``). Both are scored with
``negplugins.evaluation.scoring.evaluate`` and must agree on nDCG@10 to 3 decimals (the exit status is 1
otherwise). It also prints how many of the top-10 lists are identical, and the largest score
difference over common (query, document) pairs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MEASURES = ["nDCG@10", "R@100", "RR@10"]


def beir_run(dataset, path: Path, hits: int) -> float:
    from negplugins.runners.beir import beir_dense_search

    if path.is_file():
        return 0.0
    start = time.perf_counter()
    beir_dense_search(dataset, path, hits=hits, device="cpu", show_progress_bar=True)
    return time.perf_counter() - start


def suite_run(dataset, path: Path, hits: int, workdir: Path) -> float:
    if path.is_file():
        return 0.0
    from negplugins.runners.dense import dense_search

    start = time.perf_counter()
    cwd = os.getcwd()
    os.chdir(workdir)  # the suite's default index folder, indexes/faiss/..., under the work folder
    try:
        dense_search(dataset, path.resolve(), hits=hits)
    finally:
        os.chdir(cwd)
    return time.perf_counter() - start


def top10_agreement(a: dict, b: dict) -> tuple[int, int, float]:
    from negplugins.io.trec import ranked

    same = 0
    largest = 0.0
    for query_id in a.keys() & b.keys():
        if [d for d, _ in ranked(a[query_id])[:10]] == [d for d, _ in ranked(b[query_id])[:10]]:
            same += 1
        for doc_id in a[query_id].keys() & b[query_id].keys():
            largest = max(largest, abs(a[query_id][doc_id] - b[query_id][doc_id]))
    return same, len(a.keys() & b.keys()), largest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/beir-parity")
    parser.add_argument("--dataset", default="comlq")
    parser.add_argument("--hits", type=int, default=100)
    parser.add_argument("--skip-suite", action="store_true", help="only the BEIR run")
    parser.add_argument("--beir-run", help="use this BEIR dense run instead of <workdir>/beir-dense.trec")
    parser.add_argument("--suite-run", help="use this run of the suite's dense runner instead of <workdir>/dense.trec")
    args = parser.parse_args(argv)

    from negplugins.evaluation.scoring import evaluate
    from negplugins.io.trec import read_run

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    runs = {"beir-dense": Path(args.beir_run or workdir / "beir-dense.trec"),
            "dense": Path(args.suite_run or workdir / "dense.trec")}
    seconds = {"beir-dense": beir_run(args.dataset, runs["beir-dense"], args.hits)}
    if not args.skip_suite:
        seconds["dense"] = suite_run(args.dataset, runs["dense"], args.hits, workdir)
    scores = {}
    for name, path in runs.items():
        if name == "dense" and args.skip_suite:
            continue
        if path.is_file():
            scores[name] = evaluate(args.dataset, path, measures=MEASURES).overall
            took = f"{seconds[name]:.0f} s" if seconds.get(name) else "reused"
            print(f"{name:11s} " + "  ".join(f"{m} {scores[name][m]:.4f}" for m in MEASURES) + f"  ({took})")
    if len(scores) < 2 or args.skip_suite:
        return 0
    same, common, largest = top10_agreement(read_run(runs["beir-dense"]), read_run(runs["dense"]))
    print(f"identical top-10 lists: {same}/{common}; largest score difference on common pairs: {largest:.6f}")
    a, b = (round(scores[name]["nDCG@10"], 3) for name in ("beir-dense", "dense"))
    print(f"nDCG@10 to 3 decimals: beir-dense {a:.3f}, dense {b:.3f}: {'equal' if a == b else 'DIFFERENT'}")
    return 0 if a == b else 1


if __name__ == "__main__":
    sys.exit(main())
