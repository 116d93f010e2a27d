"""Mixed standard and negation measures in PyTerrier's ``pt.Experiment`` (docs/evaluation.md, PyTerrier): each
query gets NaN for a negation measure it is undefined on, and that measure is averaged over its defined queries; a
call without the suite's measures goes to PyTerrier's own function untouched.
"""

import functools
import math

from ..measures.declarations import MEASURES
from . import upstream

_NEGATION_NAMES = frozenset(measure.NAME for measure in MEASURES)


def _is_negation(name):
    """Whether a measure name of PyTerrier's output (``"RightRank@10"``) is a negation measure."""
    return str(name).split('@')[0].split('(')[0] in _NEGATION_NAMES


def _fill_undefined(to_dict):
    @functools.wraps(to_dict)
    def wrapped(seq, measures, rev_mapping, num_q, perquery=True, backfill_qids=None):
        result = to_dict(seq, measures, rev_mapping, num_q, perquery, backfill_qids)
        if not perquery:
            return result
        names = [rev_mapping.get(m, str(m)) for m in measures if _is_negation(str(m))]
        for values in result.values():
            for name in names:
                values.setdefault(name, math.nan)
        return result

    wrapped.fills_negation_measures = True
    return wrapped


def _defined_means(mean_of_measures):
    @functools.wraps(mean_of_measures)
    def wrapped(result, measures=None, num_q=None):
        names = list(measures) if measures is not None else [name for values in result.values() for name in values]
        if not any(_is_negation(name) for name in names):  # nothing of the suite's: PyTerrier's own arithmetic
            return mean_of_measures(result, measures, num_q)
        if measures is None:  # as PyTerrier: the first query's measures, plus the suite's wherever they appear
            measures = list(dict.fromkeys([*next(iter(result.values())),
                                           *(name for name in names if _is_negation(name))]))
        standard = [name for name in measures if not _is_negation(name)]
        means = mean_of_measures(result, standard, num_q) if standard else {}
        for name in measures:
            if _is_negation(name):
                defined = [values[name] for values in result.values()
                           if name in values and not math.isnan(values[name])]
                means[name] = sum(defined) / len(defined) if defined else math.nan
        return {name: means[name] for name in measures if name in means}

    wrapped.averages_defined_values = True
    return wrapped


def install():
    """Make PyTerrier's Experiment average the negation measures over their defined queries (idempotent)."""
    import importlib

    missing = upstream.check("pyterrier")
    if "pyterrier._evaluation._execution._ir_measures_to_dict" not in missing:
        _execution = importlib.import_module("pyterrier._evaluation._execution")
        if not getattr(_execution._ir_measures_to_dict, 'fills_negation_measures', False):
            _execution._ir_measures_to_dict = _fill_undefined(_execution._ir_measures_to_dict)
        if "pyterrier._evaluation._exec_tree._ir_measures_to_dict" not in missing:
            _exec_tree = importlib.import_module("pyterrier._evaluation._exec_tree")
            if not getattr(_exec_tree._ir_measures_to_dict, 'fills_negation_measures', False):
                _exec_tree._ir_measures_to_dict = _execution._ir_measures_to_dict
    if "pyterrier._evaluation._rendering._mean_of_measures" not in missing:
        _rendering = importlib.import_module("pyterrier._evaluation._rendering")
        if not getattr(_rendering._mean_of_measures, 'averages_defined_values', False):
            _rendering._mean_of_measures = _defined_means(_rendering._mean_of_measures)
