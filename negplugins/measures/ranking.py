"""The one ranking the suite's own measures score, and how stock ir_measures orders ties.

**Convention.** A query's run is ranked by score descending, compared at full (double) precision;
documents with equal scores are ordered by doc_id descending (the larger string first, compared by
code point, which for UTF-8 is trec_eval's byte order). This is trec_eval's convention. Ranks are
1-based; a document missing from the run has no rank.

**Where it applies.** The suite's own measures (PosRR, DeltaMRR, DeltaR, RightRank, NegRecall, LSNC) rank
each query themselves with :func:`judged_ranks`, inside their provider (:mod:`negplugins.measures.provider`),
whatever calls them: ``ir_measures.calc_aggregate`` / ``iter_calc``, the ``ir_measures`` command, PyTerrier's
``pt.Experiment``, ``negplugins evaluate``. ``PairedAcc`` compares a query's two raw scores instead (a tie is
wrong there, as in NevIR). The suite's runners write ties in this order too.

**Standard measures are stock.** The suite changes nothing in how ir_measures computes ``RR``, ``nDCG``,
``AP``, ``P``, ``R``, ``Success``, ``Judged``, ...: each is computed by its stock provider, which orders ties its
own way. In ir_measures 0.4.3 (read in its source, and measured):

* ``msmarco`` (``RR@k``) and ``judged`` (``Judged@k``): score descending at full precision, ties by doc_id
  *ascending*;
* ``pytrec_eval`` (``RR`` without a cutoff, ``nDCG``, ``AP``, ``P@k``, ``R@k``, ``Success@k``, ``Rprec``, ...):
  trec_eval's order, on scores converted to single precision (its ``float sim``): ties by doc_id descending,
  and scores that differ beyond single precision (10.0000001 and 10.0) tie.

So one run's tie can count differently in ``RR@10`` and in ``RR``. ``negplugins evaluate`` gives these stock
values by default (:data:`STOCK`); with :data:`ONE_RANKING` (``--ties one-ranking``) every standard measure is
given :func:`canonical_run` of the run, whose scores ``n, n-1, ..., 1`` are distinct and exact in single
precision below 2**24 documents a query, so every provider sees the one ranking. On the committed ComLQ runs
only ``RR@10`` moves (docs/measures.md): BM25 0.591339 stock, 0.591396 in the one ranking.

Scores must be finite: a NaN or infinite score raises :class:`NonFiniteScoreError` in the suite's measures
and in :func:`canonical_run`, since NaN compares false with everything.

Minimal cases (qrels ``{a: 1, b: -1}``): the run ``{a: 1.0, b: 1.0}`` ranks ``b`` first in the one ranking,
so DeltaMRR@10 = -0.5 and, with ``--ties one-ranking``, RR@10 = 0.5 (stock ``RR@10``: 1.0, ``a`` first); the
run ``{a: 10.0000001, b: 10.0}`` ranks ``a`` first, so DeltaR@1 = 1 and, with ``--ties one-ranking``, R@1 = 1
(stock ``R@1``: 0, a single-precision tie that ``b`` wins).
"""

import math

import numpy as np

#: Largest number of documents of one query whose canonical scores are all exact in single precision.
EXACT_FLOAT32_LIMIT = 2 ** 24

#: ``negplugins evaluate --ties``: standard measures as stock ir_measures computes them (the default).
STOCK = "stock"
#: ``negplugins evaluate --ties``: every measure in the one ranking.
ONE_RANKING = "one-ranking"
#: Each tie handling and what it means, as evaluation outputs state it.
TIE_HANDLING = {
    STOCK: "standard measures as stock ir_measures computes them, each provider ordering tied documents its own "
           "way; the suite's own measures in the one ranking",
    ONE_RANKING: "every measure in the one ranking: score descending at full precision, ties by doc id descending",
}


class NonFiniteScoreError(ValueError):
    """A run holds a NaN or infinite score."""


