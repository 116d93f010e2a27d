"""The report card at the speed of the CPU backends, and on Ray: ``negplugins benchmark`` side by side, in one run.

Run by hand (not a test)::

    IR_DATASETS_EXT_MIRROR=/work/shared/data .venv/bin/python benchmarks/bench_report_card_backends.py \\
        [--benchmarks comlq] [--model all-MiniLM-L6-v2] [--fast "--backend openvino" ...] [--no-ray] \\
        [--work DIR]

Sides, each a fresh ``negplugins benchmark`` process with its own output and indexes folders (so every side
encodes the corpus), without the baselines (they need no model and are the same on every side):

- ``default``: sentence-transformers, PyTorch float32 (what the card does without options);
- ``fast-N``: each ``--fast`` option set (default: OpenVINO and ONNX Runtime in float32, OpenVINO int8), with the
  ratio of the default's time to its time and the difference of the main measure; the fastest within 0.001 is named;
- ``search-dense``: ``--backend torch``, i.e. ``search dense``'s own encoder in this process, the reference of:
- ``ray-1`` and ``ray-2``: ``--backend torch --engine ray --ray-workers 1`` / ``2``, whose runs must be
  byte-identical to ``search-dense``'s (else the largest score difference and the changed rankings are shown).

The ``default`` and ``search-dense`` runs are compared too: two encoders of the same model whose float32 vectors
differ in their last bits (scores in the sixth decimal).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAST = ("--backend openvino", "--backend onnx", "--backend openvino --dtype int8")


def _card(name: str, work: Path, args, extra: list[str]) -> dict:
    out, indexes = work / name, work / f"{name}-indexes"
    for folder in (out, indexes):
        shutil.rmtree(folder, ignore_errors=True)
    command = [sys.executable, "-m", "negplugins", "benchmark", "--model", args.model, "--benchmarks",
               args.benchmarks, "-o", str(out), "--indexes", str(indexes), "--no-progress", "--no-baselines", *extra]
    print(f"[{name}] {shlex.join(command[2:])}", flush=True)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=work, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"[{name}] failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    entries = [e for e in summary["benchmarks"] if e["status"] == "done"]
    scores = {e["dataset"]: (e["primary"], e["overall"].get(e["primary"])) for e in entries}
    runs = {e["dataset"]: out / e["run"] for e in entries}
    print(f"[{name}] {seconds:.1f} s: " + ", ".join(f"{d} {m} {v:.4f}" for d, (m, v) in scores.items()), flush=True)
    return {"name": name, "seconds": seconds, "scores": scores, "runs": runs, "out": out}


def _lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def _compare_runs(side: dict, reference: dict) -> str:
    """``identical``, or the largest score difference and the number of queries whose ranking changed."""
    notes = []
    for dataset, run in side["runs"].items():
        mine, theirs = _lines(run), _lines(reference["runs"][dataset])
        if mine == theirs:
            notes.append(f"{dataset}: identical")
            continue
        scores = {}
        for line in theirs:
            q, _, d, _, s, _ = line.split()
            scores[(q, d)] = float(s)
        largest, ranked = 0.0, {}
        for line in mine:
            q, _, d, rank, s, _ = line.split()
            ranked.setdefault(q, []).append(d)
            if (q, d) in scores:
                largest = max(largest, abs(float(s) - scores[(q, d)]))
        reference_ranked = {}
        for line in theirs:
            q, _, d, *_ = line.split()
            reference_ranked.setdefault(q, []).append(d)
        changed = sum(ranked.get(q) != docs for q, docs in reference_ranked.items())
        notes.append(f"{dataset}: differs, largest score difference {largest:.6f}, {changed} of "
                     f"{len(reference_ranked)} rankings changed")
    return "; ".join(notes)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmarks", default="comlq")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--fast", action="append",
                        help="the options of a fast side, repeatable (default: " + " | ".join(FAST) + ")")
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray sides")
    parser.add_argument("--work", help="folder of the sides' outputs (default: a temporary folder, removed)")
    args = parser.parse_args(argv)
    if not os.environ.get("IR_DATASETS_EXT_MIRROR"):
        parser.error("set IR_DATASETS_EXT_MIRROR to the folder of the benchmarks' data (e.g. /work/shared/data)")
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-report-card-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; outputs in {work}", flush=True)

    default = _card("default", work, args, [])
    fast = [_card(f"fast-{i}", work, args, shlex.split(options)) for i, options in enumerate(args.fast or FAST, 1)]
    sides = [default, *fast]
    if not args.no_ray:
        single = _card("search-dense", work, args, ["--backend", "torch"])
        ray = [_card(f"ray-{n}", work, args, ["--backend", "torch", "--engine", "ray", "--ray-workers", str(n)])
               for n in (1, 2)]
        sides += [single, *ray]

    print(f"\n{'side':<14} {'seconds':>9}  main measure")
    for side in sides:
        shown = ", ".join(f"{d} {m} {v:.4f}" for d, (m, v) in side["scores"].items())
        print(f"{side['name']:<14} {side['seconds']:9.1f}  {shown}")
    kept = []
    for side, options in zip(fast, args.fast or FAST):
        within = all(abs(side["scores"][d][1] - v) <= 0.001 for d, (_, v) in default["scores"].items())
        differences = ", ".join(f"{d} {side['scores'][d][1] - v:+.4f}" for d, (_, v) in default["scores"].items())
        print(f"{side['name']} ({options}): {default['seconds'] / side['seconds']:.2f}x the default's speed, "
              f"{differences}, within 0.001: {'yes' if within else 'NO'}")
        if within:
            kept.append((side["seconds"], options))
    if kept:
        seconds, options = min(kept)
        print(f"fastest within 0.001: {options}, {default['seconds'] / seconds:.2f}x the default's speed")
    if not args.no_ray:
        print(f"\nsearch-dense against default: {_compare_runs(single, default)}")
        for side in ray:
            print(f"{side['name']} against search-dense: {_compare_runs(side, single)} "
                  f"({single['seconds'] / side['seconds']:.2f}x its speed)")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
