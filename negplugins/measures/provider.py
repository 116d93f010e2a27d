"""The ir_measures provider that computes the negation measures.

The provider ranks every run it is given itself, in the suite's one ranking (score descending at full
precision, ties by doc_id descending; see :mod:`negplugins.measures.ranking`, where the convention is
documented), from the scores as they are: whichever ir_measures entry point, PyTerrier or ``negplugins evaluate``
calls it, the suite's measures see the same order. PairedAcc compares a query's two raw scores, not ranks, so a
tie is wrong there.

The provider emits a value only for the queries a measure is defined on: PosRR on queries with a
positive, DeltaMRR, DeltaR and RightRank on queries with at least one positive and one negative,
NegRecall on queries with at least one negative, LSNC on every judged query (``over='judged'``) or on
those with a negative (``over='labelled'``), PairedAcc on the queries of complete pairs. A defined query missing from the
run still gets its value (its documents have no rank). Queries of the run that the qrels do not
judge are ignored, as ir_measures does. Where these measures are asked for together with standard ones in one
call, ir_measures' own ``FallbackEvaluator`` fills every other judged query with the measures' ``DEFAULT``, NaN
("undefined"); :mod:`negplugins._compat.ir_measures` leaves those rows out of the default pipeline's output (their
aggregator skips NaN anyway), so a query's rows never depend on the other measures asked.
"""

import os
import sys
import warnings

import ir_measures
from ir_measures import Metric, providers
from ir_measures.providers.base import Any
from ir_measures.util import QrelsConverter, RunConverter

from . import declarations
from .formulas import RANK_FORMULAS, Judgements
from .pairs import find_pairs, query_correct
from .ranking import check_finite, judged_ranks


class NoNegativesWarning(UserWarning):
    """The qrels hold no negative judgement (relevance < 0), so the negation measures have no value."""


class NoPairsWarning(UserWarning):
    """The qrels hold no complete NevIR pair, so PairedAcc has no value."""


class IncompletePairsWarning(UserWarning):
    """Some queries judged like a NevIR pair member form no complete pair and are left out of PairedAcc."""


class PartialNegativesWarning(UserWarning):
    """LSNC(over='judged') averages queries without a labelled negative, each counted as no violation."""


#: Queries named in a warning before it says "and N more".
NAMED_IN_WARNING = 10

