"""Ties and near ties: the suite's measures in the one ranking, standard measures exactly stock.

Every measure of every default measure set (each benchmark spec's ``measures``, plus ComLQ's LSNC@100) is
computed on crafted runs full of exact ties and near ties (1e-7 and 1e-9 apart, which collapse in single
precision) through ``ir_measures.iter_calc`` (msmarco provider for RR@k, pytrec_eval for nDCG / R / Success, the
suite's provider for its own measures) and through ``negplugins evaluate`` on the same run written to a TREC
file at full precision, with ``--ties stock`` (the default) and ``--ties one-ranking``. The expected values
come from the plain reference below, written in this file from docs/measures.md: the one ranking (score
descending at full precision, ties by doc_id descending) for the suite's measures, and for every measure with
``one-ranking``; with ``stock``, each standard measure in its stock provider's order (RR@k: full precision, ties
by doc_id ascending; pytrec_eval: single-precision scores, ties by doc_id descending). That the stock order is
what a process without the suite computes is checked in tests/measures/test_stock_measures_untouched.py.
"""

import ast
import gzip
import math
import random
import re
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import ScoredDoc

from ir_datasets_ext import benchmarks
from negplugins.evaluation.scoring import evaluate
from negplugins.measures import MEASURES
from negplugins.measures.ranking import NonFiniteScoreError, canonical_order, canonical_run

REPO = Path(__file__).resolve().parents[2]
ALL_DEFAULT_MEASURES = sorted({m for spec in benchmarks() for m in spec.measures.names}
                              | {"LSNC@100", "LSNC(over='labelled')@100"})
BASE = 10.0
# exact ties, and near ties that single precision cannot tell apart (float32(10 + 1e-7) == float32(10))
SCORES = (BASE, BASE, BASE + 1e-7, BASE - 1e-7, BASE + 1e-9, BASE + 2e-9, BASE - 1e-9, 9.0, 11.0)
SUITE_NAMES = {m.NAME for m in MEASURES}


# -- the reference -----------------------------------------------------------------------------------

def reference_ranking(scored_docs):
    """Doc ids by score descending, ties by doc id descending (plain tuple sort)."""
    return [doc for score, doc in sorted(((s, d) for d, s in scored_docs.items()), reverse=True)]


def stock_ranking(measure, scored_docs):
    """The order stock ir_measures 0.4.3 scores ``measure`` in (docs/measures.md, "Ties").

    RR@k (msmarco provider): score descending at full precision, ties by doc id ascending. The others here
    (pytrec_eval): trec_eval's order on scores converted to single precision, ties by doc id descending.
    """
    name, _, cutoff = parse_name(measure)
    if name == "RR" and cutoff is not None:
        return [doc for doc, _ in sorted(scored_docs.items(), key=lambda item: (-item[1], item[0]))]
    single = {doc: float(np.float32(score)) for doc, score in scored_docs.items()}
    return reference_ranking(single)


def expected_ranking(measure, scored_docs, ties):
    """The suite's measures, and every measure with ``ties="one-ranking"``: the one ranking; else stock."""
    if ties == "one-ranking" or parse_name(measure)[0] in SUITE_NAMES:
        return reference_ranking(scored_docs)
    return stock_ranking(measure, scored_docs)


def parse_name(measure):
    """``"NegRecall(conflict=2)@10"`` -> ``("NegRecall", {"conflict": 2}, 10)`` (cutoff None without @)."""
    match = re.fullmatch(r"(\w+)(?:\((.*)\))?(?:@(\d+))?", measure)
    name, params, cutoff = match.groups()
    values = {}
    for item in filter(None, (params or "").split(",")):
        key, _, value = item.partition("=")
        values[key.strip()] = ast.literal_eval(value.strip())
    return name, values, int(cutoff) if cutoff else None


