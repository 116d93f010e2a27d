"""GPU (or CPU) encoding throughput of the suite's dense encoder against plain ``SentenceTransformer.encode``.

Run by hand (not a test). On a GPU machine, from the repository root, with an fp16 copy of the packaged MiniLM and
the ComLQ files carried in the ignored folder ``.device-carry/`` (see docs/gpu-encoding.md)::

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python benchmarks/bench_gpu_encoding.py \\
        --model .device-carry/minilm-fp16 --comlq .device-carry/comlq --device cuda \\
        --dtypes float32,float16,bfloat16 --batch-sizes 64,256,1024 --rounds 2 --ndcg

and on this kind of machine (CPU): ``--device cpu --dtypes float32 --batch-sizes 64 --texts 512 --rounds 3``
(``--model`` defaults to the packaged MiniLM, ``--comlq`` to ``../shared/data/comlq/dataset``). ``--make-fp16-copy
DEST`` writes the fp16 copy (the weights rounded to float16, every other file as it is) and exits.

It prints, for every dtype and batch size, in one process on one device:

* ``suite``: passages/s of the shard encoder of ``negplugins search dense`` (the texts in the groups of a shard,
  ``DenseEncoder.encode_groups``: tokenizer threads ahead of the model, token-budget batches, pinned non-blocking
  transfers on CUDA);
* ``plain``: passages/s of ``SentenceTransformer.encode`` on the same weights in the same dtype, the same
  batch size, and their ratio (suite / plain); the two alternate, round by round, and the best round of each counts;
* ``forward``: the forward-pass-only ceiling: the suite's batches tokenized, padded and put on the device
  beforehand, then only the model runs;
* ``feed``: how fast the suite's tokenizer side (tokenize, sort, cut, pad, pin) produces batches with no model;
  ``hf-tok``: the transformers tokenizer call (``padding=True, truncation=True, return_tensors="pt"``) per batch;
* ``cos32``: the lowest cosine of the suite's vectors to its float32 vectors; ``cosST``: to plain's vectors;
* ``pad``: padded tokens / real tokens of the suite's batches and of fixed batches of ``batch size`` texts in
  sentence-transformers' order;
* with ``--ndcg``: ComLQ nDCG@10 of the suite's vectors of all passages per dtype (exact inner-product search,
  ties by doc id descending; trec_eval's ``ndcg_cut_10``, computed here with numpy, and with ir_measures too
  where it is installed).

The script imports only the encoder modules of the suite (not the ``negplugins`` package's ``__init__``, which
registers the measures with ir_measures), so it runs where ir_datasets, ir_measures, Pyserini and faiss are not
installed; it needs torch, transformers and sentence-transformers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_COMLQ = ROOT.parent / "shared" / "data" / "comlq" / "dataset"


def suite_modules():
    """``(encoders, encoding_pipeline)`` of the checkout, imported without running ``negplugins/__init__.py``."""
    if "negplugins" not in sys.modules:
        package = types.ModuleType("negplugins")
        package.__path__ = [str(ROOT / "negplugins")]
        package.__file__ = str(ROOT / "negplugins" / "__init__.py")
        sys.modules["negplugins"] = package
    from negplugins.runners import encoders, encoding_pipeline

    return encoders, encoding_pipeline


def _open_text(path: Path):
    """``path``, or ``path`` + ``.gz`` where only that exists (the carried copy is gzipped to fit the transfer)."""
    import gzip

    if not path.is_file() and path.with_name(path.name + ".gz").is_file():
        return gzip.open(path.with_name(path.name + ".gz"), "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_comlq(folder: Path):
    """``(doc ids, passages, {qid: query}, {qid: {doc: relevance}})`` from ComLQ's BEIR-format files, the texts as
    the suite's runners see them (``negplugins.datasets``, which this script cannot import: it needs ir_datasets)."""
    ids, texts = [], []
    with _open_text(folder / "corpus.jsonl") as f:
        for line in f:
            record = json.loads(line)
            title, text = record.get("title") or "", record["text"]
            ids.append(str(record["_id"]))
            texts.append(f"{title}\n{text}" if title and not text.startswith(title) else text)  # document_text
    queries, qrels = {}, {}
    if (folder / "queries.jsonl").is_file() or (folder / "queries.jsonl.gz").is_file():
        with _open_text(folder / "queries.jsonl") as f:
            for line in f:
                record = json.loads(line)
                queries[str(record["_id"])] = " ".join(record["text"].split())  # as negplugins.datasets.query_texts
    qrels_file = folder / "qrels" / "test.tsv"
    if qrels_file.is_file():
        for n, line in enumerate(qrels_file.read_text(encoding="utf-8").splitlines()):
            fields = line.strip().split("\t")
            if n == 0 or len(fields) != 3:
                continue
            qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    return ids, texts, queries, qrels


