"""BEIR interoperability: BEIR folders out and in, BEIR results as TREC runs (docs/runners.md, section BEIR).
BEIR's own retrievers, the only users of the ``beir`` package, are in :mod:`negplugins.runners.beir`.
"""

from .folder import BeirFolder, BeirFormatError, read_beir_folder

__all__ = ["BeirFolder", "BeirFormatError", "read_beir_folder"]
