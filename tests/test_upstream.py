"""The third-party internals the suite patches: a moved one is named in a warning, and no error is swallowed silently.

Moves are simulated by deleting the attribute (``monkeypatch``) and asking again, as a newer upstream release
without it would; every check is reset first, since it runs once per process.
"""

import importlib.metadata
import os
import subprocess
import sys
import types
import warnings
from pathlib import Path

import ir_datasets
import ir_measures
import pytest

from negplugins._compat import ir_measures as ir_measures_hooks
from negplugins._compat import jvm, upstream
from negplugins._compat.upstream import UpstreamChangedWarning

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_checks(monkeypatch):
    """Forget which packages were checked in this process, and put it back afterwards."""
    monkeypatch.setattr(upstream, "_checked", {})


@pytest.mark.parametrize("package", ["ir_measures", "ir_datasets", "jnius_config", "pyserini", "pyserini.search.lucene"])
def test_installed_versions_have_everything(package, fresh_checks):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UpstreamChangedWarning)
        assert upstream.check(package) == frozenset()


def test_a_moved_ir_measures_attribute_is_named_once(fresh_checks, monkeypatch):
    monkeypatch.delattr(ir_measures.providers, "registry")
    version = importlib.metadata.version("ir_measures")
    with pytest.warns(UpstreamChangedWarning) as caught:
        missing = upstream.check("ir_measures")
    assert missing == {"ir_measures.providers.registry"}
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(f"ir_measures {version}: ir_measures.providers.registry is not where negplugins expects")
    assert "the negation measures (RightRank, DeltaMRR, ...) cannot be computed through ir_measures" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", UpstreamChangedWarning)
        assert upstream.check("ir_measures") == missing  # once per process: the same answer, no second warning


def test_registration_warns_and_applies_the_rest_when_the_pipeline_providers_moved(fresh_checks, monkeypatch):
    pipeline = ir_measures.DefaultPipeline
    monkeypatch.delattr(pipeline, "providers")
    with pytest.warns(UpstreamChangedWarning, match=r"DefaultPipeline\.providers .*cannot be computed through"):
        ir_measures_hooks.register()
    assert ir_measures.parse_measure("RightRank@10") is not None  # the names are still registered


def test_what_the_suite_needs_of_ir_measures_is_checked():
    # the suite adds to ir_measures' registries and DefaultPipeline.providers, and shadows DefaultPipeline._evaluator
    # for the calls that mix its measures with standard ones: those are all it needs to find
    assert {needed.name for needed in upstream.NEEDED["ir_measures"]} == {
        "ir_measures.measures.registry", "ir_measures.measures.register", "ir_measures.providers.registry",
        "ir_measures.providers.register", "ir_measures.DefaultPipeline.providers",
        "ir_measures.DefaultPipeline._evaluator", "ir_measures.providers.Evaluator"}
    stock_only = ir_measures.evaluator([ir_measures.nDCG @ 10, ir_measures.Judged @ 10], {"q": {"d": 1}})
    assert type(stock_only) is ir_measures.providers.fallback_provider.FallbackEvaluator  # ir_measures' own


def test_registration_warns_when_the_pipeline_evaluator_moved(fresh_checks, monkeypatch):
    pipeline = ir_measures.DefaultPipeline
    monkeypatch.delattr(pipeline, "_evaluator")
    for cls in type(pipeline).__mro__:  # FallbackProvider's and Provider's
        if "_evaluator" in vars(cls):
            monkeypatch.delattr(cls, "_evaluator")
    with pytest.warns(UpstreamChangedWarning, match=r"DefaultPipeline\._evaluator .*list NaN"):
        ir_measures_hooks.register()
    assert "_evaluator" not in vars(pipeline)  # not shadowed where there is nothing to wrap


def test_a_moved_pyterrier_function_is_left_alone(monkeypatch):
    pytest.importorskip("pyterrier")  # its import hook checks pyterrier once: forget that afterwards
    from pyterrier._evaluation import _rendering

    from negplugins._compat import pyterrier as pyterrier_hooks

    monkeypatch.setattr(upstream, "_checked", {})
    monkeypatch.delattr(_rendering, "_mean_of_measures")
    with pytest.warns(UpstreamChangedWarning, match=r"pyterrier \S+: pyterrier\._evaluation\._rendering\."
                                                    r"_mean_of_measures is not where .*averages the negation"):
        pyterrier_hooks.install()
    assert not hasattr(_rendering, "_mean_of_measures")


def test_ir_datasets_registry_moved(fresh_checks, monkeypatch):
    monkeypatch.delattr(ir_datasets, "registry")
    with pytest.warns(UpstreamChangedWarning) as caught:
        assert upstream.check("ir_datasets") == {"ir_datasets.registry", "ir_datasets.registry.register"}
    assert [str(w.message).split(" is not where")[0] for w in caught] == [
        f"ir_datasets {importlib.metadata.version('ir_datasets')}: ir_datasets.registry",
        f"ir_datasets {importlib.metadata.version('ir_datasets')}: ir_datasets.registry.register"]


def test_pyserini_option_moved_out_of_its_module(fresh_checks, monkeypatch, tmp_path):
    """pyserini.setup no longer asks for jdk.incubator.vector there: the option filter may miss it."""
    moved = tmp_path / "setup.py"
    moved.write_text("import jnius_config\n\ndef configure_classpath(root='.'):\n    pass\n")
    monkeypatch.setitem(sys.modules, "pyserini.setup", types.SimpleNamespace(__file__=str(moved)))
    with pytest.warns(UpstreamChangedWarning, match=r"pyserini \S+: pyserini\.setup \(with '--add-modules=jdk\."
                                                    r"incubator\.vector'\) is not where .*may not start"):
        assert upstream.check("pyserini") == {"pyserini.setup"}


