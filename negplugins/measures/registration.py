"""Hooks the negation measures into ir_measures 0.4.3.

Three ir_measures internals are touched, each idempotently:

* ``ir_measures.measures.registry`` (through ``ir_measures.measures.register``): the names, so that
  ``ir_measures.parse_measure("RightRank@10")`` works;
* ``ir_measures.providers.registry`` and ``ir_measures.DefaultPipeline.providers``: the provider, so
  that the default ``calc_aggregate`` / ``iter_calc`` / ``calc`` / ``evaluator`` find it, also mixed
  with standard measures (it is appended, so the standard providers keep their order);
* ``ir_measures.DefaultPipeline._evaluator`` (an instance attribute shadowing the method): evaluators
  for requests that include a negation measure are wrapped in :class:`DefinedValuesEvaluator`.

A measure that no query is eligible for (no negative in the qrels, no complete pair) aggregates to NaN:
the key is present, so stock tools such as the ``ir_measures`` command line print ``nan`` instead of
failing, and the value is visibly not a number rather than a silent 0.

The last hook exists because ``Evaluator.iter_calc`` (and ``FallbackEvaluator`` when providers are
mixed) fills ``measure.DEFAULT`` for every qrels query a measure did not emit. The measures' NaN
default and NaN-skipping aggregator already keep those fills out of the means; the wrapper also keeps
them out of the per-query output.
"""

import math

import ir_measures
from ir_measures import providers

from .declarations import MEASURES, NegationMeasure
from .provider import provider


class DefinedValuesEvaluator(providers.Evaluator):
    """Wraps an evaluator, dropping the undefined (NaN) values of the negation measures.

    Parameters
    ----------
    evaluator : ir_measures.providers.Evaluator
        The evaluator that computes every requested measure.
    """

    def __init__(self, evaluator):
        super().__init__(evaluator.measures, evaluator.qrel_qids)
        self.evaluator = evaluator

    def iter_calc(self, run):
        """Yield the per-query values, without undefined values of negation measures."""
        return (metric for metric in self.evaluator.iter_calc(run) if not _undefined(metric.measure, metric.value))

    def calc_aggregate(self, run):
        """Return the aggregates; NaN for a negation measure that no query is eligible for."""
        aggregated = super().calc_aggregate(run)
        return {measure: _nan_if_none(value) for measure, value in aggregated.items()}


def _undefined(measure, value):
    """Tell whether ``value`` is a negation measure's "undefined" (NaN)."""
    return isinstance(measure, NegationMeasure) and math.isnan(value)


def _nan_if_none(value):
    return math.nan if value is None else value


def _wrap_pipeline_evaluators(pipeline):
    """Make ``pipeline`` wrap its evaluators for negation measures in :class:`DefinedValuesEvaluator`."""
    if getattr(pipeline._evaluator, 'wraps_negation_measures', False):
        return
    build_evaluator = pipeline._evaluator

    def _evaluator(measures, qrels):
        measures = list(measures)
        evaluator = build_evaluator(measures, qrels)
        if any(isinstance(measure, NegationMeasure) for measure in measures):
            return DefinedValuesEvaluator(evaluator)
        return evaluator

    _evaluator.wraps_negation_measures = True
    pipeline._evaluator = _evaluator


def _register_measure(measure):
    """Add ``measure`` to ir_measures' measure registry unless it is already there.

    Raises
    ------
    ValueError
        If another measure holds the name.
    """
    registered = ir_measures.measures.registry.get(measure.NAME)
    if registered is None:
        ir_measures.measures.register(measure)
    elif registered is not measure:
        raise ValueError(f'the measure name {measure.NAME!r} is already taken by {registered!r}')


def register():
    """Make the negation measures known to ir_measures (idempotent).

    After this, ``ir_measures.parse_measure``, ``calc_aggregate``, ``iter_calc``, ``calc`` and
    ``evaluator`` accept DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall and LSNC.
    """
    for measure in MEASURES:
        _register_measure(measure)
    providers.register(provider)
    pipeline = ir_measures.DefaultPipeline
    if provider not in pipeline.providers:
        pipeline.providers.append(provider)
    _wrap_pipeline_evaluators(pipeline)
