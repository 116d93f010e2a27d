"""The negation measures, each declared in ir_measures' manner with its per-query formula (docs/measures.md).

Each is defined on some queries only: its ``DEFAULT`` is NaN, which its aggregator leaves out of the mean.
"""

import math

from ir_measures import measures

from . import formulas
from .formulas import Judgements

#: The averaging sets of LSNC's ``over`` parameter.
LSNC_AVERAGING = ('judged', 'labelled')


class PartialNegativesWarning(UserWarning):
    """LSNC(over='judged') averages queries without a labelled negative, each counted as no violation."""


def _cutoff(default):
    return measures.ParamInfo(dtype=int, required=False, default=default, desc='ranking cutoff threshold (k >= 1)')


class _Citation:
    """A measure's ``CITATION``: the BibTeX of its benchmark's spec, read when asked (ir_datasets is not imported)."""

    def __init__(self, benchmark):
        self.benchmark = benchmark

    def __get__(self, measure, owner=None):
        from ir_datasets_ext import benchmark_of

        return benchmark_of(self.benchmark).citation()


class DefinedMeanAgg(measures.MeanAgg):
    """Mean over the queries on which a measure is defined; NaN values ("undefined") are skipped."""

    def add(self, value):
        if not math.isnan(value):
            super().add(value)


class NegationMeasure(measures.Measure):
    """Base of the negation measures: NaN default, means over defined queries, cutoff >= 1.

    ``FORMULA`` gives a query's value (:mod:`.formulas`); a ``PAIRED`` measure compares the scores of NevIR pairs.
    """

    DEFAULT = math.nan
    CITATION = None
    FORMULA = None
    PAIRED = False
    NEEDS_NEGATIVES = True
    LOWER_IS_BETTER = False

    def aggregator(self):
        return DefinedMeanAgg()

    def validate_params(self):
        super().validate_params()
        if 'cutoff' in self.SUPPORTED_PARAMS and self['cutoff'] < 1:
            raise ValueError(f'{self.NAME} needs cutoff >= 1, got {self["cutoff"]}')

    def judged(self, qrels, judgements):
        """The judgements of the queries this measure is averaged over (all those given, unless a parameter says)."""
        return judgements

    def caveat(self, qrels, with_negatives):
        """``(message, warning category)`` about these qrels, or None."""
        return None


class _PosRR(NegationMeasure):
    """RR@k of the first positive, averaged over the queries with a positive only (BoolQuestions' MRR@10)."""
    __name__ = 'PosRR'
    NAME = __name__
    PRETTY_NAME = 'Reciprocal Rank over queries with a positive'
    SHORT_DESC = 'Reciprocal rank of the first positive, averaged over queries that have one.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(10)}
    CITATION = _Citation('boolquestions')
    FORMULA = staticmethod(formulas.positive_rr)
    NEEDS_NEGATIVES = False


class _DeltaMRR(NegationMeasure):
    """RR@k of the first positive minus RR@k of the first negative (ExcluIR's ΔMRR)."""
    __name__ = 'DeltaMRR'
    NAME = __name__
    PRETTY_NAME = 'Delta MRR at k'
    SHORT_DESC = 'Reciprocal rank of the first positive minus that of the first negative.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(10)}
    CITATION = _Citation('excluir')
    FORMULA = staticmethod(formulas.delta_mrr)


class _DeltaR(NegationMeasure):
    """Share of the positives in the top k minus share of the negatives there (ExcluIR's ΔR)."""
    __name__ = 'DeltaR'
    NAME = __name__
    PRETTY_NAME = 'Delta Recall at k'
    SHORT_DESC = 'Recall@k of the positives minus recall@k of the negatives.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(1)}
    CITATION = _Citation('excluir')
    FORMULA = staticmethod(formulas.delta_recall)


class _RightRank(NegationMeasure):
    """1 if the best positive is in the top k and above every negative there (ExcluIR's "RR")."""
    __name__ = 'RightRank'
    NAME = __name__
    PRETTY_NAME = 'Right Rank at k'
    SHORT_DESC = 'Whether the best positive is in the top k and above every negative there.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(10)}
    CITATION = _Citation('excluir')
    FORMULA = staticmethod(formulas.right_rank)