def test_a_changed_pyserini_lucene_searcher_is_named(fresh_checks, monkeypatch, tmp_path):
    """Pyserini's LuceneSearcher no longer calls Anserini's batch_search as the suite does: search bm25 says so, and
    uses LuceneSearcher itself (tests/pipeline/test_lucene_bm25.py)."""
    changed = tmp_path / "_searcher.py"
    changed.write_text("JSimpleSearcher = autoclass('io.anserini.search.SimpleSearcher')\n"
                       "        self.object.set_language(language)\n        self.object.set_bm25(float(k1), float(b))\n"
                       "        results = self.object.batch_search(query_strings, qid_strings, k, threads)\n")
    monkeypatch.setitem(sys.modules, "pyserini.search.lucene._searcher", types.SimpleNamespace(__file__=str(changed)))
    with pytest.warns(UpstreamChangedWarning) as caught:
        assert upstream.check("pyserini.search.lucene") == {"pyserini.search.lucene._searcher"}
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2 and all(m.startswith(f"pyserini {importlib.metadata.version('pyserini')}: pyserini."
                                                   "search.lucene._searcher (with ") for m in messages)
    assert "int(k), int(threads))" in messages[0] and "entrySet" in messages[1]
    assert all(m.endswith("negplugins search bm25 imports Pyserini's LuceneSearcher (and with it torch, for about "
                          "9 s) instead of making the calls it makes itself") for m in messages)


def _trimmed_java(tmp_path):
    home = tmp_path / "trimmed"
    home.mkdir()
    (home / "release").write_text('JAVA_VERSION="21"\nMODULES="java.base"\n')
    return home


@pytest.mark.parametrize("debug", [False, True])
def test_a_recovered_jvm_error_is_reported(debug, monkeypatch, tmp_path, capsys):
    import jnius_config

    dropped = "--add-modules=jdk.incubator.vector"
    added = []
    monkeypatch.setattr(jnius_config, "vm_running", False)
    monkeypatch.setattr(jnius_config, "add_options", lambda *options: added.extend(options))
    monkeypatch.setattr(jnius_config, "get_options", lambda: [dropped])

    def refuse(*options):
        raise RuntimeError("VM is already running, can't set options")

    monkeypatch.setattr(jnius_config, "set_options", refuse)
    monkeypatch.setenv("NEGPLUGINS_DEBUG", "1" if debug else "0")
    monkeypatch.setattr(jvm, "_requested", set())  # an in-process CLI test earlier may have asked for quiet logs, -Xrs
    jvm._patch_jnius_options(str(_trimmed_java(tmp_path)))
    err = capsys.readouterr().err
    line = (f"negplugins: removing {dropped} from the JVM options already registered failed and was skipped: "
            "RuntimeError: VM is already running, can't set options")
    assert line in err
    if debug:
        assert "Traceback (most recent call last)" in err and "in refuse" in err
    else:
        assert err == line + " (set NEGPLUGINS_DEBUG=1 for the traceback)\n"
    assert added == ["-Dslf4j.internal.verbosity=WARN"]


# -- the import hook ----------------------------------------------------------------------------------

def _python(code, tmp_path, **env_updates):
    env = {k: v for k, v in os.environ.items() if k not in ("NEGPLUGINS_AUTOLOAD", "NEGPLUGINS_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    env.update(env_updates)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)


_FAILING_ACTION = ("import _negplugins_autoload as hook;"
                   "hook._ACTIONS['fakepkg'] = (None, 'negplugins._compat.plugins:no_such_function');"
                   "import fakepkg; print('imported', fakepkg.VALUE)")


@pytest.mark.parametrize("debug", [False, True])
def test_a_failing_hook_action_is_reported_and_the_import_goes_on(debug, tmp_path):
    (tmp_path / "fakepkg.py").write_text("VALUE = 1\n")
    result = _python(_FAILING_ACTION, tmp_path, **({"NEGPLUGINS_DEBUG": "1"} if debug else {}))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "imported 1\n"
    line = ("negplugins: the import hook's negplugins._compat.plugins:no_such_function for fakepkg failed, fakepkg "
            "is used without the suite: AttributeError: module 'negplugins._compat.plugins' has no attribute "
            "'no_such_function'")
    if debug:
        assert "Traceback (most recent call last)" in result.stderr and "_negplugins_autoload.py" in result.stderr
        assert result.stderr.rstrip("\n").endswith(line)
    else:
        assert result.stderr == line + " (set NEGPLUGINS_DEBUG=1 for the traceback)\n"


@pytest.mark.parametrize("debug", [False, True])
def test_the_pth_line_reports_a_hook_that_cannot_be_imported(debug, tmp_path):
    (tmp_path / "_negplugins_autoload.py").write_text("raise RuntimeError('boom')\n")
    code = f"exec(open({str(ROOT / 'negplugins-autoload.pth')!r}).read())"
    result = _python(code, tmp_path, **({"NEGPLUGINS_DEBUG": "1"} if debug else {}))
    assert result.returncode == 0, result.stderr
    assert "negplugins: the import hook is off, _negplugins_autoload failed: RuntimeError: boom" in result.stderr
    assert ("Traceback (most recent call last)" in result.stderr) == debug