def ndcg_at_10(query_vectors, doc_vectors, qids: list[str], doc_ids: list[str], qrels: dict) -> float:
    """trec_eval's ndcg_cut_10 (linear gains, log2 discounts), mean over the judged queries; ranking by score
    descending, ties by doc id descending."""
    import numpy as np

    total, count = 0.0, 0
    descending = np.argsort(np.array(doc_ids, dtype=object))[::-1]  # tie order: doc id descending
    for start in range(0, len(qids), 256):
        scores = query_vectors[start:start + 256] @ doc_vectors[descending].T
        for row, qid in zip(scores, qids[start:start + 256]):
            if qid not in qrels:
                continue
            top = descending[np.argsort(-row, kind="stable")[:10]]
            gains = [qrels[qid].get(doc_ids[i], 0) for i in top]
            dcg = sum(g / np.log2(r + 2) for r, g in enumerate(gains))
            ideal = sorted(qrels[qid].values(), reverse=True)[:10]
            idcg = sum(g / np.log2(r + 2) for r, g in enumerate(ideal) if g > 0)
            total += dcg / idcg if idcg > 0 else 0.0
            count += 1
    return total / max(count, 1)


def ndcg_ir_measures(query_vectors, doc_vectors, qids, doc_ids, qrels) -> float | None:
    """The same nDCG@10 by ir_measures (top 100 per query, full-precision scores), where it is installed."""
    try:
        import ir_measures
    except ImportError:
        return None
    import numpy as np

    run = {}
    for start in range(0, len(qids), 256):
        scores = query_vectors[start:start + 256] @ doc_vectors.T
        for row, qid in zip(scores, qids[start:start + 256]):
            top = np.argpartition(-row, 100)[:100]
            run[qid] = {doc_ids[i]: float(row[i]) for i in top}
    return ir_measures.calc_aggregate([ir_measures.parse_measure("nDCG@10")], qrels, run)[
        ir_measures.parse_measure("nDCG@10")]


def make_fp16_copy(source: Path, target: Path) -> None:
    """``source`` copied to ``target`` with every floating-point weight of its safetensors files in float16."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    if target.exists():
        raise SystemExit(f"--make-fp16-copy {target}: exists already; give a new folder")
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source, partial, ignore=shutil.ignore_patterns("*.safetensors", "onnx", "openvino", ".*"))
    for weights in source.rglob("*.safetensors"):
        state = {name: tensor.half() if tensor.is_floating_point() else tensor
                 for name, tensor in load_file(str(weights)).items()}
        (partial / weights.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
        save_file(state, str(partial / weights.relative_to(source)), metadata={"format": "pt"})
    partial.rename(target)
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"wrote {target} ({size / 1e6:.1f} MB, float16 weights, torch {torch.__version__})")


class _NoModel:
    """A stand-in model for the feed rate: takes the batches as the GPU's forward would, computes nothing."""

    def __init__(self, pin: bool, dimension: int):
        self.pin, self.dimension = pin, dimension

    def submit(self, features):
        return len(features["input_ids"])

    def result(self, handle):
        import numpy as np

        return np.zeros((handle, self.dimension), dtype=np.float32)


