"""PyTerrier's pt.Experiment with mixed standard and negation measures gives negplugins evaluate's numbers."""

import math

import pytest

pt = pytest.importorskip("pyterrier")
pd = pytest.importorskip("pandas")

import ir_datasets  # noqa: E402

from negplugins.evaluation.scoring import evaluate  # noqa: E402

MEASURES = ["nDCG@10", "RR@10", "RightRank@10", "DeltaMRR@10", "NegRecall@10", "PairedAcc", "LSNC@100"]


def demo_run(tmp_path, trec):
    """A run over the demo with ties: every query's judged documents, negatives first on some queries."""
    dataset = ir_datasets.load("negplugins-demo")
    ranking = {}
    for i, query in enumerate(dataset.queries_iter()):
        judged = sorted((q.doc_id, q.relevance) for q in dataset.qrels_iter() if q.query_id == query.query_id)
        docs = [d for d, _ in sorted(judged, key=lambda item: item[1] * (1 if i % 2 else -1))]
        ranking[query.query_id] = docs + ["d01", "d02"] * (not set(docs) & {"d01", "d02"})
    return trec(tmp_path / "run.trec", ranking)


def frame(path):
    rows = [line.split() for line in open(path, encoding="utf-8")]
    return pd.DataFrame([(q, d, float(s)) for q, _, d, _, s, _ in rows], columns=["qid", "docno", "score"])


def test_experiment_mixed_measures_match_negplugins_evaluate(tmp_path, trec):
    import ir_measures

    run = demo_run(tmp_path, trec)
    dataset = pt.get_dataset("irds:negplugins-demo")
    topics, qrels = dataset.get_topics(), dataset.get_qrels()
    assert "query" in topics.columns  # no variant needed
    table = pt.Experiment([frame(run)], topics, qrels, names=["run"],
                          eval_metrics=[ir_measures.parse_measure(m) for m in MEASURES])
    expected = evaluate("negplugins-demo", run, measures=MEASURES).overall
    row = table.iloc[0]
    for measure in MEASURES:
        assert row[measure] == pytest.approx(expected[measure], abs=1e-12), measure


def test_experiment_keeps_a_measure_no_query_is_eligible_for(tmp_path):
    # qrels without negatives (as ComLQ's release): the negation measure stays in the table, as NaN
    qrels = pd.DataFrame([("q1", "a", 1), ("q2", "b", 1)], columns=["qid", "docno", "label"])
    run = pd.DataFrame([("q1", "a", 1.0), ("q1", "b", 1.0), ("q2", "a", 2.0), ("q2", "b", 1.0)],
                       columns=["qid", "docno", "score"])
    topics = pd.DataFrame({"qid": ["q1", "q2"], "query": ["x", "y"]})
    import ir_measures

    table = pt.Experiment([run], topics, qrels, names=["r"],
                          eval_metrics=[ir_measures.nDCG @ 10, ir_measures.parse_measure("RightRank@10")])
    assert math.isnan(table.iloc[0]["RightRank@10"])
    # hand computed: q1's a and b tie, stock pytrec_eval (as the one ranking) puts b first; q2 ranks b second
    assert table.iloc[0]["nDCG@10"] == pytest.approx(1 / math.log2(3))


def test_experiment_batches_and_per_query(tmp_path, trec):
    import ir_measures

    run = frame(demo_run(tmp_path, trec))
    dataset = pt.get_dataset("irds:negplugins-demo")
    measures = [ir_measures.nDCG @ 10, ir_measures.parse_measure("RightRank@10")]
    means = pt.Experiment([run], dataset.get_topics(), dataset.get_qrels(), eval_metrics=measures, names=["r"])
    per_query = pt.Experiment([run], dataset.get_topics(), dataset.get_qrels(), eval_metrics=measures,
                              names=["r"], perquery=True)
    right_rank = per_query[per_query.measure == "RightRank@10"].value
    assert right_rank.isna().any() and means.iloc[0]["RightRank@10"] == pytest.approx(right_rank.dropna().mean())


@pytest.mark.parametrize("dataset_id", ["negplugins-demo"])
def test_topics_query_column_equals_text(dataset_id):
    topics = pt.get_dataset(f"irds:{dataset_id}").get_topics()
    assert (topics["query"] == topics["text"]).all()
