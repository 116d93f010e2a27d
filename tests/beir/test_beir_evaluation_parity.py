"""BEIR's EvaluateRetrieval and the suite's evaluation agree on the standard measures.

Conventions (see :mod:`negplugins.beir`): BEIR drops retrieved documents whose id equals the query id
unless ``ignore_identical_ids=False``; BEIR averages over the judged queries present in the results,
ir_measures over all judged queries; both give ``-1`` labels a gain of 0 (pytrec_eval), and BEIR's
``mrr`` keeps only labels above 0, as ir_measures' ``RR``.
"""

from __future__ import annotations

import copy
import random

import ir_measures
import pytest

from negplugins import datasets
from negplugins.beir.results import results_to_run
from negplugins.evaluation.scoring import evaluate
from negplugins.io.trec import read_run

EvaluateRetrieval = pytest.importorskip("beir.retrieval.evaluation").EvaluateRetrieval


def synthetic_results(dataset_id, extra_docs=20, seed=1):
    """Judged documents (negatives pushed up) plus random ones, distinct random scores, every judged query."""
    dataset = datasets.load(dataset_id)
    qrels = datasets.qrels_dict(dataset)
    docs = sorted(doc.doc_id for doc in dataset.docs_iter())
    rng = random.Random(seed)
    results = {}
    for query_id, judged in qrels.items():
        scores = {doc_id: rng.random() for doc_id in rng.sample(docs, min(extra_docs, len(docs)))}
        for doc_id, label in judged.items():
            scores[doc_id] = rng.random() + (0.5 if label < 0 else 0.0)
        results[query_id] = scores
    return qrels, results


def beir_scores(qrels, run, **kwargs):
    ndcg, _, recall, _ = EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), [10, 100], **kwargs)
    mrr = EvaluateRetrieval.evaluate_custom(qrels, run, [10], "mrr")
    return {"nDCG@10": ndcg["NDCG@10"], "R@100": recall["Recall@100"], "RR@10": mrr["MRR@10"]}


def assert_parity(dataset_id, tmp_path, **kwargs):
    qrels, results = synthetic_results(dataset_id, **kwargs)
    run_path = tmp_path / "run.trec"
    results_to_run(results, dataset_id, run_path, system="synthetic")
    run = read_run(run_path)  # what both sides score: the written run, six decimals
    ours = evaluate(dataset_id, run_path, measures=["nDCG@10", "R@100", "RR@10"]).overall
    theirs = beir_scores(qrels, run, ignore_identical_ids=False)
    for measure in ("nDCG@10", "R@100", "RR@10"):
        assert ours[measure] == pytest.approx(theirs[measure], abs=1e-5), measure  # BEIR rounds to 5 decimals
    # No query id is a document id, so BEIR's default (dropping identical ids) changes nothing.
    assert beir_scores(qrels, run) == theirs
    return ours, theirs


def test_parity_on_demo_with_explicit_negatives(tmp_path):
    qrels = datasets.qrels_dict(datasets.load("negplugins-demo"))
    assert any(label == -1 for judged in qrels.values() for label in judged.values())
    ours, _ = assert_parity("negplugins-demo", tmp_path)
    assert 0 < ours["nDCG@10"] < 1


def test_negative_labels_count_as_zero_in_beir_and_ir_measures():
    qrels, results = synthetic_results("negplugins-demo")
    zeroed = {q: {d: max(label, 0) for d, label in judged.items()} for q, judged in qrels.items()}
    assert beir_scores(qrels, results) == beir_scores(zeroed, results)
    measures = [ir_measures.nDCG @ 10, ir_measures.R @ 100, ir_measures.RR @ 10]

    def flat(q):
        return [ir_measures.Qrel(qid, did, label) for qid, judged in q.items() for did, label in judged.items()]

    assert ir_measures.calc_aggregate(measures, flat(qrels), results) == \
        ir_measures.calc_aggregate(measures, flat(zeroed), results)


