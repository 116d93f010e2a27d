"""One model, every benchmark: run each benchmark's own protocol, evaluate it, write the results and a report.

:func:`run_benchmark` (``negplugins benchmark``) takes a model (a folder, a Hugging Face id in the local
cache, the packaged all-MiniLM-L6-v2, or a loaded ``SentenceTransformer`` object, as MTEB takes one) and,
for every registered benchmark whose data is available, runs the protocol its spec declares
(:attr:`ir_datasets_ext.spec.Benchmark.protocol`, ``depth`` and ``benchmark_datasets()``):

``retrieval``, no reranker
    Dense retrieval with the model over the whole corpus, top ``depth`` per query
    (:func:`negplugins.runners.dense.dense_search`; the faiss index is built once under
    ``<indexes>/faiss/<corpus>/<model>`` and reused).
``retrieval``, with ``reranker`` (the model is then a reranker of that kind)
    Lucene BM25 (Pyserini's defaults) top ``depth``, reranked with the model
    (:func:`negplugins.runners.rerank.rerank`, top k = ``depth``).
``pairs`` (NevIR)
    Each query's own candidates (the dataset's scoreddocs: the pair's two documents) scored with the
    model: as a bi-encoder without ``reranker``, else as the reranker.

Each run is evaluated with the benchmark's paper measures, overall and per subset
(:func:`negplugins.evaluation.evaluate`), with the 95% confidence interval of every mean
(:func:`negplugins.evaluation.significance.evaluation_intervals`: Student's t over the per-query values).

**Baselines.** Beside the model, every dataset gets the systems its spec declares that need no model
(:meth:`ir_datasets_ext.spec.Benchmark.computed_baselines`): stock Pyserini BM25 at its defaults on every
``retrieval`` benchmark (``negplugins search bm25``; the same run is a reranker's first stage), and the authors'
own pipeline where the suite has it as a preset (ComLQ: ``negplugins search bm25s --preset comlq-authors``), each
to the benchmark's depth, evaluated with the same measures and compared with the model per query on the primary
measure (:func:`negplugins.evaluation.significance.compare`: paired randomization test, Holm across the
baselines). The report counts only these in "better than N of M"; the papers' numbers are context.
``baselines=False`` (``--no-baselines``) leaves them out.

Output (``results/<model>/`` by default)::

    summary.json                 the model (id, weights SHA-256, parameters), versions, date, every dataset:
                                 its system, files and scores, or why it was skipped
    report.md, report.html       the report (see :mod:`negplugins.reportcard.report`)
    figure.svg                   the report's figure
    <dataset slug>/<run>.trec.gz the run, with its sidecar <run>.meta.json
    <dataset slug>/bm25.trec.gz  Pyserini BM25: a baseline, and the first stage of a reranked run (with its sidecar)
    <dataset slug>/results.json  the evaluation (Evaluation.to_dict, per query included, and ``ci95``)
    <dataset slug>/<baseline>.trec.gz, <baseline>.results.json   each other baseline's run and evaluation
    mteb/results/<model>/<rev>/  MTEB's results layout, an embedding model's only: <Task>.json per benchmark and
                                 model_meta.json (negplugins.mteb.results; not written without mteb installed)

A dataset whose files cannot be had (a failed download, a file missing from ``IR_DATASETS_EXT_MIRROR``, an
unreadable or malformed file) is skipped and listed with the reason; nothing else is. Progress goes to
standard error, one line per benchmark and step.

**Re-runs.** A run is reused when its sidecar still matches it (SHA-256) and records the same dataset,
runner, model fingerprint and parameters (depth; reranker kind and first stage; a baseline's parameters or
preset) and the same data origin (a run made on a derived copy is made again once the release is there, and the
reverse); its results when they record the run's SHA-256, the same qrels (SHA-256), the same measures, the same
data origin and the stock tie handling (``"ties": "stock"``, :mod:`negplugins.measures.ranking`; results written
before it was recorded are scored again). A re-run over finished results thus only renders the report again, byte
for byte the same.

**Nothing a user owns is lost.** Runs are written through :func:`negplugins.io.outputs.check_run_output`'s
rule. The other files are replaced only when they are absent, or hold what this command wrote there last
(their SHA-256 is kept in ``summary.json``), or with ``force``; a file tracked by git only with ``force``.
All of it is checked before any work. ``contribute`` copies each run and its sidecar into
``<runs>/<dataset id>/`` under the run rule (a committed run is replaced only with ``force``).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ir_datasets_ext.spec import PYSERINI_BM25, main_measure

from .. import datasets
from ..errors import UserError, error_line
from ..io.files import atomic_writer
from ..io.jsonfile import read_json
from ..io.outputs import check_replaceable_file, check_run_output
from ..io.sidecars import file_sha256, metadata_path, package_versions, read_metadata
from ..measures.ranking import STOCK
from ..options import MAX_BATCH_SIZE, check_int
from ..rendering.text import json_text

__all__ = ["RESULTS_FILE", "SUMMARY_FILE", "REPORT_FILES", "BenchmarkOutcome", "BenchmarkResult", "run_benchmark",
           "select_benchmarks", "write_report"]

SUMMARY_FILE = "summary.json"
RESULTS_FILE = "results.json"
#: The report's files, rendered from the summary (:mod:`negplugins.reportcard.report`).
REPORT_FILES = ("report.md", "report.html", "figure.svg")
SUMMARY_FORMAT = "negplugins-benchmark-summary"
RESULTS_FORMAT = "negplugins-benchmark-results"
FORMAT_VERSION = 2  # 2: results hold the confidence intervals (ci95), the summary the baselines
FIRST_STAGE = f"{PYSERINI_BM25.name}.trec.gz"
BM25_PARAMETERS = dict(PYSERINI_BM25.parameters)  # Pyserini's defaults, as `negplugins search bm25`
MAX_RESULTS_BYTES = 256 * 1024 * 1024
MAX_SUMMARY_BYTES = 64 * 1024 * 1024
_RERANKERS = ("cross-encoder", "monot5", "bi-encoder")
#: How the model is compared with each baseline (the summary's ``statistics``, the report's method line).
COMPARISON_METHOD = ("the model minus each baseline on the primary measure, per query over the queries with a value "
                     "in both: the mean difference with its 95% t interval, and the two-sided paired randomization "
                     f"test (sign flips, {10_000:,} permutations, fixed seed), Holm-corrected across the dataset's "
                     "baselines")


@dataclass
class BenchmarkOutcome:
    """What happened to one dataset of one benchmark.

    ``status`` is ``"done"`` or ``"skipped"`` (then ``reason`` says why); ``steps`` lists
    ``(step, "ran" or "reused", seconds)``; ``intervals`` holds the 95% confidence intervals of the evaluation's
    means, ``baselines`` each baseline's run, evaluation and comparison with the model (as in the summary).
    """

    benchmark: str
    title: str
    dataset: str
    protocol: str
    depth: int
    status: str
    reason: str | None = None
    system: str | None = None
    run: Path | None = None
    first_stage: Path | None = None
    results: Path | None = None
    evaluation: dict | None = None
    created: str | None = None
    steps: list[tuple[str, str, float]] = field(default_factory=list)
    contributed: Path | None = None
    intervals: dict | None = None
    baselines: list[dict] = field(default_factory=list)


@dataclass
class BenchmarkResult:
    """What :func:`run_benchmark` did: the output folder, the summary written there, and each dataset's outcome."""

    output: Path
    summary: dict
    outcomes: list[BenchmarkOutcome]
    files: list[Path]
    mteb: list[Path] = field(default_factory=list)  # the MTEB result files among ``files``

    @property
    def done(self) -> list[BenchmarkOutcome]:
        return [o for o in self.outcomes if o.status == "done"]

    @property
    def skipped(self) -> list[BenchmarkOutcome]:
        return [o for o in self.outcomes if o.status == "skipped"]


