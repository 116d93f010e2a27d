"""Negation measures for ir_measures: PosRR, DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall and LSNC.

``import negplugins`` registers them with ir_measures; what each computes and on which queries: docs/measures.md.
"""

from .declarations import (
    LSNC,
    MEASURES,
    DeltaMRR,
    DeltaR,
    NegRecall,
    PairedAcc,
    PartialNegativesWarning,
    PosRR,
    RightRank,
    lower_is_better,
    per_pair,
)
from .parsing import parse_measures
from .provider import IncompletePairsWarning, NoNegativesWarning, NoPairsWarning

__all__ = [
    'PosRR', 'DeltaMRR', 'DeltaR', 'RightRank', 'PairedAcc', 'NegRecall', 'LSNC', 'MEASURES',
    'NoNegativesWarning', 'NoPairsWarning', 'IncompletePairsWarning', 'PartialNegativesWarning',
    'parse_measures', 'lower_is_better', 'per_pair',
]
