"""Paired tests against scipy and Holm against a hand computation."""

import math

import numpy as np
import pytest
from scipy import stats

from negplugins.evaluation.significance import compare, holm, paired_t_test, randomization_test, t_confidence_interval

A = [0.50, 0.30, 0.90, 0.10, 0.70, 0.40, 0.60, 0.20, 0.80, 0.55]
B = [0.60, 0.35, 0.95, 0.05, 0.90, 0.50, 0.65, 0.30, 0.85, 0.70]


def test_paired_t_test_matches_scipy():
    t, p = paired_t_test(A, B)
    reference = stats.ttest_rel(B, A)
    assert t == pytest.approx(reference.statistic) and p == pytest.approx(reference.pvalue)
    # hand: mean diff 0.085, sd of diffs, t = mean / (sd / sqrt(n))
    d = np.array(B) - np.array(A)
    assert t == pytest.approx(d.mean() / (d.std(ddof=1) / math.sqrt(len(d))))


def test_t_interval_matches_scipy():
    low, high = t_confidence_interval(A, B)
    reference = stats.ttest_rel(B, A).confidence_interval(0.95)
    assert (low, high) == pytest.approx((reference.low, reference.high))


def test_exact_randomization_matches_scipy():
    reference = stats.permutation_test((np.array(B), np.array(A)), lambda x, y: np.mean(x - y), vectorized=False,
                                       permutation_type="samples", n_resamples=10_000, alternative="two-sided")
    assert randomization_test(A, B) == pytest.approx(reference.pvalue)  # 2^10 < 10,000: exact in both


def test_monte_carlo_randomization_close_to_exact():
    rng = np.random.default_rng(0)
    a = rng.random(18)
    b = a + rng.normal(0.05, 0.2, 18)
    exact = randomization_test(a, b, permutations=2 ** 18)
    sampled = randomization_test(a, b, permutations=10_000)
    assert abs(exact - sampled) < 0.02
    assert sampled == randomization_test(a, b, permutations=10_000)  # fixed seed: reproducible
    reference = stats.permutation_test((b, a), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                                       permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    assert exact == pytest.approx(reference.pvalue)


def test_degenerate_cases():
    assert paired_t_test([0.5, 0.5], [0.5, 0.5]) == (pytest.approx(math.nan, nan_ok=True), 1.0)
    assert randomization_test([1, 0], [1, 0]) == 1.0
    assert math.isnan(randomization_test([], []))
    assert all(math.isnan(x) for x in t_confidence_interval([1], [2]))


def test_holm_by_hand():
    # sorted: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06, monotone), 0.04 (x1 = 0.04 -> max 0.06)
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([0.5, 0.4]) == pytest.approx([0.8, 0.8])
    assert holm([0.9, 0.01]) == pytest.approx([0.9, 0.02])
    adjusted = holm([0.01, math.nan, 0.04])
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)


def test_compare_holm_across_runs():
    base = {"M": {str(i): v for i, v in enumerate(A)}}
    better = {"M": {str(i): v for i, v in enumerate(B)}}
    same = {"M": {str(i): v + (0.01 if i % 2 else -0.01) for i, v in enumerate(A)}}
    results = compare([base, better, same], ["M"])
    assert results[0] is None
    raw = [results[1]["M"]["p_t"], results[2]["M"]["p_t"]]
    assert [results[1]["M"]["p_t_holm"], results[2]["M"]["p_t_holm"]] == pytest.approx(holm(raw))
    assert results[1]["M"]["p_t"] == pytest.approx(stats.ttest_rel(B, A).pvalue)
    assert results[1]["M"]["n"] == 10
    # only common queries are paired
    partial = {"M": {"0": 1.0, "1": 0.0, "zzz": 1.0}}
    assert compare([base, partial], ["M"])[1]["M"]["n"] == 2


