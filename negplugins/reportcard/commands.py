"""``negplugins benchmark``, over :func:`negplugins.reportcard.suite.run_benchmark`: exit 0 when at least one
benchmark ran, 2 when none could.
"""

from __future__ import annotations

import math

from ..io.command_inputs import options_read
from ..options import FORCE_HELP, MAX_BATCH_SIZE, bounded_int

__all__ = ["add_commands"]


def _cmd_benchmark(args) -> int:
    from ..runners.model_refs import configure_offline

    configure_offline()  # this command's process only, before any Hugging Face library is imported
    from ir_datasets_ext.spec import main_measure

    from .encoding import card_options_from
    from .suite import REPORT_FILES, SUMMARY_FILE, run_benchmark

    result = run_benchmark(args.model, reranker=args.reranker, benchmarks=args.benchmarks, output=args.output,
                           contribute=args.contribute, runs=args.runs, indexes=args.indexes,
                           batch_size=args.batch_size, force=args.force, progress=not args.no_progress,
                           baselines=not args.no_baselines, options=card_options_from(args))
    width = max(len(o.dataset) for o in result.outcomes)
    for outcome in result.outcomes:
        if outcome.status != "done":
            print(f"{outcome.dataset:<{width}}  skipped: {outcome.reason}")
            continue
        primary = main_measure(outcome.dataset, outcome.evaluation["measures"])
        value = outcome.evaluation["overall"].get(primary)
        shown = "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"
        print(f"{outcome.dataset:<{width}}  {primary} {shown}  ({outcome.run})")
    print(f"report: {result.output / REPORT_FILES[1]} and {result.output / REPORT_FILES[0]}; "
          f"summary: {result.output / SUMMARY_FILE}")
    if result.mteb:
        print(f"MTEB results: {result.mteb[-1].parent}")
    return 0


def add_commands(commands, runners) -> None:
    """Add ``benchmark`` to the top-level commands (``runners`` is unused)."""
    from ir_datasets_ext.spec import benchmarks  # the registered specs, in registration order (as the parser's help)

    rerankers = ("cross-encoder", "monot5", "bi-encoder")  # runners.rerank.RERANKERS, without importing torch here
    p = commands.add_parser(
        "benchmark", help="run one model on every benchmark with its paper's protocol; write runs, results and a "
                          "report card",
        description="Run one model on every benchmark whose data is available, with each paper's protocol: dense "
                    "retrieval to the paper's depth (or BM25 then the model as a reranker, with --reranker), NevIR's "
                    "candidate pairs scored by the model. Evaluates with the papers' measures and writes, in the "
                    "output folder, each run with its sidecar and results, summary.json, and a report (report.md, "
                    "report.html, figure.svg) setting the model beside the papers' systems, and, for an embedding model, "
                    "MTEB result files (mteb/results/, see docs/mteb.md). A re-run reuses the finished runs and "
                    "results. Benchmarks without data are listed as skipped, with the reason.")
    p.add_argument("--model", required=True,
                   help="model folder or Hugging Face id in the local cache (all-MiniLM-L6-v2 or default: the packaged "
                        "one)")
    p.add_argument("--reranker", choices=rerankers,
                   help="use the model as a reranker of this kind: BM25 (Pyserini's defaults) to each benchmark's "
                        "depth, then the model reranks it; NevIR's pairs are scored by it (default: the model is an "
                        "embedding model, for dense retrieval)")
    p.add_argument("--benchmarks", metavar="NAMES",
                   help="comma-separated benchmark names (default: all): " + ", ".join(spec.name for spec in benchmarks()))
    p.add_argument("--output", "-o", help="results folder (default: results/<model name>, or "
                                          "results/<model name>-<reranker>)")
    p.add_argument("--contribute", action="store_true",
                   help="copy each run and its sidecar into RUNS/<dataset id>/ for the leaderboards (a committed run "
                        "is replaced only with --force)")
    p.add_argument("--runs", default="runs", help="the contributed runs folder of --contribute (default: runs)")
    p.add_argument("--indexes", default="indexes",
                   help="where Lucene and faiss indexes are built and reused (default: indexes)")
    p.add_argument("--batch-size", type=bounded_int(1, MAX_BATCH_SIZE),
                   help=f"texts (dense) or pairs (rerank) per forward pass, 1 to {MAX_BATCH_SIZE} (default: 64 and 32)")
    p.add_argument("--no-baselines", action="store_true",
                   help="do not run the baselines that need no model (Pyserini BM25 on every full-corpus benchmark, "
                        "the authors' pipeline where the suite has it); the report then compares the model with none")
    p.add_argument("--no-progress", action="store_true", help="no progress lines or bars on standard error")
    p.add_argument("--force", action="store_true", help=FORCE_HELP + "; also the report, summary and results files")
    from .encoding import add_card_options

    encoding = p.add_argument_group(
        "encoding, index and engine (as search dense; with --reranker only --max-length and the engine's)")
    add_card_options(encoding)
    p.set_defaults(func=_cmd_benchmark, reads=options_read("model"))
