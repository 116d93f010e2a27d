"""The one run writer of every runner: a TREC run and its metadata sidecar, written together, and what was written.

Every runner (``search bm25``, ``bm25s``, ``dense``, ``splade``, ``rerank``, ``beir-dense``, ``beir-rerank``, and a
BEIR results file turned into a run) ends the same way: the ranking is written as a run
(:func:`negplugins.io.trec.write_run`), its sidecar beside it (:func:`negplugins.io.sidecars.write_metadata`), both
appearing together or neither (:func:`negplugins.io.files.written_together`), and a :class:`RunResult` is returned.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .files import written_together
from .sidecars import write_metadata
from .trec import write_run

__all__ = ["RunResult", "Sidecar", "write_run_and_sidecar"]


@dataclass(frozen=True)
class Sidecar:
    """What the sidecar of a run records (the arguments of :func:`negplugins.io.sidecars.write_metadata`)."""

    dataset: str
    runner: str
    system: str
    tag: str
    parameters: dict
    model: dict | None = None
    index: dict | None = None
    first_stage: dict | None = None
    language: str = "en"
    command: str | None = None


@dataclass(frozen=True)
class RunResult(Mapping):
    """What a runner wrote: the run, its sidecar, how many lines for how many queries.

    ``details`` holds what the runner adds (its parameters, index, model, remarks); the result reads as the
    mapping of them too (``result["index"]``, ``result.get("notes")``), the dictionary the runners returned
    before, so existing callers keep working.

    Attributes
    ----------
    run : Path or None
        The run file written; ``None`` when nothing was written (a dense search whose sharded encoding is not
        finished: ``complete`` is false).
    sidecar : Path or None
        Its metadata sidecar.
    dataset : str
        The dataset id the run ranks.
    tag : str or None
        The run's tag (its last column).
    lines : int or None
        Lines written.
    queries : int
        Queries of the dataset ranked.
    notes : tuple of str
        Remarks for the user (a slow dtype on this machine, queries outside a subset).
    complete : bool
        Whether the run was written.
    details : dict
        The runner's own record of what it ran.
    """

    run: Path | None
    sidecar: Path | None
    dataset: str
    tag: str | None
    lines: int | None
    queries: int
    notes: tuple[str, ...] = ()
    complete: bool = True
    details: dict = field(default_factory=dict)

    def __getitem__(self, key: str):
        return self.details[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.details)

    def __len__(self) -> int:
        return len(self.details)


def write_run_and_sidecar(output: str | os.PathLike, ranking, sidecar: Sidecar, *, queries: int,
                          details: dict | None = None, notes=()) -> RunResult:
    """Write the run of ``ranking`` (``(query_id, [(doc_id, score), ...])`` in the order to write) to ``output``
    and its sidecar, atomically and together, and return what was written.

    The ranking may be a generator: it is consumed while the run is written, before the sidecar (which records
    the run's SHA-256) is. ``details`` is the runner's record of the run; its entries ``lines`` and ``metadata``,
    where it has them, are set to the lines written and the sidecar's path.
    """
    with written_together():  # the run and its sidecar appear together, or neither
        lines = write_run(output, ranking, sidecar.tag)
        path = write_metadata(output, dataset=sidecar.dataset, runner=sidecar.runner, system=sidecar.system,
                              tag=sidecar.tag, parameters=sidecar.parameters, model=sidecar.model, index=sidecar.index,
                              first_stage=sidecar.first_stage, language=sidecar.language, command=sidecar.command)
    details = dict(details or {})
    for key, value in (("lines", lines), ("metadata", str(path))):
        if key in details:
            details[key] = value
    return RunResult(run=Path(output), sidecar=path, dataset=sidecar.dataset, tag=sidecar.tag, lines=lines,
                     queries=queries, notes=tuple(notes), details=details)