class Bench:
    """The measurements of one dtype and batch size (see the module documentation)."""

    def __init__(self, pipeline, texts: list[str], device: str, rounds: int, workers: int | None):
        import torch

        self.pipeline, self.texts, self.device, self.rounds, self.workers = pipeline, texts, device, rounds, workers
        self.torch = torch
        self.cuda = device.startswith("cuda")

    def seconds(self, fn):
        """``(seconds, result)`` of one call, the device synchronised before and after."""
        if self.cuda:
            self.torch.cuda.synchronize()
        start = time.perf_counter()
        result = fn()
        if self.cuda:
            self.torch.cuda.synchronize()
        return time.perf_counter() - start, result

    def best(self, fn) -> float:
        return min(self.seconds(fn)[0] for _ in range(self.rounds))

    def measure(self, encoder, plain, batch_size: int) -> dict:
        import numpy as np

        pipeline, texts, torch = self.pipeline, self.texts, self.torch
        groups = pipeline.length_groups([len(t) for t in texts], batch_size)
        texts_of = [pipeline.dense_texts(encoder, [texts[i] for i in group]) for group in groups]
        suite_pipeline = pipeline.dense_pipeline(encoder, batch_size, workers=self.workers)

        def suite():  # DenseEncoder.encode_groups, as search dense encodes a shard (with --workers: those)
            out = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
            for group, vectors in zip(groups, suite_pipeline.run(texts_of)):
                out[group] = vectors
            return out

        def st():
            return plain.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)

        st(), suite()  # warm-up: kernels, caches
        times = {"suite": [], "plain": []}
        vectors = {}
        for _ in range(self.rounds):
            for side, fn in (("plain", st), ("suite", suite)):
                seconds, vectors[side] = self.seconds(fn)
                times[side].append(seconds)

        # the forward-pass-only ceiling: the suite's batches, already on the device
        tokenize = pipeline.token_rows(encoder.tokenizer, encoder.max_length, True)
        names, pad_id = suite_pipeline.pad["names"], encoder.tokenizer.pad_token_id
        ready, real, padded = [], 0, 0
        for group_texts in texts_of:
            rows = tokenize(group_texts)
            for positions in pipeline.token_budget_batches(rows.lengths, suite_pipeline.token_budget):
                features = pipeline.pad_batch(rows, positions, pad_id, names=names)
                real += int(rows.lengths[positions].sum())
                padded += features["input_ids"].size
                ready.append({k: torch.from_numpy(v).to(self.device) for k, v in features.items()})
        module = encoder.runner.module

        def forward_only():
            with torch.inference_mode():
                for inputs in ready:
                    module(**inputs)

        forward_only()
        forward_seconds = self.best(forward_only)
        ready.clear()

        # the tokenizer side alone (tokenize, sort, cut, pad, pin), and the transformers call
        feeder = pipeline.EncodingPipeline(tokenize, _NoModel(self.cuda, encoder.dimension),
                                           token_budget=suite_pipeline.token_budget, row_shape=(encoder.dimension,),
                                           pad_id=pad_id, names=names, workers=suite_pipeline.workers)
        feed_seconds = self.best(lambda: list(feeder.run(texts_of)))

        def hf_tokenizer():
            for start in range(0, len(texts), batch_size):
                encoder.tokenizer(texts[start:start + batch_size], padding=True, truncation=True,
                                  max_length=encoder.max_length, return_tensors="pt")

        hf_seconds = self.best(hf_tokenizer)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # sentence-transformers' batches
        fixed = sum(len(b) * int(tokenize([texts[i] for i in b]).lengths.max())
                    for b in (order[s:s + batch_size] for s in range(0, len(texts), batch_size)))
        n = len(texts)
        return {"batch": batch_size, "suite": n / min(times["suite"]), "plain": n / min(times["plain"]),
                "forward": n / forward_seconds, "feed": n / feed_seconds, "hf-tok": n / hf_seconds,
                "vectors": vectors["suite"], "cosST": float((vectors["suite"] * vectors["plain"]).sum(1).min()),
                "pad": f"{padded / real:.3f}/{fixed / real:.3f}", "workers": suite_pipeline.workers,
                "rust": bool(getattr(tokenize, "rust", False))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model folder (default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--comlq", type=Path, default=DEFAULT_COMLQ, help="folder of ComLQ's corpus.jsonl, "
                        "queries.jsonl and qrels/test.tsv")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtypes", default="float32,float16")
    parser.add_argument("--batch-sizes", default="64,256,1024")
    parser.add_argument("--texts", type=int, default=0, help="passages to time (default: all)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="tokenizer threads (default: the suite's)")
    parser.add_argument("--ndcg", action="store_true", help="ComLQ nDCG@10 per dtype (encodes all passages)")
    parser.add_argument("--dry-run", action="store_true", help="load everything, measure on 8 passages, stop")
    parser.add_argument("--make-fp16-copy", type=Path, default=None, metavar="DEST")
    args = parser.parse_args(argv)

    encoders, pipeline = suite_modules()
    import torch
    import transformers

    from negplugins.runners import encoding_settings, model_refs

    model_path = Path(args.model) if args.model else model_refs.default_model_path()
    if args.make_fp16_copy:
        make_fp16_copy(model_path, args.make_fp16_copy)
        return 0
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import __version__ as st_version

    doc_ids, passages, queries, qrels = read_comlq(args.comlq)
    texts = passages[:8] if args.dry_run else passages[:args.texts] if args.texts else passages
    device = encoding_settings.resolve_device(args.device)
    bench = Bench(pipeline, texts, device, args.rounds, args.workers)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    ref = model_refs.resolve_model(str(model_path))
    where = torch.cuda.get_device_name(device) if bench.cuda else \
        f"CPU ({os.cpu_count()} cores, torch threads {torch.get_num_threads()})"
    print(f"device {where}; torch {torch.__version__}, transformers {transformers.__version__}, "
          f"sentence-transformers {st_version}")
    rows, ndcg, reference32, attention = [], {}, {}, None
    for dtype in args.dtypes.split(","):
        encoder = encoders.DenseEncoder(ref, device=device, dtype=dtype)
        attention = encoder.runner.module.model.config._attn_implementation
        plain = SentenceTransformer(str(model_path), device=device, local_files_only=True).to(getattr(torch, dtype))
        plain.max_seq_length = encoder.max_length
        for batch_size in batch_sizes:
            row = dict(bench.measure(encoder, plain, batch_size), dtype=dtype)
            if dtype == "float32":
                reference32[batch_size] = row["vectors"]
            base = reference32.get(batch_size)
            row["cos32"] = float((row["vectors"] * base).sum(1).min()) if base is not None else float("nan")
            rows.append(row)
            print(f"  {dtype} batch {batch_size}: suite {row['suite']:.0f}/s, plain {row['plain']:.0f}/s",
                  file=sys.stderr, flush=True)
        if args.ndcg:
            qids = sorted(queries)
            query_encoder = encoder.with_prefix(encoding_settings.model_defaults(ref).query_prefix, "query")
            query_vectors = query_encoder.encode([queries[q] for q in qids], batch_size=batch_sizes[-1])
            doc_vectors = rows[-1]["vectors"] if len(texts) == len(passages) else \
                encoder.encode(passages, batch_size=batch_sizes[-1])  # the timed passages are not all of them
            ndcg[dtype] = (ndcg_at_10(query_vectors, doc_vectors, qids, doc_ids, qrels),
                           ndcg_ir_measures(query_vectors, doc_vectors, qids, doc_ids, qrels))
        encoder = plain = None
        if bench.cuda:
            torch.cuda.empty_cache()

    print(f"model {ref.name} ({model_path}), attention {attention}, {len(texts)} ComLQ passages, tokenizer threads "
          f"{rows[-1]['workers']} ({'Rust tokenizers' if rows[-1]['rust'] else 'the transformers call'}), best of "
          f"{args.rounds} alternating rounds")
    print("dtype | batch | suite/s | plain/s | ratio | forward/s | feed/s | hf-tok/s | cos32 | cosST | pad suite/plain")
    for row in rows:
        print(" | ".join([row["dtype"], str(row["batch"]), f"{row['suite']:.0f}", f"{row['plain']:.0f}",
                          f"{row['suite'] / row['plain']:.2f}", f"{row['forward']:.0f}", f"{row['feed']:.0f}",
                          f"{row['hf-tok']:.0f}", f"{row['cos32']:.7f}", f"{row['cosST']:.7f}", row["pad"]]))
    for dtype, (value, checked) in ndcg.items():
        extra = f" (ir_measures: {checked:.4f})" if checked is not None else ""
        print(f"ComLQ nDCG@10 {dtype}: {value:.4f}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
