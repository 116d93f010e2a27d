"""What the import hook and the ``negplugins-*`` console scripts do to plug the suite in.

Each function is idempotent. :mod:`_negplugins_autoload` calls the measures, Java and topic-name ones when
ir_measures, pyserini or pyserini.search is first imported (and imports ``ir_datasets_ext`` itself when
ir_datasets is);
the console scripts call them explicitly before handing over to the stock
command line, which is the way to use the suite with ``NEGPLUGINS_AUTOLOAD=0``.
"""

from __future__ import annotations

import runpy
import sys

__all__ = ["register_datasets", "register_measures", "configure_java", "pyserini_topic_names", "ir_datasets_command", "ir_measures_main",
           "ir_datasets_main", "pyserini_main"]


def register_datasets() -> None:
    """Register the suite's datasets with ir_datasets.

    Warns
    -----
    UpstreamChangedWarning
        When ``ir_datasets.registry`` is not where the suite registers its datasets.
    """
    from . import upstream

    upstream.check("ir_datasets")  # before ir_datasets_ext registers into ir_datasets.registry
    import ir_datasets_ext  # noqa: F401


def ir_datasets_command() -> None:
    """What the ``ir_datasets`` command line gets beyond the datasets: ``export`` and ``lookup`` write every field
    of the suite's records, bool ones included (:mod:`negplugins._compat.ir_datasets_export`)."""
    from . import ir_datasets_export

    ir_datasets_export.install()


def register_measures() -> None:
    """Register the negation measures with ir_measures (:func:`negplugins._compat.ir_measures.register`).

    The one place that does it: ``import negplugins`` calls it, and so does the import hook when ir_measures is
    first imported. Idempotent.
    """
    from .ir_measures import register

    register()


def configure_java(main: str | None = None) -> None:
    """Prepare the Java 21 runtime for Pyserini (before jnius is imported).

    Parameters
    ----------
    main : str, optional
        The Pyserini module run as this process's program, if known (see :func:`negplugins._compat.jvm.configure`).
    """
    from . import jvm

    jvm.configure(main, require_jvm=False)  # stock Pyserini keeps its own error for a JAVA_HOME without a JVM


def pyserini_topic_names() -> None:
    """Make Pyserini's ``--topics`` and ``trec_eval``'s qrels argument resolve the suite's dataset ids
    (``--topics comlq``; ``trec_eval ... comlq run.trec``), once ``pyserini.search`` is imported (see
    :mod:`negplugins._compat.pyserini_topics`)."""
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
    """``negplugins-pyserini MODULE [ARGS]``: ``python -m pyserini.MODULE`` on the suite's Java setup.

    Example: ``negplugins-pyserini search.lucene --index ... --topics comlq --bm25`` (a topic file works too).
    """
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
