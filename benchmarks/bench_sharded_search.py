"""Exact search over shards against one flat index, on the real ComLQ corpus: the same run?

Run by hand (not a test: encoding ComLQ's 11,251 passages takes several minutes on CPU)::

    IR_DATASETS_EXT_MIRROR=/work/shared/data .venv/bin/python benchmarks/bench_sharded_search.py \\
        [--work DIR] [--max-index-memory 5M] [--hits 1000] [--model MODEL]

ComLQ is encoded once, with ``--max-index-memory`` below the size of its flat vectors (11,251 x 384 x 4 bytes
= 17.3 MB with MiniLM), so the index is kept as shards (4 at 5M) and searched one shard at a time. The
same shard vectors are then merged, in order, into one ``IndexFlatIP`` index folder (Pyserini's layout),
and both are searched by ``negplugins.runners.dense.dense_search`` for all 2,909 ComLQ queries. Printed:
whether the two runs are byte-identical, the number of lines and the time of each search, and the vectors
held in memory at once (the largest shard, against the whole flat index). ``--work`` keeps the indexes
for a second run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", help="folder for the indexes and runs (default: a temporary folder, removed)")
    parser.add_argument("--max-index-memory", default="5M")
    parser.add_argument("--hits", type=int, default=1000)
    parser.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    args = parser.parse_args(argv)
    os.environ.setdefault("IR_DATASETS_EXT_MIRROR", str(ROOT.parent / "shared" / "data"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import faiss
    import numpy as np

    from negplugins.runners.dense import dense_index, dense_search
    from negplugins.runners.dense_index_format import load_dense_index

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-sharded-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        start = time.perf_counter()
        built = dense_index("comlq", model=args.model, index=work / "sharded",
                            max_index_memory=args.max_index_memory, progress=True)
        encode_s = time.perf_counter() - start
        manifest = built.manifest
        assert manifest["layout"] == "shards", manifest["layout"]
        merged = work / "merged"
        if not (merged / "index").is_file():
            merged.mkdir(exist_ok=True)
            parts, ids = [], []
            for name in manifest["shards"]:
                index, shard_ids = load_dense_index(work / "sharded" / name)
                parts.append(index.reconstruct_n(0, index.ntotal))
                ids += shard_ids
            flat = faiss.IndexFlatIP(manifest["dimension"])
            flat.add(np.ascontiguousarray(np.concatenate(parts), dtype=np.float32))
            faiss.write_index(flat, str(merged / "index"))
            (merged / "docid").write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")

        results = {}
        for name in ("sharded", "merged"):
            run = work / f"{name}.trec"
            start = time.perf_counter()
            dense_search("comlq", run, model=args.model, index=work / name, hits=args.hits, progress=False,
                         force=True)
            seconds = time.perf_counter() - start
            data = run.read_bytes()
            results[name] = {"seconds": round(seconds, 2), "lines": data.count(b"\n"),
                             "sha256": hashlib.sha256(data).hexdigest()}
        largest = max((work / "sharded" / name / "index").stat().st_size for name in manifest["shards"])
        identical = (work / "sharded.trec").read_bytes() == (work / "merged.trec").read_bytes()
        report = {"corpus": "comlq", "documents": manifest["documents"], "dimension": manifest["dimension"],
                  "flat_vector_mib": round(manifest["documents"] * manifest["dimension"] * 4 / 2**20, 1),
                  "max_index_memory": args.max_index_memory, "shards": len(manifest["shards"]),
                  "largest_shard_index_mib": round(largest / 2**20, 1),
                  "encode_seconds": round(encode_s, 1), "hits": args.hits, "identical_runs": identical, **results}
        print(json.dumps(report, indent=2))
        return 0 if identical else 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
