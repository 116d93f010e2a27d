"""The README's test command, timed against an earlier revision's suite in the same run (by hand).

    .venv/bin/python benchmarks/bench_test_suite.py [--baseline REV] [--pairs 1]

On a shared machine a suite time alone compares nothing: on the 2-core development machine a fixed Python loop
(20 million additions, :data:`PROBE`) took from 1.64 s to 3.0 s within one day, and the suite's time moved with
it. So each pair runs, one right after the other, the suite of this working tree and the suite of ``REV``
(default ``HEAD~1``: checked out in a temporary git worktree, beside a link to ``../shared/``, and run with this
checkout's virtual environment, its own code first on ``PYTHONPATH``), with the probe before and after each. It
prints every time, the probes (1.64-1.81 s in a quiet hour) and the median ratio of the pairs (this tree /
``REV``). The probe only says how steady the machine was: scaling a suite's time by it did not work (one pair,
scaled to a 1.7 s probe, gave 338 s for this tree and 294 s for the baseline, whose real times were 408 s and
455 s).

Both suites run as CI runs them: ``python -m pytest -q`` with the options of their own ``pyproject.toml``.
A suite that fails is reported as failed; its time is still printed.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The probe: a loop of 20 million additions at a module's top level, in a fresh interpreter.
PROBE = "import time\nstart = time.perf_counter()\ntotal = 0\nfor n in range(20_000_000):\n    total += n\n" \
        "print(time.perf_counter() - start)\n"


def probe() -> float:
    """Seconds of :data:`PROBE`: the machine's speed of the moment."""
    return float(subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout)


def run_suite(folder: Path, env: dict) -> tuple[float, str, int]:
    """``(seconds, pytest's last line, exit status)`` of the test command in ``folder``."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    return seconds, (lines[-1].strip("= ") if lines else "no summary line"), done.returncode


def measure(name: str, folder: Path, env: dict) -> dict:
    before = probe()
    seconds, summary, status = run_suite(folder, env)
    after = probe()
    print(f"{name:>9}: {seconds:7.1f} s  probe {before:.2f} s before, {after:.2f} s after  ({summary}; exit {status})",
          flush=True)
    return {"seconds": seconds, "status": status}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD~1", help="the git revision to compare with (default HEAD~1)")
    parser.add_argument("--pairs", type=int, default=1, help="pairs of runs (default 1)")
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error(f"--pairs: expected 1 or more, got {args.pairs}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the worktree is removed on the way out
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background: the suites' Ctrl-C tests
        signal.signal(signal.SIGINT, signal.default_int_handler)  # need the commands they start to get SIGINT
    revision = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], capture_output=True,
                              text=True)
    if revision.returncode != 0:
        print(f"bench_test_suite: --baseline {args.baseline}: not a revision of {ROOT}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="negplugins-bench-suite-") as tmp:
        baseline = Path(tmp) / "baseline"
        shared = ROOT.parent / "shared"  # the tests read ../shared/ from the project root
        if shared.is_dir():
            (Path(tmp) / "shared").symlink_to(shared, target_is_directory=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(baseline),
                        revision.stdout.strip()], check=True)
        try:
            ratios = []
            for pair in range(1, args.pairs + 1):
                print(f"pair {pair}: this tree, then {args.baseline} ({revision.stdout.strip()})", flush=True)
                ours = measure("this tree", ROOT, dict(os.environ))
                theirs = measure("baseline", baseline, dict(os.environ, PYTHONPATH=str(baseline)))
                ratios.append(ours["seconds"] / theirs["seconds"])
            print(f"this tree / {args.baseline}: {statistics.median(ratios):.2f} (median of {len(ratios)} pairs)")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
