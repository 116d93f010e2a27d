"""The report card's steps for one benchmark: the model, the files the command owns, what a re-run reuses, and
each protocol (dense retrieval, reranking, NevIR's pairs) with its baselines and evaluation.

:func:`negplugins.reportcard.suite.run_benchmark` runs them for every benchmark selected.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ir_datasets_ext.spec import PYSERINI_BM25

from .. import datasets
from ..errors import UserError
from ..io.files import atomic_writer
from ..io.jsonfile import read_json
from ..io.outputs import check_replaceable_file
from ..io.sidecars import file_sha256, metadata_path, read_metadata
from ..measures.ranking import STOCK
from ..rendering.text import json_text

SUMMARY_FILE = "summary.json"
RESULTS_FILE = "results.json"
SUMMARY_FORMAT = "negplugins-benchmark-summary"
RESULTS_FORMAT = "negplugins-benchmark-results"
FORMAT_VERSION = 2  # 2: results hold the confidence intervals (ci95), the summary the baselines
MAX_RESULTS_BYTES = 256 * 1024 * 1024
MAX_SUMMARY_BYTES = 64 * 1024 * 1024


# -- the model --------------------------------------------------------------------------------------

@dataclass
class Model:
    ref: object  # ModelRef
    kind: str  # how it scores: "dense" (an embedding model) or a reranker kind
    encoder: object | None = None  # SentenceEncoder, for dense retrieval
    scorer: tuple | None = None  # (scorer, kind, ref) for rerank()
    parameters: int | None = None


def _is_model_object(model) -> bool:
    return model is not None and not isinstance(model, (str, os.PathLike))


def model_reference(model, reranker):
    """``(ModelRef, object or None)``, without loading weights from files (a model object is fingerprinted)."""
    from ..runners.encoders import SentenceEncoder, resolve_model

    if _is_model_object(model):
        if reranker not in (None, "bi-encoder"):
            raise UserError(f"--reranker {reranker}: a model object is used as a sentence-transformers embedding "
                            "model; give a cross-encoder or monoT5 reranker by folder or id")
        encoder = SentenceEncoder.from_model(model)
        return encoder.ref, encoder
    return resolve_model(model), None


def load_model(ref, encoder, reranker, batch_size) -> Model:
    from ..runners.encoders import SentenceEncoder, parameter_count
    from ..runners.rerank import RERANK_DEFAULTS, BiEncoderScorer, load_reranker

    rerank_batch = batch_size or RERANK_DEFAULTS["batch_size"]
    if reranker is None or reranker == "bi-encoder":
        encoder = encoder or SentenceEncoder(ref)
        scorer = BiEncoderScorer(ref, rerank_batch, encoder=encoder)
        return Model(ref, "dense" if reranker is None else "bi-encoder", encoder, (scorer, "bi-encoder", ref),
                      parameter_count(encoder.model))
    scorer, kind, _ = load_reranker(ref.path, reranker, batch_size=rerank_batch)
    return Model(ref, kind, None, (scorer, kind, ref), parameter_count(scorer.model))  # the name the user gave


# -- files this command owns ------------------------------------------------------------------------

#: Text near the start of every report file this command writes (how a file left by an interrupted run is known).
GENERATOR = "negplugins benchmark"


class Ledger:
    """The files of an output folder this command wrote, with their SHA-256 (kept in ``summary.json``).

    A file may be replaced when it is absent, holds what is about to be written, or is this command's:
    the SHA-256 the ledger recorded for it, or, for a file the ledger does not know (a run interrupted
    before it wrote the summary), this command's mark (the ``format`` of its JSON files, :data:`GENERATOR`
    in the first kilobyte of the others). A file the ledger knows but that changed since (edited) is
    replaced only with ``force``; so is anything else.
    """

    def __init__(self, output: Path, force: bool):
        self.output = output
        self.force = force
        self.files: dict[str, str] = {}
        record = our_json(output / SUMMARY_FILE, SUMMARY_FORMAT, MAX_SUMMARY_BYTES)
        if record is not None and isinstance(record.get("files"), dict):
            self.files = {k: v for k, v in record["files"].items() if isinstance(k, str) and isinstance(v, str)}

    def relative(self, path: Path) -> str:
        return path.relative_to(self.output).as_posix()

    def ours(self, path: Path) -> bool:
        relative = self.relative(path)
        if path.name == SUMMARY_FILE and path.parent == self.output:
            return our_json(path, SUMMARY_FORMAT, MAX_SUMMARY_BYTES) is not None
        if relative in self.files:
            return self.files[relative] == file_sha256(path)
        if path.name == RESULTS_FILE:
            return our_json(path, RESULTS_FORMAT, MAX_RESULTS_BYTES) is not None
        try:
            with open(path, "rb") as f:
                return GENERATOR.encode() in f.read(1024)
        except OSError:
            return False

    def check(self, path: Path, content: bytes | None = None) -> None:
        """Refuse (before any work) a file this command may not replace."""
        check_replaceable_file(path, force=self.force)
        if self.force or not path.exists():
            return
        if content is not None and path.is_file() and file_sha256(path) == hashlib.sha256(content).hexdigest():
            return
        if not path.is_file() or not self.ours(path):
            raise UserError(f"{path}: exists and is not what negplugins benchmark last wrote there (edited, or "
                            f"another program's); choose another --output or pass --force to replace it")

    def write(self, path: Path, text: str) -> bool:
        """Write ``text`` (UTF-8) unless the file already holds it; record its SHA-256. True if written."""
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        written = False
        if not (path.is_file() and file_sha256(path) == digest):
            self.check(path, data)
            with atomic_writer(path, "wb") as f:
                f.write(data)
            written = True
        if path.name != SUMMARY_FILE or path.parent != self.output:
            self.files[self.relative(path)] = digest
        return written


def our_json(path: Path, kind: str, max_bytes: int) -> dict | None:
    """The JSON object at ``path`` when it is this command's file of ``kind`` (its ``format``), else None."""
    if not path.is_file():
        return None
    try:
        record = read_json(path, what=kind.replace("-", " "), max_bytes=max_bytes)
    except UserError:
        return None
    return record if isinstance(record, dict) and record.get("format") == kind else None


