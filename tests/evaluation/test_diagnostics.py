"""Diagnostics: shares of the top k per value of a document field, scores without some documents, negation split.

Expected values are computed by hand in the comments (small runs over the BoolQuestions fixture, whose NQ
passages carry a title), or, for the real ComLQ runs, by an independent reading of the run file (its rank
column) and of the origin id ranges of the ComLQ release notes (as docs/formats.md records them).
"""

import csv
import gzip
import io
import json
from collections import Counter
from pathlib import Path

import dataset_fixtures as fx
import pytest

from negplugins.cli import main
from negplugins.errors import UserError
from negplugins.evaluation import diagnostics
from negplugins.evaluation.diagnostics import diagnose, parse_without, top_k_shares, without_docs
from negplugins.evaluation.reports import render
from negplugins.evaluation.scoring import evaluate

FULL_RUN = Path(__file__).resolve().parents[2] / "runs" / "comlq" / "bm25.trec.gz"

# boolquestions/nq (fixture): qrels nq1 {101: 1, 102: -1} (and), nq2 {101: 1, 103: 1} (or), nq3 {103: 1, 102: -1} (not);
# every passage's title is "Title <id>"
NQ_RUN = {"nq1": ["102", "101", "104"], "nq2": ["104", "103", "101"], "nq3": ["102", "104", "103"]}


def test_top_k_shares_by_hand():
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d4": 0.5},
           "q2": {"d5": 1.0},
           "q3": {"d6": 1.0, "d7": 1.0}}  # a tie: the one ranking puts d7 first (doc id descending)
    values = {"d1": "a", "d2": "b", "d3": "a", "d4": "b", "d5": "a", "d6": "a", "d7": "b"}
    # k=3: q1 top d1 d2 d3 -> a 2/3, b 1/3; q2 has one result -> a 1; q3 -> d7 d6 -> a 1/2, b 1/2; q4 has no result
    shares, queries = top_k_shares(run, values, 3, ["q1", "q2", "q3", "q4"])
    assert queries == 3
    assert shares == pytest.approx({"a": (2 / 3 + 1 + 0.5) / 3, "b": (1 / 3 + 0 + 0.5) / 3})  # 13/18, 5/18
    # k=1: the tie decides q3 (d7, b)
    assert top_k_shares(run, values, 1, ["q3"]) == ({"b": 1.0}, 1)
    # a document the values do not know
    assert top_k_shares({"q": {"x": 1.0}}, {}, 10, ["q"]) == ({diagnostics.NOT_IN_CORPUS: 1.0}, 1)
    assert top_k_shares(run, values, 10, ["q9"]) == ({}, 0)


def test_without_docs_by_hand():
    run = {"q1": {"g1": 3.0, "e1": 2.0}, "q2": {"g1": 1.0}}
    qrels = {"q1": {"e1": 2, "g2": 1}, "q2": {"g1": 1}}
    values = {"g1": "generated", "g2": "generated", "e1": "evidence"}
    new_run, new_qrels, judged, dropped = without_docs(run, qrels, values, "generated")
    assert new_run == {"q1": {"e1": 2.0}}  # q2 retrieved only a removed document
    assert new_qrels == {"q1": {"e1": 2}}  # g2's judgement removed; q2 left without judgements
    assert (judged, dropped) == (2, 1)
    assert run["q1"] == {"g1": 3.0, "e1": 2.0}  # nothing modified in place


def test_parse_without():
    assert parse_without("origin=generated") == ("origin", "generated")
    assert parse_without("title=a=b") == ("title", "a=b")
    for bad in ("origin", "=x", "origin="):
        with pytest.raises(UserError, match="expected FIELD=VALUE"):
            parse_without(bad)


def _nq_run(tmp_path, trec):
    return trec(tmp_path / "nq.trec", NQ_RUN)


