"""``search dense`` options: prefixes, pooling, normalisation, token limit, a separate query encoder, device and dtype.

No trained E5, BGE, DPR or decoder embedding model is reachable offline, so these run on tiny randomly initialised
models built here and saved with ``save_pretrained`` (plus the sentence-transformers files, written by hand in their
documented format where a test needs them). Expected vectors are computed in each test directly with
``AutoTokenizer`` / ``AutoModel``, one text at a time (no padding, so no attention mask is involved): mean = the
average of the token vectors, CLS = the first token's vector, last-token = the last token's vector, then divided
by their L2 norm. The suite batches, pads and masks; equality shows it computes the same function.
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from negplugins import datasets
from negplugins.cli import main
from negplugins.errors import UserError
from negplugins.io.sidecars import read_metadata
from negplugins.runners import backends, commands, encoding_settings
from negplugins.runners.common import MANIFEST
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.dense_index_format import (
    default_dense_index_path,
    encoders_path,
    index_encoding,
    load_dense_index,
)
from negplugins.runners.encoders import DenseEncoder
from negplugins.runners.encoding_settings import encoder_settings, resolve_device
from negplugins.runners.model_refs import resolve_model

DEMO = "negplugins-demo"
_CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789?.,:;'-()")
_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "query", "passage", "the", "of", "and", "language",
          *_CHARS, *(f"##{c}" for c in _CHARS)]


def _tokenizer(folder: Path, **kwargs):
    from transformers import BertTokenizer

    (folder / "vocab.txt").write_text("\n".join(_VOCAB) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(folder / "vocab.txt"), **kwargs).save_pretrained(folder)


def _bert(folder: Path, seed: int, max_positions: int = 128) -> Path:
    """A randomly initialised 2-layer BERT (hidden size 32) with a character-level WordPiece vocabulary."""
    import torch
    from transformers import BertConfig, BertModel

    folder.mkdir(parents=True)
    _tokenizer(folder)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(_VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=max_positions)
    BertModel(config).save_pretrained(folder)
    return folder


def _sentence_transformers_files(folder: Path, pooling: str = "mean_tokens", prompts: dict | None = None,
                                 max_seq_length: int = 64) -> Path:
    """The files sentence-transformers writes for Transformer + Pooling + Normalize (its documented layout)."""
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_seq_length,
                                                                  "do_lower_case": False}), encoding="utf-8")
    (folder / "1_Pooling").mkdir()
    modes = {f"pooling_mode_{m}": m == pooling for m in ("cls_token", "mean_tokens", "max_tokens", "lasttoken")}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32, **modes}),
                                                      encoding="utf-8")
    (folder / "2_Normalize").mkdir()
    (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts or {}}),
                                                              encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Tiny models: plain BERTs ``a`` and ``b`` (different weights), an E5-style sentence-transformers model with
    stored prompts, a CLS-pooling sentence-transformers model, and a tiny causal Llama with a BERT tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaModel

    root = tmp_path_factory.mktemp("dense-models")
    a = _bert(root / "bert-a", seed=1)
    b = _bert(root / "bert-b", seed=2)
    e5 = shutil.copytree(a, root / "e5-like")
    _sentence_transformers_files(e5, prompts={"query": "query: ", "passage": "passage: "})
    cls = _sentence_transformers_files(shutil.copytree(b, root / "cls-like"), pooling="cls_token")
    llama = root / "llama"
    llama.mkdir()
    _tokenizer(llama)
    torch.manual_seed(3)
    LlamaModel(LlamaConfig(vocab_size=len(_VOCAB), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                           num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128,
                           pad_token_id=0)).save_pretrained(llama)
    return {"a": a, "b": b, "e5": e5, "cls": cls, "llama": llama}


def direct(folder, texts, pooling="mean", prefix="", normalize=True, max_length=128):
    """Vectors computed with transformers directly, one text at a time (see the module documentation); the tiny
    models have 128 positions."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    rows = []
    with torch.no_grad():
        for text in texts:
            inputs = tokenizer(prefix + text, truncation=True, max_length=max_length, return_tensors="pt")
            if "token_type_ids" not in inspect.signature(model.forward).parameters:
                inputs.pop("token_type_ids", None)
            tokens = model(**inputs).last_hidden_state[0]
            vector = {"mean": tokens.mean(0), "cls": tokens[0], "last-token": tokens[-1]}[pooling]
            rows.append((vector / vector.norm() if normalize else vector).numpy())
    return np.stack(rows)


def _docs():
    ids, texts = zip(*datasets.iter_docs_for_indexing(datasets.load(DEMO)))
    return list(ids), list(texts)


