"""negplugins: negation, exclusion and Boolean-logic benchmarks for Pyserini, ir_datasets and ir_measures.

Importing the package registers the negation measures with ir_measures (``RightRank@10``,
``DeltaMRR@10``, ...) and the suite's datasets with ir_datasets (``comlq``, ``excluir/test``, ...).
The runners, evaluation and command line live in submodules::

    from negplugins.runners.bm25 import bm25_search
    from negplugins.evaluation import evaluate
"""

import ir_datasets_ext  # noqa: F401  (registers the datasets)

from . import measures  # noqa: F401  (registers the measures)

__version__ = "0.1.0"
