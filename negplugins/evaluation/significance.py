"""Paired significance tests between runs on the same queries.

* :func:`paired_t_test` - two-sided paired t-test (``scipy.stats.ttest_rel``);
* :func:`randomization_test` - two-sided paired randomization (sign-flip permutation) test of the
  mean difference, vectorised with NumPy: exact (all 2^n sign assignments) when 2^n is at most the
  number of permutations asked for, otherwise Monte Carlo with a fixed seed, p = (hits + 1) / (B + 1);
  ``permutations`` is 1 to :data:`negplugins.options.MAX_PERMUTATIONS` (10^6; time grows linearly
  with it, memory stays at one chunk of 1,000 sign vectors);
* :func:`mean_confidence_interval` - the t-based 95% confidence interval of a mean over queries, and
  :func:`evaluation_intervals` the intervals of every mean of an evaluation (overall, per subset, negation split);
* :func:`t_confidence_interval` - the t-based 95% confidence interval of the mean difference;
* :func:`holm` - Holm's step-down correction of a family of p-values;
* :func:`wins_losses_ties` - per query, how often a run beats, loses to or ties with the baseline.

:func:`compare` tests every run against a baseline, per measure, on the queries for which the measure
has a value in both runs, and corrects the p-values with Holm across the runs (per measure and test).
A measure whose one value is given to several queries (``units``: PairedAcc, one value per NevIR pair given to
both its queries) is tested, bounded and counted per unit (:func:`by_unit`): a pair counts once, never twice.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from ..options import MAX_PERMUTATIONS, check_int

__all__ = ["ALPHA", "PERMUTATIONS", "SEED", "TIE_TOLERANCE", "CI_METHOD", "paired_t_test", "randomization_test",
           "mean_confidence_interval", "evaluation_intervals", "t_confidence_interval", "holm", "compare",
           "wins_losses_ties", "by_unit"]

#: Significance level, the one the suite uses everywhere: a run differs significantly from the baseline when
#: its Holm-corrected randomization-test p-value is below ``ALPHA`` (the marks of ``negplugins evaluate``'s
#: table and LaTeX output, and of the leaderboards).
ALPHA = 0.05
PERMUTATIONS = 10_000
SEED = 20240611
_CHUNK = 1000
#: Two per-query values closer than this are a tie (:func:`wins_losses_ties`).
TIE_TOLERANCE = 1e-9
#: ``compare(progress=True)`` shows a progress bar when the tests draw at least this many sign vectors in all
#: (10^6 vectors take tens of seconds on one core for a few thousand queries).
PROGRESS_FROM = 1_000_000

#: Called with the number of sign vectors just drawn.
Progress = Callable[[int], None]


#: ``{measure: {query_id: unit}}``: the queries that share one value of a measure, mapped to their unit.
Units = Mapping[str, Mapping[str, str]]


def by_unit(values: Mapping[str, float], units: Mapping[str, str] | None = None) -> dict[str, float]:
    """``{unit: value}``: the mean of each unit's non-NaN values, in the order of ``values``.

    A query that ``units`` does not map is its own unit; the two queries of a NevIR pair, which share the pair's
    PairedAcc, give one value for the pair.
    """
    units = units or {}
    shared: dict[str, list[float]] = {}
    for query_id, value in values.items():
        if value is not None and not math.isnan(value):
            shared.setdefault(units.get(query_id, query_id), []).append(value)
    return {unit: sum(unit_values) / len(unit_values) for unit, unit_values in shared.items()}


def _diffs(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("paired samples must be 1-D and of equal length")
    return b - a


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """``(t, p)`` of the two-sided paired t-test of ``b - a``; p = 1 when every difference is 0, NaN for n < 2."""
    d = _diffs(a, b)
    if len(d) < 2:
        return math.nan, math.nan
    if np.all(d == d[0]):
        return (math.nan, 1.0) if d[0] == 0 else (math.copysign(math.inf, d[0]), 0.0)
    from scipy import stats  # imported when a test runs: scipy.stats takes a second to import

    result = stats.ttest_rel(b, a)
    return float(result.statistic), float(result.pvalue)


def randomization_test(a: Sequence[float], b: Sequence[float], permutations: int = PERMUTATIONS,
                       seed: int = SEED, progress: Progress | None = None) -> float:
    """Two-sided p-value of the paired randomization test of the mean of ``b - a``.

    ``progress``, if given, is called with the number of sign vectors drawn after each chunk.

    Raises
    ------
    UserError
        ``permutations`` is not an integer from 1 to :data:`~negplugins.options.MAX_PERMUTATIONS`.
    """
    permutations = check_int(permutations, "--permutations", 1, MAX_PERMUTATIONS)
    d = _diffs(a, b)
    n = len(d)
    if n == 0:
        return math.nan
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)
    if n <= 20 and 2 ** n <= permutations:  # exact: every sign assignment
        signs = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
        means = np.abs(signs @ d) / n
        return float(np.count_nonzero(means >= observed - tolerance) / 2 ** n)
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    while done < permutations:
        size = min(_CHUNK, permutations - done)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        means = np.abs(signs @ d) / n
        hits += int(np.count_nonzero(means >= observed - tolerance))
        done += size
        if progress is not None:
            progress(size)
    return (hits + 1) / (permutations + 1)


#: How :func:`mean_confidence_interval` computes an interval, for the reports that show one.
CI_METHOD = ("95% confidence interval of the mean over the queries: Student's t interval (mean ± t(0.975, n − 1) "
             "× standard deviation / √n) of the per-query values the mean is taken over; no resampling, so the "
             "same values always give the same interval")


def mean_confidence_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The t-based confidence interval of the mean of ``values`` (:data:`CI_METHOD`; NaN for n < 2)."""
    d = np.asarray(values, dtype=float)
    n = len(d)
    if d.ndim != 1 or n < 2:
        return math.nan, math.nan
    mean = float(d.mean())
    sem = float(d.std(ddof=1)) / math.sqrt(n)
    if sem == 0:
        return mean, mean
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sem
    return mean - half, mean + half


