"""The BoolQuestions MS MARCO pipeline at scale, on a synthetic corpus in the release's format.

Run by hand (not a test)::

    .venv/bin/python benchmarks/bench_scale.py [--passages N] [--questions N] [--work DIR]
        [--threads 2] [--hits 1000] [--slim] [--keep]

Writes ``<work>/mirror/boolquestions/MSMARCO/corpus.jsonl`` (``{"docid", "doc"}`` per line, as the release)
with ``--passages`` synthetic passages (words of a Zipf-distributed vocabulary, 20 to 90 per passage, about
the length of MS MARCO's) and ``eval.json`` (a JSON array of ``--questions`` questions with ``qid``,
``question``, ``question_type`` and ``positive_ctxs`` / ``negative_ctxs`` holding ``passage_id``; each
question is built from words of its positive passage), then runs the pipeline one step per child process,
with that folder as ``IR_DATASETS_EXT_MIRROR`` and ``<work>/home`` as ``IR_DATASETS_HOME``:

verify
    first use of the dataset: the mirror files are verified (SHA-256) in place and stamped
docstore
    ir_datasets' docstore of the corpus (one lookup builds it)
index
    ``negplugins index boolquestions/msmarco --threads T [--slim]``
bm25
    ``negplugins search bm25 boolquestions/msmarco --threads T --hits H`` (every question)
evaluate
    ``negplugins evaluate boolquestions/msmarco RUN --json`` (the run's document ids are checked against the
    corpus first: a pass over the docstore)

Per step: wall time, peak RSS of the step's process (``wait4``; the JVM runs inside it; the files are written by
a child too, so that this process stays small: a child's peak RSS counts its parent's at the fork), and peak
extra disk:
the most that the files below ``<work>/home``, ``<work>/indexes`` and ``<work>/runs`` (everything but the
mirror, which is the user's own file) grew during the step over their size before it, sampled every 0.2 s
(allocated blocks). Printed as a table and as JSON (``--json FILE`` writes it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION_TYPES = ("and", "or", "not")


def write_corpus(folder: Path, passages: int, questions: int, seed: int = 0) -> dict:
    """The synthetic release files; returns their sizes."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocabulary_size = 60_000
    letters = np.array(list("etaoinshrdlucmfwypvbgkjqxz"))
    lengths = np.clip(rng.poisson(6, size=vocabulary_size), 2, 14)
    vocabulary = np.array(["".join(rng.choice(letters[:20 if i > 500 else 26], size=n))
                           for i, n in enumerate(lengths)], dtype=object)
    ranks = np.arange(1, vocabulary_size + 1)
    weights = 1.0 / ranks ** 1.07
    weights /= weights.sum()
    folder.mkdir(parents=True, exist_ok=True)
    chosen = {int(i): None for i in rng.choice(passages, size=min(passages, questions * 4), replace=False)}
    block = 100_000
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for start in range(0, passages, block):
            count = min(block, passages - start)
            sizes = rng.integers(20, 91, size=count)
            words = vocabulary[rng.choice(vocabulary_size, size=int(sizes.sum()), p=weights)]
            ends = np.cumsum(sizes)
            lines = []
            for i in range(count):
                text = " ".join(words[ends[i] - sizes[i]:ends[i]])
                if start + i in chosen:
                    chosen[start + i] = text
                lines.append(json.dumps({"docid": str(start + i), "doc": text}))
            f.write("\n".join(lines) + "\n")
    ids = list(chosen)
    records = []
    for q in range(questions):
        positive = ids[(4 * q) % len(ids)]
        negatives = [ids[(4 * q + k) % len(ids)] for k in (1, 2, 3)]
        words = chosen[positive].split()
        picked = rng.choice(len(words), size=min(8, len(words)), replace=False)
        question = " ".join(words[i] for i in sorted(picked))
        records.append({"qid": str(q), "question": question, "question_type": QUESTION_TYPES[q % 3],
                        "positive_ctxs": [{"passage_id": str(positive)}],
                        "negative_ctxs": [{"passage_id": str(n)} for n in negatives]})
    (folder / "eval.json").write_text(json.dumps(records), encoding="utf-8")
    return {name: (folder / name).stat().st_size for name in ("corpus.jsonl", "eval.json")}


def tree_bytes(roots) -> int:
    total = 0
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for name in files:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
                except FileNotFoundError:
                    pass
    return total


