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
runner, model fingerprints (its weights', and its whole folder's: tokenizer, configuration, pooling, ...,
:func:`negplugins.runners.model_refs.model_files_sha256`) and parameters (depth; reranker kind and first stage; a baseline's parameters or
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

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ir_datasets_ext.spec import PYSERINI_BM25, main_measure

from .. import datasets
from ..errors import UserError, error_line
from ..io.files import atomic_writer
from ..io.outputs import check_run_output
from ..io.sidecars import file_sha256, metadata_path, package_versions, read_metadata
from ..measures.declarations import PER_PAIR
from ..options import MAX_BATCH_SIZE, check_distinct, check_int
from ..rendering.text import json_text
from .protocols import (
    FORMAT_VERSION,
    GENERATOR,
    MAX_SUMMARY_BYTES,
    RESULTS_FILE,
    SUMMARY_FILE,
    SUMMARY_FORMAT,
    Ledger,
    Model,
    StepProgress,
    evaluate_run,
    load_model,
    model_reference,
    our_json,
    probe,
    run_baselines,
    run_name,
    run_protocol,
    timed,
    unavailable_errors,
)

__all__ = ["RESULTS_FILE", "SUMMARY_FILE", "REPORT_FILES", "BenchmarkOutcome", "BenchmarkResult", "run_benchmark",
           "select_benchmarks", "write_report"]

#: The report's files, rendered from the summary (:mod:`negplugins.reportcard.report`).
REPORT_FILES = ("report.md", "report.html", "figure.svg")
FIRST_STAGE = f"{PYSERINI_BM25.name}.trec.gz"
BM25_PARAMETERS = dict(PYSERINI_BM25.parameters)  # Pyserini's defaults, as `negplugins search bm25`
_RERANKERS = ("cross-encoder", "monot5", "bi-encoder")
#: How the model is compared with each baseline (the summary's ``statistics``, the report's method line).
COMPARISON_METHOD = ("the model minus each baseline on the primary measure, per query over the queries with a value "
                     f"in both (per NevIR pair for {', '.join(PER_PAIR)}, each pair once): the mean difference with "
                     "its 95% t interval, and the two-sided paired randomization "
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
        A name that is no registered benchmark (the message lists them), or one named twice.
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
    check_distinct(wanted, "--benchmarks", "benchmark")
    return [spec for spec in specs if spec.name in wanted]


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


def _summary(model: Model, reranker, outcomes, output: Path) -> dict:
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
    record = our_json(output / SUMMARY_FILE, SUMMARY_FORMAT, MAX_SUMMARY_BYTES)
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
    ledger = Ledger(output, force)
    paths = [output / name for name in REPORT_FILES]
    for path in paths:
        ledger.check(path)
    for path, text in zip(paths, (report_markdown(summary), report_html(summary), figure_svg(summary))):
        ledger.write(path, text)
    return paths


# -- MTEB result files ------------------------------------------------------------------------------

def _write_mteb_results(summary: dict, output: Path, ledger: Ledger, say) -> list[Path]:
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
    ref, encoder = model_reference(model, reranker)
    scoring_kind = "dense" if reranker is None else reranker
    if output is None:
        output = Path("results") / (datasets.slug(ref.name) + ("" if reranker is None else f"-{reranker}"))
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise UserError(f"{output}: exists and is not a folder; --output is the results folder")
    runs, indexes = Path(runs), Path(indexes)
    _check_results_folder(output, runs, indexes)
    say = StepProgress(progress).say
    ledger = Ledger(output, force)

    # every output, checked before any work
    plan = [(spec, dataset_id) for spec in specs for dataset_id in spec.benchmark_datasets()]
    probe_model = Model(ref, scoring_kind, scorer=(None, "bi-encoder" if reranker is None else reranker, ref))
    for spec, dataset_id in plan:
        folder = output / datasets.slug(dataset_id)
        run = folder / f"{run_name(spec, probe_model)}.trec.gz"
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
    loaded: list[Model] = []

    def load() -> Model:
        if not loaded:
            start = time.perf_counter()
            say(f"loading {ref.name} ({'embedding model' if reranker is None else reranker})")
            loaded.append(load_model(ref, encoder, reranker, batch_size))
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
            _, qrels = probe(spec, dataset_id)
        except unavailable_errors() as error:
            outcome.reason = f"data not available: {error_line(error, whole=True)}"
            say(f"{head}: skipped, {outcome.reason}")
            continue
        timed(outcome, "data", "ran", start)

        def step(text, head=head):
            say(f"{head}: {text}")

        folder = output / datasets.slug(dataset_id)
        run = run_protocol(spec, dataset_id, folder, probe_model, load, indexes, batch_size, outcome, step, progress,
                            force, command)
        meta = read_metadata(run)
        outcome.run, outcome.system, outcome.created = run, meta["system"], meta["created"]
        outcome.results = folder / RESULTS_FILE
        record = evaluate_run(spec, dataset_id, run, qrels, outcome.results, ledger, outcome, step)
        outcome.evaluation = record["evaluation"]
        outcome.intervals = record["ci95"]
        if baselines:
            outcome.baselines = run_baselines(spec, dataset_id, folder, qrels, indexes, ledger, outcome, step, force,
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