# -- progress ---------------------------------------------------------------------------------------

class StepProgress:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def say(self, text: str) -> None:
        if self.enabled:
            print(f"negplugins benchmark: {text}", file=sys.stderr, flush=True)


# -- reuse ------------------------------------------------------------------------------------------

def _field(record, dotted: str):
    value = record
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


_MISSING = object()


def _reusable_run(path: Path, expected: dict) -> dict | None:
    """The sidecar of ``path`` when the run can be reused: it matches the file and every ``expected`` field."""
    if not path.is_file() or not metadata_path(path).is_file():
        return None
    try:
        meta = read_metadata(path)
    except UserError:
        return None
    if meta.get("run") != path.name or meta.get("run_sha256") != file_sha256(path):
        return None
    if any(_field(meta, key) != value for key, value in expected.items()):
        return None
    if meta.get("data_origin", []) != datasets.data_origins(datasets.load(meta["dataset"])):
        return None  # made on other files (a derived copy, the release): made again
    return meta


def _qrels_sha256(qrels: dict) -> str:
    digest = hashlib.sha256()
    for query_id in sorted(qrels):
        for doc_id in sorted(qrels[query_id]):
            digest.update(f"{query_id}\t{doc_id}\t{qrels[query_id][doc_id]}\n".encode())
    return digest.hexdigest()


def _reusable_results(path: Path, run: Path, qrels_sha: str, measures: list[str], origins: list[dict]) -> dict | None:
    record = our_json(path, RESULTS_FORMAT, MAX_RESULTS_BYTES)
    if record is None or record.get("version") != FORMAT_VERSION:
        return None
    evaluation = record.get("evaluation")
    if record.get("run") != run.name or record.get("run_sha256") != file_sha256(run) \
            or record.get("qrels_sha256") != qrels_sha or not isinstance(evaluation, dict) \
            or evaluation.get("measures") != measures or evaluation.get("ties") != STOCK \
            or evaluation.get("data_origin", []) != origins:
        return None  # a record without "ties" was scored before standard measures were stock: score again
    return record


# -- the protocols ----------------------------------------------------------------------------------

def run_name(spec, model: Model) -> str:
    name = datasets.slug(model.ref.name)
    if spec.protocol == "pairs":
        kind = "bi-encoder" if model.kind == "dense" else model.kind
        return f"pairs-{kind}-{name}"
    if model.kind == "dense":
        return f"dense-{name}"
    return f"bm25-{model.kind}-{name}"


