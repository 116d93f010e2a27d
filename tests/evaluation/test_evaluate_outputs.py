"""Output formats (table, JSON, CSV, LaTeX), per-query output and the evaluate command line."""

import csv
import io
import json

import pytest

from negplugins.cli import main
from negplugins.evaluation.reports import render
from negplugins.evaluation.scoring import evaluate, evaluate_runs


@pytest.fixture
def runs(trec, tmp_path):
    a = trec(tmp_path / "a.trec", {"q01": ["d01", "d02"], "q02": ["d04", "d03"], "q05": ["d09", "d10"]})
    b = trec(tmp_path / "b.trec", {"q01": ["d02", "d01"], "q02": ["d03", "d04"], "q06": ["d10", "d09"]})
    return a, b


def test_table_json_csv_latex_single(runs):
    result = evaluate("negplugins-demo", runs[0], measures=["RR@10", "NegRecall@10"], per_query=True)
    table = render(result, "table", per_query=True)
    assert table.splitlines()[0].split() == ["kind", "queries", "RR@10", "NegRecall@10"]
    assert "Per query" in table and "q21" in table
    record = json.loads(render(result, "json", per_query=True))
    assert record["overall"]["RR@10"] == pytest.approx(result.overall["RR@10"])
    assert record["per_query"]["RR@10"]["q01"] == 1.0 and "q21" not in record["per_query"]["NegRecall@10"]
    assert "per_query" not in json.loads(render(result, "json"))
    rows = list(csv.DictReader(io.StringIO(render(result, "csv", per_query=True))))
    overall = [r for r in rows if r["subset"] == "all" and r["statistic"] == "mean" and r["measure"] == "RR@10"]
    assert float(overall[0]["value"]) == pytest.approx(result.overall["RR@10"])
    assert any(r["query_id"] == "q02" and r["statistic"] == "value" and r["value"] == "0.5" for r in rows)
    latex = render(result, "latex")
    assert latex.startswith(r"\begin{tabular}{lrr}") and r"\bottomrule" in latex and "negation-pair" in latex
    with pytest.raises(Exception, match="LaTeX"):
        render(result, "latex", per_query=True)


def test_comparison_formats(runs):
    cmp = evaluate_runs("negplugins-demo", list(runs), measures=["RR@10", "RightRank@10"])
    table = render(cmp, "table")
    assert "a.trec (baseline)" in table and "Paired tests against a.trec" in table and "Holm" in table
    record = json.loads(render(cmp, "json"))
    assert record["baseline"] == "a.trec" and record["runs"][0]["vs_baseline"] is None
    test = record["runs"][1]["vs_baseline"]["RR@10"]
    assert set(test) >= {"n", "mean_diff", "ci95", "p_t", "p_randomization", "p_t_holm", "p_randomization_holm"}
    rows = list(csv.DictReader(io.StringIO(render(cmp, "csv"))))
    assert {r["statistic"] for r in rows} >= {"mean", "p_t_holm", "ci95_low", "ci95_high", "p_randomization"}
    latex = render(cmp, "latex")
    assert "a.trec (baseline)" in latex and r"\dagger" in latex
    # by hand, the two runs tie on both measures: RR@10 2.5/21 each (a: q01 1, q02 1/2, q05 1; b: q01 1/2, q02 1,
    # q06 1), RightRank@10 2/20 each: a column where every run ties has no best, so nothing is bold
    assert r"\textbf{" not in latex and latex.count("0.1190") == 2 and latex.count("0.1000") == 2


def test_latex_escapes(trec, tmp_path):
    run = trec(tmp_path / "my_run&50%.trec", {"q01": ["d01"]})
    other = trec(tmp_path / "x.trec", {"q01": ["d02"]})
    latex = render(evaluate_runs("negplugins-demo", [run, other], measures=["RR@10"]), "latex")
    assert r"my\_run\&50\%.trec" in latex


