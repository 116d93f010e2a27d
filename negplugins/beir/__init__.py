"""BEIR interoperability: BEIR folders out and in, BEIR results as TREC runs (docs/runners.md, section BEIR).

BEIR's own retrievers are in :mod:`negplugins.runners.beir`; only they need the ``beir`` package.
"""

from .folder import BeirFolder, BeirFormatError, read_beir_folder

__all__ = ["BeirFolder", "BeirFormatError", "read_beir_folder"]
