"""Negation measures for ir_measures: PosRR, DeltaMRR, DeltaR, RightRank, PairedAcc, NegRecall and LSNC.

Importing this package registers them (see :func:`register`), after which ir_measures' own entry
points accept them, also mixed with standard measures::

    import ir_measures
    import negplugins.measures
    from negplugins.measures import RightRank, DeltaMRR

    ir_measures.calc_aggregate([RightRank@10, DeltaMRR@10, ir_measures.nDCG@10], qrels, run)

Negatives are judgements with relevance < 0. The suite's measures score its one ranking (score descending at
full precision, ties by doc_id descending), which their provider computes itself (documented in
:mod:`negplugins.measures.ranking`); PairedAcc compares raw scores, so a tie counts as wrong there. Registering
them changes nothing else in ir_measures: ``RR``, ``nDCG`` and every other stock measure keep their stock values,
ties included. Each measure is averaged only over the queries it is defined on (see docs/measures.md); values are
never rounded. Qrels without negatives raise :class:`NoNegativesWarning` and the measures have no value.
"""

#: True while this package is being imported. Its first import of ir_measures runs the import hook's
#: ``negplugins._compat.plugins.register_measures``, which then leaves the registration to the
#: :func:`register` call at the end of this file (the declarations are not loaded yet at that point).
importing = True

from .._compat.ir_measures import register  # noqa: E402
from .declarations import LSNC, MEASURES, DeltaMRR, DeltaR, NegRecall, PairedAcc, PosRR, RightRank, lower_is_better  # noqa: E402
from .parsing import parse_measures  # noqa: E402
from .provider import IncompletePairsWarning, NoNegativesWarning, NoPairsWarning, PartialNegativesWarning  # noqa: E402

register()
importing = False

__all__ = [
    'PosRR', 'DeltaMRR', 'DeltaR', 'RightRank', 'PairedAcc', 'NegRecall', 'LSNC', 'MEASURES',
    'NoNegativesWarning', 'NoPairsWarning', 'IncompletePairsWarning', 'PartialNegativesWarning',
    'parse_measures', 'register', 'lower_is_better',
]
