"""Pyserini's topic names for the suite's datasets: ``python -m pyserini.search.lucene --topics comlq ...``.

Pyserini resolves a ``--topics`` value that is not a file through ``pyserini.search.get_topics(name)``
(``pyserini/search/_base.py``), which knows only the topic sets bundled with Anserini. :func:`install` wraps
that function, where it is defined and where it was imported by name (``pyserini.search``,
``pyserini.query_iterator``, ...): a name that is a dataset id of the suite (``comlq``, ``comlq/negation``,
``excluir/test``, ``negplugins-demo``; :func:`negplugins.io.topics.is_topic_name`) gives the queries of that
dataset, as :func:`negplugins.io.topics.pyserini_topics` returns them (the topics of the file
``negplugins topics`` writes, as Pyserini reads it); any other name goes to Pyserini's function unchanged.
A path that exists is read by Pyserini as a file before any name is looked up, so a local file is never
shadowed.

The import hook (:mod:`_negplugins_autoload`) calls :func:`install` right after ``pyserini.search`` has been
imported, before ``pyserini.query_iterator`` imports ``get_topics`` from it; ``negplugins-pyserini`` does the
same when the hook is off. The suite's datasets are loaded only when a name is looked up.
"""

from __future__ import annotations

import functools
import sys

from . import upstream

__all__ = ["install", "MODULES"]

#: Modules that hold Pyserini's ``get_topics``: where it is defined first, then those that import it by name.
MODULES = ("pyserini.search._base", "pyserini.search", "pyserini.query_iterator",
           "pyserini.eval.convert_trec_run_to_dpr_retrieval_run")


def _wrap(original):
    @functools.wraps(original)
    def get_topics(collection_name, *args, **kwargs):
        from ..io import topics

        if topics.is_topic_name(collection_name):
            return topics.pyserini_topics(collection_name)
        return original(collection_name, *args, **kwargs)

    get_topics._negplugins_original = original  # type: ignore[attr-defined]
    return get_topics


def install() -> list[str]:
    """Make Pyserini's ``get_topics`` resolve the suite's dataset ids; idempotent.

    Returns
    -------
    list of str
        The modules whose ``get_topics`` is now the suite's wrapper.

    Warns
    -----
    UpstreamChangedWarning
        When ``pyserini.search.get_topics`` or ``pyserini.search._base.get_topics`` is not there: topic names
        of the suite are then not resolved where it is missing.
    """
    missing = upstream.check("pyserini.search")
    wrapped = []
    for name in MODULES:
        module = sys.modules.get(name)
        if module is None or f"{name}.get_topics" in missing:
            continue
        current = getattr(module, "get_topics", None)
        if current is None:
            continue
        if not hasattr(current, "_negplugins_original"):
            module.get_topics = _wrap(current)
        wrapped.append(name)
    return wrapped