def _queries():
    return datasets.query_texts(datasets.load(DEMO))


def _check_run_scores(run, query_vectors: dict, doc_vectors: dict):
    """Every line's score is the inner product of the expected query and document vectors (six decimals)."""
    lines = [line.split() for line in Path(run).read_text().splitlines()]
    assert lines
    for qid, _, doc, _, score, _ in lines:
        assert abs(float(score) - float(query_vectors[qid] @ doc_vectors[doc])) < 2e-6, (qid, doc)


# -- the vectors ----------------------------------------------------------------------------------------------------

def test_e5_prefixes_from_the_models_prompts(models, tmp_path, monkeypatch):
    """E5-style: the stored prompts ``query: `` / ``passage: `` are prepended by default, as the direct computation."""
    monkeypatch.chdir(tmp_path)
    info = dense_search(DEMO, "e5.trec", model=str(models["e5"]), hits=5, progress=False)
    assert info["passage_prefix"] == "passage: " and info["query_prefix"] == "query: "
    ids, texts = _docs()
    index, index_ids = load_dense_index(info["index"])
    assert index_ids == ids
    expected = direct(models["e5"], texts, prefix="passage: ", max_length=64)
    np.testing.assert_allclose(index.reconstruct_n(0, len(ids)), expected, atol=1e-5)
    assert not np.allclose(expected, direct(models["e5"], texts, max_length=64), atol=1e-3)  # the prefix matters
    queries = _queries()
    q = direct(models["e5"], list(queries.values()), prefix="query: ", max_length=64)
    _check_run_scores("e5.trec", dict(zip(queries, q)), dict(zip(ids, expected)))
    manifest = json.loads((Path(info["index"]) / MANIFEST).read_text())
    assert manifest["encoding"] == {"pooling": "mean", "normalize": True, "max_length": 64, "prefix": "passage: ",
                                    "backend": "torch", "dtype": "float32"}
    meta = read_metadata("e5.trec")["parameters"]
    assert meta["passage_prefix"] == "passage: " and meta["query_encoding"]["prefix"] == "query: "

    # explicit prefixes win over the stored ones, and get an index of their own
    other = dense_search(DEMO, "plain.trec", model=str(models["e5"]), hits=5, progress=False,
                         passage_prefix="", query_prefix="")
    assert other["index"] != info["index"]
    index2, _ = load_dense_index(other["index"])
    np.testing.assert_allclose(index2.reconstruct_n(0, len(ids)), direct(models["e5"], texts, max_length=64),
                               atol=1e-5)


def test_cls_pooling_given_and_from_the_model(models, tmp_path):
    ids, texts = _docs()
    given = dense_index(DEMO, model=str(models["a"]), index=tmp_path / "cls", pooling="cls", progress=False)
    index, _ = load_dense_index(given.path)
    np.testing.assert_allclose(index.reconstruct_n(0, len(ids)), direct(models["a"], texts, "cls"), atol=1e-5)
    # a sentence-transformers model whose Pooling module says cls_token: CLS by default
    encoder = DenseEncoder(resolve_model(str(models["cls"])), device="cpu")
    assert encoder.pooling == "cls" and encoder.max_length == 64
    np.testing.assert_allclose(encoder.encode(texts[:7], batch_size=3), direct(models["cls"], texts[:7], "cls",
                                                                               max_length=64), atol=1e-5)