def test_diagnose_boolquestions_nq(mirror, tmp_path, trec):
    fx.write_boolquestions(mirror)
    run = _nq_run(tmp_path, trec)
    diag = diagnose("boolquestions/nq", [run], field="title", k=2, without=["title=Title 102"])
    (shares,) = diag.shares
    assert diag.values == ["Title 101", "Title 102", "Title 103", "Title 104"]
    # top 2: nq1 102 101, nq2 104 103, nq3 102 104 -> 101 1/6, 102 2/6, 103 1/6, 104 2/6
    assert shares.queries == 3
    assert shares.overall == pytest.approx({"Title 101": 1 / 6, "Title 102": 1 / 3, "Title 103": 1 / 6,
                                            "Title 104": 1 / 3})
    assert list(shares.subsets) == ["and", "or", "not"]
    assert shares.subsets["and"] == pytest.approx({"queries": 1, "Title 101": 0.5, "Title 102": 0.5, "Title 103": 0.0,
                                                   "Title 104": 0.0})
    assert shares.subsets["not"] == pytest.approx({"queries": 1, "Title 101": 0.0, "Title 102": 0.5, "Title 103": 0.0,
                                                   "Title 104": 0.5})
    (removal,) = diag.removals
    assert (removal.documents, removal.judged, removal.queries_dropped) == (1, 2, 0)  # 102: a negative of nq1 and nq3
    (ev,) = removal.evaluations
    # MRR@10 (PosRR@10) without 102: nq1 101 first (1), nq2 103 second (1/2), nq3 103 second (1/2) -> 2/3
    assert ev.overall["PosRR@10"] == pytest.approx(2 / 3)
    assert ev.subsets["not"]["PosRR@10"] == pytest.approx(0.5)
    assert ev.negation["negation"]["PosRR@10"] == pytest.approx(0.5)
    assert ev.negation["no negation"]["PosRR@10"] == pytest.approx(0.75)
    assert ev.counts["NegRecall(conflict=2)@10"] == 0  # no negative left to retrieve


def test_negation_split_boolquestions_nq(mirror, tmp_path, trec):
    fx.write_boolquestions(mirror)
    ev = evaluate("boolquestions/nq", _nq_run(tmp_path, trec))
    # PosRR@10: nq1 1/2, nq2 1/2, nq3 1/3; NegRecall@10: nq1 1 (102 retrieved), nq3 1, nq2 has no negative
    assert ev.overall["PosRR@10"] == pytest.approx(4 / 9)
    assert ev.negation_field == "question_type"
    assert ev.negation["negation"] == pytest.approx({"queries": 1, "PosRR@10": 1 / 3, "NegRecall(conflict=2)@10": 1.0})
    assert ev.negation["no negation"] == pytest.approx({"queries": 2, "PosRR@10": 0.5,
                                                        "NegRecall(conflict=2)@10": 1.0})
    assert "By negation (query field question_type)" in render(ev, "table")
    record = json.loads(render(ev, "json"))
    assert record["negation_split"]["groups"]["negation"]["queries"] == 1
    rows = list(csv.reader(io.StringIO(render(ev, "csv"))))
    assert ["nq.trec", "(negation)", "", "PosRR@10", "mean", repr(1 / 3)] in rows
    assert ["nq.trec", "(no negation)", "", "", "queries", "2"] in rows


def test_no_split_on_a_dataset_of_one_kind(mirror, tmp_path, trec):
    fx.write_boolquestions(mirror)
    ev = evaluate("boolquestions/nq/not", trec(tmp_path / "not.trec", {"nq3": NQ_RUN["nq3"]}))
    assert ev.negation == {} and "negation_split" not in ev.to_dict()


