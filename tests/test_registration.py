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


def test_counts_are_known_before_anything_is_read(isolated_ir_datasets_home):
    import ir_datasets

    import ir_datasets_ext  # noqa: F401

    assert ir_datasets.load("comlq").docs_count() == 11251
    assert (ir_datasets.load("comlq").queries_count(), ir_datasets.load("comlq").qrels_count()) == (2909, 4601)
    assert (ir_datasets.load("comlq/negation").docs_count(), ir_datasets.load("comlq/negation").queries_count()) == \
        (11251, 984)
    demo = ir_datasets.load("negplugins-demo")
    assert (demo.docs_count(), demo.queries_count(), demo.qrels_count()) == (36, 21, 52)
    assert demo.qrels_metadata()["fields"]["relevance"]["counts_by_value"] == {"-1": 25, "1": 27}
    # nothing read or written: no file, and no folder of the suite's datasets (stock ir_datasets, when first imported
    # in this process with this home, makes empty folders for its own datasets, as in the test above)
    assert [p for p in isolated_ir_datasets_home.rglob("*") if p.is_file()] == []
    assert [p.name for p in isolated_ir_datasets_home.iterdir() if p.name.startswith(("comlq", "negplugins"))] == []
