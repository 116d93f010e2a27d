"""Files in and out: TREC runs and topics, metadata sidecars, bounded reading and safe writing.

* :mod:`~negplugins.io.trec`: read and write TREC runs (one bounded reader for every run);
* :mod:`~negplugins.io.topics`: Pyserini topic files (``qid<TAB>text``) of a dataset;
* :mod:`~negplugins.io.sidecars`: the ``<run>.meta.json`` sidecar every run gets;
* :mod:`~negplugins.io.inputs` and :mod:`~negplugins.io.jsonfile`: size-, depth- and type-bounded reading;
* :mod:`~negplugins.io.files` and :mod:`~negplugins.io.outputs`: the one write path (temporary then
  rename, never onto an input or a folder the suite did not write);
* :mod:`~negplugins.io.command_inputs`: what a command reads, and the one rule that keeps its outputs off it.
"""
