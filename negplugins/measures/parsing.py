"""The one parser of measure names: ir_measures' syntax, trec_eval's ``name_k``, with parameters checked.

Parameters are checked before any provider sees them (pytrec_eval aborts the process on ``nDCG@0``).
"""

import difflib
import re

import ir_measures

from ..errors import UserError
from ..options import MAX_CUTOFF, int_range
from .declarations import MEASURES


class MeasureError(UserError, ValueError):
    """A measure that cannot be parsed: one line naming it and what is accepted (a ``ValueError`` too)."""


#: How several measures may be written, for error messages.
ACCEPTED_FORMS = ("give several measures as one string ('nDCG@10 RR@10', as ir_measures), as separate arguments "
                  "(nDCG@10 RR@10) or separated by commas (nDCG@10,RR@10)")

_LEADING_NAME = re.compile(r'\s*([^\W\d]\w*)')
_TREC_STYLE_CUTOFF = re.compile(r'(?P<name>[^\W\d]\w*?)[._](?P<cutoff>\d+)')
_CUTOFF_MEASURES = {measure.NAME: measure for measure in MEASURES if 'cutoff' in measure.SUPPORTED_PARAMS}
_OWN_MEASURES = {measure.NAME: measure for measure in MEASURES}


def parse_measures(measures):
    """Parse measure strings (each one or several, :func:`split_measures`) or measures, in the order given."""
    if isinstance(measures, str):
        measures = [measures]
    texts = []
    for measure in measures:
        texts += split_measures(measure) if isinstance(measure, str) else [measure]
    if not texts:
        raise MeasureError(f'no measure given; {ACCEPTED_FORMS}')
    return [_parse_measure(measure) for measure in texts]


_OPENING, _CLOSING = '([{', ')]}'


def split_measures(text: str) -> list[str]:
    """The measures of one string, split at spaces and commas outside parentheses, brackets and quotes."""
    parts, current, depth, quote = [], [], 0, None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in '\'"':
            quote = char
        elif char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth = max(0, depth - 1)
        elif depth == 0 and (char == ',' or char.isspace()):
            parts.append(''.join(current))
            current = []
            continue
        current.append(char)
    parts.append(''.join(current))
    return [part for part in parts if part]


def looks_like_measure(text: str) -> bool:
    """Whether every measure of ``text`` starts with a registered measure's name (``-m``'s further values)."""
    pieces = split_measures(text)
    for piece in pieces:
        trec_style = _TREC_STYLE_CUTOFF.fullmatch(piece)
        if trec_style and trec_style['name'] in _OWN_MEASURES:  # PairedAcc_10 is then refused with its message
            continue
        leading = _LEADING_NAME.match(piece)
        if not leading or leading[1] not in ir_measures.measures.registry:
            return False
    return bool(pieces)


def _parse_measure(text):
    """Parse one measure string (or pass a Measure through), with its parameters checked."""
    trec_style = _TREC_STYLE_CUTOFF.fullmatch(text) if isinstance(text, str) else None
    if trec_style and trec_style['name'] in _CUTOFF_MEASURES:
        measure = _CUTOFF_MEASURES[trec_style['name']](cutoff=int(trec_style['cutoff']))
    elif trec_style and trec_style['name'] in _OWN_MEASURES:  # PairedAcc_10
        raise MeasureError(_parameter_message(text, 'cutoff', _OWN_MEASURES[trec_style['name']]))
    else:
        try:
            measure = ir_measures.parse_measure(text)
        except NameError:
            raise MeasureError(_unknown_measure_message(text)) from None
        except KeyError as error:  # a parameter the measure does not have, e.g. nDCG(foo=1)
            raise MeasureError(_parameter_message(text, error.args[0] if error.args else '?')) from None
        except (ValueError, SyntaxError, TypeError):
            raise MeasureError(f'measure {str(text)!r}: cannot parse it; expected Name, Name@k with k an integer '
                               f'from 1 to {MAX_CUTOFF}, or Name(param=value)@k; {ACCEPTED_FORMS}') from None
    _check_parameters(measure, text)
    return measure


def _parameter_message(text, name, measure=None):
    """A parameter ``name`` that the measure of ``text`` does not take: the message says what it takes."""
    leading = _LEADING_NAME.match(str(text))
    measure = measure or (ir_measures.measures.registry.get(leading[1]) if leading else None)
    if measure is None:
        return f'measure {str(text)!r}: unknown parameter {name!r}'
    if name != getattr(measure, 'AT_PARAM', 'cutoff'):
        return f'measure {str(text)!r}: unknown parameter {name!r}; {_accepted(measure)}'
    if not measure.SUPPORTED_PARAMS:
        return f'measure {str(text)!r}: {measure.NAME} takes no parameters, and no {name} (@k)'
    return f'measure {str(text)!r}: {measure.NAME} takes no {name} (@k); {_accepted(measure, "it")}'


def _accepted(measure, subject=None):
    """What ``measure`` takes, as ``LSNC accepts cutoff (int, as @k), over (str)``."""
    subject = subject or measure.NAME
    params = measure.SUPPORTED_PARAMS
    if not params:
        return f'{subject} takes no parameters'
    at_param = getattr(measure, 'AT_PARAM', None)
    return f'{subject} accepts ' + ', '.join(_described(name, info, name == at_param) for name, info in sorted(params.items()))


def _described(name, info, written_at) -> str:
    """``over (str)``, ``cutoff (int, as @k)``, ``dcg (one of 'log2', 'exp-log2')``: one parameter and its values."""
    choices, dtype = getattr(info, 'choices', None), getattr(info, 'dtype', None)
    if isinstance(choices, (list, tuple, set, frozenset)):
        values = 'one of ' + ', '.join(map(repr, choices))
    else:
        values = dtype.__name__ if isinstance(dtype, type) else None
    details = [detail for detail in (values, 'as @k' if written_at else None) if detail]
    return f'{name} ({", ".join(details)})' if details else name


def _check_parameters(measure, text):
    """Refuse unknown parameters, parameters of the wrong type and cutoffs outside 1..MAX_CUTOFF."""
    params = getattr(measure, 'params', {})
    unknown = sorted(set(params) - set(measure.SUPPORTED_PARAMS))
    if unknown:
        raise MeasureError(_parameter_message(text, unknown[0]))
    cutoff = params.get('cutoff')
    if cutoff is not None and (isinstance(cutoff, bool) or not isinstance(cutoff, int)
                               or not 1 <= cutoff <= MAX_CUTOFF):
        raise MeasureError(f'measure {str(text)!r}: the cutoff must be {int_range(1, MAX_CUTOFF)}, got {cutoff!r}')
    try:
        measure.validate_params()
    except (AssertionError, ValueError) as error:  # ir_measures asserts; the suite's measures raise ValueError
        raise MeasureError(f'measure {str(text)!r}: {error}; {_accepted(measure)}') from None


def _unknown_measure_message(text):
    """Explain that ``text`` names no registered measure, suggesting close registered names."""
    leading = _LEADING_NAME.match(text)
    name = leading[1] if leading else text
    known = sorted(ir_measures.measures.registry)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        return f'unknown measure {text!r}; did you mean {", ".join(close)}?'
    return f'unknown measure {text!r}; known measures: {", ".join(known)}'