# -- selection --------------------------------------------------------------------------------------

def select_benchmarks(names=None) -> list:
    """The benchmark specs to run: all registered (registration order), or those named (a list or ``"a,b"``).

    Raises
    ------
    UserError
        A name that is no registered benchmark (the message lists them).
    """
    specs = datasets.benchmarks()
    if names is None:
        return specs
    if isinstance(names, str):
        names = names.split(",")
    wanted = [name.strip() for name in names if name.strip()]
    if not wanted:
        raise UserError("--benchmarks: no benchmark named; choose from " + ", ".join(s.name for s in specs))
    by_name = {spec.name: spec for spec in specs}
    unknown = [name for name in wanted if name not in by_name]
    if unknown:
        close = datasets.close_ids(unknown[0], list(by_name), 0.5)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise UserError(f"--benchmarks: unknown benchmark {unknown[0]!r}; {hint}choose from "
                        + ", ".join(s.name for s in specs))
    return [spec for spec in specs if spec.name in wanted]


# -- the model --------------------------------------------------------------------------------------

@dataclass
class _Model:
    ref: object  # ModelRef
    kind: str  # how it scores: "dense" (an embedding model) or a reranker kind
    encoder: object | None = None  # SentenceEncoder, for dense retrieval
    scorer: tuple | None = None  # (scorer, kind, ref) for rerank()
    parameters: int | None = None


