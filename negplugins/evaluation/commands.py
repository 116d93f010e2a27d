"""Subcommands ``evaluate`` and ``validate``, and the ``--measures`` option of every command that takes it."""

from __future__ import annotations

import argparse
import sys

from ..io.command_inputs import options_read
from ..options import FILE_FORCE_HELP, MAX_HITS, MAX_PERMUTATIONS, bounded_int

#: The program name in the notes these commands print.
PROG = "negplugins"

#: Help of every ``--measures`` / ``-m``.
MEASURES_HELP = ("ir_measures measures, as ir_measures takes them: one string ('nDCG@10 RR@10'), several arguments "
                 "(-m nDCG@10 RR@10) or commas (nDCG@10,RR@10); default: the dataset's paper measures")


class MeasuresAction(argparse.Action):
    """``--measures``: each value may hold several measures (spaces, commas); repeated options add up."""

    def __call__(self, parser, namespace, values, option_string=None):
        from ..measures.parsing import split_measures

        current = list(getattr(namespace, self.dest, None) or [])
        for value in values:
            current += split_measures(value)
        setattr(namespace, self.dest, current)


def add_measures_option(parser: argparse.ArgumentParser) -> None:
    """``--measures`` / ``-m``: a list of measure strings in ``args.measures``, None for the default."""
    parser.add_argument("--measures", "-m", nargs="+", action=MeasuresAction, metavar="MEASURE", help=MEASURES_HELP)


