"""Stock command-line modules (Pyserini's) run one after the other in one child process, as ``python -m`` runs each.

The process is started as a user starts ``python -m pyserini.search.lucene`` (the installed import hook sets up
Java at its start); each command's own code runs as ``runpy.run_module(MODULE, run_name="__main__",
alter_sys=True)``, which is what ``python -m MODULE ARGS`` does. Importing ``pyserini.search.lucene`` (torch,
transformers) and starting the JVM take about 8-12 s of CPU: the process pays them once for every command of a
test module (the ``stock_commands`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

#: one JSON argument list a line on stdin; the exit status of each on the file descriptor it is given
_DRIVER = """
import json, os, runpy, sys
replies = os.fdopen(int(sys.argv[1]), "w")
for line in sys.stdin:
    sys.argv = json.loads(line)
    try:
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as stop:
        status = stop.code
    replies.write(json.dumps(status) + "\\n")
    replies.flush()
"""

#: as the other stock commands' timeout
TIMEOUT = 300


class StockCommands:
    """``commands(MODULE, *ARGS)`` runs ``python -m MODULE ARGS`` in the child process; a non-zero exit fails the test
    with the end of what the process printed (``log``)."""

    def __init__(self, log: Path):
        self.log = log
        read, write = os.pipe()
        with open(log, "w") as output:
            self.process = subprocess.Popen([sys.executable, "-c", _DRIVER, str(write)], stdin=subprocess.PIPE,
                                            stdout=output, stderr=subprocess.STDOUT, pass_fds=(write,), text=True)
        os.close(write)
        self.replies = os.fdopen(read)

    def __call__(self, module, *args):
        self.process.stdin.write(json.dumps([module, *map(str, args)]) + "\n")
        self.process.stdin.flush()
        if not select.select([self.replies], [], [], TIMEOUT)[0]:
            self.process.kill()
            pytest.fail(f"{module} {args} did not finish in {TIMEOUT} s: {self.log.read_text()[-3000:]}")
        reply = self.replies.readline()
        assert reply, f"the stock command process ended: {self.log.read_text()[-3000:]}"
        assert json.loads(reply) in (0, None), f"{module} {args}: {self.log.read_text()[-3000:]}"

    def close(self):
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0, self.log.read_text()[-3000:]
        self.replies.close()