def test_progress_bar_for_long_tests_leaves_the_p_values_unchanged(monkeypatch, capsys):
    import negplugins.evaluation.significance as significance

    rng = np.random.default_rng(7)
    base = {"m": {f"q{i}": float(v) for i, v in enumerate(rng.random(40))}}
    other = {"m": {f"q{i}": float(v) for i, v in enumerate(rng.random(40))}}
    quiet = compare([base, other], ["m"], permutations=5000)
    assert capsys.readouterr().err == ""  # below PROGRESS_FROM: no bar even when asked
    monkeypatch.setattr(significance, "PROGRESS_FROM", 1000)
    shown = compare([base, other], ["m"], permutations=5000, progress=True)
    err = capsys.readouterr().err
    assert "randomization tests" in err and "/5.00k" in err  # a bar over every sign vector to draw
    assert shown[1]["m"]["p_randomization"] == quiet[1]["m"]["p_randomization"]
    drawn = []
    order = sorted(base["m"])  # compare pairs the queries in sorted order
    a, b = [base["m"][q] for q in order], [other["m"][q] for q in order]
    assert randomization_test(a, b, 5000, progress=drawn.append) == quiet[1]["m"]["p_randomization"]
    assert sum(drawn) == 5000 and len(drawn) == 5  # one call per chunk of 1,000
    assert compare([base, other], ["m"], permutations=5000)[1] == quiet[1]  # off by default
    assert capsys.readouterr().err == ""


def test_one_significance_level():
    """ALPHA is defined once, in negplugins/evaluation/significance.py; reports and leaderboards import it, and no
    other module writes the level as a number (a mark means p < 0.05, strictly)."""
    import ast
    from pathlib import Path

    from negplugins.evaluation import reports, significance
    from negplugins.leaderboard import board

    assert significance.ALPHA == 0.05 and reports.ALPHA is significance.ALPHA and board.ALPHA is significance.ALPHA
    root = Path(significance.__file__).resolve().parents[1]
    literals = [f"{path.relative_to(root)}:{node.lineno}" for path in sorted(root.rglob("*.py"))
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Constant) and node.value == 0.05 and path.name != "significance.py"]
    assert literals == []
    from types import SimpleNamespace

    marked = SimpleNamespace(vs_baseline={"m": {"p_randomization_holm": 0.0499}})
    unmarked = SimpleNamespace(vs_baseline={"m": {"p_randomization_holm": 0.05}})
    assert board.differs_from_baseline(marked, "m") and not board.differs_from_baseline(unmarked, "m")