class _PairedAcc(NegationMeasure):
    """NevIR's paired accuracy: 1 for both queries of a pair when each scores its positive above its negative."""
    __name__ = 'PairedAcc'
    NAME = __name__
    PRETTY_NAME = 'Paired Accuracy'
    SHORT_DESC = 'Fraction of mirrored query pairs in which both queries rank their positive first.'
    SUPPORTED_PARAMS = {}
    CITATION = _Citation('nevir')
    PAIRED = True


class _NegRecall(NegationMeasure):
    """Share of the negatives in the top k (lower is better); ``conflict`` labels a positive also counted negative."""
    __name__ = 'NegRecall'
    NAME = __name__
    PRETTY_NAME = 'Negative Recall at k'
    SHORT_DESC = 'Fraction of the negatives retrieved in the top k (lower is better).'
    SUPPORTED_PARAMS = {
        'cutoff': _cutoff(10),
        'conflict': measures.ParamInfo(dtype=int, required=False, default=None,
                                       desc='a positive relevance label that also counts as a negative (BoolQuestions: 2)'),
    }
    CITATION = _Citation('boolquestions')
    FORMULA = staticmethod(formulas.negative_recall)
    LOWER_IS_BETTER = True

    def judged(self, qrels, judgements):
        conflict = self['conflict']
        if conflict is None:
            return judgements
        widened = {}
        for query_id, judgement in judgements.items():
            conflicting = tuple(doc_id for doc_id, relevance in qrels[query_id].items() if relevance == conflict)
            widened[query_id] = Judgements(judgement.positives, judgement.negatives + conflicting) if conflicting \
                else judgement
        return widened


class _LSNC(NegationMeasure):
    """ComLQ's log-scaled negation compliance; ``over`` averages every judged query or the labelled ones only."""
    __name__ = 'LSNC'
    NAME = __name__
    PRETTY_NAME = 'Log-Scaled Negation Compliance at k'
    SHORT_DESC = 'Log-scaled share of the top k that does not violate the negation.'
    SUPPORTED_PARAMS = {
        'cutoff': _cutoff(100),
        'over': measures.ParamInfo(dtype=str, required=False, default='judged',
                                   desc="queries averaged: 'judged' (all queries of the qrels, the paper's) "
                                        "or 'labelled' (those with a negative)"),
    }
    CITATION = _Citation('comlq')
    FORMULA = staticmethod(formulas.lsnc)

    def validate_params(self):
        super().validate_params()
        if self['over'] not in LSNC_AVERAGING:
            raise ValueError(f"LSNC over={self['over']!r}: expected one of {', '.join(map(repr, LSNC_AVERAGING))}")

    def judged(self, qrels, judgements):
        if self['over'] == 'labelled':
            return {q: j for q, j in judgements.items() if j.negatives}
        return judgements

    def caveat(self, qrels, with_negatives):
        unlabelled = len(qrels) - len(with_negatives)
        if self['over'] != 'judged' or not unlabelled:
            return None
        return (f"{self}: {unlabelled} of {len(qrels)} queries have no labelled negative (relevance < 0) and count "
                f"as LSNC 1 (no violation); LSNC(over='labelled') averages the other {len(with_negatives)} only",
                PartialNegativesWarning)


PosRR = _PosRR(cutoff=10)
DeltaMRR = _DeltaMRR(cutoff=10)
DeltaR = _DeltaR(cutoff=1)
RightRank = _RightRank(cutoff=10)
PairedAcc = _PairedAcc()
NegRecall = _NegRecall(cutoff=10)
LSNC = _LSNC(cutoff=100)

#: The exported measures, each with its default cutoff.
MEASURES = (DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall, LSNC, PosRR)

#: Measures where a smaller value is better (leaderboards sort them ascending and mark the smallest best).
LOWER_IS_BETTER = tuple(m.NAME for m in MEASURES if m.LOWER_IS_BETTER)
#: Measures whose one value is given to both queries of a NevIR pair: the pair, not the query, is their unit.
PER_PAIR = tuple(m.NAME for m in MEASURES if m.PAIRED)


def _name(measure) -> str:
    """The name of ``measure`` or of a measure string without its parameters (``NegRecall(conflict=2)@10``)."""
    return str(measure).split("@")[0].split("(")[0]


def lower_is_better(measure) -> bool:
    """Whether a smaller value of ``measure`` (a name such as ``NegRecall(conflict=2)@10``) is better."""
    return _name(measure) in LOWER_IS_BETTER


def per_pair(measure) -> bool:
    """Whether ``measure`` (or its name) gives both queries of a NevIR pair the pair's one value."""
    return _name(measure) in PER_PAIR
