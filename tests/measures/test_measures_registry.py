"""Registration of the negation measures in ir_measures."""

import math
import re
import warnings

import ir_measures
import pytest

from negplugins._compat.plugins import register_measures
from negplugins.measures import (
    LSNC,
    MEASURES,
    DeltaMRR,
    DeltaR,
    NegRecall,
    NoNegativesWarning,
    NoPairsWarning,
    PairedAcc,
    RightRank,
    parse_measures,
)
from negplugins.measures.parsing import MeasureError

ALL = [DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall, LSNC]
QRELS = {'q1': {'p': 1, 'n': -1}, 'q2': {'a': 2, 'b': 1}}
RUN = {'q1': {'n': 0.9, 'x': 0.8, 'p': 0.7}, 'q2': {'b': 0.5, 'a': 0.4}}


def test_parse_measure_finds_our_names():
    measure = ir_measures.parse_measure('RightRank@10')
    assert measure == RightRank
    assert measure.NAME == 'RightRank' and measure['cutoff'] == 10
    assert ir_measures.parse_measure('LSNC@5')['cutoff'] == 5
    assert ir_measures.parse_measure('PairedAcc') == PairedAcc


@pytest.mark.parametrize('measure, text, cutoff', [
    (DeltaMRR, 'DeltaMRR@10', 10), (DeltaR, 'DeltaR@1', 1), (RightRank, 'RightRank@10', 10),
    (NegRecall, 'NegRecall@10', 10), (LSNC, 'LSNC@100', 100),
])
def test_default_cutoffs(measure, text, cutoff):
    assert str(measure) == text
    assert measure['cutoff'] == cutoff
    assert type(measure)()['cutoff'] == cutoff  # the ParamInfo default
    assert ir_measures.parse_measure(measure.NAME) == measure


def test_declarations_carry_descriptions_and_citations():
    assert str(PairedAcc) == 'PairedAcc'
    for measure in ALL:
        assert measure.PRETTY_NAME and measure.SHORT_DESC and measure.CITATION
    assert 'ExcluIR' in RightRank.CITATION and 'NevIR' in PairedAcc.CITATION
    assert 'Boolean' in NegRecall.CITATION and '2511.12004' in LSNC.CITATION


def test_rr_is_still_reciprocal_rank():
    assert ir_measures.parse_measure('RR') == ir_measures.RR
    assert isinstance(ir_measures.parse_measure('RR@10'), ir_measures.measures._RR)
    assert ir_measures.measures.registry['RR'].PRETTY_NAME == '(Mean) Reciprocal Rank'
    # q1: positive at rank 3 -> 1/3; q2: first relevant at rank 1 -> 1
    assert ir_measures.calc_aggregate([ir_measures.RR], QRELS, RUN)[ir_measures.RR] == pytest.approx((1 / 3 + 1) / 2)


def test_mixed_with_standard_measures():
    with pytest.warns(NoPairsWarning):
        values = ir_measures.calc_aggregate([ir_measures.nDCG@10, *ALL], QRELS, RUN)
    assert values[ir_measures.nDCG@10] == ir_measures.calc_aggregate([ir_measures.nDCG@10], QRELS, RUN)[
        ir_measures.nDCG@10]
    assert values[RightRank] == 0. and values[DeltaMRR] == pytest.approx(1 / 3 - 1)
    assert math.isnan(values[PairedAcc])  # no NevIR pair in these qrels: no value
    per_query = {(str(m.measure), m.query_id): m.value
                 for m in ir_measures.iter_calc([ir_measures.nDCG@10, RightRank], QRELS, RUN)}
    # q2 has no negative: RightRank is undefined there, and has no row, mixed with a standard measure or not
    assert per_query.keys() == {('nDCG@10', 'q1'), ('nDCG@10', 'q2'), ('RightRank@10', 'q1')}
    assert per_query[('RightRank@10', 'q1')] == 0.
    # alone, the suite's evaluator emits the defined values only
    assert [(str(m.measure), m.query_id) for m in ir_measures.iter_calc([RightRank], QRELS, RUN)] == [
        ('RightRank@10', 'q1')]


def test_evaluator_and_calc():
    evaluator = ir_measures.evaluator([RightRank, NegRecall], QRELS)
    assert evaluator.calc_aggregate(RUN) == {RightRank: 0., NegRecall: 1.}
    assert evaluator.calc_aggregate({'q1': {'p': 1., 'n': 0.}}) == {RightRank: 1., NegRecall: 1.}
    aggregated, per_query = ir_measures.calc([RightRank, ir_measures.P@1], QRELS, RUN)
    assert aggregated[RightRank] == 0.  # q2 (undefined there) is not in the mean
    assert [m.query_id for m in per_query if m.measure == RightRank] == ['q1']


def test_unknown_name_suggests_close_names():
    with pytest.raises(ValueError, match=r"unknown measure 'RightRnk@10'; did you mean RightRank\?"):
        parse_measures('RightRnk@10')
    with pytest.raises(ValueError, match='known measures: .*LSNC'):
        parse_measures(['Zzzzzz'])


def test_parse_measures_accepts_lists_strings_and_trec_style():
    assert parse_measures('nDCG@10 RightRank LSNC_50 DeltaR.3') == [ir_measures.nDCG@10, RightRank@10, LSNC@50,
                                                                    DeltaR@3]
    assert parse_measures([PairedAcc, 'NegRecall@5']) == [PairedAcc, NegRecall@5]