def test_evaluation_intervals_are_t_intervals_and_count_a_nevir_pair_once(tmp_path):
    """Every mean's interval is Student's t over its per-query values (scipy, here); PairedAcc's values, one per
    pair given to both its queries, count each pair once (pairs found here as queries judging the same documents)."""
    import zlib

    import numpy as np
    from scipy import stats

    from negplugins import datasets
    from negplugins.evaluation.scoring import evaluate
    from negplugins.evaluation.significance import evaluation_intervals

    dataset = datasets.load("negplugins-demo")
    qrels = datasets.qrels_dict(dataset)
    run = tmp_path / "run.trec"
    docs = sorted({d for judged in qrels.values() for d in judged})
    judged_sets = sorted({tuple(sorted(judged)) for judged in qrels.values()})
    with open(run, "w") as f:  # every judged document for every query, in an order varying by query and document;
        for q in sorted(qrels):  # every other set of judged documents (a pair's) ranked positives first
            right = judged_sets.index(tuple(sorted(qrels[q]))) % 2 == 0

            def key(d, q=q, right=right):
                first = qrels[q].get(d, 0) > 0 if right else qrels[q].get(d, 0) < 0
                return (not first, zlib.crc32(f"{q} {d}".encode()))

            for rank, d in enumerate(sorted(docs, key=key), start=1):
                f.write(f"{q} Q0 {d} {rank} {1000 - rank}.5 t\n")
    ev = evaluate("negplugins-demo", run, measures=["nDCG@10", "PairedAcc"], per_query=True)
    ci = evaluation_intervals(ev)

    def t_interval(values):
        return list(stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values)))

    assert ci["overall"]["nDCG@10"] == pytest.approx(t_interval(list(ev.per_query["nDCG@10"].values())), abs=1e-12)
    paired = ev.per_query["PairedAcc"]
    pairs: dict = {}
    for q in paired:
        pairs.setdefault(frozenset(qrels[q]), []).append(q)
    assert all(len(members) == 2 and len({paired[m] for m in members}) == 1 for members in pairs.values())
    per_pair = [paired[members[0]] for members in pairs.values()]
    assert len(per_pair) == len(paired) // 2 >= 2
    assert np.std(per_pair) > 0  # pairs right and wrong: the interval has a width
    if np.std(per_pair) > 0:
        assert ci["overall"]["PairedAcc"] == pytest.approx(t_interval(per_pair), abs=1e-12)
    else:
        assert ci["overall"]["PairedAcc"] == [np.mean(per_pair)] * 2
    for subset in ev.subsets:  # per subset too
        ids = [q for q in ev.per_query["nDCG@10"] if ev.query_groups.get(q) == subset]
        if len(ids) >= 2 and np.std([ev.per_query["nDCG@10"][q] for q in ids]) > 0:
            expected = t_interval([ev.per_query["nDCG@10"][q] for q in ids])
            assert ci["subsets"][subset]["nDCG@10"] == pytest.approx(expected, abs=1e-12)


def _pair_run(path, qrels, right):
    """Every judged document for every query; a pair's (judged set's) positives first where ``right(index)``."""
    docs = sorted({d for judged in qrels.values() for d in judged})
    judged_sets = sorted({tuple(sorted(judged)) for judged in qrels.values()})
    with open(path, "w") as f:
        for q in sorted(qrels):
            first_positive = right(judged_sets.index(tuple(sorted(qrels[q]))))
            ranked = sorted(docs, key=lambda d, q=q: (not (qrels[q].get(d, 0) > 0 if first_positive
                                                        else qrels[q].get(d, 0) < 0), d))
            for rank, d in enumerate(ranked, start=1):
                f.write(f"{q} Q0 {d} {rank} {1000 - rank}.5 t\n")
    return path


def test_paired_tests_count_a_nevir_pair_once(tmp_path):
    """PairedAcc's value is one per NevIR pair, given to both its queries: the t-test, the randomization test and
    the interval of the difference run over the pairs, each once (n = pairs), as NevIR defines the measure."""
    from negplugins import datasets
    from negplugins.evaluation.scoring import evaluate_runs
    from negplugins.measures.pairs import find_pairs

    qrels = datasets.qrels_dict(datasets.load("negplugins-demo"))
    runs = [_pair_run(tmp_path / "a.trec", qrels, lambda i: i % 2 == 0),
            _pair_run(tmp_path / "b.trec", qrels, lambda i: i % 4 != 3)]
    comparison = evaluate_runs("negplugins-demo", runs, measures=["PairedAcc", "nDCG@10"], per_query=True)
    test = comparison.tests[1]["PairedAcc"]
    pairs = sorted(pair[0].query_id for pair in find_pairs(qrels).pairs)
    a, b = ([ev.per_query["PairedAcc"][q] for q in pairs] for ev in comparison.evaluations)
    assert a != b and len(pairs) == 4
    assert test["n"] == len(pairs) and test["mean_diff"] == pytest.approx(np.mean(b) - np.mean(a), abs=1e-12)
    assert (test["t"], test["p_t"]) == paired_t_test(a, b) and 0 < test["p_t"] < 1
    assert test["ci95"] == list(t_confidence_interval(a, b))
    assert test["p_randomization"] == randomization_test(a, b)
    assert comparison.tests[1]["nDCG@10"]["n"] == len(qrels)  # a query measure: per query, as before