def reference_value(measure, judged, scored_docs, ties="stock"):
    """The per-query value of ``measure`` ("RR@10", "PairedAcc", ...), None where undefined.

    ``judged`` is doc_id -> relevance; PairedAcc is computed elsewhere (it needs the pair).
    """
    name, params, k = parse_name(measure)
    ranking = expected_ranking(measure, scored_docs, ties)
    top = ranking[:k]
    positives = {d for d, r in judged.items() if r > 0}
    negatives = {d for d, r in judged.items() if r < 0}
    if name == "NegRecall" and "conflict" in params:  # a positive label that also counts as a negative
        negatives |= {d for d, r in judged.items() if r == params["conflict"]}
    first_pos = next((i + 1 for i, d in enumerate(top) if d in positives), None)
    first_neg = next((i + 1 for i, d in enumerate(top) if d in negatives), None)
    if name == "RR":
        return 1 / first_pos if first_pos else 0.0
    if name == "PosRR":  # RR averaged over the queries with a positive only
        return (1 / first_pos if first_pos else 0.0) if positives else None
    if name == "Success":
        return 1.0 if first_pos else 0.0
    if name == "R":
        return sum(d in positives for d in top) / len(positives) if positives else 0.0
    if name == "AP":  # trec_eval's map_cut: precision at each positive in the top k, over all positives
        ranks = [i + 1 for i, d in enumerate(top) if d in positives]
        return sum(n / rank for n, rank in enumerate(ranks, start=1)) / len(positives) if positives else 0.0
    if name == "nDCG":
        dcg = sum(max(judged.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(top))
        ideal = sorted((r for r in judged.values() if r > 0), reverse=True)[:k]
        idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
        return dcg / idcg if idcg else 0.0
    if name in ("DeltaMRR", "DeltaR", "RightRank"):
        if not (positives and negatives):
            return None
        if name == "DeltaMRR":
            return (1 / first_pos if first_pos else 0.0) - (1 / first_neg if first_neg else 0.0)
        if name == "DeltaR":
            return sum(d in positives for d in top) / len(positives) - sum(d in negatives for d in top) / len(negatives)
        return 1.0 if first_pos and (first_neg is None or first_pos < first_neg) else 0.0
    if name in ("NegRecall", "LSNC"):
        # LSNC's default over='judged' scores every judged query (V = 0 without negatives); 'labelled' and
        # NegRecall only those with a negative
        if not negatives and not (name == "LSNC" and params.get("over", "judged") == "judged"):
            return None
        violations = sum(d in negatives for d in top)
        if name == "NegRecall":
            return violations / len(negatives)
        return -math.log((violations + 1) / (k + 1)) / math.log(k + 1)
    raise AssertionError(measure)


def reference_paired(qrels, run):
    """PairedAcc per query: both queries of a mirrored pair score their positive strictly above the negative."""
    values = {}
    for q1, judged in qrels.items():
        pos = [d for d, r in judged.items() if r > 0]
        neg = [d for d, r in judged.items() if r < 0]
        if len(judged) != 2 or len(pos) != 1 or len(neg) != 1:
            continue
        mirrors = [q2 for q2, j2 in qrels.items() if len(j2) == 2 and j2.get(neg[0], 0) > 0 and j2.get(pos[0], 0) < 0]
        same = [q for q, j in qrels.items() if len(j) == 2 and j.get(pos[0], 0) > 0 and j.get(neg[0], 0) < 0]
        if len(mirrors) != 1 or len(same) != 1:
            continue
        q2 = mirrors[0]

        def right(q, p, n):
            scores = run.get(q, {})
            return scores.get(p, -math.inf) > scores.get(n, -math.inf)

        values[q1] = float(right(q1, pos[0], neg[0]) and right(q2, neg[0], pos[0]))
    return values


def reference(measures, qrels, run, ties="stock"):
    values = {}
    for measure in measures:
        if measure == "PairedAcc":
            values[measure] = reference_paired(qrels, run)
            continue
        column = {}
        for query_id, judged in qrels.items():
            value = reference_value(measure, judged, run.get(query_id, {}), ties)
            if value is not None:
                column[query_id] = value
        values[measure] = column
    return values


# -- helpers -----------------------------------------------------------------------------------------

def per_query(metrics):
    values = {}
    for metric in metrics:
        if not math.isnan(metric.value):
            values.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    return values


def assert_same(got, expected):
    assert got.keys() == expected.keys()
    for measure in expected:
        assert got[measure].keys() == expected[measure].keys(), measure
        for query_id, value in expected[measure].items():
            assert got[measure][query_id] == pytest.approx(value, abs=1e-12), (measure, query_id)


def write_full_precision(path, run):
    """A TREC run with repr() scores (full precision), ranks in the one ranking."""
    with open(path, "w", encoding="utf-8") as f:
        for query_id, scored_docs in run.items():
            for rank, doc_id in enumerate(reference_ranking(scored_docs), start=1):
                f.write(f"{query_id} Q0 {doc_id} {rank} {scored_docs[doc_id]!r} t\n")
    return path


@pytest.fixture(scope="module")
def demo():
    import ir_datasets

    dataset = ir_datasets.load("negplugins-demo")
    qrels = {}
    for qrel in dataset.qrels_iter():
        qrels.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    return qrels, [doc.doc_id for doc in dataset.docs_iter()]


def tied_run(qrels, doc_ids, seed):
    """Each judged doc and a few unjudged ones scored from SCORES: many exact ties and near ties."""
    rng = random.Random(seed)
    run = {}
    for query_id, judged in qrels.items():
        docs = set(judged) | set(rng.sample(doc_ids, 4))
        if rng.random() < 0.15:
            docs.discard(rng.choice(sorted(judged)))  # a judged document missing from the run
        run[query_id] = {doc: rng.choice(SCORES) for doc in sorted(docs)}
    return run


# -- the tests ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(12))
def test_every_default_measure_on_ties_and_near_ties(tmp_path, demo, seed):
    qrels, doc_ids = demo
    run = tied_run(qrels, doc_ids, seed)
    stock = reference(ALL_DEFAULT_MEASURES, qrels, run)
    one_ranking = reference(ALL_DEFAULT_MEASURES, qrels, run, ties="one-ranking")
    assert any(len(set(scores.values())) < len(scores) for scores in run.values())  # exact ties present
    assert all(stock[m] for m in ("PairedAcc", "DeltaMRR@10", "NegRecall@10", "LSNC@100"))  # all exercised
    assert stock["RR@10"] != one_ranking["RR@10"] or stock["R@1"] != one_ranking["R@1"]  # the ties matter
    parsed = [ir_measures.parse_measure(m) for m in ALL_DEFAULT_MEASURES]

    # ir_measures with the suite registered: standard measures stock, the suite's in the one ranking
    assert_same(per_query(ir_measures.iter_calc(parsed, qrels, run)), stock)
    frame = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                         columns=["query_id", "doc_id", "score"])
    assert_same(per_query(ir_measures.iter_calc(parsed, qrels, frame)), stock)
    # every provider given the one ranking's distinct scores scores the one ranking (PairedAcc aside: scores)
    ranked = reference(ALL_DEFAULT_MEASURES, qrels, canonical_run(run), ties="one-ranking")
    assert_same({m: v for m, v in per_query(ir_measures.iter_calc(parsed, qrels, canonical_run(run))).items()},
                ranked)
    assert {m: v for m, v in ranked.items() if m != "PairedAcc"} == {
        m: v for m, v in one_ranking.items() if m != "PairedAcc"}

    path = write_full_precision(tmp_path / "run.trec", run)
    for ties, expected in (("stock", stock), ("one-ranking", one_ranking)):
        result = evaluate("negplugins-demo", path, measures=ALL_DEFAULT_MEASURES, per_query=True, ties=ties)
        assert result.ties == ties
        assert_same({m: v for m, v in result.per_query.items() if v}, {m: v for m, v in expected.items() if v})


