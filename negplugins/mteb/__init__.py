"""Speak MTEB: the suite's benchmarks as MTEB tasks, and its results as MTEB result files.

* :func:`get_tasks` (:mod:`negplugins.mteb.tasks`): MTEB retrieval tasks for ComLQ, ExcluIR, NevIR, BoolQuestions
  and DuReader-retrieval, their data read through ir_datasets, for ``mteb.evaluate``::

      import mteb, negplugins.mteb
      from sentence_transformers import SentenceTransformer
      results = mteb.evaluate(SentenceTransformer("path/to/model"), tasks=negplugins.mteb.get_tasks(["ComLQ"]))

* :mod:`negplugins.mteb.results`: the MTEB result files ``negplugins benchmark`` writes beside its report
  (``<output>/mteb/results/<model>/<revision>/<Task>.json`` and ``model_meta.json``), which MTEB's
  ``TaskResult.from_disk`` and ``ResultCache`` read.
* :mod:`negplugins.mteb.naming`: the names both use (tasks, splits, score keys, models), from the specs.

MTEB (the ``mteb`` extra) is imported by :func:`get_tasks` and by the result files' writer, never by
``import negplugins`` nor by the import hook; nothing here changes MTEB's own tasks or numbers. See docs/mteb.md.
"""

from __future__ import annotations

__all__ = ["get_tasks"]


def get_tasks(names=None):
    """MTEB tasks for the suite's benchmarks, as ``mteb.get_tasks`` (see :func:`negplugins.mteb.tasks.get_tasks`)."""
    from .tasks import get_tasks as _get_tasks

    return _get_tasks(names)
