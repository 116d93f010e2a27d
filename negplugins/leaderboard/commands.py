"""Subcommands ``leaderboard {build,check,sidecar}``: exit 1 for an invalid contribution or stale pages, 2 for a
usage error.
"""

from __future__ import annotations

import sys

from ..io.command_inputs import options_read
from ..options import add_progress_options

__all__ = ["add_commands"]


def _cmd_build(args) -> int:
    from .build import ContributionError, build

    try:
        written = build(args.runs, args.output, progress=args.progress)
    except ContributionError as error:
        print(f"negplugins: error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} files to {args.output}")
    return 0


def _cmd_check(args) -> int:
    from .build import ContributionError, check

    try:
        differences = check(args.runs, args.output, progress=args.progress)
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


def _as_option(problem: str) -> str:
    """A sidecar problem named by the option that gave the field: ``field tag ...`` -> ``--run-tag ...``."""
    if not problem.startswith("field "):
        return problem
    field = problem[len("field "):]
    return "--run-tag" + field[len("tag"):] if field.startswith("tag ") else "--" + field


def _cmd_sidecar(args) -> int:
    from pathlib import Path

    from .. import datasets
    from ..errors import UserError
    from ..io.jsonfile import open_regular, parse_json
    from ..io.outputs import check_sidecar_output
    from ..io.sidecars import run_tag_problems, sidecar_problems, write_metadata
    from ..io.trec import RunFormatError, check_run_format

    run = Path(args.run)
    open_regular(run, "run file").close()
    datasets.load(args.dataset)  # an unregistered id is refused, with the nearest names
    try:  # a sidecar vouches for a run: the run must at least be a well-formed TREC run
        check_run_format(run)
    except RunFormatError as error:
        raise UserError(f"{error} (not writing its sidecar)") from None
    parameters = parse_json(args.parameters, label="--parameters", what="JSON object") if args.parameters else {}
    check_sidecar_output(run, force=args.force)
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
        from .contributions import reproduces_problems

        problems = [p.replace("sidecar field ", "--", 1) for p in reproduces_problems(record, args.dataset)]
    if problems:
        raise UserError(f"{run}: not writing its sidecar: " + "; ".join(_as_option(p) for p in problems))
    path = write_metadata(run, dataset=args.dataset, runner=args.runner, system=args.system, tag=args.tag,
                          parameters=parameters, model=model, language=args.language, command=command,
                          reproduces=args.reproduces, authors_pipeline=args.authors_pipeline)
    print(f"wrote {path}")
    return 0


def add_commands(commands, runners) -> None:
    board = commands.add_parser("leaderboard", help="build or check the leaderboards from contributed runs")
    actions = board.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, func, text in (("build", _cmd_build, "validate and evaluate every run, write the leaderboards"),
                             ("check", _cmd_check, "rebuild into a temporary folder; fail if the committed "
                                                   "leaderboards differ or a run is invalid (for CI)")):
        p = actions.add_parser(name, help=text, description=text + ". Exit status 0 ok, 1 invalid contribution"
                                                                   " or stale output, 2 usage error.")
        p.add_argument("--runs", default="runs", help="contributed runs (default: runs)")
        p.add_argument("--output", default="leaderboards", help="published leaderboards (default: leaderboards)")
        add_progress_options(p)
        p.set_defaults(func=func, reads=options_read("runs"))
    p = actions.add_parser("sidecar", help="write the metadata sidecar of a hand-made (external) run")
    p.add_argument("run", help="runs/<dataset>/<name>.trec[.gz]")
    p.add_argument("--dataset", required=True)
    p.add_argument("--system", required=True, help="one line naming the system")
    p.add_argument("--run-tag", dest="tag", required=True, help="the run tag (last column)")
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
    p.set_defaults(func=_cmd_sidecar, reads=options_read("run"))