def regroup_measures(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """``args`` with each ``-m``/``--measures`` written ``--measures=VALUE``, one per value it really has.

    A further value is kept only while it looks like a measure and is no existing file (argparse would take all).
    """
    action = parser._option_string_actions.get("--measures")
    if not isinstance(action, MeasuresAction):
        return args
    import os

    from ..measures.parsing import looks_like_measure

    names = set(action.option_strings)
    long_names = [name for name in parser._option_string_actions if name.startswith("--")]
    regrouped, index = [], 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return regrouped + args[index:]
        abbreviated = arg.startswith("--") and len(arg) > 2 and [n for n in long_names if n.startswith(arg)] == ["--measures"]
        if (arg not in names and not abbreviated) or index + 1 >= len(args) or args[index + 1].startswith("-"):
            regrouped.append(arg)
            index += 1
            continue
        regrouped.append(f"--measures={args[index + 1]}")
        index += 2
        while (index < len(args) and not args[index].startswith("-") and not os.path.exists(args[index])
               and looks_like_measure(args[index])):
            regrouped.append(f"--measures={args[index]}")
            index += 1
    return regrouped


def _cmd_evaluate(args) -> int:
    from .reports import render
    from .scoring import Evaluator, check_comparison

    fmt = "json" if args.json else args.format
    inputs = [*args.run, *([args.baseline] if args.baseline else [])]
    if args.output:  # before any work: the report may replace none of the runs, nor a committed file
        # (an existing untracked file is checked once the report is known: identical bytes are left as they are)
        from ..io.outputs import check_replaceable_file

        check_replaceable_file(args.output, inputs=inputs, force=args.force)
    dataset = diagnosis = None
    if args.by_doc_field or args.without_docs or args.by_doc_field_k is not None:  # before the (long) evaluation
        from .. import datasets
        from .diagnostics import check_options

        dataset = datasets.load(args.dataset)
        diagnosis = check_options(dataset, args.dataset, args.by_doc_field, args.by_doc_field_k, args.without_docs or ())
    comparing = len(args.run) > 1 or args.baseline is not None
    if comparing:  # a bad baseline or --permutations before any data is read
        baseline = check_comparison(args.run, args.baseline if args.baseline is not None else 0, args.permutations)
    evaluator = Evaluator.load(args.dataset, args.measures, ties=args.ties, dataset=dataset)
    runs = evaluator.read_runs(args.run)
    if comparing:
        result = evaluator.compare(runs, baseline, per_query=args.per_query, permutations=args.permutations,
                                   progress=True)
    else:
        _, path, run = runs[0]
        result = evaluator.score(run, path, per_query=args.per_query)
    diagnostics = None
    if diagnosis is not None:
        from .diagnostics import diagnose_runs

        diagnostics = diagnose_runs(evaluator, runs, args.by_doc_field, *diagnosis)
    text = render(result, fmt, per_query=args.per_query, diagnostics=diagnostics)
    if args.output:
        from ..io.outputs import write_file_output

        if write_file_output(args.output, text + "\n", inputs=inputs, force=args.force):
            print(f"wrote {args.output}")
        else:
            print(f"{args.output} already holds this report; left unchanged")
    else:
        print(text)
    if fmt == "csv":  # the other formats state it themselves
        from .reports import ties_line

        print(f"{PROG}: note: {ties_line(result)}", file=sys.stderr)
    if fmt != "table":
        for note in result.notes:
            print(f"{PROG}: note: {note}", file=sys.stderr)
    return 0


def _cmd_validate(args) -> int:
    import os
    import time

    from ..options import check_distinct
    from .validation import report_json, validate_run

    check_distinct(args.run, None, "run", key=os.path.realpath)  # before any run is read
    status = 0
    for run in args.run:
        start = time.perf_counter()
        report = validate_run(args.dataset, run, check_documents=not args.no_check_docs)
        elapsed = time.perf_counter() - start
        if args.json:
            print(report_json(report))
        else:
            print(report.to_text())
            if args.verbose:
                print(f"  validated in {elapsed:.2f} s (document ids: {report.seconds_doc_check:.2f} s)")
        if not report.valid:
            status = 1
    return status


def add_commands(commands, runners) -> None:
    """Add ``evaluate`` and ``validate`` to the top-level subparsers ``commands``."""
    from ..doc_blocks import evaluate_description  # reads the benchmark specs, registered with the datasets
    from ..measures.ranking import STOCK, TIE_HANDLING

    p = commands.add_parser(
        "evaluate", help="validate and score TREC runs on a dataset, overall, per subset and per query; "
                         "several runs are tested against a baseline",
        description=evaluate_description())  # each benchmark's default measures, from its spec
    p.add_argument("dataset", help="registered dataset id, e.g. comlq or comlq/negation")
    p.add_argument("run", nargs="+", help="TREC run file(s) (6 columns; .gz accepted)")
    add_measures_option(p)
    p.add_argument("--baseline", "-b", help="run (path or file name) the others are tested against "
                                            "(default: the first)")
    p.add_argument("--per-query", action="store_true", help="also output per-query values")
    p.add_argument("--format", "-f", choices=("table", "json", "csv", "latex"), default="table",
                   help="output format (default: table)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--ties", choices=tuple(TIE_HANDLING), default=STOCK,
                   help="how standard measures order tied documents: 'stock' (default), exactly as stock ir_measures "
                        "(RR@k: doc id ascending; pytrec_eval's nDCG, AP, P, R, Success: single-precision scores, doc "
                        "id descending), or 'one-ranking', every measure in the suite's one ranking (full-precision "
                        "scores, doc id descending); the suite's own measures always use the one ranking; the output "
                        "says which was used (docs/measures.md, 'Ties')")
    p.add_argument("--output", "-o", help="write to this file instead of standard output (never one of the runs); "
                                          "an existing file is replaced only with --force, unless it already holds "
                                          "exactly this report")
    p.add_argument("--force", action="store_true", help=FILE_FORCE_HELP)
    p.add_argument("--permutations", type=bounded_int(1, MAX_PERMUTATIONS), default=10000,
                   help=f"permutations of the randomization test, 1 to {MAX_PERMUTATIONS} (default: 10000; "
                        "exact below 2^n)")
    p.add_argument("--by-doc-field", metavar="FIELD",
                   help="also give each run's share of its top k (--by-doc-field-k) from each value of this "
                        "categorical document field, overall and per subset (ComLQ: origin)")
    p.add_argument("--by-doc-field-k", type=bounded_int(1, MAX_HITS), metavar="K",
                   help=f"depth of --by-doc-field, 1 to {MAX_HITS} (default: 10)")
    p.add_argument("--without-docs", action="append", metavar="FIELD=VALUE",
                   help="also score the runs with the documents whose FIELD is VALUE removed from the runs and the "
                        "qrels (ComLQ: origin=generated, the LLM-written passages); repeatable, one removal each")
    p.set_defaults(func=_cmd_evaluate, reads=options_read("run", "baseline"))

    p = commands.add_parser("validate", help="check a TREC run against a dataset (format, ids, rank order)",
                            description="Validate runs: six columns, numeric scores, no duplicate (query, document), "
                                        "ranks consistent with scores, known query and document ids; lists "
                                        "problems with line numbers. Exit status 0 valid, 1 invalid, 2 usage error.")
    p.add_argument("dataset")
    p.add_argument("run", nargs="+", help="TREC run file(s) (.gz accepted)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-check-docs", action="store_true", help="skip the document id check")
    p.set_defaults(func=_cmd_validate, reads=options_read("run"))
