"""Time and peak memory of the suite's bounded run reader, against named baselines (run by hand).

    python benchmarks/bench_run_reader.py [--lines 5000000] [--bomb-mb 5]

Two cases, each measured in a fresh child process (peak memory: ``resource.getrusage`` maxrss of the
child, which includes the interpreter and imports; the same for the baseline, so the ratio is fair):

1. An empty-line gzip bomb (``--bomb-mb`` MB of gzip expanding to about a thousand times more):
   ``negplugins.io.trec.read_run`` must reject it at the 200 MB bound. Baseline: the previous reader's
   approach, ``gzip.open(path, "rt")`` iterated line by line up to the same bound.
2. Validating a large synthetic run (``--lines`` lines, about 40 bytes each, uncompressed) with
   ``negplugins.evaluation.validation.validate_run`` (no document check, which is timed elsewhere). Baseline:
   reading the same file into ``{qid: {docid: score}}`` with plain Python (``open`` + ``split``), the
   least any reader that keeps the run needs.

Prints one line per case: seconds and peak MiB of each, and the ratios (suite / baseline).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

CHILD = r'''
import json, resource, sys, time
case, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
outcome = ""
if case == "suite-bomb":
    from negplugins.io.trec import RunFormatError, read_run
    try:
        read_run(path)
    except RunFormatError as error:
        outcome = str(error)[-80:]
elif case == "baseline-bomb":
    import gzip
    total = 0
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            total += len(line)
            if total > 200 * 1024 * 1024:
                outcome = "bound reached"
                break
elif case == "suite-validate":
    from negplugins.evaluation.validation import validate_run
    report = validate_run("negplugins-demo", path, check_documents=False)
    outcome = f"{report.lines} lines, {report.queries} queries, valid={report.valid}"
elif case == "baseline-validate":
    run = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            q, _, d, r, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    outcome = f"{sum(map(len, run.values()))} pairs"
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "outcome": outcome}))
'''


def measure(case: str, path: Path) -> dict:
    output = subprocess.run([sys.executable, "-c", CHILD, case, str(path)], capture_output=True, text=True,
                            check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def write_bomb(path: Path, megabytes: int) -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\n" * (1 << 20)
    with open(path, "wb") as out:
        while out.tell() < megabytes << 20:
            out.write(compressor.compress(block))
        out.write(compressor.flush())


def write_run(path: Path, lines: int) -> None:
    per_query = 1000
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, lines, per_query):
            query = f"q{start // per_query + 1:02d}"  # mostly unknown to the demo: counted, not listed
            f.write("".join(f"{query} Q0 doc{rank:07d} {rank} {1000 - rank / 1000:.6f} bench\n"
                            for rank in range(1, min(per_query, lines - start) + 1)))


def report(name: str, suite: dict, baseline: dict, baseline_name: str) -> None:
    print(f"{name}: suite {suite['seconds']:.2f} s, {suite['maxrss_mib']:.0f} MiB peak | {baseline_name} "
          f"{baseline['seconds']:.2f} s, {baseline['maxrss_mib']:.0f} MiB peak | ratio time "
          f"{suite['seconds'] / baseline['seconds']:.2f}x, memory {suite['maxrss_mib'] / baseline['maxrss_mib']:.2f}x")
    print(f"  suite: {suite['outcome']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5_000_000, help="lines of the synthetic run (default 5M)")
    parser.add_argument("--bomb-mb", type=int, default=5, help="size of the empty-line gzip bomb (default 5 MB)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-run-reader-") as tmp:
        bomb = Path(tmp) / "blank.trec.gz"
        write_bomb(bomb, args.bomb_mb)
        report(f"empty-line gzip bomb ({bomb.stat().st_size / 2**20:.1f} MiB gzip)", measure("suite-bomb", bomb),
               measure("baseline-bomb", bomb), "gzip.open line by line to the same bound")
        run = Path(tmp) / "large.trec"
        write_run(run, args.lines)
        report(f"validate {run.stat().st_size / 2**20:.0f} MiB run ({args.lines} lines)",
               measure("suite-validate", run), measure("baseline-validate", run), "plain dict reader")


if __name__ == "__main__":
    main()
