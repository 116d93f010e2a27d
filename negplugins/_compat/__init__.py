"""Everything that adapts a third-party tool that has no plugin interface, kept together.

* :mod:`~negplugins._compat.plugins`: what the import hook (``_negplugins_autoload``) and the
  ``negplugins-*`` console scripts call;
* :mod:`~negplugins._compat.jvm`: Java 21 for Pyserini's jnius, and the OpenAI key placeholder;
* :mod:`~negplugins._compat.anserini`: Anserini's BM25 searcher, called as Pyserini's ``LuceneSearcher`` calls it,
  without the torch that importing ``pyserini.search`` loads;
* :mod:`~negplugins._compat.pyserini_topics`: Pyserini's ``--topics`` resolving the suite's dataset ids;
* :mod:`~negplugins._compat.ir_measures`: the suite's measures and provider in ir_measures' registries and
  default pipeline (nothing of ir_measures is wrapped);
* :mod:`~negplugins._compat.pyterrier`: ``pt.Experiment`` averaging the negation measures correctly;
* :mod:`~negplugins._compat.upstream`: the check that each upstream attribute patched is still there;
"""
