"""Interpreter start-up cost of the import hook (``negplugins-autoload.pth``).

Run by hand (not a test), with the package installed::

    .venv/bin/python benchmarks/bench_autoload_startup.py [runs]

Starts ``python -c pass`` alternately with the hook on and off (``NEGPLUGINS_AUTOLOAD=0``, the baseline,
measured in the same run) and prints the median wall time of each and their ratio, plus the hook
module's own import time as reported by ``python -X importtime``.
"""

import os
import statistics
import subprocess
import sys
import time


def start_time(env):
    begin = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - begin


def main(runs=60):
    on = {k: v for k, v in os.environ.items() if k != "NEGPLUGINS_AUTOLOAD"}
    off = dict(on, NEGPLUGINS_AUTOLOAD="0")
    with_hook, without_hook = [], []
    for _ in range(runs):
        with_hook.append(start_time(on))
        without_hook.append(start_time(off))
    hook, base = statistics.median(with_hook), statistics.median(without_hook)
    trace = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], env=on, capture_output=True, text=True)
    own = [line for line in trace.stderr.splitlines() if "_negplugins_autoload" in line]
    print(f"python -c pass, median of {runs}: hook on {hook * 1000:.2f} ms, off (baseline) {base * 1000:.2f} ms")
    print(f"ratio on / off: {hook / base:.3f}")
    print("hook module import (-X importtime, microseconds self | cumulative):",
          own[0].split(":", 1)[1].strip() if own else "not imported (is the package installed?)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