def t_confidence_interval(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The t-based confidence interval of the mean of ``b - a`` (NaN for n < 2)."""
    return mean_confidence_interval(_diffs(a, b), level)


def evaluation_intervals(evaluation) -> dict:
    """The 95% confidence interval (:func:`mean_confidence_interval`) of every mean of an evaluation.

    Parameters
    ----------
    evaluation : Evaluation
        Scored with its per-query values (``per_query=True``).

    Returns
    -------
    dict
        ``{"overall": {measure: [low, high]}, "subsets": {subset: {...}}, "negation_split": {group: {...}}}``,
        each over the queries its mean is taken over (those of the qrels, of the subset or of the group with a
        value for the measure); ``None`` for a bound that cannot be had (fewer than 2 values). A measure whose
        value several queries share (the evaluation's ``units``: PairedAcc, one value per NevIR pair given to
        both its queries) counts each unit once: the mean is the same, and the interval is not made narrower
        by counting a pair twice.
    """
    per_query = evaluation.per_query or {}

    def intervals(query_ids) -> dict:
        result = {}
        for measure in evaluation.measures:
            column = per_query.get(measure, {})
            values = by_unit({q: column[q] for q in query_ids if q in column}, evaluation.units.get(measure))
            result[measure] = [None if math.isnan(x) else x for x in mean_confidence_interval(list(values.values()))]
        return result

    judged = list(evaluation.per_query_ids) if evaluation.per_query_ids is not None else \
        sorted({q for column in per_query.values() for q in column})
    record = {"overall": intervals(judged), "subsets": {}, "negation_split": {}}
    for subset in evaluation.subsets:
        record["subsets"][subset] = intervals([q for q in judged if evaluation.query_groups.get(q) == subset])
    for group in evaluation.negation:
        record["negation_split"][group] = intervals([q for q in judged if evaluation.negation_groups.get(q) == group])
    return record


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order; NaN stays NaN and is not counted in the family."""
    indexed = [(p, i) for i, p in enumerate(pvalues) if p is not None and not math.isnan(p)]
    m = len(indexed)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(indexed)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def compare(per_query: Sequence[Mapping[str, Mapping[str, float]]], measures: Sequence[str], baseline: int = 0,
            permutations: int = PERMUTATIONS, seed: int = SEED, progress: bool = False,
            units: Units | None = None) -> list[dict | None]:
    """Test every run against ``per_query[baseline]``.

    Parameters
    ----------
    per_query : list of {measure: {query_id: value}}
        One entry per run.
    measures : list of str
    baseline : int
        Index of the baseline run.
    permutations : int
        Of the randomization test, 1 to :data:`~negplugins.options.MAX_PERMUTATIONS`.
    progress : bool
        Show a progress bar on standard error when the tests draw at least :data:`PROGRESS_FROM` sign
        vectors in all (off by default: library calls stay quiet).
    units : {measure: {query_id: unit}}, optional
        The queries that share one value of a measure (the evaluation's ``units``): the tests pair, bound and
        count each unit once (:func:`by_unit`), so ``n`` is the number of NevIR pairs for PairedAcc.

    Returns
    -------
    list
        ``None`` for the baseline; otherwise ``{measure: {"n", "baseline_mean", "mean", "mean_diff",
        "ci95", "t", "p_t", "p_randomization", "p_t_holm", "p_randomization_holm"}}``.
    """
    permutations = check_int(permutations, "--permutations", 1, MAX_PERMUTATIONS)
    results: list[dict | None] = [None if i == baseline else {} for i in range(len(per_query))]
    base = per_query[baseline]
    total = permutations * len(measures) * (len(per_query) - 1)
    bar = None
    if progress and total >= PROGRESS_FROM:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="randomization tests", unit=" permutations", unit_scale=True, leave=False)
    try:
        _compare_measures(per_query, measures, baseline, permutations, seed, results, base,
                          bar.update if bar is not None else None, units or {})
    finally:
        if bar is not None:
            bar.close()
    return results


