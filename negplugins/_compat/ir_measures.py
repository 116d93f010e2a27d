"""Registers the negation measures and their provider (after the stock ones) with ir_measures; mixed with standard
measures, the NaN rows ``FallbackEvaluator`` fills in for the suite's undefined values are left out, so a query's rows
never depend on which other measures are asked. See docs/measures.md.
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
    """ir_measures' evaluator of mixed measures, less ``FallbackEvaluator``'s NaN rows of the suite's measures."""

    def __init__(self, evaluator):
        super().__init__(evaluator.measures, evaluator.qrel_qids)
        self.evaluator = evaluator

    def iter_calc(self, run):
        return (metric for metric in self.evaluator.iter_calc(run)
                if not (isinstance(metric.measure, NegationMeasure) and math.isnan(metric.value)))


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


def register():
    """Make the negation measures known to ir_measures (idempotent), each internal checked first."""
    missing = upstream.check("ir_measures")
    if not missing & {"ir_measures.measures.registry", "ir_measures.measures.register"}:
        for measure in MEASURES:
            registered = ir_measures.measures.registry.get(measure.NAME)
            if registered is None:
                ir_measures.measures.register(measure)
            elif registered is not measure:
                raise ValueError(f'the measure name {measure.NAME!r} is already taken by {registered!r}')
    if not missing & {"ir_measures.providers.registry", "ir_measures.providers.register"}:
        providers.register(provider)
    pipeline = ir_measures.DefaultPipeline
    if "ir_measures.DefaultPipeline.providers" not in missing and provider not in pipeline.providers:
        pipeline.providers.append(provider)
    if not missing & {"ir_measures.DefaultPipeline._evaluator", "ir_measures.providers.Evaluator"}:
        _leave_out_undefined(pipeline)
