"""Default measure sets per benchmark family, per-subset breakdowns and BoolQuestions' pooled NegRecall."""

import json
import math

import dataset_fixtures as fx
import pytest

from ir_datasets_ext import benchmarks
from negplugins.evaluation.scoring import default_measures, evaluate, evaluate_runs


@pytest.mark.parametrize("dataset_id, expected", [
    ("excluir/test", ["R@1", "RR@10", "DeltaR@1", "DeltaMRR@10", "RightRank@10"]),
    ("nevir/test", ["PairedAcc"]),
    ("nevir/dev", ["PairedAcc"]),
    ("boolquestions/msmarco", ["PosRR@10", "NegRecall(conflict=2)@10"]),
    ("boolquestions/nq/not", ["PosRR@10", "NegRecall(conflict=2)@10"]),
    ("dureader-retrieval/dev", ["RR@10", "Success@1", "Success@50"]),
    ("dureader-retrieval/dev-100k", ["RR@10", "Success@1", "Success@50"]),
    ("negplugins-demo", ["nDCG@10", "RR@10", "RightRank@10", "DeltaMRR@10", "PairedAcc", "NegRecall@10"]),
    ("msmarco-passage/dev", ["nDCG@10", "RR@10", "R@100"]),
])
def test_default_measures_by_family(dataset_id, expected):
    measures, notes = default_measures(dataset_id, {"q": {"d": 1, "e": -1}})
    assert measures == expected and notes == []


def test_comlq_adds_lsnc_only_with_negatives():
    measures, notes = default_measures("comlq", {"0": {"1": 2}, "1": {"2": 1}})
    assert measures == ["nDCG@10", "RR@10", "R@100"]
    assert len(notes) == 1 and "LSNC@100" in notes[0] and "no explicit negative" in notes[0]
    measures, notes = default_measures("comlq/negation", {"0": {"1": 2, "3": -1}})
    assert measures == ["nDCG@10", "RR@10", "R@100", "LSNC@100"] and notes == []
    assert default_measures("comlq/pin", {"0": {"1": 2, "3": -1}}) == (measures, [])
    # comlq mixes queries without negation: the paper's set is not the whole qrels
    measures, notes = default_measures("comlq", {"0": {"1": 2, "3": -1}, "1": {"2": 1}})
    assert measures == ["nDCG@10", "RR@10", "R@100", "LSNC(over='labelled')@100"]
    assert len(notes) == 1 and "LSNC@100 on comlq/negation" in notes[0]
    assert [spec.name for spec in benchmarks()] == ["comlq", "excluir", "nevir", "boolquestions",
                                                    "dureader-retrieval", "negconstraint", "negplugins-demo"]