def test_no_negatives_warns_and_gives_no_value():
    qrels = {'q': {'a': 1}}
    with pytest.warns(NoNegativesWarning, match='no negative judgement'):
        values = ir_measures.calc_aggregate([ir_measures.nDCG@10, *ALL], qrels, RUN)
    assert set(values) == {ir_measures.nDCG@10, *ALL}
    assert values[ir_measures.nDCG@10] == ir_measures.calc_aggregate([ir_measures.nDCG@10], qrels, RUN)[ir_measures.nDCG@10]
    assert all(math.isnan(values[measure]) for measure in ALL)  # not a number, never a silent 0
    with pytest.warns(NoNegativesWarning):
        assert list(ir_measures.iter_calc(ALL, qrels, RUN)) == []
    with pytest.warns(NoNegativesWarning):
        assert math.isnan(RightRank.calc_aggregate(qrels, RUN))


def test_register_is_idempotent():
    register_measures()
    register_measures()
    assert ir_measures.measures.registry['RightRank'] is RightRank
    assert sum(p.NAME == 'negplugins' for p in ir_measures.DefaultPipeline.providers) == 1
    assert ir_measures.providers.registry['negplugins'] in ir_measures.DefaultPipeline.providers
    assert ir_measures.calc_aggregate([RightRank], QRELS, RUN) == {RightRank: 0.}


def test_cutoff_must_be_positive():
    with pytest.raises(ValueError, match='cutoff >= 1'):
        ir_measures.calc_aggregate([RightRank@0], QRELS, RUN)


def test_warnings_point_at_the_callers_line():
    """A warning of the measures names the line that called ir_measures, not a line inside ir_measures."""
    import warnings

    qrels = {'a': {'x': 1, 'y': -1}, 'b': {'z': 1}}
    for call in (lambda: ir_measures.calc_aggregate([LSNC], qrels, {'a': {'x': 1.0}}),
                 lambda: list(ir_measures.iter_calc([LSNC], qrels, {'a': {'x': 1.0}})),
                 lambda: ir_measures.evaluator([PairedAcc], {'q1': {'p': 1, 'n': -1}}).calc_aggregate({})):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            call()
        assert caught and all(w.filename == __file__ for w in caught), [(w.filename, w.lineno) for w in caught]


@pytest.mark.parametrize('qrels', [
    {'q1': {'p': 1, 'n': -1}, 'q2': {'a': 2, 'b': 1}},  # q2 has no negative (a BoolQuestions question without one)
    {'q1': {'p': 1}, 'q2': {'a': 2, 'b': 1}},  # no negative at all (ComLQ's public release)
])
@pytest.mark.parametrize('measure', [NegRecall, LSNC(over='labelled'), LSNC, RightRank, PairedAcc])
def test_per_query_rows_do_not_depend_on_the_other_measures_asked(qrels, measure):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # no negatives, no pairs, partial negatives
        alone = [(m.query_id, m.value) for m in ir_measures.iter_calc([measure], qrels, RUN)]
        for others in ([ir_measures.nDCG@10], [ir_measures.P@1, ir_measures.Judged@10]):
            mixed = [(m.query_id, m.value) for m in ir_measures.iter_calc([measure, *others], qrels, RUN)
                     if m.measure == measure]
            assert mixed == alone  # no NaN row for a query the measure is undefined on
            aggregated = ir_measures.calc_aggregate([measure, *others], qrels, RUN)[measure]
            assert aggregated == ir_measures.calc_aggregate([measure], qrels, RUN)[measure] or \
                (math.isnan(aggregated) and not alone)
            _, per_query = ir_measures.calc([measure, *others], qrels, RUN)
            assert [(m.query_id, m.value) for m in per_query if m.measure == measure] == alone


def _wrong_parameters(measure):
    """Measure strings that give ``measure`` a parameter it does not take, or one of the wrong type."""
    name = measure.NAME
    texts = [f'{name}(foo=1)', f'{name}(foo=1)@5' if 'cutoff' in measure.SUPPORTED_PARAMS else f'{name}@5']
    for param, info in measure.SUPPORTED_PARAMS.items():
        if param != 'cutoff':
            texts.append(f"{name}({param}={3 if info.dtype is str else repr('x')})")
        if info.dtype is str:  # of the right type, but no value it takes
            texts.append(f"{name}({param}='nonsense')")
    return texts


@pytest.mark.parametrize('text', [text for measure in [*MEASURES, ir_measures.NumQ, ir_measures.Rprec]
                                  for text in _wrong_parameters(measure)])
def test_a_wrong_parameter_is_refused_saying_what_the_measure_takes(text):
    with pytest.raises(MeasureError) as refused:
        parse_measures(text)
    message = str(refused.value)
    assert message.startswith(f'measure {text!r}: ') and '\n' not in message
    params = sorted(ir_measures.measures.registry[re.match(r'[A-Za-z]+', text)[0]].SUPPORTED_PARAMS)
    if params:  # every parameter, each with its type: never an empty list
        assert re.search('accepts ' + ', '.join(rf'{p} \([^)]+\)' for p in params) + '$', message), message
    else:
        assert re.search(r'takes no parameters(, and no cutoff \(@k\))?$', message), message