@pytest.mark.parametrize("gap", [0.0, 1e-7, 1e-9])
def test_graded_qrels_with_ties_and_near_ties(gap):
    # graded labels (ComLQ's 2), a negative, and two positives separated by ``gap`` or tied
    qrels = {"q": {"p1": 2, "p2": 1, "n": -1, "u": 0}}
    run = {"q": {"p1": 5.0, "p2": 5.0 + gap, "n": 5.0 + gap, "x": 5.0 + gap, "u": 4.0}}
    measures = ["nDCG@10", "nDCG@2", "RR@10", "R@1", "R@2", "Success@1", "DeltaR@1", "DeltaMRR@10",
                "RightRank@10", "NegRecall@2", "LSNC@2"]
    parsed = [ir_measures.parse_measure(m) for m in measures]
    assert_same(per_query(ir_measures.iter_calc(parsed, qrels, run)), reference(measures, qrels, run))
    assert_same(per_query(ir_measures.iter_calc(parsed, qrels, canonical_run(run))),
                reference(measures, qrels, run, ties="one-ranking"))


def test_exact_tie_minimal_case_hand_computed():
    # a and b tie; the one ranking is [b, a] (doc id descending): the negative first
    qrels = {"q": {"a": 1, "b": -1}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    measures = [ir_measures.parse_measure(m) for m in ("RR@10", "Success@1", "R@1", "nDCG@10", "DeltaMRR@10",
                                                          "DeltaR@1", "RightRank@10")]
    values = {str(m): v for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    # stock ir_measures: RR@10 (msmarco provider) puts a first (doc id ascending), pytrec_eval b (descending)
    assert values["RR@10"] == 1.0
    assert values["Success@1"] == 0.0 and values["R@1"] == 0.0
    assert values["nDCG@10"] == pytest.approx(1 / math.log2(3))
    # the suite's measures: the one ranking, b first
    assert values["DeltaMRR@10"] == -0.5  # 1/2 - 1/1
    assert values["DeltaR@1"] == -1.0  # 0/1 - 1/1
    assert values["RightRank@10"] == 0.0
    # every provider given the one ranking's scores
    ranked = {str(m): v for m, v in ir_measures.calc_aggregate(measures, qrels, canonical_run(run)).items()}
    assert ranked["RR@10"] == 0.5 and ranked["Success@1"] == 0.0 and ranked["DeltaMRR@10"] == -0.5


def test_near_tie_minimal_case_hand_computed():
    # 10.0000001 > 10.0 at full precision (equal in float32): the one ranking is [a, b]
    qrels = {"q": {"a": 1, "b": -1}}
    run = {"q": {"a": 10.0000001, "b": 10.0}}
    measures = [ir_measures.parse_measure(m) for m in ("R@1", "DeltaR@1", "RR@10", "Success@1", "nDCG@10",
                                                          "DeltaMRR@10")]
    values = {str(m): v for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    # stock: pytrec_eval ties them in single precision and puts b first (doc id descending); msmarco does not
    assert values == {"R@1": 0.0, "DeltaR@1": 1.0, "RR@10": 1.0, "Success@1": 0.0,
                      "nDCG@10": pytest.approx(1 / math.log2(3)), "DeltaMRR@10": 0.5}
    ranked = {str(m): v for m, v in ir_measures.calc_aggregate(measures, qrels, canonical_run(run)).items()}
    assert ranked == {"R@1": 1.0, "DeltaR@1": 1.0, "RR@10": 1.0, "Success@1": 1.0, "nDCG@10": 1.0,
                      "DeltaMRR@10": 0.5}


def test_canonical_order():
    assert canonical_order({"a": 1.0, "b": 1.0, "c": 2.0, "10": 1.0, "9": 1.0 + 1e-9}) == ["c", "9", "b", "a", "10"]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("form", ["dict", "frame", "scoreddocs"])
def test_non_finite_score_is_an_error_of_the_suites_measures_in_every_run_form(bad, form):
    qrels = {"q": {"a": 1, "b": -1}}
    rows = [("q", "a", 1.0), ("q", "b", bad)]
    run = {"dict": {"q": {"a": 1.0, "b": bad}},
           "frame": pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]),
           "scoreddocs": [ScoredDoc(*row) for row in rows]}[form]
    with pytest.raises(NonFiniteScoreError, match=r"query 'q' document 'b': score .* is not a finite number"):
        ir_measures.calc_aggregate([ir_measures.RR @ 10, ir_measures.parse_measure("DeltaMRR@10")], qrels, run)
    with pytest.raises(NonFiniteScoreError, match=r"query 'q' document 'b'"):
        canonical_run({"q": {"a": 1.0, "b": bad}})  # what --ties one-ranking hands the standard measures


def test_committed_comlq_bm25_run_has_exact_ties_in_anserini_order():
    """What Anserini writes: ties left by its 1e-6 nudge vanishing in float32 at scores >= 8 (docs/runners.md)."""
    lines = [line.split() for line in gzip.open(REPO / "runs/comlq/bm25.trec.gz", "rt", encoding="utf-8")]
    groups = {}
    for query_id, _, doc_id, rank, score, _ in lines:
        groups.setdefault((query_id, score), []).append((int(rank), doc_id))
    ties = {key: docs for key, docs in groups.items() if len(docs) > 1}
    assert len(ties) == 22 and all(len(docs) == 2 for docs in ties.values())
    assert all(float(score) >= 8 for _, score in ties)
    assert all([d for _, d in sorted(docs)] == sorted(d for _, d in docs) for docs in ties.values())  # ascending
    assert ties[("260", "12.270000")] == [(43, "14725"), (44, "16054")]
    run_260 = {doc_id: float(score) for query_id, _, doc_id, _, score, _ in lines if query_id == "260"}
    order = canonical_order(run_260)
    assert order.index("16054") == 42 and order.index("14725") == 43  # the one ranking: doc id descending
    assert stock_ranking("RR@10", run_260).index("14725") == 42  # RR@k's stock order: doc id ascending