def test_last_token_pooling_of_a_decoder_model(models):
    """Right padding: each row's last real token; left padding: the last position (the direct computation of the
    padded batch, since a causal model's positions shift with left padding)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    _, texts = _docs()
    texts = texts[:6]
    encoder = DenseEncoder(resolve_model(str(models["llama"])), pooling="last-token", device="cpu")
    assert "token_type_ids" not in encoder._features(["x"])  # Llama takes no token types; the tokenizer gives them
    np.testing.assert_allclose(encoder.encode(texts, batch_size=4), direct(models["llama"], texts, "last-token"),
                               atol=1e-5)
    unnormalised = DenseEncoder(resolve_model(str(models["llama"])), pooling="last-token", normalize=False,
                                device="cpu")
    np.testing.assert_allclose(unnormalised.encode(texts, batch_size=4),
                               direct(models["llama"], texts, "last-token", normalize=False), atol=1e-4)

    encoder.tokenizer.padding_side = "left"
    tokenizer = AutoTokenizer.from_pretrained(str(models["llama"]), padding_side="left")
    model = AutoModel.from_pretrained(str(models["llama"])).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
    batch.pop("token_type_ids")
    assert (batch["attention_mask"][:, 0] == 0).any()  # some rows are padded on the left
    with torch.no_grad():
        last = model(**batch).last_hidden_state[:, -1]
    expected = (last / last.norm(dim=1, keepdim=True)).numpy()
    np.testing.assert_allclose(encoder.encode(texts, batch_size=len(texts)), expected, atol=1e-5)


def test_a_separate_query_encoder(models, tmp_path, monkeypatch):
    """DPR-style: passages by ``model``, queries by ``query_encoder`` (here CLS pooling, not normalised, as DPR)."""
    monkeypatch.chdir(tmp_path)
    info = dense_search(DEMO, "dpr.trec", model=str(models["a"]), query_encoder=str(models["b"]), hits=4,
                        pooling="cls", normalize=False, progress=False)
    ids, texts = _docs()
    passages = direct(models["a"], texts, "cls", normalize=False)
    index, _ = load_dense_index(info["index"])
    np.testing.assert_allclose(index.reconstruct_n(0, len(ids)), passages, atol=1e-4)
    queries = _queries()
    q = direct(models["b"], list(queries.values()), "cls", normalize=False)
    _check_run_scores("dpr.trec", dict(zip(queries, q)), dict(zip(ids, passages)))
    meta = read_metadata("dpr.trec")
    assert meta["model"]["path"] == str(models["a"].resolve())
    assert meta["parameters"]["query_encoding"]["model"]["sha256"] == resolve_model(str(models["b"])).sha256
    assert meta["parameters"]["normalized"] is False and "queries by bert-b" in meta["system"]
    # the same index searched again with --index and the query encoder gives the same run
    dense_search(DEMO, "again.trec", index=info["index"], query_encoder=str(models["b"]), hits=4, progress=False)
    assert Path("again.trec").read_text() == Path("dpr.trec").read_text()


def test_max_length_truncates(models):
    _, texts = _docs()
    encoder = DenseEncoder(resolve_model(str(models["a"])), max_length=8, device="cpu")
    np.testing.assert_allclose(encoder.encode(texts[:5]), direct(models["a"], texts[:5], max_length=8), atol=1e-5)
    assert DenseEncoder(resolve_model(str(models["a"])), device="cpu").max_length == 128  # max_position_embeddings


# -- reuse: an index encoded otherwise is never taken for this one -------------------------------------------------

def test_index_paths_and_reuse_follow_the_settings(models, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ref = resolve_model(str(models["a"]))
    base = default_dense_index_path(DEMO, ref, encoder_settings(ref))
    assert base == Path("indexes/faiss/negplugins-demo/bert-a") == default_dense_index_path(DEMO, ref)
    assert default_dense_index_path(DEMO, ref, encoder_settings(ref, dtype="bfloat16")).name == "bert-a.bfloat16"
    assert default_dense_index_path(DEMO, ref, encoder_settings(ref, backend="onnx", dtype="int8")).name \
        == "bert-a.onnx.int8"
    names = {default_dense_index_path(DEMO, ref, encoder_settings(ref, **option)).name
             for option in ({"pooling": "cls"}, {"normalize": False}, {"max_length": 16}, {"prefix": "passage: "})}
    assert len(names) == 4 and all(n.startswith("bert-a.") and len(n) == len("bert-a.") + 8 for n in names)
    assert default_dense_index_path(DEMO, ref, encoder_settings(ref, pooling="mean", max_length=128)) == base

    # one folder, other settings: encoded again, never reused; the same settings: reused
    target = tmp_path / "index"
    first = dense_index(DEMO, model=str(models["a"]), index=target, progress=False)
    assert first.built
    again = dense_index(DEMO, model=str(models["a"]), index=target, progress=False)
    assert not again.built
    cls = dense_index(DEMO, model=str(models["a"]), index=target, pooling="cls", progress=False)
    assert cls.built and json.loads((target / MANIFEST).read_text())["encoding"]["pooling"] == "cls"
    prefixed = dense_index(DEMO, model=str(models["a"]), index=target, pooling="cls", passage_prefix="p: ",
                           progress=False)
    assert prefixed.built

    # --index: options that contradict the manifest are refused, the rest are taken from it
    with pytest.raises(UserError, match=r"index: the index was encoded with --pooling 'cls', not 'mean'"):
        dense_search(DEMO, "x.trec", index=target, pooling="mean", progress=False)
    with pytest.raises(UserError, match=r"--passage-prefix 'p: ', not ''"):
        dense_search(DEMO, "x.trec", index=target, passage_prefix="", progress=False)
    info = dense_search(DEMO, "x.trec", index=target, hits=3, progress=False)
    assert info["pooling"] == "cls" and info["passage_prefix"] == "p: "


def test_indexes_of_the_first_release_are_read_as_torch_float32(tmp_path):
    legacy = {"format": 1, "kind": "faiss", "corpus": DEMO, "model_sha256": "x", "pooling": "mean", "max_length": 256}
    assert index_encoding(legacy) == {"pooling": "mean", "normalize": True, "max_length": 256, "prefix": "",
                                      "backend": "torch", "dtype": "float32"}
    assert index_encoding(None) is None and index_encoding({"kind": "other"}) is None
    assert encoders_path(tmp_path / "idx") == tmp_path / "idx.encoders"


# -- devices and dtypes -------------------------------------------------------------------------------------------

def test_device_validation():
    import torch

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto", "onnx") == resolve_device(None, "openvino") == "cpu"
    with pytest.raises(UserError, match=r"^--device tpu: expected auto, cpu, cuda, cuda:N or mps$"):
        resolve_device("tpu")
    with pytest.raises(UserError, match=r"^--device cuda: --backend onnx runs on the CPU only"):
        resolve_device("cuda", "onnx")
    if not torch.cuda.is_available():
        assert resolve_device("auto") == "cpu"
        for device in ("cuda", "cuda:1"):
            with pytest.raises(UserError, match=rf"^--device {device}: CUDA is not available \(PyTorch "):
                resolve_device(device)
    else:  # pragma: no cover - a GPU machine
        assert resolve_device("auto") == "cuda"
        with pytest.raises(UserError, match="no such GPU"):
            resolve_device(f"cuda:{torch.cuda.device_count()}")
    if not torch.backends.mps.is_available():
        with pytest.raises(UserError, match=r"^--device mps: Apple's MPS is not available"):
            resolve_device("mps")


@pytest.mark.parametrize("backend, dtype, message", [
    ("torch", "int8", "--dtype int8 is not run by --backend torch (it runs float32, float16, bfloat16); use --backend onnx or openvino"),
    ("onnx", "bfloat16", "--dtype bfloat16 is not run by --backend onnx (it runs float32, int8); use --backend openvino or torch"),
    ("onnx", "float16", "--dtype float16 is not run by --backend onnx (it runs float32, int8); use --backend torch (on a GPU) or openvino"),
    ("tensorrt", "float32", "--backend tensorrt: expected one of torch, onnx, openvino"),
    ("torch", "float64", "--dtype float64: expected one of float32, float16, bfloat16, int8"),
])
def test_unsupported_combinations(backend, dtype, message):
    with pytest.raises(UserError) as error:
        encoding_settings.check_backend_dtype(backend, dtype)
    assert str(error.value) == message


def test_bfloat16_on_a_cpu_without_bf16_instructions(models, monkeypatch):
    """PyTorch emulates bfloat16 (a note says it is slow); OpenVINO would silently run float32, so it is refused."""
    monkeypatch.setattr(backends, "cpu_bf16", lambda: False)
    assert encoding_settings.check_device_dtype("cpu", "bfloat16") == [
        "--dtype bfloat16: this CPU has no bfloat16 instructions (avx512_bf16, amx_bf16), so PyTorch emulates them: "
        "the same vectors, more slowly than float32"]
    monkeypatch.setattr(backends, "cpu_bf16", lambda: True)
    assert encoding_settings.check_device_dtype("cpu", "bfloat16") == []
    monkeypatch.setattr(backends, "openvino_capabilities", lambda core=None: ["FP32", "INT8"])
    with pytest.raises(UserError, match=r"^--dtype bfloat16 --backend openvino: this CPU has no BF16 support "
                                        r"\(OpenVINO's CPU capabilities: FP32, INT8\); use --dtype float32$"):
        DenseEncoder(resolve_model(str(models["a"])), backend="openvino", dtype="bfloat16")


def test_torch_bfloat16_is_close_to_float32(models):
    _, texts = _docs()
    ref = resolve_model(str(models["a"]))
    full = DenseEncoder(ref, device="cpu").encode(texts)
    half = DenseEncoder(ref, device="cpu", dtype="bfloat16")
    assert next(half.runner.module.parameters()).dtype.__str__() == "torch.bfloat16"
    vectors = half.encode(texts)
    assert vectors.dtype == np.float32 and not np.array_equal(vectors, full)
    assert (vectors * full).sum(1).min() > 0.99  # cosine to the float32 vectors


@pytest.mark.skipif("not __import__('torch').cuda.is_available()", reason="needs a CUDA GPU")
def test_cuda_float16_matches_cpu(models):  # pragma: no cover - runs on a GPU machine only
    _, texts = _docs()
    ref = resolve_model(str(models["a"]))
    gpu = DenseEncoder(ref, device="cuda", dtype="float16")
    assert next(gpu.runner.module.parameters()).device.type == "cuda"
    assert (gpu.encode(texts) * DenseEncoder(ref, device="cpu").encode(texts)).sum(1).min() > 0.99


# -- the command line ---------------------------------------------------------------------------------------------

def test_command_line_choices_are_the_apis():
    from negplugins.cli import build_parser

    parser = build_parser()
    search = next(a for a in parser._subparsers._group_actions[0].choices["search"]._actions
                  if a.dest and a.choices and "dense" in a.choices)
    dense = {a.dest: a for a in search.choices["dense"]._actions}
    assert tuple(dense["backend"].choices) == encoding_settings.BACKENDS
    assert tuple(dense["dtype"].choices) == encoding_settings.DTYPES
    assert tuple(dense["pooling"].choices) == encoding_settings.POOLINGS
    assert commands.__doc__.count("--query-encoder") == 1


@pytest.mark.parametrize("argv, message", [
    (["--device", "cuda:0"], "negplugins: error: --device cuda:0: CUDA is not available"),
    (["--backend", "onnx", "--dtype", "bfloat16"], "negplugins: error: --dtype bfloat16 is not run by --backend onnx"),
    (["--backend", "openvino", "--device", "cuda"], "negplugins: error: --device cuda: --backend openvino runs on "
                                                    "the CPU only"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, monkeypatch, capsys, argv, message):
    import torch

    if "cuda:0" in argv and torch.cuda.is_available():  # pragma: no cover
        pytest.skip("this machine has CUDA")
    monkeypatch.chdir(tmp_path)
    assert main(["search", "dense", DEMO, "-o", "out.trec", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not Path("out.trec").exists() and not Path("indexes").exists()


def test_command_line_options_reach_the_index(models, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["search", "dense", DEMO, "-o", "run.trec", "--model", str(models["a"]), "--pooling", "cls",
                 "--no-normalize", "--max-length", "16", "--passage-prefix", "passage: ", "--query-prefix", "",
                 "--device", "cpu", "--hits", "3", "--no-progress"]) == 0
    assert "wrote 63 lines" in capsys.readouterr().out
    meta = read_metadata("run.trec")
    assert meta["parameters"]["passage_encoding"] == {"pooling": "cls", "normalize": False, "max_length": 16,
                                                      "prefix": "passage: ", "backend": "torch", "dtype": "float32"}
    assert meta["parameters"]["query_prefix"] == "" and meta["parameters"]["device"] == "cpu"
    assert meta["index"]["manifest"]["encoding"] == meta["parameters"]["passage_encoding"]
    assert meta["index"]["manifest"]["pyserini_search"] is not None


def test_options_are_declared_once_for_the_command_line_and_the_api(capsys):
    """A second parser takes the same options with one call; each limit is the declaration's, on both sides."""
    import argparse

    from negplugins.runners.dense_options import (
        EncodingOptions,
        IndexOptions,
        add_dense_options,
        dense_options_from,
        split_options,
    )

    parser = argparse.ArgumentParser(prog="p")
    add_dense_options(parser, (EncodingOptions, IndexOptions))
    options = dense_options_from(parser.parse_args(["--batch-size", "8", "--dtype", "float16", "--no-progress"]),
                                 (EncodingOptions, IndexOptions))
    assert options["batch_size"] == 8 and options["dtype"] == "float16" and options["progress"] is False
    assert options["engine"] == "single" and "hits" not in options
    with pytest.raises(SystemExit):
        parser.parse_args(["--batch-size", "0"])
    assert "argument --batch-size: expected an integer from 1 to 65536, got '0'" in capsys.readouterr().err
    with pytest.raises(UserError, match=r"^--batch-size: expected an integer from 1 to 65536, got 0$"):
        IndexOptions(batch_size=0)
    with pytest.raises(UserError, match=r"^--shard-id: .*, got 2 \(for --shard-num 2\)$"):
        split_options("dense_index", {"shard_num": 2, "shard_id": 2}, (IndexOptions,))
    with pytest.raises(UserError, match=r"^--pooling max: expected one of mean, cls, last-token$"):
        EncodingOptions(pooling="max")
    with pytest.raises(TypeError, match="dense_search\\(\\) got an unexpected keyword argument 'hitz'"):
        split_options("dense_search", {"hitz": 3})
