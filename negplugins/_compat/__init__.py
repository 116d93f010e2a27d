"""The adapters of the third-party tools that have no plugin interface (Pyserini, pyjnius, ir_datasets,
ir_measures, PyTerrier, transformers); :mod:`~negplugins._compat.upstream` checks each internal they touch."""
