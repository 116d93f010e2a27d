"""Negation measures for ir_measures: PosRR, DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall and LSNC.

Importing ``negplugins`` (this package's parent, so any import of it) registers them with ir_measures, from one
place (:func:`negplugins._compat.plugins.register_measures`), after which ir_measures' own entry points accept
them, also mixed with standard measures::

    import ir_measures
    import negplugins.measures
    from negplugins.measures import RightRank, DeltaMRR

    ir_measures.calc_aggregate([RightRank@10, DeltaMRR@10, ir_measures.nDCG@10], qrels, run)

Negatives are judgements with relevance < 0. The suite's measures score its one ranking (score descending at
full precision, ties by doc_id descending), which their provider computes itself (documented in
:mod:`negplugins.measures.ranking`); PairedAcc compares raw scores, so a tie counts as wrong there. Registering
them changes nothing else in ir_measures: ``RR``, ``nDCG`` and every other stock measure keep their stock values,
ties included. Each measure is averaged only over the queries it is defined on (see docs/measures.md); values are
never rounded. Qrels without negatives raise :class:`NoNegativesWarning` and the measures have no value.
"""

from .declarations import (
    LSNC,
    MEASURES,
    DeltaMRR,
    DeltaR,
    NegRecall,
    PairedAcc,
    PosRR,
    RightRank,
    lower_is_better,
    per_pair,
)
from .parsing import parse_measures
from .provider import IncompletePairsWarning, NoNegativesWarning, NoPairsWarning, PartialNegativesWarning

__all__ = [
    'PosRR', 'DeltaMRR', 'DeltaR', 'RightRank', 'PairedAcc', 'NegRecall', 'LSNC', 'MEASURES',
    'NoNegativesWarning', 'NoPairsWarning', 'IncompletePairsWarning', 'PartialNegativesWarning',
    'parse_measures', 'lower_is_better', 'per_pair',
]