def _is_model_object(model) -> bool:
    return model is not None and not isinstance(model, (str, os.PathLike))


def _resolve(model, reranker):
    """``(ModelRef, object or None)``, without loading weights from files (a model object is fingerprinted)."""
    from ..runners.encoders import SentenceEncoder, resolve_model

    if _is_model_object(model):
        if reranker not in (None, "bi-encoder"):
            raise UserError(f"--reranker {reranker}: a model object is used as a sentence-transformers embedding "
                            "model; give a cross-encoder or monoT5 reranker by folder or id")
        encoder = SentenceEncoder.from_model(model)
        return encoder.ref, encoder
    return resolve_model(model), None


def _load(ref, encoder, reranker, batch_size) -> _Model:
    from ..runners.encoders import SentenceEncoder, parameter_count
    from ..runners.rerank import RERANK_DEFAULTS, BiEncoderScorer, load_reranker

    rerank_batch = batch_size or RERANK_DEFAULTS["batch_size"]
    if reranker is None or reranker == "bi-encoder":
        encoder = encoder or SentenceEncoder(ref)
        scorer = BiEncoderScorer(ref, rerank_batch, encoder=encoder)
        return _Model(ref, "dense" if reranker is None else "bi-encoder", encoder, (scorer, "bi-encoder", ref),
                      parameter_count(encoder.model))
    scorer, kind, _ = load_reranker(ref.path, reranker, batch_size=rerank_batch)
    return _Model(ref, kind, None, (scorer, kind, ref), parameter_count(scorer.model))  # the name the user gave


# -- files this command owns ------------------------------------------------------------------------

#: Text near the start of every report file this command writes (how a file left by an interrupted run is known).
GENERATOR = "negplugins benchmark"


class _Ledger:
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
        record = _our_json(output / SUMMARY_FILE, SUMMARY_FORMAT, MAX_SUMMARY_BYTES)
        if record is not None and isinstance(record.get("files"), dict):
            self.files = {k: v for k, v in record["files"].items() if isinstance(k, str) and isinstance(v, str)}

    def relative(self, path: Path) -> str:
        return path.relative_to(self.output).as_posix()

    def ours(self, path: Path) -> bool:
        relative = self.relative(path)
        if path.name == SUMMARY_FILE and path.parent == self.output:
            return _our_json(path, SUMMARY_FORMAT, MAX_SUMMARY_BYTES) is not None
        if relative in self.files:
            return self.files[relative] == file_sha256(path)
        if path.name == RESULTS_FILE:
            return _our_json(path, RESULTS_FORMAT, MAX_RESULTS_BYTES) is not None
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


def _our_json(path: Path, kind: str, max_bytes: int) -> dict | None:
    """The JSON object at ``path`` when it is this command's file of ``kind`` (its ``format``), else None."""
    if not path.is_file():
        return None
    try:
        record = read_json(path, what=kind.replace("-", " "), max_bytes=max_bytes)
    except UserError:
        return None
    return record if isinstance(record, dict) and record.get("format") == kind else None


# -- progress ---------------------------------------------------------------------------------------

class _Progress:
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
    record = _our_json(path, RESULTS_FORMAT, MAX_RESULTS_BYTES)
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

def _run_name(spec, model: _Model) -> str:
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


def _reusable_index(indexes: Path, dataset_id: str, model: _Model) -> Path | None:
    """The model's dense index under ``indexes`` when a bi-encoder reranker can read its passage vectors, else None."""
    from ..runners.dense import reusable_passage_index

    if model.scorer[1] != "bi-encoder":
        return None
    scorer = model.scorer[0]
    path, _ = reusable_passage_index(dataset_id, scorer.ref, scorer.encoder.settings,
                                     _dense_index_path(indexes, dataset_id, model.ref))
    return path