def _dense_index_path(indexes: Path, dataset_id: str, ref) -> Path:
    corpus = datasets.slug(datasets.docs_root_id(dataset_id))
    name = datasets.slug(ref.name)
    if ref.path is None:  # a model object: its own index, never one built from files of the same name
        name = f"{name}-{ref.sha256[:12]}"
    return indexes / "faiss" / corpus / name


def probe(spec, dataset_id: str):
    """``(dataset, qrels)`` once the data the protocol needs is readable; raises what makes it unavailable."""
    from ..evaluation.scoring import load_judged

    dataset, qrels = load_judged(dataset_id)
    if not qrels:
        raise UserError(f"{dataset_id}: the qrels hold no judged query")
    if not datasets.query_texts(dataset):
        raise UserError(f"{dataset_id}: the dataset has no queries")
    if spec.protocol == "pairs":
        if not dataset.has_scoreddocs() or next(iter(dataset.scoreddocs_iter()), None) is None:
            raise UserError(f"{dataset_id}: the dataset has no candidate documents (scoreddocs) to score")
    if not dataset.has_docs() or next(iter(dataset.docs_iter()), None) is None:
        raise UserError(f"{dataset_id}: the dataset has no documents")
    return dataset, qrels


def unavailable_errors() -> tuple:
    from ir_datasets_ext.download import DownloadError
    from ir_datasets_ext.util import FormatError

    return (DownloadError, FormatError, UserError)


def _reused(run: Path, expected: dict, step: str, what: str, outcome, say) -> bool:
    """Whether ``run`` is reused (:func:`_reusable_run`); if so, the step is recorded and said so."""
    start = time.perf_counter()
    if not _reusable_run(run, expected):
        return False
    say(f"{what}: reused {run}")
    timed(outcome, step, "reused", start)
    return True


def timed(outcome, step: str, how: str, start: float) -> float:
    seconds = time.perf_counter() - start
    outcome.steps.append((step, how, seconds))
    return seconds


def run_protocol(spec, dataset_id: str, folder: Path, model: Model, load, indexes: Path, batch_size, outcome,
                  say, progress: bool, force: bool, command) -> Path:
    """Write (or reuse) the system's run for one dataset; returns its path.

    ``model`` names the model and how it scores (not loaded); ``load()`` returns it loaded, and is called
    only when a step cannot be reused.
    """
    from ..runners.dense import DENSE_DEFAULTS, dense_index, dense_search
    from ..runners.rerank import RERANK_DEFAULTS, rerank

    run = folder / f"{run_name(spec, model)}.trec.gz"
    tag = run_name(spec, model)
    made_by = {"model.sha256": model.ref.sha256, "model.files_sha256": model.ref.files_sha256}
    if spec.protocol == "pairs":
        expected = {"dataset": dataset_id, "runner": "rerank", "tag": tag, **made_by,
                    "parameters.reranker": model.scorer[1], "parameters.top_k": spec.depth,
                    "parameters.candidates": "scoreddocs"}
        if _reused(run, expected, "pairs", "scoring its candidate pairs", outcome, say):
            return run
        start = time.perf_counter()
        say(f"scoring each query's {spec.depth} candidates with {model.scorer[1]} {model.ref.name}")
        rerank(dataset_id, run, candidates=True, top_k=spec.depth, batch_size=batch_size or RERANK_DEFAULTS["batch_size"],
               run_tag=tag, loaded=load().scorer, force=force, command=command, progress=progress)
        say(f"scored the pairs in {timed(outcome, 'pairs', 'ran', start):.1f} s -> {run}")
        return run

    if model.kind == "dense":
        expected = {"dataset": dataset_id, "runner": "dense", "tag": tag, **made_by,
                    "parameters.hits": spec.depth}
        if _reused(run, expected, "dense retrieval", f"dense retrieval (top {spec.depth})", outcome, say):
            return run
        start = time.perf_counter()
        index = _dense_index_path(indexes, dataset_id, model.ref)
        dense_batch = batch_size or DENSE_DEFAULTS["batch_size"]
        encoder = load().encoder
        say(f"dense index {index}: encoding the corpus, or reusing the index if up to date")
        built = dense_index(dataset_id, index=index, batch_size=dense_batch, progress=progress, encoder=encoder)
        say(f"dense index {'built' if built.built else 'reused'} in "
            f"{timed(outcome, 'dense index', 'ran' if built.built else 'reused', start):.1f} s")
        start = time.perf_counter()
        dense_search(dataset_id, run, index=index, hits=spec.depth, batch_size=dense_batch, run_tag=tag,
                     progress=progress, force=force, encoder=encoder, command=command)
        say(f"dense retrieval (top {spec.depth}) in {timed(outcome, 'dense retrieval', 'ran', start):.1f} s -> {run}")
        return run

    # BM25, then the reranker
    first = _baseline_run(spec, dataset_id, PYSERINI_BM25, folder, indexes, outcome, say, force, command,
                          what="BM25 first stage")
    outcome.first_stage = first
    expected = {"dataset": dataset_id, "runner": "rerank", "tag": tag, **made_by,
                "parameters.reranker": model.kind, "parameters.top_k": spec.depth, "parameters.candidates": "run",
                "first_stage.sha256": file_sha256(first)}
    if _reused(run, expected, "rerank", f"reranking the top {spec.depth}", outcome, say):
        return run
    start = time.perf_counter()
    say(f"reranking the top {spec.depth} with {model.kind} {model.ref.name}")
    rerank(dataset_id, run, run=first, top_k=spec.depth, batch_size=batch_size or RERANK_DEFAULTS["batch_size"],
           run_tag=tag, loaded=load().scorer, force=force, command=command, progress=progress)
    say(f"reranked in {timed(outcome, 'rerank', 'ran', start):.1f} s -> {run}")
    return run


