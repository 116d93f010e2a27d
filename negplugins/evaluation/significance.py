"""Paired significance tests between runs on the same queries: t-test, randomization test, Holm, t intervals.

What is tested and how: docs/evaluation.md, "Significance".
"""

from __future__ import annotations

import contextlib
import math
from typing import Callable, Mapping, Sequence

import numpy as np

from ..options import MAX_PERMUTATIONS, check_int

#: A run differs significantly from the baseline when its Holm-corrected randomization p-value is below this.
ALPHA = 0.05
PERMUTATIONS = 10_000
SEED = 20240611
_CHUNK = 1000
#: Two per-query values closer than this are a tie (:func:`wins_losses_ties`).
TIE_TOLERANCE = 1e-9
#: ``compare(progress=True)`` shows a progress bar from this many sign vectors in all (tens of seconds).
PROGRESS_FROM = 1_000_000


def by_unit(values: Mapping[str, float], units: Mapping[str, str] | None = None) -> dict[str, float]:
    """``{unit: value}``: the mean of each unit's non-NaN values (a query ``units`` does not map is its own unit)."""
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
                       seed: int = SEED, progress: Callable[[int], None] | None = None) -> float:
    """Two-sided p-value of the paired sign-flip randomization test of ``b - a`` (exact when 2^n <= permutations)."""
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
    """``{"overall": {measure: [low, high]}, "subsets": ..., "negation_split": ...}``: 95% intervals of the means."""
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
            units: Mapping[str, Mapping[str, str]] | None = None) -> list[dict | None]:
    """Test every run against ``per_query[baseline]``, per measure, on the units with a value in both.

    ``None`` for the baseline, else ``{measure: {"n", "mean_diff", "ci95", "p_t", "p_randomization", ...}}``.
    """
    permutations = check_int(permutations, "--permutations", 1, MAX_PERMUTATIONS)
    units = units or {}
    results: list[dict | None] = [None if i == baseline else {} for i in range(len(per_query))]
    others = [i for i in range(len(per_query)) if i != baseline]
    total = permutations * len(measures) * len(others)
    if progress and total >= PROGRESS_FROM:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="randomization tests", unit=" permutations", unit_scale=True, leave=False)
    else:
        bar = contextlib.nullcontext()
    with bar:
        for measure in measures:
            a_values = by_unit(per_query[baseline].get(measure, {}), units.get(measure))
            for i in others:
                b_values = by_unit(per_query[i].get(measure, {}), units.get(measure))
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
                    "p_randomization": randomization_test(a, b, permutations, seed, getattr(bar, "update", None)),
                }
            for key in ("p_t", "p_randomization"):
                adjusted = holm([results[i][measure][key] for i in others])
                for i, value in zip(others, adjusted):
                    results[i][measure][key + "_holm"] = value
    return results


def wins_losses_ties(baseline: Mapping[str, float], run: Mapping[str, float], lower_is_better: bool = False,
                     units: Mapping[str, str] | None = None) -> dict:
    """``{"wins", "losses", "ties", "n"}`` of ``run`` against the baseline over the units with a value in both."""
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
