"""What the import hook and the ``negplugins-*`` console scripts (for ``NEGPLUGINS_AUTOLOAD=0``) call to plug the
suite into the stock tools; each function is idempotent. See docs/stock-tools.md.
"""

from __future__ import annotations

import runpy
import sys

__all__ = ["register_datasets", "register_measures", "configure_java", "pyserini_topic_names", "ir_datasets_command", "ir_measures_main",
           "ir_datasets_main", "pyserini_main"]


def register_datasets() -> None:
    """Register the suite's datasets with ir_datasets."""
    from . import upstream

    upstream.check("ir_datasets")  # before ir_datasets_ext registers into ir_datasets.registry
    import ir_datasets_ext  # noqa: F401


def ir_datasets_command() -> None:
    """Have ``ir_datasets export`` and ``lookup`` write the bool fields of the suite's records."""
    from . import ir_datasets_export

    ir_datasets_export.install()


def register_measures() -> None:
    """Register the negation measures with ir_measures (``import negplugins`` and the import hook call it)."""
    from .ir_measures import register

    register()


def configure_java(main: str | None = None) -> None:
    """Prepare the Java 21 runtime for Pyserini (before jnius is imported); ``main``: the module run, if known."""
    from . import jvm

    jvm.configure(main, require_jvm=False)  # stock Pyserini keeps its own error for a JAVA_HOME without a JVM


def pyserini_topic_names() -> None:
    """Make Pyserini's ``--topics`` and ``trec_eval``'s qrels argument resolve the suite's dataset ids."""
    from . import pyserini_topics

    pyserini_topics.install()


def ir_measures_main() -> None:
    """``negplugins-ir_measures``: the stock ``ir_measures`` command with the suite registered."""
    register_datasets()
    register_measures()
    from ir_measures.__main__ import main_cli

    main_cli()


def ir_datasets_main() -> None:
    """``negplugins-ir_datasets``: the stock ``ir_datasets`` command with the suite registered."""
    register_datasets()
    ir_datasets_command()
    import ir_datasets

    ir_datasets.main_cli()


def pyserini_main() -> None:
    """``negplugins-pyserini MODULE [ARGS]``: ``python -m pyserini.MODULE`` on the suite's Java setup."""
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: negplugins-pyserini MODULE [ARGS...]   e.g. negplugins-pyserini search.lucene --help")
        raise SystemExit(0 if len(sys.argv) >= 2 else 2)
    module = sys.argv[1] if sys.argv[1].startswith("pyserini.") else f"pyserini.{sys.argv[1]}"
    configure_java(module)
    register_datasets()
    if module.startswith("pyserini.search."):  # imported by the module anyway, as its parent package
        import pyserini.search  # noqa: F401

        pyserini_topic_names()
    sys.argv = [module, *sys.argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