def _baseline_run(spec, dataset_id: str, baseline, folder: Path, indexes: Path, outcome, say, force: bool,
                  command, what: str | None = None) -> Path:
    """Write (or reuse) a baseline's run for one dataset, to the benchmark's depth; returns its path.

    ``bm25``: Lucene BM25 through Pyserini at the baseline's parameters (the index built or reused under
    ``<indexes>/lucene``, postings only); ``bm25s``: the bm25s runner with the baseline's preset.
    """
    run = folder / f"{baseline.name}.trec.gz"
    what = what or f"baseline {baseline.name}"
    parameters = {f"parameters.{k}": v for k, v in baseline.parameters.items()}
    if baseline.runner == "bm25s":
        parameters["parameters.preset"] = baseline.preset
    expected = {"dataset": dataset_id, "runner": baseline.runner, "parameters.hits": spec.depth, **parameters}
    if _reused(run, expected, baseline.name, f"{what} (top {spec.depth})", outcome, say):
        return run
    start = time.perf_counter()
    if baseline.runner == "bm25":
        from ..runners.bm25 import bm25_search
        from ..runners.lucene_index import lucene_index

        index = indexes / "lucene" / datasets.slug(datasets.docs_root_id(dataset_id))
        say(f"{what} (top {spec.depth}): {baseline.system}; Lucene index {index}")
        index, _ = lucene_index(dataset_id, index=index, reuse_slim=True)  # BM25 needs postings only
        bm25_search(dataset_id, run, index=index, hits=spec.depth, force=force, command=command,
                    **dict(baseline.parameters))
    else:
        from ..runners.bm25s import bm25s_search

        say(f"{what} (top {spec.depth}): {baseline.system}")
        bm25s_search(dataset_id, run, preset=baseline.preset, hits=spec.depth, force=force, command=command,
                     **dict(baseline.parameters))
    say(f"{what} in {timed(outcome, baseline.name, 'ran', start):.1f} s -> {run}")
    return run