def _probe(spec, dataset_id: str):
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


def _unavailable_errors() -> tuple:
    from ir_datasets_ext.download import DownloadError
    from ir_datasets_ext.util import FormatError

    return (DownloadError, FormatError, UserError)


def _timed(outcome: BenchmarkOutcome, step: str, how: str, start: float) -> float:
    seconds = time.perf_counter() - start
    outcome.steps.append((step, how, seconds))
    return seconds


def _run_protocol(spec, dataset_id: str, folder: Path, model: _Model, load, indexes: Path, batch_size, outcome,
                  say, progress: bool, force: bool, command) -> Path:
    """Write (or reuse) the system's run for one dataset; returns its path.

    ``model`` names the model and how it scores (not loaded); ``load()`` returns it loaded, and is called
    only when a step cannot be reused.
    """
    from ..runners.dense import DENSE_DEFAULTS, dense_index, dense_search
    from ..runners.rerank import RERANK_DEFAULTS, rerank

    run = folder / f"{_run_name(spec, model)}.trec.gz"
    tag = _run_name(spec, model)
    sha = model.ref.sha256
    if spec.protocol == "pairs":
        expected = {"dataset": dataset_id, "runner": "rerank", "tag": tag, "model.sha256": sha,
                    "parameters.reranker": model.scorer[1], "parameters.top_k": spec.depth,
                    "parameters.candidates": "scoreddocs"}
        start = time.perf_counter()
        if _reusable_run(run, expected):
            say(f"scoring its candidate pairs: reused {run}")
            _timed(outcome, "pairs", "reused", start)
            return run
        say(f"scoring each query's {spec.depth} candidates with {model.scorer[1]} {model.ref.name}")
        rerank(dataset_id, run, candidates=True, top_k=spec.depth, batch_size=batch_size or RERANK_DEFAULTS["batch_size"],
               run_tag=tag, loaded=load().scorer, force=force, command=command, progress=progress,
               index=_reusable_index(indexes, dataset_id, load()))
        say(f"scored the pairs in {_timed(outcome, 'pairs', 'ran', start):.1f} s -> {run}")
        return run

    if model.kind == "dense":
        expected = {"dataset": dataset_id, "runner": "dense", "tag": tag, "model.sha256": sha,
                    "parameters.hits": spec.depth}
        start = time.perf_counter()
        if _reusable_run(run, expected):
            say(f"dense retrieval (top {spec.depth}): reused {run}")
            _timed(outcome, "dense retrieval", "reused", start)
            return run
        index = _dense_index_path(indexes, dataset_id, model.ref)
        dense_batch = batch_size or DENSE_DEFAULTS["batch_size"]
        encoder = load().encoder
        say(f"dense index {index}: encoding the corpus, or reusing the index if up to date")
        built = dense_index(dataset_id, index=index, batch_size=dense_batch, progress=progress, encoder=encoder)
        say(f"dense index {'built' if built.built else 'reused'} in "
            f"{_timed(outcome, 'dense index', 'ran' if built.built else 'reused', start):.1f} s")
        start = time.perf_counter()
        dense_search(dataset_id, run, index=index, hits=spec.depth, batch_size=dense_batch, run_tag=tag,
                     progress=progress, force=force, encoder=encoder, command=command)
        say(f"dense retrieval (top {spec.depth}) in {_timed(outcome, 'dense retrieval', 'ran', start):.1f} s -> {run}")
        return run

    # BM25, then the reranker
    first = _baseline_run(spec, dataset_id, PYSERINI_BM25, folder, indexes, outcome, say, force, command,
                          what="BM25 first stage")
    outcome.first_stage = first
    expected = {"dataset": dataset_id, "runner": "rerank", "tag": tag, "model.sha256": sha,
                "parameters.reranker": model.kind, "parameters.top_k": spec.depth, "parameters.candidates": "run",
                "first_stage.sha256": file_sha256(first)}
    start = time.perf_counter()
    if _reusable_run(run, expected):
        say(f"reranking the top {spec.depth}: reused {run}")
        _timed(outcome, "rerank", "reused", start)
        return run
    say(f"reranking the top {spec.depth} with {model.kind} {model.ref.name}")
    rerank(dataset_id, run, run=first, top_k=spec.depth, batch_size=batch_size or RERANK_DEFAULTS["batch_size"],
           run_tag=tag, loaded=load().scorer, force=force, command=command, progress=progress,
           index=_reusable_index(indexes, dataset_id, load()))
    say(f"reranked in {_timed(outcome, 'rerank', 'ran', start):.1f} s -> {run}")
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
    start = time.perf_counter()
    if _reusable_run(run, expected):
        say(f"{what} (top {spec.depth}): reused {run}")
        _timed(outcome, baseline.name, "reused", start)
        return run
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
    say(f"{what} in {_timed(outcome, baseline.name, 'ran', start):.1f} s -> {run}")
    return run