def test_evaluate_cli_diagnostics(mirror, tmp_path, trec, capsys):
    fx.write_boolquestions(mirror)
    run = str(_nq_run(tmp_path, trec))
    args = ["evaluate", "boolquestions/nq", run, "--by-doc-field", "title", "--by-doc-field-k", "2",
            "--without-docs", "title=Title 102"]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "Share of the top 2 by document title" in table and "Without title=Title 102: 1 documents removed" in table
    assert main([*args, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    shares = {r[3]: float(r[5]) for r in rows if r[1] == "all" and r[3].startswith("share@2") and r[4] == "mean"}
    assert shares == pytest.approx({"share@2[title=Title 101]": 1 / 6, "share@2[title=Title 102]": 1 / 3,
                                    "share@2[title=Title 103]": 1 / 6, "share@2[title=Title 104]": 1 / 3})
    without = [r for r in rows if r[3] == "PosRR@10[without title=Title 102]" and r[1] == "all" and r[4] == "mean"]
    assert [float(r[5]) for r in without] == pytest.approx([2 / 3])
    assert main([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["diagnostics"]["by_doc_field"]["runs"][0]["overall"]["Title 102"] == pytest.approx(1 / 3)
    assert record["diagnostics"]["without_docs"][0]["runs"][0]["overall"]["PosRR@10"] == pytest.approx(2 / 3)
    assert main([*args, "--format", "latex"]) == 2
    assert "not written as LaTeX" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--by-doc-field", "colour"], "--by-doc-field: the documents of boolquestions/nq have no field 'colour'; "
                                   "their fields: text, title"),
    (["--without-docs", "title"], "--without-docs: expected FIELD=VALUE"),
    (["--without-docs", "title=Title 999"], "no document of boolquestions/nq has title='Title 999'"),
    (["--by-doc-field-k", "3"], "--by-doc-field-k needs --by-doc-field"),
])
def test_evaluate_cli_diagnostics_errors(mirror, tmp_path, trec, capsys, extra, message):
    fx.write_boolquestions(mirror)
    assert main(["evaluate", "boolquestions/nq", str(_nq_run(tmp_path, trec)), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_field_that_is_not_categorical(mirror, tmp_path, trec, monkeypatch):
    fx.write_boolquestions(mirror)
    monkeypatch.setattr(diagnostics, "MAX_VALUES", 3)  # the 4 NQ passages have 4 texts
    with pytest.raises(UserError, match="more than 3 distinct values of 'text'; a categorical field is expected"):
        diagnose("boolquestions/nq", [_nq_run(tmp_path, trec)], field="text")


def _origin(doc_id: str) -> str:
    """ComLQ's id ranges, from the release notes (docs/formats.md), independently of the dataset module."""
    number = int(doc_id)
    return "evidence" if number <= 13974 else "distractor" if number <= 17974 else "generated"


def test_comlq_origin_shares_match_an_independent_count(comlq_mirror):
    """The committed BM25 run: shares recomputed from the file's rank column and the documented id ranges."""
    per_query = {}
    with gzip.open(FULL_RUN, "rt") as f:
        for line in f:
            query_id, _, doc_id, rank, _, _ = line.split()
            if int(rank) <= 10:
                per_query.setdefault(query_id, Counter())[_origin(doc_id)] += 1
    expected = {o: sum(c[o] / sum(c.values()) for c in per_query.values()) / len(per_query)
                for o in ("distractor", "evidence", "generated")}
    diag = diagnose("comlq", [FULL_RUN], field="origin", without=["origin=generated"])
    (shares,) = diag.shares
    assert shares.queries == len(per_query) == 2909
    assert shares.overall == pytest.approx(expected, abs=1e-12)
    assert sum(shares.overall.values()) == pytest.approx(1.0)
    (removal,) = diag.removals
    assert (removal.documents, removal.judged) == (3276, 0)  # 17975-21250; no generated passage is judged
    (ev,) = removal.evaluations
    whole = evaluate("comlq", FULL_RUN)
    assert ev.overall["R@100"] == pytest.approx(whole.overall["R@100"])  # the run's depth does not grow
    assert ev.overall["nDCG@10"] > whole.overall["nDCG@10"]


def test_comlq_negation_split(comlq_mirror):
    ev = evaluate("comlq", FULL_RUN)
    # 2in 278 + 3in 271 + inp 173 + pin 140 + pni 122 = 984 negation queries (the per-structure counts)
    assert ev.negation["negation"]["queries"] == 984 and ev.negation["no negation"]["queries"] == 2909 - 984
    subsets = ev.subsets
    negation = ("2in", "3in", "inp", "pin", "pni")
    mean = sum(subsets[s]["nDCG@10"] * subsets[s]["queries"] for s in negation) / 984
    assert ev.negation["negation"]["nDCG@10"] == pytest.approx(mean)
    assert evaluate("comlq/negation", FULL_RUN).negation == {}
