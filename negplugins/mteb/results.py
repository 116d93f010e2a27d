"""MTEB result files of a ``negplugins benchmark`` run, in MTEB's results layout, derived from its summary.

Each is validated by MTEB's own models before it is written; the numbers are the suite's (docs/mteb.md).
"""

from __future__ import annotations

import json
import math
import warnings
from datetime import datetime
from importlib import metadata
from pathlib import Path

from .. import datasets
from ..rendering.text import json_text
from . import naming


class MtebUnavailable(Exception):
    """The MTEB result files cannot be made here (mteb is not installed); the message says why."""


def planned_paths(output, model: dict, specs) -> list[Path]:
    """The files :func:`result_files` may write for ``model`` (a run sidecar's ``model`` record, with ``name``)."""
    name, revision = naming.model_name_and_revision(model)
    folder = naming.results_folder(output, name, revision)
    return [naming.result_path(output, name, revision, spec) for spec in specs] + [folder / naming.MODEL_META_FILE]


def _mteb_version() -> str:
    try:
        return metadata.version("mteb")
    except metadata.PackageNotFoundError:
        raise MtebUnavailable("mteb is not installed (pip install 'negplugins[mteb]')") from None


def _value(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _score_entry(spec, entry: dict, generator: str, mteb_version: str) -> tuple[str, dict] | None:
    """``(split, MTEB score entry)`` of one dataset's evaluation; None when its primary measure has no value."""
    split, subset = naming.split_and_subset(spec, entry["dataset"])
    overall = entry["overall"]
    main = _value(overall.get(entry["primary"]))
    if main is None:
        return None
    keys = {naming.score_key(name): name for name in entry["measures"] if _value(overall.get(name)) is not None}
    try:
        version = metadata.version("negplugins")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree without metadata
        version = None
    provenance = {"generator": f"{generator} {version}" if version else generator, "dataset": entry["dataset"],
                  "system": entry["system"], "run": entry["run"], "results": entry["results"],
                  "queries": entry["queries"], "measures": keys, "data_source": spec.data.url or None,
                  "data_revision": spec.data.revision or None}
    if entry.get("data_origin"):
        # read from a derived copy, not the release the revision names: the copy's record travels with the number
        provenance["data_origin"] = entry["data_origin"]
    scores = {"main_score": main, "hf_subset": subset, "languages": naming.language_codes(spec),
              "mteb_version": mteb_version, "negplugins": provenance}
    scores.update({key: _value(overall[name]) for key, name in keys.items()})
    return split, scores


def _task_result(spec, entries: list[dict], generator: str, mteb_version: str) -> dict | None:
    scores: dict[str, list[dict]] = {}
    for entry in entries:
        made = _score_entry(spec, entry, generator, mteb_version)
        if made is not None:
            scores.setdefault(made[0], []).append(made[1])
    if not scores:
        return None
    created = max((entry["created"] for entry in entries if entry.get("created")), default=None)
    return {"dataset_revision": naming.dataset_revision(spec), "task_name": naming.task_name(spec),
            "mteb_version": mteb_version, "scores": scores, "evaluation_time": None, "kg_co2_emissions": None,
            "date": datetime.fromisoformat(created).timestamp() if created else None, "evaluation_phases": None}


def _model_meta(model: dict, name: str, revision: str) -> dict:
    from mteb.models import ModelMeta

    reference = f"https://huggingface.co/{model['id']}" if model.get("revision") else None
    encoding = model.get("encoding")  # how negplugins benchmark ran it, when not as sentence-transformers loads it
    loader = {"loader_kwargs": _loader_kwargs(encoding)} if encoding else {}
    meta = ModelMeta.create_empty(overwrites=dict(name=name, revision=revision, n_parameters=model.get("parameters"),
                                                  framework=["PyTorch"], modalities=["text"], reference=reference,
                                                  **loader))
    record = json.loads(json.dumps(meta.to_dict(), default=str))  # as mteb's ResultCache.save_to_cache writes it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # mteb's own to_dict writes its deprecated is_cross_encoder
        ModelMeta.model_validate_json_resolved(json.dumps(record))  # as mteb's ResultCache reads it
    return record


def _loader_kwargs(encoding: dict) -> dict:
    """MTEB's ``model_prompts`` (query and document prefixes) and the rest of the encoding the model was run with."""
    kwargs = {k: v for k, v in encoding.items() if k not in ("query_prefix", "passage_prefix")}
    if "query_prefix" in encoding:
        kwargs["model_prompts"] = {"query": encoding["query_prefix"], "document": encoding["passage_prefix"]}
    return kwargs


def result_files(summary: dict, output, generator: str) -> list[tuple[Path, str]]:
    """``(path, text)`` of every MTEB result file of a summary; none for a reranker or when nothing ran."""
    if summary["protocol"].get("reranker") is not None:
        return []
    done = [entry for entry in summary["benchmarks"] if entry["status"] == "done"]
    if not done:
        return []
    mteb_version = _mteb_version()
    from mteb.results import TaskResult

    model = summary["model"]
    name, revision = naming.model_name_and_revision(model)
    by_benchmark: dict[str, list[dict]] = {}
    for entry in done:
        by_benchmark.setdefault(entry["benchmark"], []).append(entry)
    files = []
    for benchmark, entries in by_benchmark.items():
        spec = datasets.benchmark_of(benchmark)
        record = _task_result(spec, entries, generator, mteb_version)
        if record is None:
            continue
        TaskResult.model_validate(record)  # what mteb would not read is never written
        files.append((naming.result_path(output, name, revision, spec), json_text(record)))
    if files:
        folder = naming.results_folder(output, name, revision)
        files.append((folder / naming.MODEL_META_FILE, json_text(_model_meta(model, name, revision), indent=4)))
    return files
