"""negplugins: negation, exclusion and Boolean-logic benchmarks for Pyserini, ir_datasets and ir_measures.

Importing the package registers the negation measures with ir_measures (``RightRank@10``,
``DeltaMRR@10``, ...); it does not import ir_datasets, so that measuring stays as light as ir_measures
itself. The datasets (``comlq``, ``excluir/test``, ...) are registered by ``import ir_datasets_ext``,
which every module of the suite that reads a dataset does, and which the installed import hook does as
soon as ir_datasets is imported. The runners, evaluation and command line live in submodules::

    from negplugins.runners.bm25 import bm25_search
    from negplugins.evaluation import evaluate
"""

from . import measures  # noqa: F401  (registers the measures)

__version__ = "0.1.0"
