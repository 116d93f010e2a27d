"""The commands ``negplugins export beir`` and ``negplugins import beir``."""

from __future__ import annotations

from ..io.command_inputs import options_read
from ..options import FORCE_HELP, MAX_HITS, bounded_int

__all__ = ["add_commands"]


def _cmd_export_beir(args) -> int:
    from .export import export_beir

    info = export_beir(args.dataset, args.directory, split=args.split, overwrite=args.overwrite,
                       verify=not args.no_verify)
    labels = ", ".join(f"{key[len('qrels_label_'):]}: {value}" for key, value in info.items()
                       if key.startswith("qrels_label_"))
    print(f"wrote {info['docs']} documents, {info['queries']} queries ({info['judged_queries']} judged) and "
          f"{info['qrels']} judgements (by label {labels}) to {info['path']}")
    return 0


def _cmd_import_beir(args) -> int:
    from .results import results_to_run

    model = {"id": args.model, "revision": args.model_revision, "sha256": args.model_sha256} if args.model else None
    info = results_to_run(args.results, args.dataset, args.output, system=args.system, tag=args.run_tag,
                          model=model, hits=args.hits, check_docs=not args.no_check_docs, force=args.force)
    print(f"wrote {info.lines} lines for {info.queries} queries to {info['output']} (metadata {info.sidecar})")
    return 0


def add_commands(commands, runners) -> None:
    export = commands.add_parser("export", help="write a dataset in another toolkit's format").add_subparsers(
        dest="export_format", required=True, metavar="FORMAT")
    p = export.add_parser("beir", help="write a dataset as a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
    p.add_argument("dataset", help="registered dataset id, e.g. comlq or comlq/negation")
    p.add_argument("directory", help="folder to create")
    p.add_argument("--split", default="test", help="qrels file name, qrels/<split>.tsv (default: test)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing BEIR export in the folder")
    p.add_argument("--no-verify", action="store_true", help="do not re-read the folder after writing it")
    p.set_defaults(func=_cmd_export_beir)

    imports = commands.add_parser("import", help="turn another toolkit's results into a TREC run").add_subparsers(
        dest="import_format", required=True, metavar="FORMAT")
    p = imports.add_parser("beir", help="BEIR results JSON ({qid: {docid: score}}) to a TREC run with metadata")
    p.add_argument("results", help="JSON file saved from EvaluateRetrieval.retrieve (json.dump)")
    p.add_argument("--dataset", "-d", required=True, help="registered dataset id the results are for")
    p.add_argument("--output", "-o", required=True, help="run file to write, e.g. work/comlq/my-system.trec")
    p.add_argument("--system", default="beir", help="one line naming the system (default: beir)")
    p.add_argument("--run-tag", help="last column of the run (default: derived from --system)")
    p.add_argument("--model", help="model id recorded in the metadata")
    p.add_argument("--model-revision", help="model revision recorded in the metadata")
    p.add_argument("--model-sha256", help="model weights checksum recorded in the metadata")
    p.add_argument("--hits", type=bounded_int(1, MAX_HITS),
                   help=f"keep at most this many documents per query, 1 to {MAX_HITS} (default: all)")
    p.add_argument("--no-check-docs", action="store_true", help="do not check doc ids against the corpus")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_import_beir, reads=options_read("results"))
