"""Contributed runs: where they are found and what their names and sidecars must be (untrusted input)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .. import datasets
from ..errors import UserError
from ..io.sidecars import metadata_path, read_sidecar

__all__ = ["ContributionError", "Contribution", "RUN_SUFFIXES", "discover",
           "reproduces_problems", "safe_relative"]

RUN_SUFFIXES = (".trec.gz", ".trec")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")
_IGNORED = {"README.md", ".gitkeep", ".gitignore"}


class ContributionError(UserError):
    """A contributed run or its sidecar is invalid or unsafe (exit status 1)."""


@dataclass
class Contribution:
    dataset: str
    name: str
    path: Path  # absolute
    relative: str  # posix path relative to the runs folder
    meta: dict = field(default_factory=dict)


def safe_relative(root: Path, relative: str) -> Path:
    """``root / relative``, refusing absolute paths, ``..``, backslashes and anything resolving outside ``root``."""
    if not relative or "\\" in relative or "\x00" in relative:
        raise ContributionError(f"unsafe path {relative!r}")
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts:
        raise ContributionError(f"unsafe path {relative!r}: absolute or with '..'")
    path = root / pure
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise ContributionError(f"{relative}: resolves outside {root} (to {resolved})")
    return path


def _run_name(filename: str) -> str | None:
    for suffix in RUN_SUFFIXES:
        if filename.endswith(suffix):
            return filename[: -len(suffix)]
    return None


def discover(runs_root: str | os.PathLike) -> tuple[list[Contribution], list[str]]:
    """Find contributed runs; returns ``(contributions, problems)`` sorted by dataset and name."""
    root = Path(runs_root)
    if not root.is_dir():
        raise UserError(f"{root}: runs folder not found")
    root_resolved = root.resolve()
    found: list[Contribution] = []
    problems: list[str] = []
    resolved: dict[str, str | None] = {}  # dataset id -> None when registered, else the error
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(root).as_posix()
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for d in list(dirnames):
            if (here / d).is_symlink():
                dirnames.remove(d)
                problems.append(f"{(here / d).relative_to(root).as_posix()}: symlinked folders are not accepted")
        sidecars_used = set()
        for filename in sorted(filenames):
            path = here / filename
            relative = path.relative_to(root).as_posix()
            name = _run_name(filename)
            if name is None:
                continue
            if path.is_symlink() and not path.resolve().is_relative_to(root_resolved):
                problems.append(f"{relative}: symlink pointing outside {root} (to {path.resolve()})")
                continue
            if not _NAME.match(name) or ".." in name:
                problems.append(f"{relative}: run name {name!r} must match [A-Za-z0-9][A-Za-z0-9._+-]* without '..'")
                continue
            if rel_dir == ".":
                problems.append(f"{relative}: runs belong in a dataset folder, runs/<dataset id>/{filename}")
                continue
            dataset_id = rel_dir
            if dataset_id not in resolved:  # each folder's dataset id is resolved once
                try:
                    datasets.load(dataset_id)
                    resolved[dataset_id] = None
                except UserError as error:
                    resolved[dataset_id] = str(error)
            if resolved[dataset_id] is not None:
                problems.append(f"{relative}: folder {rel_dir!r} is not a registered dataset id ({resolved[dataset_id]})")
                continue
            sidecar = metadata_path(path)
            sidecars_used.add(sidecar.name)
            try:
                meta = _read_sidecar(sidecar, root_resolved)
            except ContributionError as error:
                problems.append(f"{relative}: {error}")
                continue
            problems.extend(f"{relative}: {p}" for p in _check_meta(meta, filename, dataset_id, path))
            found.append(Contribution(dataset_id, name, path, relative, meta))
        for filename in sorted(filenames):
            if filename.endswith(".meta.json") and filename not in sidecars_used:
                problems.append(f"{(here / filename).relative_to(root).as_posix()}: sidecar without a run "
                                f"(<name>.trec or <name>.trec.gz)")
    names = {}
    for c in found:
        key = (c.dataset, c.name)
        if key in names:
            problems.append(f"{c.relative}: run name {c.name!r} used twice for {c.dataset} ({names[key]})")
        names[key] = c.relative
    found.sort(key=lambda c: (c.dataset, c.name))
    return found, problems


def _read_sidecar(sidecar: Path, root_resolved: Path) -> dict:
    """The checked sidecar (:func:`negplugins.io.sidecars.read_sidecar`: bounded JSON, every field typed)."""
    if not sidecar.exists() and not sidecar.is_symlink():
        raise ContributionError(f"metadata sidecar {sidecar.name} not found")
    if sidecar.is_symlink() and not sidecar.resolve().is_relative_to(root_resolved):
        raise ContributionError(f"sidecar {sidecar.name} is a symlink pointing outside the runs folder")
    try:
        return read_sidecar(sidecar, label=f"sidecar {sidecar.name}")
    except UserError as error:
        raise ContributionError(str(error)) from None


def _check_meta(meta: dict, filename: str, dataset_id: str, path: Path) -> list[str]:
    """What ties a (well-typed) sidecar to its run: file name, dataset folder, tag, SHA-256."""
    from ..io.sidecars import file_sha256, run_tag_problems

    problems = []
    run_field = meta.get("run")
    if not isinstance(run_field, str) or "/" in run_field or "\\" in run_field or ".." in run_field \
            or run_field.startswith("~"):
        problems.append(f"sidecar field run {str(run_field)[:80]!r} must be the run's bare file name ({filename})")
    elif run_field != filename:
        problems.append(f"sidecar field run {run_field!r} does not name this run ({filename})")
    if meta.get("dataset") != dataset_id:
        problems.append(f"sidecar field dataset {str(meta.get('dataset'))[:80]!r} differs from the folder's dataset "
                        f"{dataset_id!r}")
    if path.is_file() and path.stat().st_size <= _max_bytes():
        try:
            problems.extend(f"sidecar field {p}" for p in run_tag_problems(meta.get("tag"), path))
        except UserError as error:
            problems.append(str(error))
    sha = meta.get("run_sha256")
    if sha is not None and path.is_file() and path.stat().st_size <= _max_bytes():
        if sha != file_sha256(path):
            problems.append("sidecar run_sha256 does not match the run file (regenerate the sidecar)")
    problems.extend(reproduces_problems(meta, dataset_id))
    return problems


def reproduces_problems(meta: dict, dataset_id: str) -> list[str]:
    """A sidecar's ``reproduces`` must name a system the benchmark's paper reports on ``dataset_id``."""
    system = meta.get("reproduces")
    if not isinstance(system, str):
        return []
    spec = datasets.benchmark_of(dataset_id)
    known = spec.reported_systems(dataset_id) if spec is not None else []
    if system in known:
        return []
    if not known:
        return [f"sidecar field reproduces {system[:80]!r}: the spec of {dataset_id} records no number of its "
                "paper on this dataset, so there is nothing to reproduce"]
    return [f"sidecar field reproduces {system[:80]!r} is not a system the paper reports on {dataset_id} "
            f"(reported: {', '.join(known)})"]


def _max_bytes() -> int:
    from ..io.run_columns import max_run_bytes

    return max_run_bytes()


# -- evaluation ------------------------------------------------------------------------------------
