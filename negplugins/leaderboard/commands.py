"""Subcommands ``validate`` and ``leaderboard {build,check,sidecar}`` (added through ``cli.COMMAND_MODULES``).

Exit status: 0 success (valid run, up-to-date leaderboards); 1 an invalid run or contribution, or stale
leaderboards; 2 a usage error (unknown dataset, missing file, data not available), as every command.
"""

from __future__ import annotations

import sys

__all__ = ["add_commands"]


def _cmd_validate(args) -> int:
    import time

    from ..evaluation.validation import report_json, validate_run

    status = 0
    for run in args.run:
        start = time.perf_counter()
        report = validate_run(args.dataset, run, check_documents=not args.no_documents)
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


def _cmd_build(args) -> int:
    from .build import ContributionError, build

    try:
        written = build(args.runs, args.output)
    except ContributionError as error:
        print(f"negplugins: error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} files to {args.output}")
    return 0


def _cmd_check(args) -> int:
    from .build import ContributionError, check

    try:
        differences = check(args.runs, args.output)
    except ContributionError as error:
        print(f"negplugins: error: {error}", file=sys.stderr)
        return 1
    if differences:
        print("negplugins: error: the leaderboards are out of date:", file=sys.stderr)
        for line in differences:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"{args.output} is up to date with {args.runs}")
    return 0


def _cmd_sidecar(args) -> int:
    from pathlib import Path

    from .. import datasets
    from ..errors import UserError
    from ..io.inputs import open_regular
    from ..io.jsonfile import parse_json
    from ..io.sidecars import metadata_path, run_tag_problems, sidecar_problems, write_metadata
    from ..io.outputs import check_replaceable_file

    run = Path(args.run)
    open_regular(run, "run file").close()
    datasets.load(args.dataset)  # an unregistered id is refused, with the nearest names
    parameters = parse_json(args.parameters, label="--parameters", what="JSON object") if args.parameters else {}
    check_replaceable_file(metadata_path(run), inputs=[run], force=args.force)
    model = {"id": args.model, "revision": None, "sha256": None} if args.model else None
    command = args.command if args.command is not None else ""
    record = {"run": run.name, "dataset": args.dataset, "runner": args.runner, "system": args.system,
              "tag": args.tag, "model": model, "parameters": parameters, "index": None, "first_stage": None,
              "language": args.language, "versions": {}, "created": "2000-01-01T00:00:00+00:00",
              "command": command}
    if args.reproduces is not None:
        record["reproduces"] = args.reproduces
    if args.authors_pipeline:
        record["authors_pipeline"] = True
    problems = sidecar_problems(record) + run_tag_problems(args.tag, run)
    if not problems and args.reproduces is not None:
        from .build import reproduces_problems

        problems = [p.replace("sidecar field ", "--", 1) for p in reproduces_problems(record, args.dataset)]
    if problems:
        raise UserError(f"{run}: not writing its sidecar: " + "; ".join(
            p.replace("field ", "--", 1) if p.startswith("field ") else p for p in problems))
    path = write_metadata(run, dataset=args.dataset, runner=args.runner, system=args.system, tag=args.tag,
                          parameters=parameters, model=model, language=args.language, command=command,
                          reproduces=args.reproduces, authors_pipeline=args.authors_pipeline)
    print(f"wrote {path}")
    return 0


def add_commands(commands, runners) -> None:
    p = commands.add_parser("validate", help="check a TREC run against a dataset (format, ids, rank order)",
                            description="Validate runs: six columns, numeric scores, no duplicate (query, document), "
                                        "ranks consistent with scores, known query and document ids; lists "
                                        "problems with line numbers. Exit status 0 valid, 1 invalid, 2 usage error.")
    p.add_argument("dataset")
    p.add_argument("run", nargs="+", help="TREC run file(s) (.gz accepted)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-documents", action="store_true", help="skip the document id check")
    p.set_defaults(func=_cmd_validate)

    board = commands.add_parser("leaderboard", help="build or check the leaderboards from contributed runs")
    actions = board.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, func, text in (("build", _cmd_build, "validate and evaluate every run, write the leaderboards"),
                             ("check", _cmd_check, "rebuild into a temporary folder; fail if the committed "
                                                   "leaderboards differ or a run is invalid (for CI)")):
        p = actions.add_parser(name, help=text, description=text + ". Exit status 0 ok, 1 invalid contribution"
                                                                   " or stale output, 2 usage error.")
        p.add_argument("--runs", default="runs", help="contributed runs (default: runs)")
        p.add_argument("--output", default="leaderboards", help="published leaderboards (default: leaderboards)")
        p.set_defaults(func=func)
    p = actions.add_parser("sidecar", help="write the metadata sidecar of a hand-made (external) run")
    p.add_argument("run", help="runs/<dataset>/<name>.trec[.gz]")
    p.add_argument("--dataset", required=True)
    p.add_argument("--system", required=True, help="one line naming the system")
    p.add_argument("--tag", required=True, help="the run tag (last column)")
    p.add_argument("--runner", default="external", help="default: external")
    p.add_argument("--model", help="model id, if any")
    p.add_argument("--parameters", help="JSON object of parameters")
    p.add_argument("--language", default="en")
    p.add_argument("--command", help="the command that produced the run (default: empty)")
    p.add_argument("--reproduces", metavar="SYSTEM",
                   help="the system of the benchmark's paper the run reproduces, named as the paper names it "
                        "(shown beside the paper's numbers, with the gap)")
    p.add_argument("--authors-pipeline", action="store_true",
                   help="the run follows the authors' own code or configuration (with --reproduces)")
    p.add_argument("--force", action="store_true", help="replace the sidecar even if it is tracked by git")
    p.set_defaults(func=_cmd_sidecar)
