"""``search dense --backend onnx|openvino``: the exported graph computes the PyTorch vectors; the export is cached.

Runs on tiny randomly initialised models (see ``test_runners_dense_options``); the expected vectors are the
PyTorch backend's, which that module checks against a direct transformers computation. Batches of several
sizes and lengths are encoded, so the graph's dynamic axes are exercised (the export traces one shape).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_runners_dense_options import _docs, direct, models  # noqa: F401 - the fixture

from negplugins.errors import UserError
from negplugins.io.sidecars import file_sha256, read_metadata
from negplugins.runners import backends
from negplugins.runners.common import MANIFEST
from negplugins.runners.dense import dense_search
from negplugins.runners.dense_index_format import encoders_path, load_dense_index
from negplugins.runners.encoders import ENCODER_MANIFEST, DenseEncoder
from negplugins.runners.model_refs import resolve_model

DEMO = "negplugins-demo"


@pytest.mark.parametrize("pooling", ["mean", "cls", "last-token"])
@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_float32_graph_computes_the_torch_vectors(models, tmp_path, backend, pooling):  # noqa: F811
    _, texts = _docs()
    model = "llama" if pooling == "last-token" else "e5"
    ref = resolve_model(str(models[model]))
    expected = DenseEncoder(ref, pooling=pooling, device="cpu").encode(texts, batch_size=5)
    encoder = DenseEncoder(ref, pooling=pooling, backend=backend, cache=tmp_path)
    assert encoder.device == "cpu" and encoder.export["pooling"] == pooling
    for batch_size in (1, 5, 16):
        np.testing.assert_allclose(encoder.encode(texts, batch_size=batch_size), expected, atol=1e-5)
    if model == "e5":  # and the prompts are the model's, as with PyTorch
        np.testing.assert_allclose(expected[:3], direct(models["e5"], texts[:3], pooling, prefix="passage: ",
                                                        max_length=64), atol=1e-5)


def test_export_is_cached_and_checked(models, tmp_path):  # noqa: F811
    ref = resolve_model(str(models["a"]))
    first = DenseEncoder(ref, backend="onnx", cache=tmp_path)
    folder = Path(first.export["path"]).parent
    assert folder.parent == tmp_path and folder.name == f"bert-a-{ref.sha256[:12]}-mean-norm-float32"
    manifest = json.loads((folder / ENCODER_MANIFEST).read_text())
    assert manifest["sha256"] == file_sha256(folder / "model.onnx") and manifest["model_sha256"] == ref.sha256
    assert manifest["inputs"] == ["input_ids", "attention_mask", "token_type_ids"] and manifest["opset"] == 17
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    second = DenseEncoder(ref, backend="openvino", cache=tmp_path)  # the same graph, reused
    assert second.export["path"] == first.export["path"] and (folder / "model.onnx").stat().st_mtime_ns == stamp
    # another pooling or normalisation is another graph
    other = DenseEncoder(ref, backend="onnx", pooling="cls", normalize=False, cache=tmp_path)
    assert Path(other.export["path"]).parent.name.endswith("-cls-raw-float32")
    # a damaged export is exported again
    (folder / "model.onnx").write_bytes(b"damaged")
    third = DenseEncoder(ref, backend="onnx", cache=tmp_path)
    assert third.export["sha256"] == file_sha256(folder / "model.onnx") == manifest["sha256"]


def test_an_export_of_another_model_configuration_is_not_reused(models, tmp_path):  # noqa: F811
    """The same weights, another config.json (layer norm epsilon): the cached graph is exported again."""
    import shutil

    _, texts = _docs()
    folder = shutil.copytree(models["a"], tmp_path / "bert-a")
    DenseEncoder(resolve_model(str(folder)), backend="onnx", cache=tmp_path / "cache")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 10.0}))
    ref = resolve_model(str(folder))
    exported = DenseEncoder(ref, backend="onnx", cache=tmp_path / "cache").encode(texts)
    np.testing.assert_allclose(exported, DenseEncoder(ref, device="cpu").encode(texts), atol=1e-5)


def test_int8_is_dynamic_per_channel_quantization(models, tmp_path):  # noqa: F811
    import onnx

    _, texts = _docs()
    ref = resolve_model(str(models["a"]))
    full = DenseEncoder(ref, device="cpu").encode(texts)
    encoder = DenseEncoder(ref, backend="onnx", dtype="int8", cache=tmp_path)
    assert encoder.export["variant"] == "int8" and encoder.export["quantization"]["per_channel"] is True
    graph = onnx.load(encoder.export["path"]).graph
    ops = [node.op_type for node in graph.node]
    # the 6 weight matrices of each of the 2 layers (query, key, value, output, intermediate, output) are int8; the
    # 2 products of activations per layer (query x key, attention x value) stay float
    assert ops.count("MatMulInteger") == 12 and ops.count("MatMul") == 4 and "DynamicQuantizeLinear" in ops
    # per-channel: one weight scale per output column of each quantized matrix
    scales = [init for init in graph.initializer if init.name.endswith("_scale") and len(init.dims) == 1]
    assert scales and any(init.dims[0] > 1 for init in scales)
    vectors = encoder.encode(texts)
    assert not np.allclose(vectors, full, atol=1e-4) and (vectors * full).sum(1).min() > 0.95


def test_openvino_bfloat16(models, tmp_path):  # noqa: F811
    if "BF16" not in backends.openvino_capabilities():
        pytest.skip("this CPU has no bfloat16 (OpenVINO would refuse --dtype bfloat16)")
    _, texts = _docs()
    ref = resolve_model(str(models["a"]))
    full = DenseEncoder(ref, device="cpu").encode(texts)
    encoder = DenseEncoder(ref, backend="openvino", dtype="bfloat16", cache=tmp_path)
    assert encoder.runner.precision == "bf16"
    assert DenseEncoder(ref, backend="openvino", cache=tmp_path).runner.precision == "f32"  # asked for, not default
    vectors = encoder.encode(texts)
    assert not np.allclose(vectors, full, atol=1e-5) and (vectors * full).sum(1).min() > 0.99


def test_search_with_onnx_caches_the_export_beside_the_index(models, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    torch_run = dense_search(DEMO, "torch.trec", model=str(models["a"]), hits=5, progress=False)
    info = dense_search(DEMO, "onnx.trec", model=str(models["a"]), hits=5, backend="onnx", progress=False)
    index = Path(info["index"])
    assert index == Path("indexes/faiss/negplugins-demo/bert-a.onnx") != Path(torch_run["index"])
    manifest = json.loads((index / MANIFEST).read_text())
    assert manifest["encoding"]["backend"] == "onnx" and manifest["encoding"]["dtype"] == "float32"
    export = manifest["encoder"]["export"]
    assert Path(export["path"]).parent.parent == encoders_path(index).resolve()
    assert export["sha256"] == file_sha256(export["path"])
    a, _ = load_dense_index(index)
    b, _ = load_dense_index(torch_run["index"])
    np.testing.assert_allclose(a.reconstruct_n(0, a.ntotal), b.reconstruct_n(0, b.ntotal), atol=1e-5)
    assert [line.split()[:3] for line in Path("onnx.trec").read_text().splitlines()] == \
        [line.split()[:3] for line in Path("torch.trec").read_text().splitlines()]
    meta = read_metadata("onnx.trec")
    assert meta["parameters"]["backend"] == "onnx" and meta["parameters"]["query_encoding"]["export"]["sha256"] == \
        export["sha256"]
    # --index: the backend is the index's unless given
    again = dense_search(DEMO, "again.trec", index=index, hits=5, progress=False)
    assert again["backend"] == "onnx" and Path("again.trec").read_text() == Path("onnx.trec").read_text()


def test_onnx_backend_refuses_a_gpu(models):  # noqa: F811
    with pytest.raises(UserError, match="--backend onnx runs on the CPU only"):
        DenseEncoder(resolve_model(str(models["a"])), backend="onnx", device="cuda")


def test_a_missing_fast_extra_is_one_line(models, monkeypatch):  # noqa: F811
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openvino" else real(name, *a))
    with pytest.raises(UserError) as error:
        DenseEncoder(resolve_model(str(models["a"])), backend="openvino")
    assert str(error.value) == ("--backend openvino needs openvino (not installed): "
                                "pip install 'negplugins[fast]'")


def _op_types(path) -> list[str]:
    import openvino

    return [op.get_type_name() for op in openvino.Core().read_model(str(path)).get_ops()]


def test_openvino_int8_is_nncf_static_quantization_calibrated_reproducibly(models, tmp_path):  # noqa: F811
    _, texts = _docs()
    ref = resolve_model(str(models["a"]))
    full = DenseEncoder(ref, device="cpu").encode(texts)
    with pytest.raises(UserError, match="--backend openvino --dtype int8: the quantization needs calibration texts"):
        DenseEncoder(ref, backend="openvino", dtype="int8", cache=tmp_path)
    encoder = DenseEncoder(ref, backend="openvino", dtype="int8", cache=tmp_path / "a", calibration=texts)
    export = encoder.export
    folder = Path(export["path"]).parent
    assert export["variant"] == "int8-static" and Path(export["path"]).name == "model.xml"
    assert export["quantization"]["calibration_texts"] == len(texts) and "nncf.quantize" in export["quantization"][
        "method"]
    assert export["bin_sha256"] == file_sha256(folder / "model.bin") and not (folder / "model-float32.onnx").exists()
    assert encoder.runner.precision == "f32"  # the operations left in floating point
    ops = _op_types(export["path"])
    assert ops.count("FakeQuantize") >= 12  # the inputs of the 12 weight products (6 a layer, 2 layers) at least
    vectors = encoder.encode(texts)
    assert not np.allclose(vectors, full, atol=1e-4) and (vectors * full).sum(1).min() > 0.95
    # the same calibration gives the same weights and quantization ranges byte for byte (model.bin), the same graph
    # but for the names OpenVINO numbers from a process-wide counter (Constant_91862), and the same vectors
    again = DenseEncoder(ref, backend="openvino", dtype="int8", cache=tmp_path / "b", calibration=texts)
    assert again.export["bin_sha256"] == export["bin_sha256"]

    def unnamed(path):
        return re.sub(r'name="[A-Za-z]+(_[0-9]+)+"', 'name=""', Path(path).read_text())

    assert unnamed(again.export["path"]) == unnamed(export["path"])
    np.testing.assert_array_equal(again.encode(texts), vectors)
    # reused from the cache while it matches; other calibration texts are another graph
    stamp = (folder / "model.bin").stat().st_mtime_ns
    assert DenseEncoder(ref, backend="openvino", dtype="int8", cache=tmp_path / "a", calibration=texts).export[
        "path"] == export["path"] and (folder / "model.bin").stat().st_mtime_ns == stamp
    other = DenseEncoder(ref, backend="openvino", dtype="int8", cache=tmp_path / "a", calibration=texts[:4])
    assert Path(other.export["path"]).parent != folder
    assert other.export["calibration_sha256"] != export["calibration_sha256"]


def test_search_with_openvino_int8_calibrates_on_the_corpus(models, tmp_path, monkeypatch):  # noqa: F811
    import hashlib

    from negplugins import datasets
    from negplugins.cli import main
    from negplugins.runners.dense_index_format import calibration_texts

    monkeypatch.chdir(tmp_path)
    assert main(["search", "dense", DEMO, "--model", str(models["e5"]), "--backend", "openvino", "--dtype", "int8",
                 "--hits", "5", "-o", "int8.trec"]) == 0
    index = Path("indexes/faiss/negplugins-demo/e5-like.openvino.int8")
    manifest = json.loads((index / MANIFEST).read_text())
    assert manifest["encoding"]["backend"] == "openvino" and manifest["encoding"]["dtype"] == "int8"
    # the calibration: the corpus's passages (the demo has 36, fewer than 300), each with the passage prefix
    texts = calibration_texts(DEMO, manifest["encoding"])
    docs = [text for _, text in datasets.iter_docs_for_indexing(datasets.load(DEMO))]
    assert texts == ["passage: " + text for text in docs]
    export = manifest["encoder"]["export"]
    assert export["calibration_sha256"] == hashlib.sha256(json.dumps(texts).encode()).hexdigest()
    assert export["quantization"]["calibration_texts"] == 36 and export["path"].endswith("model.xml")
    meta = read_metadata("int8.trec")
    query_graph = meta["parameters"]["query_encoding"]["export"]
    assert Path(query_graph["path"]).resolve() == Path(export["path"]) and query_graph["bin_sha256"] == export[
        "bin_sha256"]  # queries: the same graph
    # --index: the query encoder takes the cached graph (not quantized again) and the run is the same
    stamp = Path(export["path"]).with_suffix(".bin").stat().st_mtime_ns
    assert main(["search", "dense", DEMO, "--index", str(index), "--hits", "5", "-o", "again.trec"]) == 0
    assert Path("again.trec").read_text() == Path("int8.trec").read_text()
    assert Path(export["path"]).with_suffix(".bin").stat().st_mtime_ns == stamp
    assert calibration_texts(DEMO, dict(manifest["encoding"], dtype="float32")) is None
