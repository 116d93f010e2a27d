"""One model, every benchmark: run each benchmark's own protocol and its baselines, evaluate them, and write the
runs, the results, a summary and the report (docs/report-card.md)."""

from __future__ import annotations

import os
import sys
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
    """What happened to one dataset of one benchmark: ``done``, or ``skipped`` with its ``reason``."""

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
    """The benchmark specs to run: all registered, or those named (a list or ``"a,b"``)."""
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
    from .encoding import used_options

    done = [o for o in outcomes if o.status == "done"]
    used = used_options(model.ref, reranker, model.options)
    return {
        "format": SUMMARY_FORMAT, "version": FORMAT_VERSION,
        "model": {**model.ref.metadata(), "name": model.ref.name, "parameters": model.parameters,
                  "used_as": "embedding model (bi-encoder)" if model.kind == "dense" else f"{model.kind} reranker",
                  **({"encoding": used} if used else {})},
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
    """Render ``summary`` as ``report.md``, ``report.html`` and ``figure.svg`` in ``output``; returns their paths."""
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
    """Refuse a results folder inside the runs, the indexes, or a folder the suite rebuilds whole (one with its
    marker: leaderboards, an index, a BEIR export).
    """
    from ..io.files import MARKER

    real = Path(os.path.realpath(output))
    for folder, what in ((runs, "the contributed runs folder"), (indexes, "the indexes folder")):
        root = Path(os.path.realpath(folder))
        if real == root or root in real.parents:
            raise UserError(f"--output {output}: is inside {what} {folder}; give a results folder of its own "
                            f"(default: results/<model>)")
    for folder in (real, *real.parents):
        if (folder / MARKER).is_file():
            raise UserError(f"--output {output}: is inside {folder}, a folder negplugins rebuilds as a whole "
                            f"(it holds {MARKER} or an index manifest); give a results folder of its own "
                            f"(default: results/<model>)")


def run_benchmark(model=None, *, reranker: str | None = None, benchmarks=None,
                  output: str | os.PathLike | None = None, contribute: bool = False,
                  runs: str | os.PathLike = "runs", indexes: str | os.PathLike = "indexes",
                  batch_size: int | None = None, force: bool = False, progress: bool = True,
                  command: str | None = None, baselines: bool = True,
                  options: dict | None = None) -> BenchmarkResult:
    """Run one model on every benchmark (its paper's protocol), evaluate it and write the results and a report.

    ``model``: a folder, a cached Hugging Face id, None (all-MiniLM-L6-v2) or a ``SentenceTransformer``; ``options``:
    keyword arguments of ``search dense`` (docs/report-card.md)."""
    from .encoding import check_options, given

    if reranker is not None and reranker not in _RERANKERS:
        raise UserError(f"--reranker {reranker!r}: choose one of {', '.join(_RERANKERS)}")
    if batch_size is not None:
        check_int(batch_size, "--batch-size", 1, MAX_BATCH_SIZE)
    specs = select_benchmarks(benchmarks)
    ref, encoder = model_reference(model, reranker)
    options = given(options)
    check_options(options, reranker, model_object=encoder is not None)
    scoring_kind = "dense" if reranker is None else reranker
    if output is None:
        output = Path("results") / (datasets.slug(ref.name) + ("" if reranker is None else f"-{reranker}"))
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise UserError(f"{output}: exists and is not a folder; --output is the results folder")
    runs, indexes = Path(runs), Path(indexes)
    _check_results_folder(output, runs, indexes)
    ledger = Ledger(output, force)

    def say(text):
        if progress:
            print(f"negplugins benchmark: {text}", file=sys.stderr, flush=True)

    # every output, checked before any work
    plan = [(spec, dataset_id) for spec in specs for dataset_id in spec.benchmark_datasets()]
    probe_model = Model(ref, scoring_kind, scorer=(None, "bi-encoder" if reranker is None else reranker, ref),
                        options=options)
    for spec, dataset_id in plan:
        folder = output / datasets.slug(dataset_id)
        run = folder / f"{run_name(spec, probe_model)}.trec.gz"
        check_run_output(run, force=force)
        if spec.protocol.kind == "retrieval" and reranker is not None:
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
            loaded.append(load_model(ref, encoder, reranker, batch_size, options))
            say(f"loaded {ref.name} in {time.perf_counter() - start:.1f} s: {loaded[0].parameters:,} parameters, "
                f"weights sha256 {ref.sha256[:12]}")
        return loaded[0]

    outcomes: list[BenchmarkOutcome] = []
    for position, (spec, dataset_id) in enumerate(plan, start=1):
        head = f"[{position}/{len(plan)}] {spec.title} ({dataset_id})"
        outcome = BenchmarkOutcome(spec.name, spec.title, dataset_id, spec.protocol.kind, spec.protocol.depth, "skipped")
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
