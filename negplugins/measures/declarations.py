"""Declarations of the negation measures, in the manner of ir_measures' own (``_RR``, ``_Success``).

A declaration says what a measure is called, which parameters it takes and where it comes from; the
values are computed by :mod:`negplugins.measures.provider`. The exported objects carry their default
cutoff explicitly, so ``RightRank``, ``RightRank@10`` and ``parse_measure("RightRank")`` are one and
the same measure (and one key in ``calc_aggregate``'s result).

Each measure is defined on some queries only (see docs/measures.md and each class below): its ``DEFAULT``, the
value ir_measures fills in for a qrels query a provider did not emit, is NaN ("undefined"), and its
aggregator leaves those NaNs out of the mean.
"""

import math

import ir_measures
from ir_measures import measures

EXCLUIR_CITATION = (
    "Zhang et al. 2024. ExcluIR: Exclusionary Neural Information Retrieval."
)
NEVIR_CITATION = (
    "Weller, Lawrie and Van Durme. 2024. NevIR: Negation in Neural Information Retrieval. EACL 2024."
)
BOOLQUESTIONS_CITATION = (
    "Zhang et al. 2024. Does Dense Retrieval Understand Boolean Logic in Language?"
)
COMLQ_CITATION = (
    "Xu et al. 2026. ComLQ: Benchmarking Complex Logical Queries in Information Retrieval. AAAI 2026. "
    "arXiv:2511.12004."
)


#: The averaging sets of LSNC's ``over`` parameter.
LSNC_AVERAGING = ('judged', 'labelled')


def _cutoff(default):
    """Return the ``cutoff`` parameter of a negation measure.

    Parameters
    ----------
    default : int
        The cutoff of the originating benchmark's official setting.

    Returns
    -------
    ir_measures.measures.ParamInfo
        An optional integer parameter with that default.
    """
    return measures.ParamInfo(dtype=int, required=False, default=default, desc='ranking cutoff threshold (k >= 1)')


class DefinedMeanAgg(measures.MeanAgg):
    """Mean over the queries on which a measure is defined; NaN values ("undefined") are skipped."""

    def add(self, value):
        """Add one per-query value unless it is NaN.

        Parameters
        ----------
        value : float
            The per-query value.
        """
        if not math.isnan(value):
            super().add(value)


class NegationMeasure(measures.Measure):
    """Base of the negation measures: NaN default, means over defined queries, cutoff >= 1."""

    DEFAULT = math.nan
    CITATION = None

    def aggregator(self):
        """Return an aggregator that averages over the queries the measure is defined on.

        Returns
        -------
        DefinedMeanAgg
            Its result is NaN when no query was eligible.
        """
        return DefinedMeanAgg()

    def validate_params(self):
        """Validate the parameters as ir_measures does, and require a positive cutoff.

        Raises
        ------
        ValueError
            If the cutoff is below 1.
        """
        super().validate_params()
        if 'cutoff' in self.SUPPORTED_PARAMS and self['cutoff'] < 1:
            raise ValueError(f'{self.NAME} needs cutoff >= 1, got {self["cutoff"]}')

    def calc_aggregate(self, qrels, run):
        """Compute this measure's mean over its eligible queries.

        Parameters
        ----------
        qrels : ir_measures qrels
            Relevance judgements; negatives have relevance < 0.
        run : ir_measures run
            Scored documents.

        Returns
        -------
        float
            The mean, or NaN when no query is eligible (no value, rather than 0).
        """
        return ir_measures.calc_aggregate([self], qrels, run)[self]


class _PosRR(NegationMeasure):
    """
    Reciprocal rank of the first positive (qrels > 0) within the top k, averaged over the queries with
    at least one positive only: MRR@k as sentence-transformers' ``InformationRetrievalEvaluator``
    computes it for BoolQuestions (a question whose list of positives is empty is not evaluated).
    ir_measures' ``RR@k`` counts such a query as 0 instead (issue 11 reports, on a 2,400-question BoolQuestions
    sample: 0.1623 with ``RR@10`` against the authors' 0.1685). On qrels where every query has a positive
    the two are equal. Ranking: the suite's (score descending, ties by doc_id descending).
    """
    __name__ = 'PosRR'
    NAME = __name__
    PRETTY_NAME = 'Reciprocal Rank over queries with a positive'
    SHORT_DESC = 'Reciprocal rank of the first positive, averaged over queries that have one.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(10)}
    CITATION = BOOLQUESTIONS_CITATION


class _DeltaMRR(NegationMeasure):
    """
    RR@k of the first positive minus RR@k of the first negative (qrels < 0), averaged over queries
    with at least one positive and one negative. In [-1, 1]; higher is better.
    """
    __name__ = 'DeltaMRR'
    NAME = __name__
    PRETTY_NAME = 'Delta MRR at k'
    SHORT_DESC = 'Reciprocal rank of the first positive minus that of the first negative.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(10)}
    CITATION = EXCLUIR_CITATION


class _DeltaR(NegationMeasure):
    """
    Fraction of positives in the top k minus fraction of negatives (qrels < 0) in the top k,
    averaged over queries with at least one positive and one negative. In [-1, 1].
    """
    __name__ = 'DeltaR'
    NAME = __name__
    PRETTY_NAME = 'Delta Recall at k'
    SHORT_DESC = 'Recall@k of the positives minus recall@k of the negatives.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(1)}
    CITATION = EXCLUIR_CITATION