def test_excluir_defaults_on_fixture(mirror, trec, tmp_path):
    fx.write_excluir(mirror)
    import ir_datasets

    dataset = ir_datasets.load("excluir/test")
    qrels = {}
    for q in dataset.qrels_iter():
        qrels.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    # query 1: positive first; 2: negative first; 3: only the negative retrieved
    ids = sorted(qrels)
    ranking = {}
    for n, qid in enumerate(ids):
        pos = next(d for d, r in qrels[qid].items() if r > 0)
        neg = next(d for d, r in qrels[qid].items() if r < 0)
        ranking[qid] = [[pos, neg], [neg, pos], [neg]][n]
    run = trec(tmp_path / "x.trec", ranking)
    result = evaluate("excluir/test", run)
    assert result.measures == ["R@1", "RR@10", "DeltaR@1", "DeltaMRR@10", "RightRank@10"]
    assert result.overall["R@1"] == pytest.approx(1 / 3)
    assert result.overall["RR@10"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert result.overall["RightRank@10"] == pytest.approx(1 / 3)
    assert result.overall["DeltaMRR@10"] == pytest.approx(((1 - 0.5) + (0.5 - 1) + (0 - 1)) / 3)


def test_nevir_paired_accuracy_on_fixture(mirror, trec, tmp_path):
    fx.write_nevir(mirror)
    import ir_datasets

    dataset = ir_datasets.load("nevir/test")
    qrels = {}
    for q in dataset.qrels_iter():
        qrels.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    ranking = {qid: sorted(docs, key=lambda d: -docs[d]) for qid, docs in qrels.items()}  # all correct
    result = evaluate("nevir/test", trec(tmp_path / "x.trec", ranking))
    assert result.measures == ["PairedAcc"] and result.overall["PairedAcc"] == 1.0


def test_boolquestions_pooled_negrecall(mirror, trec, tmp_path):
    """NegRecall over all questions is pooled over those with negatives, not a mean of the type scores;
    MRR@10 (PosRR) leaves out the question without a positive; a passage listed as both is a positive for
    PosRR and a negative for NegRecall(conflict=2), as in the authors' evaluate.py."""
    fx.write_boolquestions(mirror)
    # msmarco: q1 (and) negative 11 retrieved; q2 (or) no negatives; q3 (not) negatives 10 -> not retrieved;
    # q4 (not) negative 14 retrieved; q5 (not) 15 both positive and negative, retrieved first, 11 not;
    # q6 (and) negative 13 only, retrieved; q7 (or) only a null negative, so no negative here
    run = trec(tmp_path / "bq.trec", {"1": ["10", "11"], "2": ["12", "10"], "3": ["12", "13"], "4": ["13", "14"],
                                      "5": ["15", "12"], "6": ["13"], "7": ["10", "14"]})
    result = evaluate("boolquestions/msmarco", run)
    negrecall, posrr = "NegRecall(conflict=2)@10", "PosRR@10"
    assert result.breakdown_field == "question_type"
    # pooled over q1 (1/1), q3 (0/1), q4 (1/1), q5 (1/2: 15 of {15, 11}), q6 (1/1)
    assert result.overall[negrecall] == pytest.approx((1 + 0 + 1 + 0.5 + 1) / 5)
    assert result.counts[negrecall] == 5
    subsets = result.subsets
    assert subsets["and"][negrecall] == 1.0
    assert subsets["not"][negrecall] == pytest.approx((0 + 1 + 0.5) / 3)
    assert math.isnan(subsets["or"][negrecall])  # no question with (non-null) negatives
    type_mean = (subsets["and"][negrecall] + subsets["not"][negrecall]) / 2
    assert result.overall[negrecall] != pytest.approx(type_mean)
    # every question with a positive (not q6) has it first, except q7 (second)
    assert result.overall[posrr] == pytest.approx((5 + 0.5) / 6) and result.counts[posrr] == 6
    assert json.loads(result.to_json())["subsets"]["or"][negrecall] is None
    plain = evaluate("boolquestions/msmarco", run, measures=["RR@10", "NegRecall@10"])
    assert plain.overall["RR@10"] == pytest.approx((5 + 0.5) / 7)  # q6 counted as 0
    assert plain.overall["NegRecall@10"] == pytest.approx((1 + 0 + 1 + 0 + 1) / 5)  # q5: 11 only


def test_demo_defaults_and_subsets(trec, tmp_path):
    run = trec(tmp_path / "demo.trec", {"q01": ["d01", "d02"], "q05": ["d10", "d09"], "q06": ["d10", "d09"]})
    result = evaluate("negplugins-demo", run, per_query=True)
    assert result.measures == ["nDCG@10", "RR@10", "RightRank@10", "DeltaMRR@10", "PairedAcc", "NegRecall@10"]
    assert result.breakdown_field == "kind"
    assert list(result.subsets) == ["exclusion", "negation-pair", "and", "or", "not"]
    # judged queries missing from the run count as 0 for standard measures
    assert result.per_query["RR@10"]["q21"] == 0.0
    assert len(result.per_query["RR@10"]) == 21
    # negation measures only for eligible queries: q21 has no negative
    assert "q21" not in result.per_query["NegRecall@10"]
    assert result.per_query["RightRank@10"]["q01"] == 1.0 and result.per_query["RightRank@10"]["q05"] == 0.0
    # the pair (q05, q06) is wrong because q05 ranks its negative first
    assert result.per_query["PairedAcc"]["q05"] == 0.0 == result.per_query["PairedAcc"]["q06"]


def test_any_measure_on_request(trec, tmp_path):
    run = trec(tmp_path / "demo.trec", {"q01": ["d01", "d02"]})
    result = evaluate("negplugins-demo", run, measures=["P@1", "LSNC_100", "AP"])
    assert result.measures == ["P@1", "LSNC@100", "AP"]
    assert result.overall["P@1"] == pytest.approx(1 / 21)


def test_unknown_measure_is_user_error(trec, tmp_path):
    from negplugins.errors import UserError

    run = trec(tmp_path / "demo.trec", {"q01": ["d01"]})
    with pytest.raises(UserError, match="unknown measure"):
        evaluate("negplugins-demo", run, measures=["RightRnak@10"])


def test_comlq_real_release_note(comlq_mirror, trec, tmp_path):
    run = trec(tmp_path / "c.trec", {"0": ["10000"], "3197": ["13756", "10000"]})
    result = evaluate("comlq", run)
    assert result.measures == ["nDCG@10", "RR@10", "R@100"]
    assert any("LSNC@100" in note for note in result.notes)
    assert len(result.subsets) == 14 and result.breakdown_field == "structure"


def test_comparison_same_queries(trec, tmp_path):
    a = trec(tmp_path / "a.trec", {"q01": ["d01", "d02"], "q02": ["d04", "d03"]})
    b = trec(tmp_path / "b.trec", {"q01": ["d02", "d01"], "q02": ["d03", "d04"], "q03": ["d06"]})
    cmp = evaluate_runs("negplugins-demo", [a, b], measures=["RR@10", "RightRank@10"], per_query=True)
    assert cmp.tests[0] is None
    test = cmp.tests[1]
    assert test["RR@10"]["n"] == 21  # every judged query, zeros for missing ones
    assert test["RightRank@10"]["n"] == 20  # queries with a positive and a negative
    diffs = [cmp.evaluations[1].per_query["RR@10"][q] - cmp.evaluations[0].per_query["RR@10"][q]
             for q in cmp.evaluations[0].per_query["RR@10"]]
    assert test["RR@10"]["mean_diff"] == pytest.approx(sum(diffs) / len(diffs))
    cmp2 = evaluate_runs("negplugins-demo", [a, b], measures=["RR@10"], baseline="b.trec")
    assert cmp2.baseline == 1 and cmp2.tests[1] is None
