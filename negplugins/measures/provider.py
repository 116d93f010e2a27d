"""The ir_measures provider of the negation measures, scoring the suite's one ranking (:mod:`.ranking`).

It emits a value only for the queries a measure is defined on (docs/measures.md).
"""

import os
import sys
import warnings

import ir_measures
from ir_measures import Metric, providers
from ir_measures.providers.base import Any
from ir_measures.util import QrelsConverter, RunConverter

from .declarations import MEASURES
from .formulas import Judgements
from .pairs import find_pairs, query_correct
from .ranking import check_finite, judged_ranks


class NoNegativesWarning(UserWarning):
    """The qrels hold no negative judgement (relevance < 0), so the negation measures have no value."""


class NoPairsWarning(UserWarning):
    """The qrels hold no complete NevIR pair, so PairedAcc has no value."""


class IncompletePairsWarning(UserWarning):
    """Some queries judged like a NevIR pair member form no complete pair and are left out of PairedAcc."""


#: Queries named in a warning before it says "and N more".
NAMED_IN_WARNING = 10


def _package_dir(name):
    import importlib.util

    spec = importlib.util.find_spec(name)
    return os.path.dirname(spec.origin) + os.sep if spec is not None and spec.origin else ''


#: Code a warning of this provider never points at: ir_measures, PyTerrier, the suite's measures and adapters.
_NOT_THE_CALLER = tuple(filter(None, (
    os.path.dirname(ir_measures.__file__) + os.sep, os.path.dirname(__file__) + os.sep,
    os.path.join(os.path.dirname(os.path.dirname(__file__)), '_compat') + os.sep, _package_dir('pyterrier'),
    '<frozen ')))


def _warn(message, category):
    """``warnings.warn`` pointed at the caller's code: the first frame outside :data:`_NOT_THE_CALLER`."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the caller of _warn
    while frame is not None and frame.f_code.co_filename.startswith(_NOT_THE_CALLER):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class NegationProvider(providers.Provider):
    """Computes the measures of :data:`~.declarations.MEASURES`."""

    NAME = 'negplugins'
    SUPPORTED_MEASURES = [type(m)(**{param: Any() for param in m.SUPPORTED_PARAMS}) for m in MEASURES]

    def _evaluator(self, measures, qrels):
        qrels = QrelsConverter(qrels).as_dict_of_dict()
        judgements = _judgements(qrels)
        measures = list(measures)
        with_negatives = {q for q, j in judgements.items() if j.negatives}
        needing_negatives = [m for m in measures if m.NEEDS_NEGATIVES]
        if needing_negatives and not with_negatives:
            _warn(f'the qrels hold no negative judgement (relevance < 0), so these measures have no value: '
                  f'{", ".join(sorted(map(str, needing_negatives)))}', NoNegativesWarning)
        if with_negatives:
            for caveat in filter(None, (m.caveat(qrels, with_negatives) for m in measures)):
                _warn(*caveat)
        wants_pairs = bool(with_negatives) and any(m.PAIRED for m in measures)
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
    """Evaluates runs against qrels prepared once: per-query judgements and the NevIR pairs."""

    def __init__(self, measures, qrels, judgements, pairs, with_negatives):
        super().__init__(measures, set(qrels))
        self.pairs = pairs
        self.rank_measures = [(m, m.FORMULA, m['cutoff'], m.judged(qrels, judgements)) for m in measures
                              if not m.PAIRED and (with_negatives or not m.NEEDS_NEGATIVES)]
        self.paired_measures = [m for m in measures if m.PAIRED]

    def iter_calc(self, run):
        """The values of the queries each measure is defined on, and nothing (not ``DEFAULT``) for the others."""
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
    """``{query_id: Judgements}``: each query's positives and negatives."""
    judgements = {}
    for query_id, judged in qrels.items():
        positives = tuple(doc_id for doc_id, relevance in judged.items() if relevance > 0)
        negatives = tuple(doc_id for doc_id, relevance in judged.items() if relevance < 0)
        judgements[query_id] = Judgements(positives, negatives)
    return judgements


def _listed(query_ids):
    """'N queries (a, b, ...)' naming at most :data:`NAMED_IN_WARNING` of them."""
    if not query_ids:
        return '0 queries'
    named = ', '.join(query_ids[:NAMED_IN_WARNING])
    more = f' and {len(query_ids) - NAMED_IN_WARNING} more' if len(query_ids) > NAMED_IN_WARNING else ''
    return f'{len(query_ids)} {"query" if len(query_ids) == 1 else "queries"} ({named}{more})'


#: The provider instance that :func:`negplugins._compat.ir_measures.register` installs.
provider = NegationProvider()
