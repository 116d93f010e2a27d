"""Every output the suite's main jobs write, hashed, so that a refactoring can be shown to change none of them.

    python benchmarks/check_outputs_unchanged.py record OUT     # run the jobs, write OUT/hashes.json
    python benchmarks/check_outputs_unchanged.py compare A B    # the files whose bytes differ between two records

The jobs: the demo, ComLQ's Lucene BM25 and bm25s runs, a dense run of the packaged MiniLM on the demo, the
evaluation (JSON, table, CSV, per query, against a baseline) of every committed run, the leaderboards built from
runs/, the report card on the demo and NevIR with its MTEB result files, a BEIR export and the topic files.
Dates, timings, versions, the suite's commit and absolute paths are masked before hashing (``_mask``); Lucene's
index files (a random segment id in each) are left out. Needs ../shared/data.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [str(ROOT / ".venv/bin/negplugins")]
MASKS = [
    (re.compile(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), b"<date>"),
    (re.compile(rb"\d{4}-\d\d-\d\d"), b"<day>"),
    (re.compile(rb'"(seconds|elapsed|wall|duration|took|time|[a-z_]*_seconds|started|finished|host|hostname)"\s*:\s*[^,}\n]+'), b'"<t>": <t>'),
    (re.compile(rb"\b\d+(\.\d+)?\s?(s|ms|min|seconds)\b"), b"<dur>"),
    (re.compile(rb"[0-9.]+ (passages|docs|queries|pairs|texts)/s"), b"<rate>"),
    (re.compile(rb'(negplugins-commit"?:? "?)[0-9a-f]{40}(-dirty)?'), rb"\1<commit>"),
    (re.compile(rb'"date": \d+\.\d+'), b'"date": <epoch>'),  # MTEB's result files
    (re.compile(rb"\.[\w-]+\.[\w]{8}\.partial/"), b"<partial>/"),  # a build folder's random name
    # the report card's hashes of the files holding a date or the commit (the files themselves are compared)
    (re.compile(rb'((report\.(md|html)|\w+\.json)": ")[0-9a-f]{64}"'), rb'\1<sha256>"'),
]
#: Lucene writes a random segment id into every index file; the runs searched from them are compared instead.
UNHASHED = re.compile(r"(^|/)indexes/lucene/")


def _mask(data: bytes, out: Path) -> bytes:
    data = data.replace(str(out).encode(), b"<out>").replace(str(ROOT).encode(), b"<root>")
    for pattern, replacement in MASKS:
        data = pattern.sub(replacement, data)
    return data


def _run(args: list[str], out: Path, log: str, cwd: Path | None = None) -> None:
    env = dict(os.environ, IR_DATASETS_EXT_MIRROR=str(ROOT.parent / "shared/data"), NO_COLOR="1")
    done = subprocess.run(args, cwd=cwd or out, env=env, capture_output=True)
    (out / "logs").mkdir(exist_ok=True)
    (out / "logs" / f"{log}.out").write_bytes(done.stdout)
    (out / "logs" / f"{log}.err").write_bytes(done.stderr)
    (out / "logs" / f"{log}.rc").write_text(str(done.returncode))
    print(f"{done.returncode:3d}  {log}", flush=True)


def record(out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copytree(ROOT / "runs", out / "runs")
    n = CLI
    _run([*n, "demo", "--workdir", "work"], out, "demo")
    _run([*n, "index", "comlq", "--threads", "1"], out, "index-comlq")  # one thread: the same segments
    _run([*n, "search", "bm25", "comlq", "--hits", "100", "-o", "work/comlq/bm25.trec"],
         out, "search-bm25")
    _run([*n, "search", "bm25s", "comlq", "--hits", "100", "-o", "work/comlq/bm25s.trec"], out, "search-bm25s")
    _run([*n, "search", "dense", "negplugins-demo", "--model", "all-MiniLM-L6-v2", "--hits", "100",
          "-o", "work/demo/dense.trec"], out, "search-dense-demo")
    runs = {"comlq": sorted((out / "runs/comlq").glob("*.trec.gz")),
            "nevir/test": sorted((out / "runs/nevir/test").glob("*.trec*")),
            "negplugins-demo": sorted((out / "runs/negplugins-demo").glob("*.trec"))}
    for dataset, files in runs.items():
        tag = dataset.replace("/", "-")
        paths = [str(f) for f in files]
        _run([*n, "evaluate", dataset, *paths, "--json", "--per-query", "-o", f"eval/{tag}.json"], out, f"eval-{tag}")
        _run([*n, "evaluate", dataset, *paths, "-f", "csv", "-o", f"eval/{tag}.csv"], out, f"eval-{tag}-csv")
        _run([*n, "evaluate", dataset, *paths], out, f"eval-{tag}-table")
        _run([*n, "validate", dataset, paths[0]], out, f"validate-{tag}")
    _run([*n, "evaluate", "comlq", "work/comlq/bm25.trec", "work/comlq/bm25s.trec", "--json", "-o",
          "eval/comlq-new.json"], out, "eval-comlq-new")
    _run([*n, "leaderboard", "build", "--runs", "runs", "--output", "leaderboards", "--no-progress"], out, "board")
    _run([*n, "leaderboard", "check", "--runs", "runs", "--output", "leaderboards"], out, "board-check")
    _run([*n, "benchmark", "--model", "all-MiniLM-L6-v2", "--benchmarks", "negplugins-demo,nevir", "--indexes",
          "indexes", "-o", "card", "--no-progress"], out, "card")
    _run([*n, "export", "beir", "comlq/negation", "beir/comlq-negation"], out, "export-beir")
    for dataset in ("comlq", "nevir/test", "negplugins-demo"):
        _run([*n, "topics", dataset, "-o", f"topics/{dataset.replace('/', '-')}.tsv"], out, "topics-" + dataset.replace("/", "-"))
    hashes = _hashes(out)
    (out / "hashes.json").write_text(json.dumps(hashes, indent=1, sort_keys=True))
    print(f"{len(hashes)} files hashed -> {out / 'hashes.json'}")


def _hashes(out: Path) -> dict[str, str]:
    hashes = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out)
        if rel.parts[0] in ("indexes",) or rel.name == "hashes.json" or UNHASHED.search(rel.as_posix()):
            continue
        hashes[str(rel)] = hashlib.sha256(_mask(path.read_bytes(), out)).hexdigest()
    return hashes


def compare(a: Path, b: Path) -> int:
    """Hash both records' files again with today's masks (their ``hashes.json`` when a record's files are gone)."""
    left, right = (_hashes(p) if (p / "logs").is_dir() else json.loads((p / "hashes.json").read_text())
                   for p in (a, b))
    differ = [k for k in sorted(left.keys() | right.keys()) if left.get(k) != right.get(k)]
    for key in differ:
        print(f"differs: {key}" + ("" if key in left and key in right else "  (only in one)"))
    print(f"{len(left)} and {len(right)} files, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"]:
        record(Path(sys.argv[2]).resolve())
    elif sys.argv[1:2] == ["compare"]:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
