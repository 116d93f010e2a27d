"""``negplugins evaluate --ties``: stock values by default, the one ranking when asked, and every output says which.

The run below has, on the demo dataset (21 judged queries): q01's positive d01 tied with its negative d02 at 1.0,
and q03's positive d06 with its negative d05; q02's positive d03 at 10.0000001 and its negative d04 at 10.0
(equal in single precision); the NevIR-style pair q05 / q06 (d09 and d10 mirrored) with q05 right (2.0 > 1.0) and
q06's positive d10 tied with d09 at 1.0. Every value is computed by hand
below from docs/measures.md ("Ties"): stock RR@10 (msmarco provider) orders ties by doc id ascending at full
precision, stock R@1 (pytrec_eval) orders them by doc id descending in single precision; the one ranking orders
them by doc id descending at full precision.
"""

import csv
import io
import json

import pytest

from negplugins.cli import main
from negplugins.errors import UserError
from negplugins.evaluation.diagnostics import diagnose
from negplugins.evaluation.reports import render
from negplugins.evaluation.scoring import evaluate, evaluate_runs

MEASURES = ["RR@10", "R@1", "DeltaMRR@10", "PairedAcc"]
QUERIES = 21
# RR@10 and R@1 of q01, q02, q03, q05, q06 (the other 16 queries are not in the run: 0)
# stock RR@10 (doc id ascending): d01 first 1, d03 first 1, d05 first 1/2, d09 first 1, d09 first 1/2
# stock R@1 (single precision, doc id descending): d02 0, d04 (a tie there) 0, d06 1, d09 1, d10 1
# the one ranking (full precision, doc id descending): d02 (1/2, 0), d03 (1, 1), d06 (1, 1), d09 (1, 1), d10 (1, 1)
STOCK = {"RR@10": 4 / QUERIES, "R@1": 3 / QUERIES}
ONE_RANKING = {"RR@10": 4.5 / QUERIES, "R@1": 4 / QUERIES}


@pytest.fixture
def tied_run(tmp_path):
    path = tmp_path / "tied.trec"
    path.write_text("q01 Q0 d02 1 1.0 t\nq01 Q0 d01 2 1.0 t\n"
                    "q02 Q0 d03 1 10.0000001 t\nq02 Q0 d04 2 10.0 t\n"
                    "q03 Q0 d06 1 1.0 t\nq03 Q0 d05 2 1.0 t\n"
                    "q05 Q0 d09 1 2.0 t\nq05 Q0 d10 2 1.0 t\n"
                    "q06 Q0 d10 1 1.0 t\nq06 Q0 d09 2 1.0 t\n", encoding="utf-8")
    return path


def _suite_values(evaluation):
    # the suite's measures rank the run themselves in the one ranking either way: DeltaMRR@10 q01 1/2 - 1,
    # q02, q03, q05 and q06 1 - 1/2; PairedAcc compares raw scores: q06's tie is wrong, so no pair is right
    delta = evaluation.per_query["DeltaMRR@10"]
    assert [delta[q] for q in ("q01", "q02", "q03", "q05", "q06")] == [-0.5, 0.5, 0.5, 0.5, 0.5]
    assert evaluation.overall["PairedAcc"] == 0.0


def test_stock_by_default_and_the_one_ranking_when_asked(tied_run):
    stock = evaluate("negplugins-demo", tied_run, measures=MEASURES, per_query=True)
    assert stock.ties == "stock"
    assert {m: stock.overall[m] for m in STOCK} == pytest.approx(STOCK, abs=1e-15)
    assert stock.per_query["RR@10"]["q01"] == 1.0 and stock.per_query["R@1"]["q02"] == 0.0
    _suite_values(stock)
    ranked = evaluate("negplugins-demo", tied_run, measures=MEASURES, per_query=True, ties="one-ranking")
    assert ranked.ties == "one-ranking"
    assert {m: ranked.overall[m] for m in ONE_RANKING} == pytest.approx(ONE_RANKING, abs=1e-15)
    assert ranked.per_query["RR@10"]["q01"] == 0.5 and ranked.per_query["R@1"]["q02"] == 1.0
    _suite_values(ranked)
    assert ranked.per_query["DeltaMRR@10"] == stock.per_query["DeltaMRR@10"]


