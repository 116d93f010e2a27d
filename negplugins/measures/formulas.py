"""Per-query values of the rank-based negation measures, as docs/measures.md defines them.

Each takes a query's :class:`Judgements`, its judged documents' ranks and k; None where it is not defined.
"""

import math
from typing import NamedTuple


class Judgements(NamedTuple):
    """The judged documents of one query: positives (relevance > 0) and negatives (relevance < 0)."""

    positives: tuple
    negatives: tuple


def _best_rank(doc_ids, ranks):
    return min((ranks[doc_id] for doc_id in doc_ids if doc_id in ranks), default=math.inf)


def _count_in_top(doc_ids, ranks, cutoff):
    return sum(1 for doc_id in doc_ids if ranks.get(doc_id, math.inf) <= cutoff)


def _reciprocal_rank(rank, cutoff):
    return 1 / rank if rank <= cutoff else 0.


def positive_rr(judgements, ranks, cutoff):
    """RR@k of the first positive; needs a positive (a query without one is not averaged)."""
    if not judgements.positives:
        return None
    return _reciprocal_rank(_best_rank(judgements.positives, ranks), cutoff)


def delta_mrr(judgements, ranks, cutoff):
    """RR@k of the first positive minus RR@k of the first negative; needs a positive and a negative."""
    if not judgements.positives or not judgements.negatives:
        return None
    return (_reciprocal_rank(_best_rank(judgements.positives, ranks), cutoff)
            - _reciprocal_rank(_best_rank(judgements.negatives, ranks), cutoff))


def delta_recall(judgements, ranks, cutoff):
    """|P in top k| / |P| - |N in top k| / |N|; needs a positive and a negative."""
    if not judgements.positives or not judgements.negatives:
        return None
    return (_count_in_top(judgements.positives, ranks, cutoff) / len(judgements.positives)
            - _count_in_top(judgements.negatives, ranks, cutoff) / len(judgements.negatives))


def right_rank(judgements, ranks, cutoff):
    """1 if the best positive is in the top k and above every negative; needs a positive and a negative."""
    if not judgements.positives or not judgements.negatives:
        return None
    best_positive = _best_rank(judgements.positives, ranks)
    return float(best_positive <= cutoff and best_positive < _best_rank(judgements.negatives, ranks))


def negative_recall(judgements, ranks, cutoff):
    """|N in top k| / |N|; needs a negative."""
    if not judgements.negatives:
        return None
    return _count_in_top(judgements.negatives, ranks, cutoff) / len(judgements.negatives)


def lsnc(judgements, ranks, cutoff):
    """-log((V + 1) / (k + 1)) / log(k + 1), V = |N in top k|; defined on every query (V = 0 without negatives)."""
    violations = _count_in_top(judgements.negatives, ranks, cutoff)
    return -math.log((violations + 1) / (cutoff + 1)) / math.log(cutoff + 1)

