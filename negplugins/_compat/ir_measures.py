"""Hooks the negation measures, and the one ranking, into ir_measures 0.4.3.

Three ir_measures internals are touched, each idempotently:

* ``ir_measures.measures.registry`` (through ``ir_measures.measures.register``): the names, so that
  ``ir_measures.parse_measure("RightRank@10")`` works;
* ``ir_measures.providers.registry`` and ``ir_measures.DefaultPipeline.providers``: the provider, so
  that the default ``calc_aggregate`` / ``iter_calc`` / ``calc`` / ``evaluator`` find it, also mixed
  with standard measures (it is appended, so the standard providers keep their order);
* ``ir_measures.DefaultPipeline._evaluator`` (an instance attribute shadowing the method): every
  evaluator it builds, standard measures or negation measures, is wrapped in
  :class:`OneRankingEvaluator`, which ranks each run once in the suite's one ranking (see
  :mod:`negplugins.measures.ranking`) before any provider sees it.

A measure that no query is eligible for (no negative in the qrels, no complete pair) aggregates to NaN:
the key is present, so stock tools such as the ``ir_measures`` command line print ``nan`` instead of
failing, and the value is visibly not a number rather than a silent 0.

Each of these internals is looked up first (:func:`negplugins._compat.upstream.check`): when a newer
ir_measures has moved one, an :class:`~negplugins._compat.upstream.UpstreamChangedWarning` names it and
what stops working, and :func:`register` applies the rest.

``Evaluator.iter_calc`` (and ``FallbackEvaluator`` when providers are mixed) fills ``measure.DEFAULT``
for every qrels query a measure did not emit. The measures' NaN default and NaN-skipping aggregator
already keep those fills out of the means; the wrapper also keeps them out of the per-query output.
"""

import math

import ir_measures
from ir_measures import providers
from ir_measures.util import RunConverter

from ..measures.declarations import MEASURES, NegationMeasure
from ..measures.provider import provider
from ..measures.ranking import canonical_run
from . import upstream

# a missing base class must not fail the import: register() reports it (upstream.check) and does not wrap
_Evaluator = getattr(providers, 'Evaluator', object)


class OneRankingEvaluator(_Evaluator):
    """Wraps an evaluator: ranks each run once in the one ranking; drops undefined negation values.

    Every provider behind the wrapped evaluator receives the
    :func:`~negplugins.measures.ranking.canonical_run` of the run (distinct scores in the one
    ranking's order), so ties and near ties are ordered the same way for every measure.

    Parameters
    ----------
    evaluator : ir_measures.providers.Evaluator
        The evaluator that computes every requested measure.
    """

    def __init__(self, evaluator):
        super().__init__(evaluator.measures, evaluator.qrel_qids)
        self.evaluator = evaluator
        self.drops_undefined = any(isinstance(measure, NegationMeasure) for measure in evaluator.measures)

    def iter_calc(self, run):
        """Yield the per-query values of the run ranked in the one ranking.

        Raises
        ------
        NonFiniteScoreError
            A score of the run is NaN or infinite.
        """
        ranked = canonical_run(RunConverter(run).as_dict_of_dict())
        metrics = self.evaluator.iter_calc(ranked)
        if self.drops_undefined:
            return (metric for metric in metrics if not _undefined(metric.measure, metric.value))
        return metrics

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
    """Make ``pipeline`` wrap every evaluator it builds in :class:`OneRankingEvaluator`."""
    if getattr(pipeline._evaluator, 'wraps_one_ranking', False):
        return
    build_evaluator = pipeline._evaluator

    def _evaluator(measures, qrels):
        return OneRankingEvaluator(build_evaluator(list(measures), qrels))

    _evaluator.wraps_one_ranking = True
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
        _wrap_pipeline_evaluators(pipeline)