def run_step(name: str, command: list[str], env: dict, watched: list[Path]) -> dict:
    before = tree_bytes(watched)
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.wait(0.2):
            peak[0] = max(peak[0], tree_bytes(watched))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, cwd=env["BENCH_WORK"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait4 before reading the pipes would block on a full pipe: read them in threads
    out = {}
    readers = [threading.Thread(target=lambda k=k, s=s: out.__setitem__(k, s.read()))
               for k, s in (("stdout", child.stdout), ("stderr", child.stderr))]
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    for reader in readers:
        reader.join()
    done.set()
    sampler.join()
    after = tree_bytes(watched)
    peak[0] = max(peak[0], after)
    code = os.waitstatus_to_exitcode(status)
    child.returncode = code
    if code != 0:
        sys.stderr.write(out["stderr"].decode(errors="replace")[-4000:])
        raise SystemExit(f"step {name} failed with status {code}")
    return {"step": name, "seconds": round(seconds, 1), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "peak_extra_disk_mib": round((peak[0] - before) / 2**20, 1),
            "kept_disk_mib": round((after - before) / 2**20, 1), "stdout": out["stdout"].decode(errors="replace")}


#: Marks a working folder as this benchmark's, so that ``--work`` never writes into a folder of the user's.
WORK_MARK = ".bench-scale-work"


def _work_folder(given: str | None) -> Path:
    """``--work``: absent, empty or an earlier run's (marked); else one line and exit 2."""
    if not given:
        work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    else:
        work = Path(given)
        if work.exists() and (not work.is_dir() or (any(work.iterdir()) and not (work / WORK_MARK).is_file())):
            raise SystemExit(f"bench_scale.py: --work {work}: expected a new or empty folder (or one of an earlier "
                             f"run, holding {WORK_MARK}); it writes mirror/, home/, indexes/ and runs/ into it")
        work.mkdir(parents=True, exist_ok=True)
    (work / WORK_MARK).touch()
    return work


def main(argv=None) -> int:
    from ir_datasets_ext.datasets.boolquestions import MSMARCO_PASSAGES, MSMARCO_QUESTIONS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=MSMARCO_PASSAGES,
                        help=f"default: MS MARCO's {MSMARCO_PASSAGES:,}")
    parser.add_argument("--questions", type=int, default=MSMARCO_QUESTIONS,
                        help=f"default: BoolQuestions MS MARCO's {MSMARCO_QUESTIONS:,}")
    parser.add_argument("--work", help="working folder, new or empty (default: a new temporary folder)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--hits", type=int, default=1000)
    parser.add_argument("--slim", action="store_true", help="index postings only (negplugins index --slim)")
    parser.add_argument("--keep", action="store_true", help="keep the working folder")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--generate", help=argparse.SUPPRESS)  # internal: write the files into this folder
    args = parser.parse_args(argv)
    if args.generate:
        print(json.dumps(write_corpus(Path(args.generate), args.passages, args.questions)))
        return 0

    work = _work_folder(args.work)
    mirror, home = work / "mirror", work / "home"
    watched = [home, work / "indexes", work / "runs"]
    for folder in watched:
        folder.mkdir(exist_ok=True)
    env = dict(os.environ, IR_DATASETS_EXT_MIRROR=str(mirror), IR_DATASETS_HOME=str(home), BENCH_WORK=str(work),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    try:
        start = time.perf_counter()
        sizes = json.loads(subprocess.run(
            [sys.executable, __file__, "--generate", str(mirror / "boolquestions" / "MSMARCO"), "--passages",
             str(args.passages), "--questions", str(args.questions)], check=True, capture_output=True).stdout)
        generated = time.perf_counter() - start
        print(f"synthetic corpus: {args.passages:,} passages, corpus.jsonl {sizes['corpus.jsonl'] / 2**20:,.1f} MiB, "
              f"eval.json {args.questions:,} questions ({generated:.0f} s to write)", flush=True)
        python = [sys.executable]
        dataset = "boolquestions/msmarco"
        steps = [
            ("verify", python + ["-c", "from ir_datasets_ext.datasets import boolquestions as b; "
                                       "[f.path() for f in b._FILES['msmarco'].values()]"]),
            ("docstore", python + ["-c", "import ir_datasets, ir_datasets_ext; "
                                         f"ir_datasets.load('{dataset}').docs_store().get('0')"]),
            ("index", python + ["-m", "negplugins", "index", dataset, "--threads", str(args.threads)]
             + (["--slim"] if args.slim else [])),
            ("bm25", python + ["-m", "negplugins", "search", "bm25", dataset, "--threads", str(args.threads),
                               "--hits", str(args.hits), "--output", "runs/bm25.trec"]),
            ("evaluate", python + ["-m", "negplugins", "evaluate", dataset, "runs/bm25.trec", "--json"]),
        ]
        results = []
        for name, command in steps:
            result = run_step(name, command, env, watched)
            results.append(result)
            print(f"  {name:<9} {result['seconds']:>8.1f} s  peak RSS {result['peak_rss_mib']:>8.1f} MiB  "
                  f"peak extra disk {result['peak_extra_disk_mib']:>9.1f} MiB  kept {result['kept_disk_mib']:>9.1f} MiB",
                  flush=True)
        scores = json.loads(results[-1]["stdout"])
        corpus_mib = sizes["corpus.jsonl"] / 2**20
        total = {"seconds": round(sum(r["seconds"] for r in results), 1),
                 "peak_rss_mib": max(r["peak_rss_mib"] for r in results),
                 "peak_extra_disk_mib": round(max(sum(r["kept_disk_mib"] for r in results[:i]) + r["peak_extra_disk_mib"]
                                                  for i, r in enumerate(results)), 1)}
        report = {"passages": args.passages, "questions": args.questions, "threads": args.threads, "hits": args.hits,
                  "slim": args.slim,
                  "corpus_mib": round(corpus_mib, 1), "cpus": os.cpu_count(),
                  "steps": [{k: v for k, v in r.items() if k != "stdout"} for r in results], "total": total,
                  "peak_extra_disk_over_corpus": round(total["peak_extra_disk_mib"] / corpus_mib, 2),
                  "scores": scores.get("overall", scores) if isinstance(scores, dict) else scores}
        if args.json:
            from negplugins.io.files import atomic_writer

            with atomic_writer(args.json) as f:  # never half-written; never a folder or a FIFO
                f.write(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        return 0
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