def test_identical_ids_convention():
    qrels = {"1": {"1": 1, "7": 1}, "2": {"3": 1}}
    run = {"1": {"1": 0.9, "5": 0.8, "7": 0.7}, "2": {"3": 0.9, "2": 0.8}}
    suite = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.RR @ 10],
                                       [ir_measures.Qrel(q, d, r) for q, j in qrels.items() for d, r in j.items()], run)
    kept = EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), [10], ignore_identical_ids=False)[0]
    dropped = EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), [10])[0]
    assert kept["NDCG@10"] == pytest.approx(suite[ir_measures.nDCG @ 10], abs=1e-5)
    assert dropped["NDCG@10"] < kept["NDCG@10"]  # BEIR's default removed the relevant document "1" of query "1"
    mutated = copy.deepcopy(run)
    EvaluateRetrieval.evaluate(qrels, mutated, [10])
    assert "1" not in mutated["1"]  # ... from the caller's results, in place


def test_queries_missing_from_the_results_convention():
    qrels, results = synthetic_results("negplugins-demo")
    partial = dict(list(results.items())[1:])
    beir = EvaluateRetrieval.evaluate(qrels, copy.deepcopy(partial), [10], ignore_identical_ids=False)[0]["NDCG@10"]
    flat = [ir_measures.Qrel(q, d, r) for q, j in qrels.items() for d, r in j.items()]
    suite = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], flat, partial)[ir_measures.nDCG @ 10]
    per_query = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], flat, partial)}
    # BEIR averages over the queries it got results for; ir_measures counts the missing one as 0.
    assert beir == pytest.approx(sum(per_query[q] for q in partial) / len(partial), abs=1e-5)
    assert suite == pytest.approx(sum(per_query[q] for q in partial) / len(qrels))


@pytest.mark.realdata
def test_parity_on_comlq(tmp_path, comlq_mirror):
    ours, theirs = assert_parity("comlq", tmp_path, extra_docs=120, seed=7)
    assert 0 < ours["nDCG@10"] < 1 and ours["R@100"] < 1


@pytest.mark.realdata
def test_parity_on_comlq_bm25_run(comlq_mirror):
    """The project's ComLQ BM25 run (``negplugins search bm25 comlq``), when it has been produced."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "runs" / "comlq" / "bm25.trec.gz"
    if not path.is_file():
        pytest.skip(f"{path} not produced (negplugins search bm25 comlq --output {path})")
    qrels = datasets.qrels_dict(datasets.load("comlq"))
    run = read_run(path)
    ours = evaluate("comlq", path, measures=["nDCG@10", "R@100", "RR@10"]).overall
    one = evaluate("comlq", path, measures=["nDCG@10", "R@100", "RR@10"], ties="one-ranking").overall
    # The run holds 22 exact ties (Anserini's, see the README), written by doc id ascending. BEIR's own MRR code
    # keeps the order it is given: in the file's order it agrees with the suite's default, stock ir_measures'
    # RR@10 (msmarco provider, doc id ascending), 0.59134 / 0.591339; in the one ranking's order (doc id
    # descending) with --ties one-ranking, 0.5914 / 0.591396. Both BEIR values come from BEIR's code on this run;
    # stock trec_eval (Anserini's, doc id descending) gives 0.5914 (tests/pipeline/test_lucene_bm25.py).
    from negplugins.measures.ranking import canonical_order

    file_order = beir_scores(qrels, run, ignore_identical_ids=False)
    one_ranking = {q: {d: docs[d] for d in canonical_order(docs)} for q, docs in run.items()}
    theirs = beir_scores(qrels, one_ranking, ignore_identical_ids=False)
    for measure in ("nDCG@10", "R@100", "RR@10"):
        assert ours[measure] == pytest.approx(file_order[measure], abs=1e-5), measure
        assert one[measure] == pytest.approx(theirs[measure], abs=1e-5), measure
    assert file_order["RR@10"] == pytest.approx(0.59134, abs=1e-8) and theirs["RR@10"] == pytest.approx(0.5914, abs=1e-8)
    assert ours["RR@10"] == pytest.approx(0.591339, abs=1e-6) and one["RR@10"] == pytest.approx(0.591396, abs=1e-6)
    assert ours["nDCG@10"] == one["nDCG@10"] and ours["R@100"] == one["R@100"]
