"""Parsing measure names, with suggestions for names ir_measures does not know."""

import difflib
import re

import ir_measures

from .declarations import MEASURES

_LEADING_NAME = re.compile(r'\s*([^\W\d]\w*)')
_TREC_STYLE_CUTOFF = re.compile(r'(?P<name>[^\W\d]\w*?)[._](?P<cutoff>\d+)')
_CUTOFF_MEASURES = {measure.NAME: measure for measure in MEASURES if 'cutoff' in measure.SUPPORTED_PARAMS}


def parse_measures(measures):
    """Parse measures written in ir_measures' syntax, failing with suggestions on unknown names.

    Besides ``parse_measure``'s syntax (``RightRank@10``, ``nDCG(judged_only=True)@10``), the
    negation measures with a cutoff also accept trec_eval's ``name_k`` / ``name.k`` (``LSNC_100``).

    Parameters
    ----------
    measures : str or iterable of (str or ir_measures.Measure)
        Whitespace-separated measure strings, or a list of measure strings or measures.

    Returns
    -------
    list of ir_measures.Measure

    Raises
    ------
    ValueError
        For an unknown name, listing the closest registered names (or all of them when none is close).
    """
    if isinstance(measures, str):
        measures = measures.split()
    return [_parse_measure(measure) for measure in measures]


def _parse_measure(text):
    """Parse one measure string (or pass a Measure through)."""
    trec_style = _TREC_STYLE_CUTOFF.fullmatch(text) if isinstance(text, str) else None
    if trec_style and trec_style['name'] in _CUTOFF_MEASURES:
        return _CUTOFF_MEASURES[trec_style['name']](cutoff=int(trec_style['cutoff']))
    try:
        return ir_measures.parse_measure(text)
    except NameError:
        raise ValueError(_unknown_measure_message(text)) from None


def _unknown_measure_message(text):
    """Explain that ``text`` names no registered measure, suggesting close registered names."""
    leading = _LEADING_NAME.match(text)
    name = leading[1] if leading else text
    known = sorted(ir_measures.measures.registry)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        return f'unknown measure {text!r}; did you mean {", ".join(close)}?'
    return f'unknown measure {text!r}; known measures: {", ".join(known)}'
