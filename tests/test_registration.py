"""Importing the package registers datasets without reading or downloading anything."""

import subprocess
import sys


def test_import_registers_without_touching_the_network_or_cache(tmp_path):
    code = (
        "import socket, os\n"
        "def refuse(*a, **k): raise AssertionError('network used at import')\n"
        "socket.socket.connect = refuse\n"
        "import ir_datasets, ir_datasets_ext\n"
        "ids = [i for i in ir_datasets.registry if i.startswith('comlq')]\n"
        "print(len(ids))\n"
        "files = [os.path.join(d, f) for d, _, fs in os.walk(os.environ['IR_DATASETS_HOME']) for f in fs]\n"
        "suite = [d for d in os.listdir(os.environ['IR_DATASETS_HOME']) if d.startswith(('comlq', 'negplugins'))]\n"
        "print(files + suite)\n"
    )
    env = {"IR_DATASETS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    count, listing = out.splitlines()
    assert count == "16"  # comlq, 14 structures, negation
    assert listing == "[]"  # ir_datasets makes empty folders for its own datasets; ours make nothing
