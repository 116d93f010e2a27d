"""Small cases whose values are derived by hand in the comments."""

import math
import random

import ir_measures
import pytest

from negplugins.measures import (
    LSNC,
    DeltaMRR,
    DeltaR,
    NegRecall,
    NoPairsWarning,
    PairedAcc,
    PartialNegativesWarning,
    PosRR,
    RightRank,
)


def aggregate(measures, qrels, run):
    return ir_measures.calc_aggregate(measures, qrels, run)


def per_query(measures, qrels, run):
    return {(str(m.measure), m.query_id): m.value for m in ir_measures.iter_calc(measures, qrels, run)}


@pytest.fixture
def excluir_query():
    # ranking: n (0.9) rank 1, x (0.8) rank 2, p (0.7) rank 3
    qrels = {'q': {'p': 1, 'n': -1}}
    run = {'q': {'n': 0.9, 'x': 0.8, 'p': 0.7}}
    return qrels, run


@pytest.mark.filterwarnings('ignore::negplugins.measures.NoPairsWarning')
def test_excluir_negative_first(excluir_query):
    values = aggregate([DeltaMRR@10, RightRank@10, DeltaR@1, DeltaR@3, NegRecall@10, LSNC@2, LSNC@100],
                       *excluir_query)
    assert values[DeltaMRR@10] == pytest.approx(1 / 3 - 1)  # -0.6667: positive at 3, negative at 1
    assert values[RightRank@10] == 0.  # the negative is above the positive in the top 10
    assert values[DeltaR@1] == -1.  # 0/1 positives - 1/1 negatives in the top 1
    assert values[DeltaR@3] == 0.  # 1/1 - 1/1
    assert values[NegRecall@10] == 1.  # the only negative is in the top 10
    assert values[LSNC@2] == pytest.approx(-math.log(2 / 3) / math.log(3))  # V = 1: 0.3691
    assert values[LSNC@100] == pytest.approx(math.log(50.5) / math.log(101))  # V = 1: 0.8498


@pytest.mark.parametrize('scores, cutoff, expected', [
    ({'p': 2., 'x': 1.5, 'n': 1.}, 10, 1.),  # positive at 1, negative at 3
    ({'x': 3., 'p': 2., 'y': 1.5, 'z': 1.2, 'n': 1.}, 3, 1.),  # negative at 5 is outside the top 3
    ({'n': 2., 'x': 1.5, 'p': 1.}, 2, 0.),  # only the negative is in the top 2
    ({'x': 3., 'y': 2., 'p': 1., 'n': 0.}, 2, 0.),  # neither is in the top 2
    ({'x': 3., 'p': 2.}, 10, 1.),  # only the positive is retrieved
    ({f'x{i}': 100. - i for i in range(10)} | {'p': 1.}, 10, 0.),  # positive at 11
])
def test_right_rank_cases(scores, cutoff, expected):
    assert aggregate([RightRank(cutoff=cutoff)], {'q': {'p': 1, 'n': -1}}, {'q': scores}) == {
        RightRank(cutoff=cutoff): expected}


def test_score_tie_follows_trec_eval_doc_id_descending():
    # 'b' and 'a' tie on score; 'b' > 'a' so 'b' ranks first
    qrels = {'q': {'b': 1, 'a': -1}}
    run = {'q': {'a': 1., 'b': 1.}}
    values = aggregate([RightRank@10, DeltaMRR@10], qrels, run)
    assert values[RightRank@10] == 1.  # positive 'b' at rank 1, negative 'a' at rank 2
    assert values[DeltaMRR@10] == pytest.approx(1 - 1 / 2)
    mirrored = aggregate([RightRank@10, DeltaMRR@10], {'q': {'b': -1, 'a': 1}}, run)
    assert mirrored[RightRank@10] == 0.  # now the negative 'b' is at rank 1
    assert mirrored[DeltaMRR@10] == pytest.approx(1 / 2 - 1)


