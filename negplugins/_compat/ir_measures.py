"""Registers the negation measures and their provider with ir_measures 0.4.3; no stock measure changes.

Three ir_measures internals are touched, each idempotently:

* ``ir_measures.measures.registry`` (through ``ir_measures.measures.register``): the suite's names, so that
  ``ir_measures.parse_measure("RightRank@10")`` works;
* ``ir_measures.providers.registry`` and ``ir_measures.DefaultPipeline.providers``: the suite's provider, so
  that the default ``calc_aggregate`` / ``iter_calc`` / ``calc`` / ``evaluator`` find it, also mixed
  with standard measures. It is appended after the stock providers and supports the suite's measures only, so
  every standard measure is computed by the stock provider that computes it without the suite;
* ``ir_measures.DefaultPipeline._evaluator`` (an instance attribute shadowing the method): where the suite's
  measures are asked together with standard ones, ir_measures' ``FallbackEvaluator`` fills every judged query a
  measure has no value on with the measure's ``DEFAULT``, which for the suite's measures is NaN ("undefined").
  :class:`DefinedValuesEvaluator` leaves those rows out, so a query's per-query rows never depend on which other
  measures are asked. Every other call gets the very evaluator ir_measures builds.

No provider or function of ir_measures is replaced, and no standard measure's row is touched: with the suite
installed, ``RR@10``, ``nDCG@10`` and every other stock measure give exactly the stock values, ties included (each
stock provider orders tied documents its own way: see :mod:`negplugins.measures.ranking`). The suite's measures
rank each run themselves in the one ranking (:mod:`negplugins.measures.provider`), whatever evaluator calls them.

A measure that no query is eligible for (no negative in the qrels, no complete pair) aggregates to NaN (its
aggregator's value without any value to average): the key is present, so stock tools such as the
``ir_measures`` command line print ``nan`` instead of failing, and the value is visibly not a number rather
than a silent 0.

Each of these internals is looked up first (:func:`negplugins._compat.upstream.check`): when a newer
ir_measures has moved one, an :class:`~negplugins._compat.upstream.UpstreamChangedWarning` names it and
what stops working, and :func:`register` applies the rest.
"""

import math

import ir_measures
from ir_measures import providers

from ..measures.declarations import MEASURES, NegationMeasure
from ..measures.provider import NegationEvaluator, provider
from . import upstream

# a missing base class must not fail the import: register() reports it (upstream.check) and does not wrap
_Evaluator = getattr(providers, "Evaluator", object)


class DefinedValuesEvaluator(_Evaluator):
    """ir_measures' evaluator of the suite's measures mixed with standard ones, less the rows of undefined values.

    A row of a suite's measure whose value is NaN is ``FallbackEvaluator``'s fill (the suite's provider emits
    defined values only) and is left out; every other row passes as it comes, in its order. The aggregates are
    those of the rows left, which are the same: the suite's aggregators skip NaN.
    """

    def __init__(self, evaluator):
        super().__init__(evaluator.measures, evaluator.qrel_qids)
        self.evaluator = evaluator

    def iter_calc(self, run):
        """Yield the wrapped evaluator's rows but the undefined values of the suite's measures."""
        return (metric for metric in self.evaluator.iter_calc(run) if not _undefined(metric))


def _undefined(metric) -> bool:
    """Whether ``metric`` is ir_measures' NaN fill of one of the suite's measures."""
    return isinstance(metric.measure, NegationMeasure) and math.isnan(metric.value)


def _leave_out_undefined(pipeline):
    """Make ``pipeline`` wrap the evaluators that mix the suite's measures with standard ones (idempotent)."""
    if getattr(pipeline._evaluator, "leaves_out_undefined", False):
        return
    build_evaluator = pipeline._evaluator

    def _evaluator(measures, qrels):
        measures = list(measures)
        evaluator = build_evaluator(measures, qrels)
        if isinstance(evaluator, NegationEvaluator) or not any(isinstance(m, NegationMeasure) for m in measures):
            return evaluator
        return DefinedValuesEvaluator(evaluator)

    _evaluator.leaves_out_undefined = True
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
    ``evaluator`` accept PosRR, DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall and LSNC; every other
    measure is computed exactly as without the suite.

    Warns
    -----
    UpstreamChangedWarning
        Once per process for each internal listed in the module docstring that ir_measures no longer has;
        what depends on it is not applied.
    """
    missing = upstream.check("ir_measures")
    if not missing & {"ir_measures.measures.registry", "ir_measures.measures.register"}:
        for measure in MEASURES:
            _register_measure(measure)
    if not missing & {"ir_measures.providers.registry", "ir_measures.providers.register"}:
        providers.register(provider)
    pipeline = ir_measures.DefaultPipeline
    if "ir_measures.DefaultPipeline.providers" not in missing and provider not in pipeline.providers:
        pipeline.providers.append(provider)
    if not missing & {"ir_measures.DefaultPipeline._evaluator", "ir_measures.providers.Evaluator"}:
        _leave_out_undefined(pipeline)
