"""Files in and out: TREC runs (one reader, :mod:`~negplugins.io.run_columns`), topics, metadata sidecars, bounded
reading of user files and the one write path (:mod:`~negplugins.io.files`, :mod:`~negplugins.io.outputs`)."""