def nevir(run):
    qrels = {'1a': {'d1': 1, 'd2': -1}, '1b': {'d2': 1, 'd1': -1},
             '2a': {'d3': 1, 'd4': -1}, '2b': {'d4': 1, 'd3': -1}}
    return aggregate([PairedAcc], qrels, run), per_query([PairedAcc], qrels, run)


def test_paired_accuracy_one_of_two_pairs():
    # pair 1: both queries rank their positive first -> 1; pair 2: '2b' ranks its negative first -> 0
    values, by_query = nevir({'1a': {'d1': .9, 'd2': .1}, '1b': {'d1': .2, 'd2': .8},
                              '2a': {'d3': .9, 'd4': .1}, '2b': {'d3': .9, 'd4': .1}})
    assert values == {PairedAcc: 0.5}
    assert by_query == {('PairedAcc', '1a'): 1., ('PairedAcc', '1b'): 1.,
                        ('PairedAcc', '2a'): 0., ('PairedAcc', '2b'): 0.}


def test_paired_accuracy_tie_and_missing_are_wrong_positive_alone_is_right():
    # pair 1: '1a' ties -> wrong; pair 2: '2a' has only its positive (right), '2b' has neither (wrong)
    values, _ = nevir({'1a': {'d1': .5, 'd2': .5}, '1b': {'d2': .8, 'd1': .1}, '2a': {'d3': .1}})
    assert values == {PairedAcc: 0.}
    # both pairs right when each query retrieves only its positive
    values, _ = nevir({'1a': {'d1': .1}, '1b': {'d2': .1}, '2a': {'d3': .1}, '2b': {'d4': .1}})
    assert values == {PairedAcc: 1.}


def test_only_eligible_queries_are_averaged():
    # q1: P = {a}, N = {b, c}; ranking a, b, x, c. q2: positives only. q3: negative only, not retrieved.
    qrels = {'q1': {'a': 1, 'b': -1, 'c': -1}, 'q2': {'a': 1}, 'q3': {'d': -1}}
    run = {'q1': {'a': 3., 'b': 2., 'x': 1., 'c': 0.}, 'q2': {'z': 1.}}
    labelled_lsnc = LSNC(cutoff=2, over='labelled')
    with pytest.warns(PartialNegativesWarning, match=r"LSNC@2: 1 of 3 queries have no labelled negative"):
        values = aggregate([DeltaMRR@10, RightRank@10, NegRecall@2, LSNC@2, labelled_lsnc, PosRR@10], qrels, run)
    assert values[DeltaMRR@10] == pytest.approx(1 - 1 / 2)  # q1 only, not (0.5 + 0 + 0) / 3
    assert values[RightRank@10] == 1.  # q1 only
    assert values[NegRecall@2] == pytest.approx((1 / 2 + 0) / 2)  # q1 (b in top 2) and q3
    # q1: V = 1 -> -log(2/3)/log 3; q3: V = 0 -> 1
    assert values[labelled_lsnc] == pytest.approx((-math.log(2 / 3) / math.log(3) + 1) / 2)
    # over='judged' (the ComLQ paper's set): q2 has no labelled negative, V = 0 -> 1
    assert values[LSNC@2] == pytest.approx((-math.log(2 / 3) / math.log(3) + 1 + 1) / 3)
    # PosRR: q1 (positive at rank 1) and q2 (positive not retrieved); q3 has no positive and is left out
    assert values[PosRR@10] == pytest.approx((1 + 0) / 2)
    assert set(per_query([NegRecall@2], qrels, run)) == {('NegRecall@2', 'q1'), ('NegRecall@2', 'q3')}


def test_eligible_query_missing_from_run_still_counts():
    # no document ranked: DeltaMRR 0 - 0, DeltaR 0 - 0, RightRank 0, NegRecall 0, LSNC 1 (no violation)
    values = aggregate([DeltaMRR@10, DeltaR@1, RightRank@10, NegRecall@10, LSNC@100],
                       {'q': {'p': 1, 'n': -1}}, {'other': {'p': 1.}})
    assert values == {DeltaMRR@10: 0., DeltaR@1: 0., RightRank@10: 0., NegRecall@10: 0., LSNC@100: 1.}


