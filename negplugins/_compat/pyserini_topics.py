"""Pyserini's topic and qrels names for the suite's datasets: ``python -m pyserini.search.lucene --topics comlq ...``
and ``python -m pyserini.eval.trec_eval -m ndcg_cut.10 comlq run.trec``.

Pyserini resolves a ``--topics`` value that is not a file through ``pyserini.search.get_topics(name)``
(``pyserini/search/_base.py``), which knows only the topic sets bundled with Anserini. :func:`install` wraps
that function, where it is defined and where it was imported by name (``pyserini.search``,
``pyserini.query_iterator``, ...): a name that is a dataset id of the suite (``comlq``, ``comlq/negation``,
``excluir/test``, ``negplugins-demo``; :func:`negplugins.io.topics.is_topic_name`) gives the queries of that
dataset, as :func:`negplugins.io.topics.pyserini_topics` returns them (the topics of the file
``negplugins topics`` writes, as Pyserini reads it); any other name goes to Pyserini's function unchanged.
A path that exists is read by Pyserini as a file before any name is looked up, so a local file is never
shadowed.

Qrels names go the same way: ``pyserini.search.get_qrels_file(name)`` (which ``pyserini.eval.trec_eval`` calls for
a qrels argument that is not a file, and ``get_qrels`` reads) is wrapped where it is defined and where it was
imported by name (:data:`QRELS_MODULES`): a dataset id of the suite gives the path of a TREC qrels file of its
judgements (:func:`negplugins.io.topics.pyserini_qrels_file`, kept in the ir_datasets cache), any other name
Pyserini's own file. ``trec_eval`` then scores the suite's qrels with the numbers ``negplugins evaluate`` gives.

The import hook (:mod:`_negplugins_autoload`) calls :func:`install` right after ``pyserini.search`` has been
imported, before ``pyserini.query_iterator`` imports ``get_topics`` from it (and ``pyserini.eval.trec_eval``
``get_qrels_file``); ``negplugins-pyserini`` does the same when the hook is off. The suite's datasets are loaded
only when a name is looked up.
"""

from __future__ import annotations

import functools
import sys

from . import upstream

__all__ = ["install", "MODULES", "QRELS_MODULES"]

#: Modules that hold Pyserini's ``get_topics``: where it is defined first, then those that import it by name.
MODULES = ("pyserini.search._base", "pyserini.search", "pyserini.query_iterator",
           "pyserini.eval.convert_trec_run_to_dpr_retrieval_run")
#: Modules that hold Pyserini's ``get_qrels_file``: where it is defined first, then those that import it by name
#: (``pyserini.eval.trec_eval`` does so when it runs, after the hook has wrapped ``pyserini.search``'s).
QRELS_MODULES = ("pyserini.search._base", "pyserini.search", "pyserini.eval.trec_eval",
                 "pyserini.eval.msmarco_passage_eval", "pyserini.eval.msmarco_doc_eval",
                 "pyserini.server.search_controller")


def _resolve_topics(name):
    from ..io import topics

    return topics.pyserini_topics(name)


def _resolve_qrels(name):
    from ..io import topics

    return str(topics.pyserini_qrels_file(name))


def _wrap(original, resolve=_resolve_topics):
    @functools.wraps(original)
    def wrapper(collection_name, *args, **kwargs):
        from ..io import topics

        if topics.is_topic_name(collection_name):
            return resolve(collection_name)
        return original(collection_name, *args, **kwargs)

    wrapper._negplugins_original = original  # type: ignore[attr-defined]
    return wrapper


def install() -> list[str]:
    """Make Pyserini's ``get_topics`` and ``get_qrels_file`` resolve the suite's dataset ids; idempotent.

    Returns
    -------
    list of str
        ``module.function`` for each function that is now the suite's wrapper.

    Warns
    -----
    UpstreamChangedWarning
        When ``get_topics`` or ``get_qrels_file`` is not in ``pyserini.search`` or ``pyserini.search._base``: topic
        or qrels names of the suite are then not resolved where it is missing.
    """
    missing = upstream.check("pyserini.search")
    wrapped = []
    for function, modules, resolve in (("get_topics", MODULES, _resolve_topics),
                                       ("get_qrels_file", QRELS_MODULES, _resolve_qrels)):
        for name in modules:
            module = sys.modules.get(name)
            if module is None or f"{name}.{function}" in missing:
                continue
            current = getattr(module, function, None)
            if current is None:
                continue
            if not hasattr(current, "_negplugins_original"):
                setattr(module, function, _wrap(current, resolve))
            wrapped.append(f"{name}.{function}")
    return wrapped
