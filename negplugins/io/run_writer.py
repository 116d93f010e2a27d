"""The one run writer of every runner: a TREC run and its metadata sidecar, appearing together or neither."""

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
    """What a runner wrote: the run (None when nothing was, ``complete`` false), its sidecar, how many lines for
    how many queries, remarks for the user; it reads as the mapping of ``details``, the runner's own record."""

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
    """Write the run of ``ranking`` (``(query_id, [(doc_id, score), ...])``, maybe a generator) to ``output`` and its
    sidecar, together; the entries ``lines`` and ``metadata`` of ``details``, where present, are filled in."""
    with written_together():  # the run and its sidecar appear together, or neither
        lines = write_run(output, ranking, sidecar.tag)
        path = write_metadata(output, **vars(sidecar))
    details = dict(details or {})
    for key, value in (("lines", lines), ("metadata", str(path))):
        if key in details:
            details[key] = value
    return RunResult(run=Path(output), sidecar=path, dataset=sidecar.dataset, tag=sidecar.tag, lines=lines,
                     queries=queries, notes=tuple(notes), details=details)