def evaluate_run(spec, dataset_id, run: Path, qrels, results: Path, ledger: Ledger, outcome, say,
              name: str | None = None, step: str = "evaluation") -> dict:
    """Evaluate (or reuse the results of) ``run``: the results record, with its confidence intervals."""
    from ..evaluation.scoring import evaluate
    from ..evaluation.significance import evaluation_intervals

    measures, _ = spec.default_measures(dataset_id, qrels)
    qrels_sha = _qrels_sha256(qrels)
    start = time.perf_counter()
    dataset = datasets.load(dataset_id)
    record = _reusable_results(results, run, qrels_sha, measures, datasets.data_origins(dataset))
    if record is not None:
        timed(outcome, step, "reused", start)
        say(f"{step}: reused {results}")
        ledger.files[ledger.relative(results)] = file_sha256(results)
        return record
    evaluation = evaluate(dataset_id, run, per_query=True, name=name or outcome.system, dataset=dataset, qrels=qrels)
    record = {"format": RESULTS_FORMAT, "version": FORMAT_VERSION, "benchmark": spec.name, "dataset": dataset_id,
              "protocol": spec.protocol, "depth": spec.depth, "run": run.name, "run_sha256": file_sha256(run),
              "qrels_sha256": qrels_sha, "primary": spec.main_measure, "evaluation": evaluation.to_dict(),
              "ci95": evaluation_intervals(evaluation)}
    record["evaluation"]["run"] = run.name  # the file name only: the results do not depend on where they are
    ledger.write(results, json_text(record))
    seconds = timed(outcome, step, "ran", start)
    primary = evaluation.overall.get(spec.main_measure)
    shown = "no value" if primary is None or primary != primary else f"{primary:.4f}"
    say(f"{step} in {seconds:.1f} s: {spec.main_measure} {shown} -> {results}")
    return record


def run_baselines(spec, dataset_id: str, folder: Path, qrels, indexes: Path, ledger: Ledger, outcome, say,
               force: bool, command, model_record: dict) -> list[dict]:
    """Run and evaluate every baseline of ``spec`` on one dataset, and compare each with the model's run.

    Returns the summary entries of the baselines: their system, files, scores with confidence intervals, and
    ``vs_model`` on the primary measure (model minus baseline: mean difference, its 95% t interval, the paired
    randomization test's p-value, Holm-corrected across the baselines, and the queries compared: for PairedAcc, the
    NevIR pairs, each once).
    """
    from ..evaluation.scoring import shared_units
    from ..evaluation.significance import PERMUTATIONS, compare

    entries, per_query = [], []
    for baseline in spec.computed_baselines():
        run = _baseline_run(spec, dataset_id, baseline, folder, indexes, outcome, say, force, command)
        results = folder / f"{baseline.name}.results.json"
        entry = {"name": baseline.name, "system": baseline.system, "runner": baseline.runner,
                 "parameters": dict(baseline.parameters), "preset": baseline.preset, "reproduces": baseline.reproduces,
                 "authors_pipeline": baseline.authors_pipeline, "run": run, "results": None, "overall": {},
                 "counts": {}, "subsets": {}, "negation_split": None, "ci95": {}}
        entries.append(entry)
        if _empty_run(run):  # BM25 found no query term in the corpus: a result with nothing to score
            entry["reason"] = "its run holds no line: no query shares a term with any document"
            say(f"baseline {baseline.name}: not evaluated, {entry['reason']}")
            continue
        record = evaluate_run(spec, dataset_id, run, qrels, results, ledger, outcome, say, name=baseline.system,
                           step=f"{baseline.name} evaluation")
        evaluation = record["evaluation"]
        per_query.append((entry, evaluation.get("per_query") or {}))
        entry.update(results=results, overall=evaluation["overall"], counts=evaluation["counts"],
                     subsets=evaluation["subsets"], negation_split=evaluation.get("negation_split"), ci95=record["ci95"])
    if per_query:
        primary = model_record["primary"]
        model = {m: {q: v for q, v in values.items() if v is not None}
                 for m, values in (model_record["evaluation"].get("per_query") or {}).items()}
        others = [{m: {q: v for q, v in values.items() if v is not None} for m, values in pq.items()}
                  for _, pq in per_query]
        tests = compare([model, *others], [primary], baseline=0, units=shared_units([primary], qrels))
        for (entry, _), test in zip(per_query, tests[1:]):
            t = test[primary]
            low, high = t["ci95"]
            entry["vs_model"] = {"measure": primary, "n": t["n"], "mean_diff": _clean(-t["mean_diff"]),
                                 "ci95": [_clean(-high), _clean(-low)],
                                 "p_randomization_holm": _clean(t["p_randomization_holm"]),
                                 "permutations": PERMUTATIONS}
    return entries


def _empty_run(run: Path) -> bool:
    """Whether a run file (``.gz`` or plain) holds no line."""
    import gzip

    opener = gzip.open if run.suffix == ".gz" else open
    with opener(run, "rb") as f:
        return not f.read(1)


def _clean(value):
    from ..evaluation.results import clean_float

    return clean_float(value)
