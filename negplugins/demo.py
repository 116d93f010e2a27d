"""End-to-end run on the embedded demo dataset: index, BM25, evaluation. Offline, in seconds."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import UserError
from .evaluation.scoring import evaluate
from .io.files import atomic_directory
from .options import MAX_THREADS, bounded_int
from .runners.bm25 import bm25_search
from .runners.lucene_index import lucene_index

__all__ = ["DEMO_DATASET", "run_demo"]

DEMO_DATASET = "negplugins-demo"


def run_demo(workdir: str | os.PathLike | None = None, threads: int = 1) -> str:
    """Index the demo dataset, run BM25 over it and return the evaluation as a table; the index and the run go into
    ``<workdir>/negplugins-demo/``, which the demo owns and replaces (a temporary folder without ``workdir``)."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="negplugins-demo-") as tmp:
            return run_demo(tmp, threads).replace(f" (in {Path(tmp) / DEMO_DATASET})", "", 1)
    if os.path.lexists(workdir) and not Path(workdir).is_dir():
        raise UserError(f"{workdir}: --workdir is not a folder; give a folder (created if missing) where the demo "
                        f"writes {DEMO_DATASET}/")
    folder = Path(workdir) / DEMO_DATASET
    with atomic_directory(folder) as tmp:
        index, _ = lucene_index(DEMO_DATASET, tmp / "indexes" / "lucene" / DEMO_DATASET, threads=threads)
        run = tmp / "runs" / "bm25.trec"
        info = bm25_search(DEMO_DATASET, run, index=index, hits=100, threads=threads)
        result = evaluate(DEMO_DATASET, run)
    return (f"BM25 (k1={info['k1']}, b={info['b']}) on {DEMO_DATASET}: {info.queries} queries, "
            f"{info.lines} run lines (in {folder})\n\n{result.to_table()}")


def _cmd_demo(args) -> int:
    print(run_demo(args.workdir, threads=args.threads))
    return 0


def add_commands(commands, runners) -> None:
    p = commands.add_parser("demo", help="index the embedded demo dataset, run BM25 and evaluate it (offline)")
    p.add_argument("--workdir", help="keep the index and run in WORKDIR/negplugins-demo, a folder the demo owns and "
                                     "replaces on each run (default: a temporary folder)")
    p.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=1,
                   help=f"indexing and search threads, 1 to {MAX_THREADS} (default: 1)")
    p.set_defaults(func=_cmd_demo)
