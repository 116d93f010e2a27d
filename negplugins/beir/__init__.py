"""BEIR interoperability: export datasets in BEIR's layout, import BEIR results, run BEIR's retrievers.

Modules
-------
:mod:`negplugins.beir.folder`
    :func:`read_beir_folder`, a strict reader of BEIR folders (errors name the file and line).
:mod:`negplugins.beir.export`
    :func:`export_beir`, any registered dataset (or subset) as ``corpus.jsonl``, ``queries.jsonl``
    and ``qrels/test.tsv``, readable by ``beir.datasets.data_loader.GenericDataLoader``.
:mod:`negplugins.beir.results`
    :func:`results_to_run`, BEIR results (``{query_id: {doc_id: score}}``) to a TREC run with the
    suite's metadata sidecar.
:mod:`negplugins.runners.beir`
    :func:`beir_dense_search` (BEIR's ``DenseRetrievalExactSearch``) and :func:`beir_rerank` (BEIR's
    ``Rerank`` with a cross-encoder), writing TREC runs.
:mod:`negplugins.beir.commands`
    ``negplugins export beir``, ``negplugins import beir``, ``negplugins search beir-dense`` and
    ``negplugins search beir-rerank``.

Only :mod:`~negplugins.runners.beir` needs the ``beir`` package (``pip install negplugins[beir]``);
exporting, importing and reading BEIR folders do not.

Convention differences between BEIR and the suite
-------------------------------------------------
* ``EvaluateRetrieval.evaluate`` drops every retrieved document whose id equals the query id
  (``ignore_identical_ids=True`` by default), and ``DenseRetrievalExactSearch.search`` never returns
  such a document. The suite's evaluation keeps them. The two agree whenever no query id is also a
  document id (true of every registered dataset) or when ``ignore_identical_ids=False``.
* BEIR averages pytrec_eval's scores over the queries that are both judged and in the results;
  ir_measures (hence ``negplugins evaluate``) averages over every judged query, counting a query
  without results as zero. ``mrr`` of ``evaluate_custom`` divides by the number of judged queries
  (and raises ``KeyError`` for a result query without judgements). ``evaluate`` rounds to 5 decimals
  and, with ``ignore_identical_ids``, removes the documents from the caller's results in place.
* Labels: BEIR's loader keeps every qrels row, ``-1`` and ``0`` included. pytrec_eval, which both
  BEIR and ir_measures call for nDCG and recall, counts a label as relevant only when it is at least
  1 and uses ``max(label, 0)`` as the gain, so ``-1`` scores as ``0``; BEIR's ``mrr`` also keeps
  only labels above 0. The explicit negatives therefore change no standard measure; only the
  suite's negation measures read them.
"""

from .folder import BeirFolder, BeirFormatError, read_beir_folder

__all__ = ["BeirFolder", "BeirFormatError", "read_beir_folder"]