def _evaluate(spec, dataset_id, run: Path, qrels, results: Path, ledger: _Ledger, outcome, say,
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
        _timed(outcome, step, "reused", start)
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
    seconds = _timed(outcome, step, "ran", start)
    primary = evaluation.overall.get(spec.main_measure)
    shown = "no value" if primary is None or primary != primary else f"{primary:.4f}"
    say(f"{step} in {seconds:.1f} s: {spec.main_measure} {shown} -> {results}")
    return record


def _baselines(spec, dataset_id: str, folder: Path, qrels, indexes: Path, ledger: _Ledger, outcome, say,
               force: bool, command, model_record: dict) -> list[dict]:
    """Run and evaluate every baseline of ``spec`` on one dataset, and compare each with the model's run.

    Returns the summary entries of the baselines: their system, files, scores with confidence intervals, and
    ``vs_model`` on the primary measure (model minus baseline: mean difference, its 95% t interval, the paired
    randomization test's p-value, Holm-corrected across the baselines, and the queries compared).
    """
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
        record = _evaluate(spec, dataset_id, run, qrels, results, ledger, outcome, say, name=baseline.system,
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
        tests = compare([model, *others], [primary], baseline=0)
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


# -- contributing -----------------------------------------------------------------------------------

def _contribution_paths(runs: Path, dataset_id: str, run: Path) -> Path:
    return runs.joinpath(*dataset_id.split("/")) / run.name


def _contribute(run: Path, destination: Path, force: bool) -> bool:
    """Copy ``run`` and its sidecar to ``destination`` under the run rule; False when already there, identical."""
    sidecar, target_sidecar = metadata_path(run), metadata_path(destination)
    if destination.is_file() and target_sidecar.is_file() and file_sha256(destination) == file_sha256(run) \
            and file_sha256(target_sidecar) == file_sha256(sidecar):
        return False
    check_run_output(destination, inputs=[run, sidecar], force=force)
    with atomic_writer(destination, "wb", inputs=[run, sidecar]) as f:
        f.write(run.read_bytes())
    with atomic_writer(target_sidecar, "wb", inputs=[run, sidecar]) as f:
        f.write(sidecar.read_bytes())
    return True


# -- the summary ------------------------------------------------------------------------------------

def _entry(outcome: BenchmarkOutcome, output: Path) -> dict:
    entry = {"benchmark": outcome.benchmark, "title": outcome.title, "dataset": outcome.dataset,
             "protocol": outcome.protocol, "depth": outcome.depth, "status": outcome.status}
    if outcome.status != "done":
        entry["reason"] = outcome.reason
        return entry
    ev = outcome.evaluation
    entry.update({
        "system": outcome.system, "created": outcome.created,
        "run": outcome.run.relative_to(output).as_posix(),
        "sidecar": metadata_path(outcome.run).relative_to(output).as_posix(),
        "first_stage": outcome.first_stage.relative_to(output).as_posix() if outcome.first_stage else None,
        "results": outcome.results.relative_to(output).as_posix(),
        "measures": ev["measures"], "primary": main_measure(outcome.dataset, ev["measures"]), "queries": ev["queries"],
        "overall": ev["overall"], "counts": ev["counts"], "breakdown_field": ev["breakdown_field"],
        "subsets": ev["subsets"], "notes": ev["notes"],
    })
    if ev.get("data_origin"):
        entry["data_origin"] = ev["data_origin"]
    if "negation_split" in ev:
        entry["negation_split"] = ev["negation_split"]
    entry["ci95"] = outcome.intervals
    entry["baselines"] = [{**b, "run": b["run"].relative_to(output).as_posix(),
                           "sidecar": metadata_path(b["run"]).relative_to(output).as_posix(),
                           "results": b["results"].relative_to(output).as_posix() if b["results"] else None}
                          for b in outcome.baselines]
    return entry


def _summary(model: _Model, reranker, outcomes, output: Path) -> dict:
    from ..evaluation.significance import CI_METHOD

    done = [o for o in outcomes if o.status == "done"]
    return {
        "format": SUMMARY_FORMAT, "version": FORMAT_VERSION,
        "model": {**model.ref.metadata(), "name": model.ref.name, "parameters": model.parameters,
                  "used_as": "embedding model (bi-encoder)" if model.kind == "dense" else f"{model.kind} reranker"},
        "protocol": {"retrieval": "dense retrieval with the model" if model.kind == "dense" else
                     f"BM25 (Pyserini, k1 {BM25_PARAMETERS['k1']}, b {BM25_PARAMETERS['b']}) reranked by the model",
                     "pairs": "the model scores each query's candidates (as a bi-encoder)" if model.kind == "dense"
                     else f"the model scores each query's candidates ({model.kind})",
                     "reranker": reranker},
        "statistics": {"intervals": CI_METHOD, "comparison": COMPARISON_METHOD},
        # the newest run's date: a re-run that reuses every run writes the same summary
        "date": max((o.created for o in done if o.created), default=None),
        "versions": package_versions(),
        "benchmarks": [_entry(o, output) for o in outcomes],
    }


def _known_parameters(output: Path, ref) -> int | None:
    """The model's parameter count from the summary in ``output``, when it is of the same weights (no load)."""
    record = _our_json(output / SUMMARY_FILE, SUMMARY_FORMAT, MAX_SUMMARY_BYTES)
    model = record.get("model") if record else None
    if isinstance(model, dict) and model.get("sha256") == ref.sha256 and isinstance(model.get("parameters"), int):
        return model["parameters"]
    return None


def write_report(summary: dict, output: str | os.PathLike, force: bool = False) -> list[Path]:
    """Render ``summary`` as ``report.md``, ``report.html`` and ``figure.svg`` in ``output``; returns their paths.

    The same summary gives the same bytes. Existing files are replaced under the rule of
    :func:`run_benchmark` (absent, unchanged since this command wrote them, or ``force``).
    """
    from .report import figure_svg, report_html, report_markdown

    output = Path(output)
    ledger = _Ledger(output, force)
    paths = [output / name for name in REPORT_FILES]
    for path in paths:
        ledger.check(path)
    for path, text in zip(paths, (report_markdown(summary), report_html(summary), figure_svg(summary))):
        ledger.write(path, text)
    return paths


# -- MTEB result files ------------------------------------------------------------------------------

def _write_mteb_results(summary: dict, output: Path, ledger: _Ledger, say) -> list[Path]:
    """Write the MTEB result files of ``summary`` (:mod:`negplugins.mteb.results`); none without mteb."""
    from ..mteb.results import MtebUnavailable, result_files

    try:
        files = result_files(summary, output, generator=GENERATOR)
    except MtebUnavailable as why:
        say(f"MTEB result files not written: {why}")
        return []
    for path, text in files:
        ledger.write(path, text)
    if files:
        say(f"MTEB result files in {files[-1][0].parent}")
    return [path for path, _ in files]


# -- the whole ------------------------------------------------------------------------------------

def _check_results_folder(output: Path, runs: Path, indexes: Path) -> None:
    """Refuse a results folder inside a folder the suite rebuilds whole, or inside the runs or indexes.

    A folder holding the suite's marker (``leaderboards/``, an index, a BEIR export) is replaced as a whole
    by the command that wrote it, which then refuses to, because of the results' files in it (``benchmark -o
    leaderboards`` broke ``leaderboard build``).

    Raises
    ------
    UserError
        One line naming the folder and what to choose instead.
    """
    from ..io.files import LEGACY_MANIFESTS, MARKER

    real = Path(os.path.realpath(output))
    for folder, what in ((runs, "the contributed runs folder"), (indexes, "the indexes folder")):
        root = Path(os.path.realpath(folder))
        if real == root or root in real.parents:
            raise UserError(f"--output {output}: is inside {what} {folder}; give a results folder of its own "
                            f"(default: results/<model>)")
    for folder in (real, *real.parents):
        if any((folder / name).is_file() for name in (MARKER, *LEGACY_MANIFESTS)):
            raise UserError(f"--output {output}: is inside {folder}, a folder negplugins rebuilds as a whole "
                            f"(it holds {MARKER} or an index manifest); give a results folder of its own "
                            f"(default: results/<model>)")


def run_benchmark(model=None, *, reranker: str | None = None, benchmarks=None,
                  output: str | os.PathLike | None = None, contribute: bool = False,
                  runs: str | os.PathLike = "runs", indexes: str | os.PathLike = "indexes",
                  batch_size: int | None = None, force: bool = False, progress: bool = True,
                  command: str | None = None, baselines: bool = True) -> BenchmarkResult:
    """Run one model on every benchmark (its paper's protocol), evaluate it and write the results and a report.

    See the module documentation for the protocols, the output layout and what is reused.

    Parameters
    ----------
    model : str, path or SentenceTransformer, optional
        A model folder, a Hugging Face id in the local cache, ``None`` for the packaged all-MiniLM-L6-v2,
        or a loaded ``sentence_transformers.SentenceTransformer`` (fingerprinted by its weights in memory).
    reranker : {"cross-encoder", "monot5", "bi-encoder"}, optional
        Use the model as a reranker of this kind: retrieval benchmarks run BM25 and rerank its top
        ``depth``, NevIR's pairs are scored by the reranker. Without it the model is an embedding model
        (dense retrieval; NevIR's pairs scored as a bi-encoder).
    benchmarks : list of str or str, optional
        Benchmark names (``comlq``, ``excluir``, ...; a list or ``"comlq,excluir"``); default all.
    output : path, optional
        The results folder; default ``results/<model name>`` (``results/<model name>-<reranker>``).
    contribute : bool
        Copy each run and its sidecar into ``<runs>/<dataset id>/`` for the leaderboards.
    runs : path
        The contributed runs folder (default ``runs``).
    indexes : path
        Where the Lucene and faiss indexes are built and reused (default ``indexes``, as the other commands).
    batch_size : int, optional
        Texts (dense) or pairs (rerank) per forward pass; default: each runner's (64, 32).
    force : bool
        Replace files this command did not write (or that were changed since), committed ones included.
    progress : bool
        Report progress on standard error (a line per benchmark and step, encoding progress bars).
    command : str, optional
        Recorded in the runs' sidecars; default this process's command line.
    baselines : bool
        Also run, evaluate and compare each dataset's baselines (Pyserini BM25, the authors' pipeline where the
        spec has one; see the module documentation); False leaves them out (the report then counts none).

    Returns
    -------
    BenchmarkResult
        The summary written to ``summary.json`` and each dataset's outcome.

    Raises
    ------
    UserError
        An unknown benchmark or reranker kind, a model that cannot be loaded offline, an output that may
        not be replaced, or no benchmark with its data available (each is named with its reason).
    """
    if reranker is not None and reranker not in _RERANKERS:
        raise UserError(f"--reranker {reranker!r}: choose one of {', '.join(_RERANKERS)}")
    if batch_size is not None:
        check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    specs = select_benchmarks(benchmarks)
    ref, encoder = _resolve(model, reranker)
    scoring_kind = "dense" if reranker is None else reranker
    if output is None:
        output = Path("results") / (datasets.slug(ref.name) + ("" if reranker is None else f"-{reranker}"))
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise UserError(f"{output}: exists and is not a folder; --output is the results folder")
    runs, indexes = Path(runs), Path(indexes)
    _check_results_folder(output, runs, indexes)
    say = _Progress(progress).say
    ledger = _Ledger(output, force)

    # every output, checked before any work
    plan = [(spec, dataset_id) for spec in specs for dataset_id in spec.benchmark_datasets()]
    probe_model = _Model(ref, scoring_kind, scorer=(None, "bi-encoder" if reranker is None else reranker, ref))
    for spec, dataset_id in plan:
        folder = output / datasets.slug(dataset_id)
        run = folder / f"{_run_name(spec, probe_model)}.trec.gz"
        check_run_output(run, force=force)
        if spec.protocol == "retrieval" and reranker is not None:
            check_run_output(folder / FIRST_STAGE, force=force)
        ledger.check(folder / RESULTS_FILE)
        for baseline in spec.computed_baselines() if baselines else ():
            if baseline.name != PYSERINI_BM25.name or reranker is None:
                check_run_output(folder / f"{baseline.name}.trec.gz", force=force)
            ledger.check(folder / f"{baseline.name}.results.json")
        if contribute:
            check_run_output(_contribution_paths(runs, dataset_id, run), inputs=[run, metadata_path(run)], force=force)
    for name in (SUMMARY_FILE, *REPORT_FILES):
        ledger.check(output / name)
    if reranker is None:  # MTEB's results layout, for an embedding model (negplugins.mteb.results)
        from ..mteb.results import planned_paths

        for path in planned_paths(output, {"id": ref.id, "name": ref.name, "revision": ref.revision, **ref.extra},
                                  specs):
            ledger.check(path)

    say(f"{ref.name}: {len(specs)} benchmark(s), {len(plan)} dataset(s); results in {output}")
    loaded: list[_Model] = []

    def load() -> _Model:
        if not loaded:
            start = time.perf_counter()
            say(f"loading {ref.name} ({'embedding model' if reranker is None else reranker})")
            loaded.append(_load(ref, encoder, reranker, batch_size))
            say(f"loaded {ref.name} in {time.perf_counter() - start:.1f} s: {loaded[0].parameters:,} parameters, "
                f"weights sha256 {ref.sha256[:12]}")
        return loaded[0]

    outcomes: list[BenchmarkOutcome] = []
    for position, (spec, dataset_id) in enumerate(plan, start=1):
        head = f"[{position}/{len(plan)}] {spec.title} ({dataset_id})"
        outcome = BenchmarkOutcome(spec.name, spec.title, dataset_id, spec.protocol, spec.depth, "skipped")
        outcomes.append(outcome)
        start = time.perf_counter()
        say(f"{head}: checking its data")
        try:
            _, qrels = _probe(spec, dataset_id)
        except _unavailable_errors() as error:
            outcome.reason = f"data not available: {error_line(error, whole=True)}"
            say(f"{head}: skipped, {outcome.reason}")
            continue
        _timed(outcome, "data", "ran", start)

        def step(text, head=head):
            say(f"{head}: {text}")

        folder = output / datasets.slug(dataset_id)
        run = _run_protocol(spec, dataset_id, folder, probe_model, load, indexes, batch_size, outcome, step, progress,
                            force, command)
        meta = read_metadata(run)
        outcome.run, outcome.system, outcome.created = run, meta["system"], meta["created"]
        outcome.results = folder / RESULTS_FILE
        record = _evaluate(spec, dataset_id, run, qrels, outcome.results, ledger, outcome, step)
        outcome.evaluation = record["evaluation"]
        outcome.intervals = record["ci95"]
        if baselines:
            outcome.baselines = _baselines(spec, dataset_id, folder, qrels, indexes, ledger, outcome, step, force,
                                           command, record)
        outcome.status = "done"
        if contribute:
            destination = _contribution_paths(runs, dataset_id, run)
            copied = _contribute(run, destination, force)
            outcome.contributed = destination
            step(f"{'contributed' if copied else 'already contributed'}: {destination}")

    if not any(o.status == "done" for o in outcomes):
        reasons = "; ".join(f"{o.dataset}: {o.reason}" for o in outcomes)
        raise UserError(f"no benchmark could be run: {reasons}")
    probe_model.parameters = loaded[0].parameters if loaded else _known_parameters(output, ref)
    if probe_model.parameters is None:  # every step was reused, by an earlier version: count them once
        probe_model.parameters = load().parameters
    summary = _summary(probe_model, reranker, outcomes, output)
    files = write_report(summary, output, force=force)
    for path in files:
        ledger.files[ledger.relative(path)] = file_sha256(path)
    mteb_files = _write_mteb_results(summary, output, ledger, say)
    summary_on_disk = dict(summary, files=dict(sorted(ledger.files.items())))
    ledger.write(output / SUMMARY_FILE, json_text(summary_on_disk))
    say(f"summary {output / SUMMARY_FILE}; report {output / REPORT_FILES[1]}")
    return BenchmarkResult(output, summary_on_disk, outcomes, [output / SUMMARY_FILE, *files, *mteb_files], mteb_files)
