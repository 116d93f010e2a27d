"""MTEB result files of a ``negplugins benchmark`` run, derived from its summary as the report is.

For an embedding model (no ``--reranker``), every benchmark that ran gets one file in MTEB's results layout,
beside a ``model_meta.json``::

    <output>/mteb/results/<model folder>/<revision>/<Task>.json
    <output>/mteb/results/<model folder>/<revision>/model_meta.json

the layout of MTEB's result cache (``mteb.ResultCache(cache_path="<output>/mteb")`` reads it) and of the
``results/`` folder of MTEB's results repository. Names follow :mod:`negplugins.mteb.naming`, so a file sits
where ``mteb.evaluate`` with :func:`negplugins.mteb.get_tasks` would put the same task's result. Each file:

* ``task_name``: the benchmark's MTEB task name (``NevIR`` is MTEB's own task);
* ``dataset_revision``: the data revision the suite read (:func:`naming.dataset_revision`);
* ``scores[<split>]``: one entry per dataset run (BoolQuestions: ``msmarco`` and ``nq`` as ``hf_subset``),
  holding ``main_score`` (the benchmark's primary measure, the number of the report, unrounded), every measure
  of the evaluation under its MTEB key (``ndcg_at_10``, ``right_rank_at_10``, ...; a measure without a value
  is left out), and ``negplugins``, where the number comes from: the dataset id, the system, the run and the
  results file (relative to the output folder), the number of queries, each key's measure, the data's source
  and revision;
* ``mteb_version``: the installed mteb's (the format the file was validated against), ``date``: the newest
  run's (so a re-run that reuses every run writes the same bytes), ``evaluation_time``: none (the numbers
  were not computed by MTEB's evaluator).

Every file is validated by MTEB's own models (``TaskResult``, ``ModelMeta``) before it is handed back to be
written. The numbers are the suite's: computed by its evaluation on its runs, not by MTEB's evaluator. Where
the two differ by definition (NevIR's paired accuracy on a tie, MRR@10 on tied scores), docs/mteb.md says so.
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

__all__ = ["MtebUnavailable", "planned_paths", "result_files"]


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


def _timestamp(created: str | None) -> float | None:
    return datetime.fromisoformat(created).timestamp() if created else None


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
                  "queries": entry["queries"], "measures": keys, "data_source": spec.data_url or None,
                  "data_revision": spec.data_revision or None}
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
            "date": _timestamp(created), "evaluation_phases": None}


def _model_meta(model: dict, name: str, revision: str) -> dict:
    from mteb.models import ModelMeta

    reference = f"https://huggingface.co/{model['id']}" if model.get("revision") else None
    meta = ModelMeta.create_empty(overwrites=dict(name=name, revision=revision, n_parameters=model.get("parameters"),
                                                  framework=["PyTorch"], modalities=["text"], reference=reference))
    record = json.loads(json.dumps(meta.to_dict(), default=str))  # as mteb's ResultCache.save_to_cache writes it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # mteb's own to_dict writes its deprecated is_cross_encoder
        ModelMeta.model_validate_json_resolved(json.dumps(record))  # as mteb's ResultCache reads it
    return record


def result_files(summary: dict, output, generator: str) -> list[tuple[Path, str]]:
    """``(path, text)`` of every MTEB result file of a ``negplugins benchmark`` summary (see the module doc).

    Nothing for a reranker's results (BM25 reranked by a model is no result of that model alone in MTEB's
    layout) or when no benchmark ran.

    Raises
    ------
    MtebUnavailable
        mteb is not installed.
    """
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
