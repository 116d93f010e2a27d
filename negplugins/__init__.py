"""negplugins: negation, exclusion and Boolean-logic benchmarks for Pyserini, ir_datasets and ir_measures.
Importing the package registers the negation measures with ir_measures (docs/architecture.md).
"""

import ir_measures  # noqa: F401  (with the import hook installed, its first import registers the measures)

from ._compat.plugins import register_measures

register_measures()  # without the hook (NEGPLUGINS_AUTOLOAD=0), or after ir_measures was imported without it

__version__ = "0.1.0"
