"""Output formats (table, JSON, CSV, LaTeX), per-query output and the evaluate command line."""

import csv
import io
import json

import pytest

from negplugins.cli import main
from negplugins.evaluation.scoring import evaluate, evaluate_runs
from negplugins.evaluation.reports import render


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
    assert r"\textbf{" in latex and "a.trec (baseline)" in latex and r"\dagger" in latex


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
