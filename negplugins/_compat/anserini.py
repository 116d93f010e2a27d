"""Anserini's BM25 searcher, called as Pyserini's ``LuceneSearcher`` calls it, without importing ``pyserini.search``.

``pyserini.search.lucene`` imports its impact searcher, which imports ``pyserini.encode``: torch, transformers,
scikit-learn and an OpenAI client. On a 2-core machine that took 9 s of CPU before the first query, and BM25
uses none of it (``negplugins search bm25`` on the 36-document demo: 12 s, of which the search is a fraction).
``LuceneSearcher`` is a thin wrapper of Anserini's Java ``io.anserini.search.SimpleSearcher``; for BM25 it makes
four calls (open the index, ``set_language``, ``set_bm25``, ``batch_search``), and :func:`lucene_searcher`
makes the same four through :mod:`pyserini.pyclass`, which only starts the JVM. The hits are the same Java
objects, so the runs are the same, byte for byte (``tests/pipeline/test_lucene_bm25.py`` compares them with
stock ``python -m pyserini.search.lucene``).

Those calls are looked up in Pyserini's source first (:data:`negplugins._compat.upstream.NEEDED`, key
``"pyserini.search.lucene"``). When a Pyserini release has changed one of them, the warning names it and
:func:`lucene_searcher` returns Pyserini's own ``LuceneSearcher``.
"""

from __future__ import annotations

import os

from . import upstream

__all__ = ["SEARCHER_CLASS", "lucene_searcher"]

#: The Java class behind Pyserini's ``LuceneSearcher``.
SEARCHER_CLASS = "io.anserini.search.SimpleSearcher"


class _SimpleSearcher:
    """Anserini's ``SimpleSearcher`` with the part of ``LuceneSearcher``'s interface that BM25 uses."""

    def __init__(self, index_dir: str):
        from pyserini.pyclass import autoclass

        self.object = autoclass(SEARCHER_CLASS)(index_dir)

    def set_language(self, language: str) -> None:
        self.object.set_language(language)

    def set_bm25(self, k1: float, b: float) -> None:
        self.object.set_bm25(float(k1), float(b))

    def batch_search(self, queries: list[str], qids: list[str], k: int, threads: int) -> dict:
        """``{query id: Anserini's hits}``, as ``LuceneSearcher.batch_search`` returns them."""
        from pyserini.pyclass import JArrayList

        query_strings, qid_strings = JArrayList(), JArrayList()
        for query in queries:
            query_strings.add(query)
        for qid in qids:
            qid_strings.add(qid)
        results = self.object.batch_search(query_strings, qid_strings, int(k), int(threads))
        return {entry.getKey(): entry.getValue() for entry in results.entrySet().toArray()}


def lucene_searcher(index_dir: str | os.PathLike):
    """A BM25-capable searcher of the Lucene index ``index_dir``.

    Parameters
    ----------
    index_dir : path
        A Lucene index folder.

    Returns
    -------
    object
        With ``set_language``, ``set_bm25`` and ``batch_search(queries, qids, k, threads)`` as Pyserini's
        ``LuceneSearcher`` has them: Anserini's searcher called directly, or ``LuceneSearcher`` itself when
        Pyserini's calls are not the ones expected (an ``UpstreamChangedWarning`` says which).

    Raises
    ------
    jnius.JavaException
        Lucene could not open the index (:func:`negplugins.runners.lucene_index.open_lucene` names a damaged one).
    """
    if upstream.check("pyserini.search.lucene"):
        from pyserini.search.lucene import LuceneSearcher

        return LuceneSearcher(str(index_dir))
    return _SimpleSearcher(str(index_dir))