def _compare_measures(per_query, measures, baseline, permutations, seed, results, base, progress, units) -> None:
    for measure in measures:
        a_values = by_unit(base.get(measure, {}), units.get(measure))
        for i, values in enumerate(per_query):
            if i == baseline:
                continue
            b_values = by_unit(values.get(measure, {}), units.get(measure))
            common = sorted(a_values.keys() & b_values.keys())
            a = np.array([a_values[q] for q in common], dtype=float)
            b = np.array([b_values[q] for q in common], dtype=float)
            keep = ~(np.isnan(a) | np.isnan(b))
            a, b = a[keep], b[keep]
            t, p_t = paired_t_test(a, b)
            low, high = t_confidence_interval(a, b)
            results[i][measure] = {
                "n": int(len(a)),
                "baseline_mean": float(a.mean()) if len(a) else math.nan,
                "mean": float(b.mean()) if len(b) else math.nan,
                "mean_diff": float((b - a).mean()) if len(a) else math.nan,
                "ci95": [low, high],
                "t": t, "p_t": p_t,
                "p_randomization": randomization_test(a, b, permutations, seed, progress),
            }
        others = [i for i in range(len(per_query)) if i != baseline]
        for key in ("p_t", "p_randomization"):
            adjusted = holm([results[i][measure][key] for i in others])
            for i, value in zip(others, adjusted):
                results[i][measure][key + "_holm"] = value


def wins_losses_ties(baseline: Mapping[str, float], run: Mapping[str, float], lower_is_better: bool = False,
                     units: Mapping[str, str] | None = None) -> dict:
    """Per query, whether ``run`` beats the baseline, loses to it or ties with it on one measure.

    Parameters
    ----------
    baseline, run : mapping
        ``{query_id: value}`` of the measure, for the queries it is defined on (as
        :attr:`~negplugins.evaluation.results.Evaluation.per_query` holds them).
    lower_is_better : bool
        The measure is better when smaller (a win is then a smaller value).
    units : {query_id: unit}, optional
        The queries that share the measure's one value (PairedAcc: a NevIR pair), counted once per unit.

    Returns
    -------
    dict
        ``{"wins", "losses", "ties", "n"}`` over the ``n`` queries (units) with a (non-NaN) value in both, those
        :func:`compare` tests on; values within :data:`TIE_TOLERANCE` of each other tie.
    """
    baseline, run = by_unit(baseline, units), by_unit(run, units)
    wins = losses = ties = 0
    for query_id in baseline.keys() & run.keys():
        a, b = baseline[query_id], run[query_id]
        difference = (a - b) if lower_is_better else (b - a)
        if abs(difference) <= TIE_TOLERANCE:
            ties += 1
        elif difference > 0:
            wins += 1
        else:
            losses += 1
    return {"wins": wins, "losses": losses, "ties": ties, "n": wins + losses + ties}
