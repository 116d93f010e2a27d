"""The suite's benchmarks as MTEB tasks (:func:`get_tasks`) and its results as MTEB result files (docs/mteb.md).

MTEB is imported only by those two, never by ``import negplugins``; MTEB's own tasks are untouched.
"""

from __future__ import annotations

__all__ = ["get_tasks"]


def get_tasks(names=None):
    """MTEB tasks for the suite's benchmarks, as ``mteb.get_tasks`` (see :func:`negplugins.mteb.tasks.get_tasks`)."""
    from .tasks import get_tasks as _get_tasks

    return _get_tasks(names)
