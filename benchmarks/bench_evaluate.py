"""Wall time and peak memory of ``negplugins evaluate`` against plain ir_measures, ranx and pytrec_eval (by hand).

    IR_DATASETS_EXT_MIRROR=../shared/data python benchmarks/bench_evaluate.py RUN [--dataset comlq] [--repeats 5]

``RUN`` is a large TREC run, such as a BM25 top-1000 run on ComLQ (2.9 M lines)::

    negplugins search bm25 comlq --hits 1000 -o /tmp/bm25-1000.trec

Every tool is measured as a whole process (interpreter start, imports and reading included), its peak memory
being the maximum resident set size of that process (``os.wait4``). The processes are paired: each repeat runs
the suite and then every baseline, one after the other, so a machine shared with other work slows both sides of
a pair alike; the ratios printed are medians over the repeats of the per-pair ratios (suite / baseline).

* suite: ``negplugins evaluate DATASET RUN -m nDCG@10 RR@10 R@100 --json`` (validation included: format, ids
  known to the dataset, duplicates, rank order);
* ir_measures: ``ir_measures.calc_aggregate`` of the same measures on ``read_trec_qrels`` / ``read_trec_run``
  (the qrels written once to a TREC file beforehand);
* ranx (where installed): ``Qrels.from_file`` / ``Run.from_file`` and ``evaluate`` with ``ndcg@10``,
  ``mrr@10``, ``recall@100``;
* pytrec_eval: the run read into a dict by plain Python, ``RelevanceEvaluator`` with ``ndcg_cut_10``,
  ``recip_rank`` and ``recall_100`` (no cutoff for RR: trec_eval has none).

The suite's and ir_measures' means are printed too: they must be equal.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURES = ["nDCG@10", "RR@10", "R@100"]

IR_MEASURES = r'''
import json, sys
import ir_measures
from ir_measures import nDCG, RR, R
qrels = ir_measures.read_trec_qrels(sys.argv[1])
run = ir_measures.read_trec_run(sys.argv[2])
print(json.dumps({str(m): v for m, v in ir_measures.calc_aggregate([nDCG@10, RR@10, R@100], qrels, run).items()}))
'''

RANX = r'''
import json, sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
print(json.dumps(evaluate(qrels, run, ["ndcg@10", "mrr@10", "recall@100"])))
'''

PYTREC_EVAL = r'''
import json, sys
import pytrec_eval
qrels, run = {}, {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
values = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "recip_rank", "recall_100"}).evaluate(run)
print(json.dumps({m: sum(v[m] for v in values.values()) / len(values) for m in ("ndcg_cut_10", "recall_100")}))
'''


def measure(command: list[str]) -> tuple[float, float, str]:
    """``(seconds, peak MiB, stdout)`` of one whole process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {process.returncode}")
    return seconds, usage.ru_maxrss / 1024, text


def write_qrels(dataset_id: str, path: Path) -> int:
    from negplugins.evaluation.scoring import Evaluator

    qrels = Evaluator.load(dataset_id).qrels
    with open(path, "w") as f:
        for query_id, docs in qrels.items():
            for doc_id, relevance in docs.items():
                f.write(f"{query_id} 0 {doc_id} {relevance}\n")
    return len(qrels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run")
    parser.add_argument("--dataset", default="comlq")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    python = sys.executable
    negplugins = str(Path(python).with_name("negplugins"))
    with tempfile.TemporaryDirectory() as folder:
        qrels = Path(folder) / "qrels.txt"
        write_qrels(args.dataset, qrels)
        tools = {"suite": [negplugins, "evaluate", args.dataset, args.run, "-m", *MEASURES, "--json"],
                 "ir_measures": [python, "-c", IR_MEASURES, str(qrels), args.run]}
        if importlib.util.find_spec("ranx") is not None:
            tools["ranx"] = [python, "-c", RANX, str(qrels), args.run]
        if importlib.util.find_spec("pytrec_eval") is not None:
            tools["pytrec_eval"] = [python, "-c", PYTREC_EVAL, str(qrels), args.run]
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in tools}
        outputs = {}
        for repeat in range(args.repeats):
            for name, command in tools.items():
                seconds, mib, outputs[name] = measure(command)
                runs[name].append((seconds, mib))
                print(f"repeat {repeat + 1}: {name:12s} {seconds:6.2f} s {mib:7.0f} MiB", file=sys.stderr)
    suite = json.loads(outputs["suite"])["overall"]
    reference = json.loads(outputs["ir_measures"])
    print(f"{Path(args.run).name} on {args.dataset}, {args.repeats} paired repeats (medians)")
    print("  means: " + ", ".join(f"{m} suite {suite[m]:.6f} ir_measures {reference[m]:.6f}" for m in MEASURES)
          + ("  (equal)" if all(suite[m] == reference[m] for m in MEASURES) else "  (DIFFERENT)"))
    seconds = {name: statistics.median(s for s, _ in values) for name, values in runs.items()}
    peaks = {name: statistics.median(m for _, m in values) for name, values in runs.items()}
    for name in tools:
        line = f"  {name:12s} {seconds[name]:6.2f} s {peaks[name]:7.0f} MiB"
        if name != "suite":
            time_ratio = statistics.median(s[0] / b[0] for s, b in zip(runs["suite"], runs[name]))
            memory_ratio = statistics.median(s[1] / b[1] for s, b in zip(runs["suite"], runs[name]))
            line += f"   suite / {name}: time {time_ratio:.2f}, peak memory {memory_ratio:.2f}"
        print(line)


if __name__ == "__main__":
    main()