def test_lsnc_all_k_violate():
    # k = 2 and both top documents are negatives: V = 2, -log(3/3)/log(3) = 0
    values = aggregate([LSNC@2], {'q': {'n1': -1, 'n2': -1, 'n3': -1}}, {'q': {'n1': 2., 'n2': 1., 'n3': 0.}})
    assert values == {LSNC@2: 0.}


def test_lsnc_counts_only_negative_labels_as_violations():
    """A document judged 0 is neither positive nor negative: in the top k it is no violation.

    q1 ranks z (judged 0), n (judged -1), p: V = 1 in the top 2 (z does not count), LSNC@2 = -log(2/3)/log(3);
    counting z would make V = 2 and LSNC@2 = 0. q2 judges only p (1) and z (0) and ranks z first: it has no
    negative, so V = 0 and LSNC@2 = 1 when averaged over judged queries, and it is not averaged over labelled ones.
    NegRecall@2: q1 1/1; q2 has no negative and is not averaged. RightRank@2: q1's negative is above its positive.
    """
    qrels = {'q1': {'p': 1, 'z': 0, 'n': -1}, 'q2': {'p': 1, 'z': 0}}
    run = {'q1': {'z': 3., 'n': 2., 'p': 1.}, 'q2': {'z': 2., 'p': 1.}}
    labelled = LSNC(cutoff=2, over='labelled')
    with pytest.warns(PartialNegativesWarning, match=r"1 of 2 queries have no labelled negative"):
        values = aggregate([LSNC@2, labelled, NegRecall@2, RightRank@2], qrels, run)
        by_query = per_query([LSNC@2, labelled], qrels, run)
    one_violation = -math.log(2 / 3) / math.log(3)  # 0.3691
    assert by_query == pytest.approx({('LSNC@2', 'q1'): one_violation, ('LSNC@2', 'q2'): 1.0,
                                      ("LSNC(over='labelled')@2", 'q1'): one_violation})
    assert values[LSNC@2] == pytest.approx((one_violation + 1) / 2)
    assert values[labelled] == pytest.approx(one_violation)
    assert values[NegRecall@2] == 1. and values[RightRank@2] == 0.


def test_zero_labels_alone_are_no_negatives():
    """Qrels with 0 and positive labels only hold no negative: the negation measures have no value (NaN)."""
    qrels = {'q': {'p': 1, 'z': 0}}
    with pytest.warns(UserWarning, match=r"no negative judgement"):
        values = aggregate([LSNC@2, NegRecall@2], qrels, {'q': {'z': 2., 'p': 1.}})
    assert math.isnan(values[LSNC@2]) and math.isnan(values[NegRecall@2])


def test_delta_mrr_ranks_agree_with_pytrec_eval_reciprocal_rank_under_ties():
    # with the negative absent from the run, DeltaMRR@1000 is the positive's reciprocal rank, which
    # pytrec_eval computes for ir_measures' RR with its own (trec_eval) tie-breaking
    rng = random.Random(7)
    qrels, run = {}, {}
    for number in range(200):
        query_id = f'q{number}'
        doc_ids = [f'd{rng.randint(0, 999)}' for _ in range(30)]
        run[query_id] = {doc_id: float(rng.randint(0, 2)) for doc_id in doc_ids}
        qrels[query_id] = {rng.choice(doc_ids): 1, 'never-retrieved': -1}
    ours = per_query([DeltaMRR@1000], qrels, run)
    theirs = per_query([ir_measures.RR], qrels, run)
    assert {query_id: value for (_, query_id), value in ours.items()} == pytest.approx(
        {query_id: value for (_, query_id), value in theirs.items()}, rel=1e-12)


def test_no_pairs_warns_and_paired_accuracy_has_no_value():
    with pytest.warns(NoPairsWarning):
        values = aggregate([PairedAcc, NegRecall@10], {'q': {'p': 1, 'n': -1}}, {'q': {'p': 1.}})
    assert values[NegRecall@10] == 0. and math.isnan(values[PairedAcc])
