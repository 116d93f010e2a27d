"""negplugins: negation, exclusion and Boolean-logic benchmarks for Pyserini, ir_datasets and ir_measures.

Importing the package registers the negation measures with ir_measures (``RightRank@10``,
``DeltaMRR@10``, ...); it does not import ir_datasets, so that measuring stays as light as ir_measures
itself. The datasets (``comlq``, ``excluir/test``, ...) are registered by ``import ir_datasets_ext``,
which every module of the suite that reads a dataset does, and which the installed import hook does as
soon as ir_datasets is imported. The runners, evaluation and command line live in submodules::

    from negplugins.runners.bm25 import bm25_search
    from negplugins.evaluation import evaluate

The package map (see docs/architecture.md): ``datasets`` resolves dataset ids and reads the
benchmark specs of :mod:`ir_datasets_ext`; ``io`` reads and writes files; ``runners`` turns a dataset into
runs; ``evaluation`` scores runs; ``leaderboard`` publishes them; ``measures`` declares and computes the
negation measures; ``_compat`` adapts the third-party tools.
"""

import ir_measures  # noqa: F401  (with the import hook installed, its first import registers the measures)

from ._compat.plugins import register_measures

register_measures()  # without the hook (NEGPLUGINS_AUTOLOAD=0), or after ir_measures was imported without it

__version__ = "0.1.0"
