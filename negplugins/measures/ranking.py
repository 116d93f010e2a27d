"""The one ranking the suite's own measures score, and how ``--ties one-ranking`` gives it to stock measures.

Score descending at full precision, ties by doc_id descending; ranks start at 1 (docs/measures.md, "Ties").
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
    """A query's doc_ids in the one ranking: score descending, ties by doc_id descending."""
    # Two stable sorts: doc_id descending, then score descending keeps doc_id descending within ties.
    by_doc_id = sorted(scored_docs, reverse=True)
    return sorted(by_doc_id, key=scored_docs.__getitem__, reverse=True)


def check_finite(run):
    """Raise :class:`NonFiniteScoreError` on the first NaN or infinite score of a run, naming it."""
    for query_id, scored_docs in run.items():
        scores = np.fromiter(scored_docs.values(), dtype=float, count=len(scored_docs))
        if not np.isfinite(scores).all():
            doc_id, score = next((d, s) for d, s in scored_docs.items() if not math.isfinite(s))
            raise NonFiniteScoreError(f'query {query_id!r} document {doc_id!r}: score {score!r} is not a finite '
                                      'number; the measures need finite scores to rank the documents')


def canonical_run(run):
    """The run with each query's scores replaced by ``n, n-1, ..., 1`` in the one ranking's order (for any provider)."""
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
    """``{doc_id: rank}`` of the judged documents present in a query's run, in the one ranking."""
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
