"""Anserini's BM25 searcher, called as Pyserini's ``LuceneSearcher`` calls it, without importing ``pyserini.search``
(which loads torch: 9 s of CPU that BM25 does not use). The hits are the same Java objects, so the runs are the
same, byte for byte; the calls are checked in Pyserini's source first (:data:`negplugins._compat.upstream.NEEDED`).
"""

from __future__ import annotations

import os

from . import upstream

__all__ = ["lucene_searcher"]


class _SimpleSearcher:
    """Anserini's ``SimpleSearcher`` with the part of ``LuceneSearcher``'s interface that BM25 uses."""

    def __init__(self, index_dir: str):
        from pyserini.pyclass import autoclass

        self.object = autoclass("io.anserini.search.SimpleSearcher")(index_dir)

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
    """A searcher with ``LuceneSearcher``'s ``set_language``, ``set_bm25`` and ``batch_search``: ``LuceneSearcher``
    itself when Pyserini's calls are not the ones expected (an ``UpstreamChangedWarning`` says so)."""
    if upstream.check("pyserini.search.lucene"):
        from pyserini.search.lucene import LuceneSearcher

        return LuceneSearcher(str(index_dir))
    return _SimpleSearcher(str(index_dir))