def test_cli_evaluate_formats(runs, capsys, tmp_path):
    a, b = (str(p) for p in runs)
    assert main(["evaluate", "negplugins-demo", a]) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[:3] == ["kind", "queries", "nDCG@10"]
    assert main(["evaluate", "negplugins-demo", a, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["measures"][0] == "nDCG@10"
    assert main(["evaluate", "negplugins-demo", a, "-f", "csv", "--per-query", "-m", "RR@10"]) == 0
    assert capsys.readouterr().out.startswith("run,subset,query_id,measure,statistic,value")
    assert main(["evaluate", "negplugins-demo", a, b, "--baseline", b, "-f", "latex", "-m", "RR@10"]) == 0
    assert "b.trec (baseline)" in capsys.readouterr().out
    out = tmp_path / "out.json"
    assert main(["evaluate", "negplugins-demo", a, b, "--format", "json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["baseline"] == "a.trec"
    assert main(["evaluate", "negplugins-demo", a, "--baseline", "zzz"]) == 2


# -- values, not only the shape: every number below is computed by hand from the demo qrels ---------------------
# (ir_datasets_ext/etc/negplugins-demo/qrels.tsv: 21 queries, each with one positive or more; all but q21 have a
# negative. Kinds: q01-q04 exclusion, q05-q12 negation-pair, q13/q19/q21 and, q14/q17 or, q15/q16/q18/q20 not.)
# Run a ranks q01 [d01+, d02-], q02 [d04-, d03+], q05 [d09+, d10-]:
#   RR@10: q01 1, q02 1/2, q05 1, the other 18 queries 0 -> 2.5 / 21 overall; exclusion 1.5 / 4; negation-pair 1 / 8.
#   NegRecall@10 (queries with a negative): q01, q02, q05 retrieve their one negative (1 each), the other 17 none
#   -> 3 / 20 overall; exclusion 2 / 4; negation-pair 1 / 8; and, or, not 0.
HAND = {("all", "RR@10"): 2.5 / 21, ("all", "NegRecall@10"): 3 / 20,
        ("exclusion", "RR@10"): 1.5 / 4, ("exclusion", "NegRecall@10"): 2 / 4,
        ("negation-pair", "RR@10"): 1 / 8, ("negation-pair", "NegRecall@10"): 1 / 8,
        **{(kind, m): 0.0 for kind in ("and", "or", "not") for m in ("RR@10", "NegRecall@10")}}


def test_csv_values_are_the_hand_computed_ones(runs):
    result = evaluate("negplugins-demo", runs[0], measures=["RR@10", "NegRecall@10"], per_query=True)
    rows = list(csv.DictReader(io.StringIO(render(result, "csv", per_query=True))))
    cells = {(r["subset"], r["query_id"], r["measure"], r["statistic"]): r["value"] for r in rows}
    assert len(cells) == len(rows) == 12 + 2 + 21 + 20  # means, query counts, per-query RR and NegRecall values
    assert {r["run"] for r in rows} == {"a.trec"}
    for (subset, measure), value in HAND.items():
        assert float(cells[(subset, "", measure, "mean")]) == pytest.approx(value, abs=1e-12), (subset, measure)
    assert cells[("all", "", "RR@10", "queries")] == "21" and cells[("all", "", "NegRecall@10", "queries")] == "20"
    per_query = {(q, m): float(v) for (_, q, m, statistic), v in cells.items() if statistic == "value"}
    assert per_query[("q01", "RR@10")] == 1.0 and per_query[("q02", "RR@10")] == 0.5
    assert per_query[("q05", "RR@10")] == 1.0 and per_query[("q03", "RR@10")] == 0.0
    assert per_query[("q01", "NegRecall@10")] == per_query[("q02", "NegRecall@10")] == 1.0
    assert per_query[("q13", "NegRecall@10")] == 0.0 and ("q21", "NegRecall@10") not in per_query
    assert cells[("negation-pair", "q05", "RR@10", "value")] == "1.0"  # the query's subset is its kind
    assert sum(per_query[(q, "RR@10")] for q, m in per_query if m == "RR@10") / 21 == pytest.approx(2.5 / 21)


def test_latex_cells_are_the_hand_computed_values(runs):
    result = evaluate("negplugins-demo", runs[0], measures=["RR@10", "NegRecall@10"])
    lines = render(result, "latex").splitlines()
    body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    assert body == [r"all & 0.1190 & 0.1500 \\", r"\midrule", r"exclusion & 0.3750 & 0.5000 \\",
                    r"negation-pair & 0.1250 & 0.1250 \\", r"and & 0.0000 & 0.0000 \\", r"or & 0.0000 & 0.0000 \\",
                    r"not & 0.0000 & 0.0000 \\"]
    assert r"\textbf" not in "\n".join(lines)  # one run: nothing to mark as best


@pytest.fixture
def three_runs(trec, tmp_path):
    """q01 only (d01 its positive, d02 its negative): a ranks [d01, d02], b [d01], c [d02, d01].

    RR@10 over 21 queries: a 1/21, b 1/21 (a tie for best), c 0.5/21. NegRecall@10 over the 20 queries with a
    negative: a 1/20, b 0 (the best: lower is better), c 1/20.
    """
    return [trec(tmp_path / "a.trec", {"q01": ["d01", "d02"]}), trec(tmp_path / "b.trec", {"q01": ["d01"]}),
            trec(tmp_path / "c.trec", {"q01": ["d02", "d01"]})]


def test_latex_bold_marks_the_smallest_negrecall_and_every_run_tied_for_best(three_runs):
    cmp = evaluate_runs("negplugins-demo", three_runs, measures=["RR@10", "NegRecall@10"])
    lines = render(cmp, "latex").splitlines()
    # a and b tie for the best RR@10 (both bold); an all-tie column has none (test_comparison_formats)
    assert lines[4:7] == [r"a.trec (baseline) & \textbf{0.0476} & 0.0500 \\",
                          r"b.trec & \textbf{0.0476} & \textbf{0.0000} \\",
                          r"c.trec & 0.0238 & 0.0500 \\"]
    rows = list(csv.DictReader(io.StringIO(render(cmp, "csv"))))
    means = {(r["run"], r["measure"]): float(r["value"]) for r in rows
             if r["subset"] == "all" and r["statistic"] == "mean"}
    assert means == pytest.approx({("a.trec", "RR@10"): 1 / 21, ("a.trec", "NegRecall@10"): 1 / 20,
                                   ("b.trec", "RR@10"): 1 / 21, ("b.trec", "NegRecall@10"): 0.0,
                                   ("c.trec", "RR@10"): 0.5 / 21, ("c.trec", "NegRecall@10"): 1 / 20})
    diffs = {(r["run"], r["measure"]): float(r["value"]) for r in rows if r["statistic"] == "mean_diff"}
    assert diffs == pytest.approx({("b.trec", "RR@10"): 0.0, ("b.trec", "NegRecall@10"): -1 / 20,
                                   ("c.trec", "RR@10"): -0.5 / 21, ("c.trec", "NegRecall@10"): 0.0})