def test_comparisons_and_their_tests_follow_the_tie_handling(tied_run, trec, tmp_path):
    other = trec(tmp_path / "other.trec", {"q01": ["d01", "d02"], "q02": ["d03", "d04"]})
    for ties, expected in (("stock", STOCK), ("one-ranking", ONE_RANKING)):
        comparison = evaluate_runs("negplugins-demo", [other, tied_run], measures=["RR@10", "R@1"], ties=ties,
                                   permutations=10)
        assert comparison.ties == ties and all(ev.ties == ties for ev in comparison.evaluations)
        assert comparison.evaluations[1].overall == pytest.approx(expected, abs=1e-15)
        # other ranks q01's and q02's positives first (RR@10 2/21): the tests compare these per-query values
        assert comparison.tests[1]["RR@10"]["mean_diff"] == pytest.approx(expected["RR@10"] - 2 / QUERIES)
        assert json.loads(comparison.to_json())["ties"] == ties


def test_every_output_says_which_tie_handling(tied_run, capsys):
    for ties in ("stock", "one-ranking"):
        assert main(["evaluate", "negplugins-demo", str(tied_run), "-m", "RR@10", "--ties", ties]) == 0
        table = capsys.readouterr().out
        assert f"\nties: {ties} (" in table
        assert main(["evaluate", "negplugins-demo", str(tied_run), "-m", "RR@10", "--ties", ties, "--json"]) == 0
        record = json.loads(capsys.readouterr().out)
        assert record["ties"] == ties
        assert record["overall"]["RR@10"] == pytest.approx((STOCK if ties == "stock" else ONE_RANKING)["RR@10"])
        assert main(["evaluate", "negplugins-demo", str(tied_run), "-m", "RR@10", "--ties", ties, "-f", "csv"]) == 0
        out, err = capsys.readouterr()
        assert list(csv.reader(io.StringIO(out)))[0] == ["run", "subset", "query_id", "measure", "statistic", "value"]
        assert f"negplugins: note: ties: {ties} (" in err
        assert main(["evaluate", "negplugins-demo", str(tied_run), "-m", "RR@10", "--ties", ties, "-f", "latex"]) == 0
        assert capsys.readouterr().out.splitlines()[-1].startswith(f"% ties: {ties} (")
    stock = "ties: stock (standard measures as stock ir_measures computes them"
    assert stock in render(evaluate("negplugins-demo", tied_run, measures=["RR@10"]), "table")


def test_the_option_is_documented_and_checked(tied_run, capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--ties {stock,one-ranking}" in text and "every measure in the suite's one ranking" in text
    with pytest.raises(SystemExit) as exited:
        main(["evaluate", "negplugins-demo", str(tied_run), "--ties", "trec_eval"])
    assert exited.value.code == 2
    assert "argument --ties: invalid choice: 'trec_eval' (choose from 'stock', 'one-ranking')" in \
        capsys.readouterr().err
    with pytest.raises(UserError, match="unknown tie handling 'trec_eval'; choose from stock, one-ranking"):
        evaluate("negplugins-demo", tied_run, ties="trec_eval")


def test_diagnostics_score_their_removals_with_the_tie_handling(mirror, tmp_path):
    import dataset_fixtures as fx

    fx.write_boolquestions(mirror)
    # boolquestions/nq (fixture): nq1 {101: 1, 102: -1}, nq2 {101: 1, 103: 1}, nq3 {103: 1, 102: -1}; titles
    # "Title <id>". nq1 ties its positive 101 with 102; nq2 has 104 above 103, which the removal takes out
    run = tmp_path / "nq.trec"
    run.write_text("nq1 Q0 102 1 1.0 t\nnq1 Q0 101 2 1.0 t\nnq2 Q0 104 1 2.0 t\nnq2 Q0 103 2 1.0 t\n"
                   "nq3 Q0 103 1 1.0 t\n", encoding="utf-8")
    # without 104, RR@10: nq1 1 stock (101 first, doc id ascending) or 1/2 in the one ranking; nq2 1; nq3 1
    for ties, expected in (("stock", 1.0), ("one-ranking", 2.5 / 3)):
        diag = diagnose("boolquestions/nq", [run], without=["title=Title 104"], measures=["RR@10"], ties=ties)
        (removal,) = diag.removals
        (ev,) = removal.evaluations
        assert ev.ties == ties and ev.overall["RR@10"] == pytest.approx(expected)
    with pytest.raises(UserError, match="unknown tie handling"):
        diagnose("boolquestions/nq", [run], without=["title=Title 104"], ties="x")