#: Code a warning of this provider never points at: ir_measures, PyTerrier and the suite's measures and
#: adapters between them and the caller, and the interpreter's own start-up (``python -m``).
def _package_dir(name):
    """The folder of an installed package, found without importing it ('' when it is not installed)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    return os.path.dirname(spec.origin) + os.sep if spec is not None and spec.origin else ''


_NOT_THE_CALLER = tuple(filter(None, (
    os.path.dirname(ir_measures.__file__) + os.sep, os.path.dirname(__file__) + os.sep,
    os.path.join(os.path.dirname(os.path.dirname(__file__)), '_compat') + os.sep, _package_dir('pyterrier'),
    '<frozen ')))


def _warn(message, category):
    """``warnings.warn`` pointed at the caller's code: the first frame outside :data:`_NOT_THE_CALLER`.

    ir_measures calls the provider several frames below the user's ``calc_aggregate`` (how many depends on the
    entry point), so a fixed ``stacklevel`` showed a line of ir_measures' ``providers/base.py``. When no frame
    is the caller's (the ``ir_measures`` command run as ``python -m ir_measures``), the warning names ``sys:1``
    and shows no source line, as Python does for a warning from the top of the stack.
    """
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the caller of _warn
    while frame is not None and frame.f_code.co_filename.startswith(_NOT_THE_CALLER):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class NegationProvider(providers.Provider):
    """Computes PosRR, DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall and LSNC."""

    NAME = 'negplugins'
    SUPPORTED_MEASURES = [
        declarations._PosRR(cutoff=Any()),
        declarations._DeltaMRR(cutoff=Any()),
        declarations._DeltaR(cutoff=Any()),
        declarations._RightRank(cutoff=Any()),
        declarations._PairedAcc(),
        declarations._NegRecall(cutoff=Any(), conflict=Any()),
        declarations._LSNC(cutoff=Any(), over=Any()),
    ]

    def _evaluator(self, measures, qrels):
        qrels = QrelsConverter(qrels).as_dict_of_dict()
        judgements = _judgements(qrels)
        measures = list(measures)
        with_negatives = {q for q, j in judgements.items() if j.negatives}
        needing_negatives = [m for m in measures if m.NAME != declarations.PosRR.NAME]
        if needing_negatives and not with_negatives:
            _warn(f'the qrels hold no negative judgement (relevance < 0), so these measures have no value: '
                          f'{_names(needing_negatives)}', NoNegativesWarning)
        for measure in measures:
            if measure.NAME == declarations.LSNC.NAME and measure['over'] == 'judged' and with_negatives:
                unlabelled = len(qrels) - len(with_negatives)
                if unlabelled:
                    _warn(f"{measure}: {unlabelled} of {len(qrels)} queries have no labelled negative "
                                  f"(relevance < 0) and count as LSNC 1 (no violation); "
                                  f"LSNC(over='labelled') averages the other {len(with_negatives)} only",
                                  PartialNegativesWarning)
        wants_pairs = bool(with_negatives) and any(m.NAME == declarations.PairedAcc.NAME for m in measures)
        pairing = find_pairs(qrels) if wants_pairs else None
        pairs = pairing.pairs if pairing else []
        if wants_pairs and not pairs:
            _warn('the qrels hold no complete pair of queries with mirrored labels: PairedAcc has no value',
                          NoPairsWarning)
        elif pairing and (pairing.incomplete or pairing.ambiguous):
            _warn(f'PairedAcc leaves out {_listed(pairing.incomplete)} judged like a pair member with no '
                          f'mirrored partner, and {_listed(pairing.ambiguous)} in ambiguous pairs (another query '
                          f'judges the same two documents)', IncompletePairsWarning)
        return NegationEvaluator(measures, qrels, judgements, pairs, with_negatives)


class NegationEvaluator(providers.Evaluator):
    """Evaluates runs against qrels prepared once: per-query judgements and the NevIR pairs.

    Parameters
    ----------
    measures : list of Measure
        The negation measures to compute.
    qrels : dict of str to dict of str to int
        The qrels (ir_measures fills its DEFAULT, NaN, for the queries not emitted).
    judgements : dict of str to Judgements
        Every query's positives and negatives.
    pairs : list of tuple of PairMember
        The complete NevIR pairs.
    with_negatives : set of str
        The queries with at least one negative; none means the negation measures have no value.
    """

    def __init__(self, measures, qrels, judgements, pairs, with_negatives):
        super().__init__(measures, set(qrels))
        self.judgements = judgements
        self.pairs = pairs
        self.rank_measures = []
        for measure in measures:
            if measure.NAME not in RANK_FORMULAS:
                continue
            if measure.NAME != declarations.PosRR.NAME and not with_negatives:
                continue
            measure_judgements = judgements
            if measure.NAME == declarations.NegRecall.NAME and measure['conflict'] is not None:
                measure_judgements = _with_conflicts(qrels, judgements, measure['conflict'])
            if measure.NAME == declarations.LSNC.NAME and measure['over'] == 'labelled':
                measure_judgements = {q: j for q, j in judgements.items() if j.negatives}
            self.rank_measures.append((measure, RANK_FORMULAS[measure.NAME], measure['cutoff'], measure_judgements))
        self.paired_measures = [m for m in measures if m.NAME not in RANK_FORMULAS]

    def iter_calc(self, run):
        """Yield the per-query values of the queries each measure is defined on, and nothing for the others.

        ir_measures' ``Evaluator.iter_calc`` would fill those with the measure's ``DEFAULT`` (NaN); this evaluator
        leaves them out, so that ``iter_calc`` of the suite's measures alone lists defined values only.

        Raises
        ------
        NonFiniteScoreError
            A score of the run is NaN or infinite.
        """
        return self._iter_calc(run)

    def _iter_calc(self, run):
        run = RunConverter(run).as_dict_of_dict()
        check_finite(run)
        for measure, formula, cutoff, judgements in self.rank_measures:
            for query_id, judgement in judgements.items():
                ranks = judged_ranks(run.get(query_id, {}), judgement.positives + judgement.negatives)
                value = formula(judgement, ranks, cutoff)
                if value is not None:
                    yield Metric(query_id, measure, value)
        for measure in self.paired_measures:
            for pair in self.pairs:
                value = float(all(query_correct(member, run) for member in pair))
                for member in pair:
                    yield Metric(member.query_id, measure, value)


def _judgements(qrels):
    """Split each query's judged documents into positives and negatives.

    Parameters
    ----------
    qrels : dict of str to dict of str to int
        query_id to doc_id to relevance.

    Returns
    -------
    dict of str to Judgements
    """
    judgements = {}
    for query_id, judged in qrels.items():
        positives = tuple(doc_id for doc_id, relevance in judged.items() if relevance > 0)
        negatives = tuple(doc_id for doc_id, relevance in judged.items() if relevance < 0)
        judgements[query_id] = Judgements(positives, negatives)
    return judgements


def _with_conflicts(qrels, judgements, conflict):
    """The judgements with the documents labelled ``conflict`` added to the negatives (they stay positives)."""
    widened = {}
    for query_id, judgement in judgements.items():
        conflicting = tuple(doc_id for doc_id, relevance in qrels[query_id].items() if relevance == conflict)
        widened[query_id] = Judgements(judgement.positives, judgement.negatives + conflicting) if conflicting \
            else judgement
    return widened


def _listed(query_ids):
    """'N queries (a, b, ...)' naming at most :data:`NAMED_IN_WARNING` of them."""
    if not query_ids:
        return '0 queries'
    named = ', '.join(query_ids[:NAMED_IN_WARNING])
    more = f' and {len(query_ids) - NAMED_IN_WARNING} more' if len(query_ids) > NAMED_IN_WARNING else ''
    return f'{len(query_ids)} {"query" if len(query_ids) == 1 else "queries"} ({named}{more})'


def _names(measures):
    """Return the measures' names, comma separated, in a stable order."""
    return ', '.join(sorted(str(m) for m in measures))


#: The provider instance that :func:`negplugins._compat.ir_measures.register` installs.
provider = NegationProvider()