class _RightRank(NegationMeasure):
    """
    1 if the best-ranked positive is in the top k and above every negative in the top k, else 0;
    averaged over queries with at least one positive and one negative. ExcluIR calls it "RR", a
    name ir_measures already gives to reciprocal rank.
    """
    __name__ = 'RightRank'
    NAME = __name__
    PRETTY_NAME = 'Right Rank at k'
    SHORT_DESC = 'Whether the best positive is in the top k and above every negative there.'
    SUPPORTED_PARAMS = {'cutoff': _cutoff(10)}
    CITATION = EXCLUIR_CITATION


class _PairedAcc(NegationMeasure):
    """
    NevIR paired accuracy. A pair is two queries sharing the same two judged documents with mirrored
    labels; a query is correct when its positive scores strictly higher than its negative, a pair
    when both queries are. Each query of a complete pair carries its pair's 0/1. Queries judged like a
    pair member that form no complete pair (no mirrored partner, or more than one query with the same
    two documents) are left out and named in an
    :class:`~negplugins.measures.provider.IncompletePairsWarning`.

    Equal to NevIR's ``evaluate.py`` (``should_be_higher > should_be_lower`` for both queries) and to
    MTEB's ``paired_accuracy`` (``mteb/_evaluators/retrieval_metrics.py``: both queries' pytrec_eval
    ``recall_1`` equal 1) on a run that scores each query's two candidates (the dataset's
    scoreddocs, as MTEB's reranking task does) without ties. Deliberate difference: on a tie the suite
    and NevIR count the query wrong, while MTEB ranks tied documents by doc id descending, so
    ``<pair>_doc2`` wins and ``<pair>_q2`` counts right; a pair differs only when its q1 is right and its
    q2 tied (MTEB 1, suite 0). A run scoring every candidate 0.0 gives 0 in both.
    """
    __name__ = 'PairedAcc'
    NAME = __name__
    PRETTY_NAME = 'Paired Accuracy'
    SHORT_DESC = 'Fraction of mirrored query pairs in which both queries rank their positive first.'
    SUPPORTED_PARAMS = {}
    CITATION = NEVIR_CITATION


class _NegRecall(NegationMeasure):
    """
    Fraction of the negatives (qrels < 0) in the top k, averaged over queries with at least one
    negative. Lower is better.

    ``conflict`` (default: none) names a positive relevance label that also counts as a negative here.
    BoolQuestions lists some passages among both the positives and the negatives of a question; the
    authors' ``evaluate.py`` scores them as positives for MRR@10 and as negatives for NegRecall@10
    (two ``InformationRetrievalEvaluator`` passes, one per list). The suite's BoolQuestions qrels mark
    them 2 (``ir_datasets_ext.datasets.boolquestions.CONFLICT_LABEL``), and its default ``NegRecall(conflict=2)@10`` counts them as the
    authors do. Plain ``NegRecall@10`` leaves them out of the negatives, which lowers the value.

    Deliberate difference (BoolQuestions): the authors divide by ``len(negative_ctxs)``, null and
    repeated passage ids included; the suite divides by the distinct non-null negatives, so its value is
    higher or equal on questions with null or repeated ids, and a question whose negatives are all null
    is left out (the authors count it as 0). The dataset warns with the counts when it is read.
    """
    __name__ = 'NegRecall'
    NAME = __name__
    PRETTY_NAME = 'Negative Recall at k'
    SHORT_DESC = 'Fraction of the negatives retrieved in the top k (lower is better).'
    SUPPORTED_PARAMS = {
        'cutoff': _cutoff(10),
        'conflict': measures.ParamInfo(dtype=int, required=False, default=None,
                                       desc='a positive relevance label that also counts as a negative (BoolQuestions: 2)'),
    }
    CITATION = BOOLQUESTIONS_CITATION


class _LSNC(NegationMeasure):
    """
    -log((V + 1) / (k + 1)) / log(k + 1), V the number of negatives (qrels < 0) in the top k.
    1 = no violation, 0 = all k violate.

    ``over`` sets the queries averaged:

    * ``'judged'`` (default, the paper's): every query of the qrels; a query without a labelled negative
      has V = 0 and scores 1. The ComLQ paper averages over all queries with negation, so hand it the
      qrels of the negation queries (``comlq/negation`` or one negation structure). When some queries
      have no labelled negative, :class:`~negplugins.measures.provider.PartialNegativesWarning` says how
      many: for them "no violation" is an assumption, not a label.
    * ``'labelled'``: only the queries with at least one negative (the suite's definition before
      ``over`` existed). Equal to ``'judged'`` when every query has labels; on partial labels it is
      lower or equal, since each unlabelled query adds a 1 to the ``'judged'`` mean.
    """
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
    CITATION = COMLQ_CITATION

    def validate_params(self):
        """Validate as :class:`NegationMeasure` does, and require a known ``over``.

        Raises
        ------
        ValueError
            If ``over`` is not ``'judged'`` or ``'labelled'``.
        """
        super().validate_params()
        if self['over'] not in LSNC_AVERAGING:
            raise ValueError(f"LSNC over={self['over']!r}: expected one of {', '.join(map(repr, LSNC_AVERAGING))}")


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
LOWER_IS_BETTER = ("NegRecall",)
#: Measures whose one value is given to both queries of a NevIR pair: the pair, not the query, is their unit.
PER_PAIR = ("PairedAcc",)


def _name(measure) -> str:
    """The name of ``measure`` or of a measure string without its parameters (``NegRecall(conflict=2)@10``)."""
    return str(measure).split("@")[0].split("(")[0]


def lower_is_better(measure) -> bool:
    """Whether a smaller value of ``measure`` (a name such as ``NegRecall(conflict=2)@10``) is better."""
    return _name(measure) in LOWER_IS_BETTER


def per_pair(measure) -> bool:
    """Whether ``measure`` (or its name) gives both queries of a NevIR pair the pair's one value."""
    return _name(measure) in PER_PAIR
