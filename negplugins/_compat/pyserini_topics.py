"""Pyserini's topic and qrels names for the suite's dataset ids (``--topics comlq``; ``trec_eval ... comlq run``);
any other name, and any existing path, keeps its Pyserini meaning. See docs/stock-tools.md.
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


def _wrap(original, function: str):
    """``original``, except that a dataset id of the suite gives its topics or its qrels file's path."""
    @functools.wraps(original)
    def wrapper(collection_name, *args, **kwargs):
        from ..io import topics

        if not topics.is_topic_name(collection_name):
            return original(collection_name, *args, **kwargs)
        if function == "get_topics":
            return topics.pyserini_topics(collection_name)
        return str(topics.pyserini_qrels_file(collection_name))

    wrapper._negplugins_original = original  # type: ignore[attr-defined]
    return wrapper


def install() -> list[str]:
    """Make Pyserini's ``get_topics`` and ``get_qrels_file`` resolve the suite's dataset ids (idempotent); the
    ``module.function`` names now wrapped."""
    missing = upstream.check("pyserini.search")
    wrapped = []
    for function, modules in (("get_topics", MODULES), ("get_qrels_file", QRELS_MODULES)):
        for name in modules:
            module = sys.modules.get(name)
            if module is None or f"{name}.{function}" in missing:
                continue
            current = getattr(module, function, None)
            if current is None:
                continue
            if not hasattr(current, "_negplugins_original"):
                setattr(module, function, _wrap(current, function))
            wrapped.append(f"{name}.{function}")
    return wrapped