def canonical_order(scored_docs):
    """Return a query's documents in the one ranking: score descending, ties by doc_id descending.

    Parameters
    ----------
    scored_docs : dict of str to float
        The query's run, doc_id to score.

    Returns
    -------
    list of str
        The doc_ids, best first.
    """
    # Two stable sorts: doc_id descending, then score descending keeps doc_id descending within ties.
    by_doc_id = sorted(scored_docs, reverse=True)
    return sorted(by_doc_id, key=scored_docs.__getitem__, reverse=True)


def check_finite(run):
    """Raise on the first NaN or infinite score of a run.

    Parameters
    ----------
    run : dict of str to dict of str to float
        query_id to doc_id to score.

    Raises
    ------
    NonFiniteScoreError
        Naming the query, the document and the score.
    """
    for query_id, scored_docs in run.items():
        scores = np.fromiter(scored_docs.values(), dtype=float, count=len(scored_docs))
        if not np.isfinite(scores).all():
            doc_id, score = next((d, s) for d, s in scored_docs.items() if not math.isfinite(s))
            raise NonFiniteScoreError(f'query {query_id!r} document {doc_id!r}: score {score!r} is not a finite '
                                      'number; the measures need finite scores to rank the documents')


def canonical_run(run):
    """Rank every query of a run once, in the one ranking, with distinct scores.

    Parameters
    ----------
    run : dict of str to dict of str to float
        query_id to doc_id to score (already converted from ir_measures' other run formats).

    Returns
    -------
    dict of str to dict of str to float
        query_id to doc_id to ``n - rank + 1``, n being the query's number of documents: the same order for
        every ir_measures provider, whatever its precision and tie rule.

    Raises
    ------
    NonFiniteScoreError
        A score is NaN or infinite.
    ValueError
        A query has 2**24 documents or more (its scores would no longer be exact in single precision).
    """
    check_finite(run)
    canonical = {}
    for query_id, scored_docs in run.items():
        n = len(scored_docs)
        if n >= EXACT_FLOAT32_LIMIT:
            raise ValueError(f'query {query_id!r} has {n} documents; the one ranking supports fewer than '
                             f'{EXACT_FLOAT32_LIMIT} a query')
        canonical[query_id] = {doc_id: float(n - position)
                               for position, doc_id in enumerate(canonical_order(scored_docs))}
    return canonical


def judged_ranks(scored_docs, judged_docs):
    """Rank the judged documents of one query within its run, in the one ranking.

    Only the judged documents are ranked: rank(d) = 1 + the number of documents that score higher
    than d, or score the same and have a larger doc_id. One sort of the scores serves every judged
    document, so a query costs O(n log n) for n scored documents whatever the number of judgements.

    Parameters
    ----------
    scored_docs : dict of str to float
        The query's run, doc_id to score.
    judged_docs : iterable of str
        The doc_ids to rank.

    Returns
    -------
    dict of str to int
        doc_id to rank, for the judged documents present in the run.
    """
    present = [doc_id for doc_id in judged_docs if doc_id in scored_docs]
    if not present:
        return {}
    scores = np.sort(np.fromiter(scored_docs.values(), dtype=float, count=len(scored_docs)))
    judged_scores = np.array([scored_docs[doc_id] for doc_id in present], dtype=float)
    first_at_or_below = np.searchsorted(scores, judged_scores, side='right')
    first_at = np.searchsorted(scores, judged_scores, side='left')
    ranks = {}
    for doc_id, score, higher, tied in zip(present, judged_scores.tolist(),
                                            (len(scores) - first_at_or_below).tolist(),
                                            (first_at_or_below - first_at).tolist()):
        rank = 1 + higher
        if tied > 1:
            rank += sum(1 for other_id, other_score in scored_docs.items()
                        if other_score == score and other_id > doc_id)
        ranks[doc_id] = rank
    return ranks
