"""Ranks of the judged documents of one query, following the trec_eval tie convention.

A run ranks its documents by score, highest first; documents with equal scores are ordered by
doc_id descending (the larger string first), as trec_eval and pytrec_eval do, so ir_measures'
standard measures and these agree on every ranking. Ranks are 1-based. A document missing from the
run has no rank.
"""

import numpy as np


def judged_ranks(scored_docs, judged_docs):
    """Rank the judged documents of one query within its run.

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
