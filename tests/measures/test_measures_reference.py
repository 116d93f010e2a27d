"""The negation measures against a deliberately simple reference implementation, on random data.

The reference below is written from the definitions in ``docs/measures.md`` with plain loops over dicts: each run
is sorted by (score, doc_id) descending, i.e. score descending with ties broken by doc_id descending
(the trec_eval convention), and each formula is evaluated on that list. Random qrels and runs are
shaped like the four benchmarks (ExcluIR, NevIR, BoolQuestions, ComLQ), with ties, missing documents,
short runs, judged queries absent from the run and run queries absent from the qrels. Aggregates and
per-query values must agree to a relative 1e-12.
"""

import math
import random
import warnings

import ir_measures
import pytest

from negplugins.measures import (
    LSNC,
    DeltaMRR,
    DeltaR,
    IncompletePairsWarning,
    NegRecall,
    NoNegativesWarning,
    NoPairsWarning,
    PairedAcc,
    PartialNegativesWarning,
    PosRR,
    RightRank,
)

CASES_PER_SHAPE = 150
CUTOFF_CHOICES = (1, 2, 3, 5, 10, 100)


# ---------------------------------------------------------------------------------------------------
# Reference implementation
# ---------------------------------------------------------------------------------------------------

def ranked(scored_docs):
    """Doc ids by score descending, ties by doc_id descending."""
    return [doc_id for doc_id, _ in sorted(scored_docs.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def reference_rank_measure(name, cutoff, positives, negatives, ranking, lsnc_over='labelled'):
    """Per-query value of a rank-based measure, or None where it is not defined."""
    top = ranking[:cutoff]
    if name in ('DeltaMRR', 'DeltaR', 'RightRank') and not (positives and negatives):
        return None
    if name == 'PosRR':
        if not positives:
            return None
        for position, doc_id in enumerate(top):
            if doc_id in positives:
                return 1 / (position + 1)
        return 0.
    if name == 'NegRecall' and not negatives:
        return None
    if name == 'LSNC' and not negatives and lsnc_over == 'labelled':
        return None
    if name == 'DeltaMRR':
        positive_rr = 0.
        for position, doc_id in enumerate(top):
            if doc_id in positives:
                positive_rr = 1 / (position + 1)
                break
        negative_rr = 0.
        for position, doc_id in enumerate(top):
            if doc_id in negatives:
                negative_rr = 1 / (position + 1)
                break
        return positive_rr - negative_rr
    if name == 'DeltaR':
        positives_in_top = len([d for d in top if d in positives])
        negatives_in_top = len([d for d in top if d in negatives])
        return positives_in_top / len(positives) - negatives_in_top / len(negatives)
    if name == 'RightRank':
        # the first judged (positive or negative) document in the top k decides
        for doc_id in top:
            if doc_id in positives:
                return 1.
            if doc_id in negatives:
                return 0.
        return 0.
    violations = len([d for d in top if d in negatives])
    if name == 'NegRecall':
        return violations / len(negatives)
    assert name == 'LSNC'
    return -math.log((violations + 1) / (cutoff + 1)) / math.log(cutoff + 1)


def reference_pairs(qrels):
    """Complete NevIR pairs: two queries, the same two judged docs, mirrored labels, unambiguous."""
    def signature(judged):
        if len(judged) != 2:
            return None
        positives = [d for d, r in judged.items() if r > 0]
        negatives = [d for d, r in judged.items() if r < 0]
        if len(positives) == 1 and len(negatives) == 1:
            return positives[0], negatives[0]
        return None

    signatures = {qid: signature(judged) for qid, judged in qrels.items()}
    pairs = []
    for q1, sig1 in signatures.items():
        for q2, sig2 in signatures.items():
            if sig1 is None or sig2 is None or not q1 < q2 or sig2 != (sig1[1], sig1[0]):
                continue
            same_as_q1 = [q for q, s in signatures.items() if s == sig1]
            same_as_q2 = [q for q, s in signatures.items() if s == sig2]
            if len(same_as_q1) == 1 and len(same_as_q2) == 1:
                pairs.append(((q1, sig1), (q2, sig2)))
    return pairs


def reference_per_query(measures, qrels, run):
    """{(str(measure), query_id): value} for every query each measure is defined on."""
    values = {}
    for measure in measures:
        if measure.NAME == 'PairedAcc':
            for pair in reference_pairs(qrels):
                correct = True
                for query_id, (positive, negative) in pair:
                    scores = run.get(query_id, {})
                    if not scores.get(positive, -math.inf) > scores.get(negative, -math.inf):
                        correct = False
                for query_id, _ in pair:
                    values[str(measure), query_id] = 1. if correct else 0.
            continue
        any_negative = any(r < 0 for judged in qrels.values() for r in judged.values())
        if measure.NAME != 'PosRR' and not any_negative:
            continue  # the negation measures have no value on qrels without negatives
        for query_id, judged in qrels.items():
            positives = {d for d, r in judged.items() if r > 0}
            negatives = {d for d, r in judged.items() if r < 0}
            if measure.NAME == 'NegRecall' and measure['conflict'] is not None:
                negatives |= {d for d, r in judged.items() if r == measure['conflict']}
            value = reference_rank_measure(measure.NAME, measure['cutoff'], positives, negatives,
                                           ranked(run.get(query_id, {})),
                                           measure['over'] if measure.NAME == 'LSNC' else None)
            if value is not None:
                values[str(measure), query_id] = value
    return values


def reference_aggregate(measures, per_query):
    """Mean of each measure over the queries it is defined on; NaN (no value) when there are none."""
    aggregate = {}
    for measure in measures:
        own = [value for (name, _), value in per_query.items() if name == str(measure)]
        aggregate[str(measure)] = sum(own) / len(own) if own else math.nan
    return aggregate


# ---------------------------------------------------------------------------------------------------
# Random data shaped like each benchmark
# ---------------------------------------------------------------------------------------------------

def random_scores(rng, doc_ids, ties):
    """Scores for ``doc_ids``; with ``ties`` from a handful of values, so many docs share one."""
    if ties:
        return {doc_id: float(rng.randint(0, 3)) for doc_id in doc_ids}
    return {doc_id: rng.random() for doc_id in doc_ids}


def damage_run(rng, qrels, run):
    """Drop some queries from the run and add some the qrels do not know."""
    for query_id in list(run):
        if rng.random() < 0.1:
            del run[query_id]
    for number in range(rng.randint(0, 2)):
        run[f'unjudged{number}'] = random_scores(rng, [f'd{i}' for i in range(5)], ties=False)
    return qrels, run


def excluir_case(rng):
    """One positive and one negative per query; full-corpus runs, some with documents dropped or cut short."""
    corpus = [f'd{i}' for i in range(rng.randint(3, 40))]
    qrels, run = {}, {}
    ties = rng.random() < 0.5
    for number in range(rng.randint(1, 25)):
        query_id = f'q{number}'
        positive, negative = rng.sample(corpus, 2)
        qrels[query_id] = {positive: 1, negative: -1}
        retrieved = [d for d in corpus if rng.random() > 0.15]
        scores = random_scores(rng, retrieved, ties)
        if rng.random() < 0.3:
            scores = dict(sorted(scores.items(), key=lambda item: -item[1])[:rng.randint(1, 5)])
        run[query_id] = scores
    return damage_run(rng, qrels, run)


def nevir_case(rng):
    """Mirrored query pairs over two documents; runs score only those two, often tied or missing."""
    qrels, run = {}, {}
    for number in range(rng.randint(1, 20)):
        first, second = f'd{2 * number}', f'd{2 * number + 1}'
        qrels[f'q{number}a'] = {first: 1, second: -1}
        qrels[f'q{number}b'] = {second: 1, first: -1}
        for query_id in (f'q{number}a', f'q{number}b'):
            run[query_id] = {d: float(rng.randint(0, 2)) for d in (first, second) if rng.random() > 0.1}
    if rng.random() < 0.3:  # an unpaired query, and an ambiguous duplicate of a pair member
        qrels['lonely'] = {'d900': 1, 'd901': -1}
        qrels['duplicate'] = dict(qrels['q0a'])
        run['duplicate'] = {'d0': 1., 'd1': 0.}
    if rng.random() < 0.2:  # a third judged document means no pair
        qrels['q0a']['d999'] = 0
    return damage_run(rng, qrels, run)


def boolquestions_case(rng):
    """Several positives and negatives per query; some queries without negatives or without positives."""
    corpus = [f'd{i}' for i in range(rng.randint(10, 60))]
    qrels, run = {}, {}
    ties = rng.random() < 0.5
    for number in range(rng.randint(1, 20)):
        query_id = f'q{number}'
        judged = rng.sample(corpus, rng.randint(1, min(8, len(corpus))))
        qrels[query_id] = {doc_id: rng.choice((1, 1, -1, -1, 0, 2)) for doc_id in judged}
        run[query_id] = random_scores(rng, rng.sample(corpus, rng.randint(0, len(corpus))), ties)
    return damage_run(rng, qrels, run)


def comlq_case(rng):
    """Graded positives (2 or 1), some explicit negatives (-1), many queries without negatives."""
    corpus = [f'd{i}' for i in range(rng.randint(10, 150))]
    qrels, run = {}, {}
    ties = rng.random() < 0.3
    for number in range(rng.randint(1, 20)):
        query_id = f'q{number}'
        judged = rng.sample(corpus, rng.randint(1, 5))
        qrels[query_id] = {doc_id: rng.choice((2, 1, 1)) for doc_id in judged}
        if rng.random() < 0.5:
            for doc_id in rng.sample(corpus, rng.randint(1, 3)):
                qrels[query_id].setdefault(doc_id, -1)
        run[query_id] = random_scores(rng, rng.sample(corpus, rng.randint(1, len(corpus))), ties)
    return damage_run(rng, qrels, run)


SHAPES = {'excluir': excluir_case, 'nevir': nevir_case, 'boolquestions': boolquestions_case, 'comlq': comlq_case}


def random_measures(rng):
    """The seven measures, each with a random cutoff (or its default), NegRecall with and without
    ``conflict``, LSNC over either set."""
    def cutoff_of(measure):
        return measure if rng.random() < 0.3 else measure(cutoff=rng.choice(CUTOFF_CHOICES))
    negrecall = cutoff_of(NegRecall)
    if rng.random() < 0.5:
        negrecall = negrecall(conflict=2)
    return [cutoff_of(DeltaMRR), cutoff_of(DeltaR), cutoff_of(RightRank), PairedAcc, negrecall,
            cutoff_of(LSNC)(over=rng.choice(('judged', 'labelled'))), cutoff_of(PosRR)]


def as_input_format(rng, qrels, run):
    """Hand the data to ir_measures as dicts of dicts or as Qrel / ScoredDoc lists."""
    if rng.random() < 0.5:
        return qrels, run
    qrel_list = [ir_measures.Qrel(q, d, r) for q, judged in qrels.items() for d, r in judged.items()]
    run_list = [ir_measures.ScoredDoc(q, d, s) for q, scored in run.items() for d, s in scored.items()]
    return qrel_list, run_list


def assert_same_values(actual, expected):
    """Same keys, and values equal to a relative 1e-12."""
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        if math.isnan(value):
            assert math.isnan(actual[key]), (key, actual[key])
        else:
            assert math.isclose(actual[key], value, rel_tol=1e-12), (key, actual[key], value)


@pytest.mark.parametrize('shape', sorted(SHAPES))
def test_matches_reference(shape):
    rng = random.Random(f'negation-measures-{shape}')
    for _ in range(CASES_PER_SHAPE):
        qrels, run = SHAPES[shape](rng)
        measures = random_measures(rng)
        expected_per_query = reference_per_query(measures, qrels, run)
        requested = measures + ([ir_measures.nDCG@10] if rng.random() < 0.3 else [])
        qrels_input, run_input = as_input_format(rng, qrels, run)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', NoNegativesWarning)
            warnings.simplefilter('ignore', NoPairsWarning)
            warnings.simplefilter('ignore', IncompletePairsWarning)
            warnings.simplefilter('ignore', PartialNegativesWarning)
            aggregate = ir_measures.calc_aggregate(requested, qrels_input, run_input)
            # mixed with nDCG@10, ir_measures' FallbackEvaluator fills NaN ("undefined") for the queries a
            # negation measure has no value on; a NaN on a defined query would leave its key out and fail below
            per_query = {(str(metric.measure), metric.query_id): metric.value
                         for metric in ir_measures.iter_calc(requested, qrels_input, run_input)
                         if metric.measure in measures and not math.isnan(metric.value)}
        assert_same_values(per_query, expected_per_query)
        assert_same_values({str(m): v for m, v in aggregate.items() if m in measures},
                           reference_aggregate(measures, expected_per_query))
