"""Registers the negation measures and their provider with ir_measures 0.4.3; nothing else of ir_measures changes.

Two ir_measures internals are touched, each idempotently, and only by adding to them:

* ``ir_measures.measures.registry`` (through ``ir_measures.measures.register``): the suite's names, so that
  ``ir_measures.parse_measure("RightRank@10")`` works;
* ``ir_measures.providers.registry`` and ``ir_measures.DefaultPipeline.providers``: the suite's provider, so
  that the default ``calc_aggregate`` / ``iter_calc`` / ``calc`` / ``evaluator`` find it, also mixed
  with standard measures. It is appended after the stock providers and supports the suite's measures only, so
  every standard measure is computed by the stock provider that computes it without the suite.

No evaluator, provider or function of ir_measures is wrapped or replaced: with the suite installed, ``RR@10``,
``nDCG@10`` and every other stock measure give exactly the stock values, ties included (each stock provider
orders tied documents its own way: see :mod:`negplugins.measures.ranking`). The suite's measures rank each run
themselves in the one ranking (:mod:`negplugins.measures.provider`), whatever evaluator calls them.

A measure that no query is eligible for (no negative in the qrels, no complete pair) aggregates to NaN (its
aggregator's value without any value to average): the key is present, so stock tools such as the
``ir_measures`` command line print ``nan`` instead of failing, and the value is visibly not a number rather
than a silent 0.

Each of these internals is looked up first (:func:`negplugins._compat.upstream.check`): when a newer
ir_measures has moved one, an :class:`~negplugins._compat.upstream.UpstreamChangedWarning` names it and
what stops working, and :func:`register` applies the rest.
"""

import ir_measures
from ir_measures import providers

from ..measures.declarations import MEASURES
from ..measures.provider import provider
from . import upstream


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
