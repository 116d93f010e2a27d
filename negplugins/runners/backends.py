"""Forward passes of a dense encoder: one ``torch.nn.Module`` (the model, pooling, ``Dense`` layers, normalisation)
run by PyTorch, or exported to ONNX (TorchScript exporter, opset :data:`ONNX_OPSET`) and run by ONNX Runtime or
OpenVINO, int8 by ONNX Runtime's dynamic or NNCF's static quantization (docs/runners.md, "CPU speed").
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import warnings
from pathlib import Path

import numpy as np

from ..errors import UserError

#: ONNX opset of the exported graphs.
ONNX_OPSET = 17

_ACTIVATIONS = {"torch.nn.modules.activation.Tanh": "tanh", "torch.nn.Tanh": "tanh",
                "torch.nn.modules.linear.Identity": "identity", "torch.nn.Identity": "identity"}


def cpu_bf16() -> bool | None:
    """Whether this CPU has bfloat16 instructions (``avx512_bf16``, ``amx_bf16``); ``None`` where it cannot be told."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            flags = {word for line in f if line.startswith("flags") for word in line.split(":", 1)[1].split()}
    except OSError:
        return None
    return bool(flags & {"avx512_bf16", "amx_bf16"}) if flags else None


def dense_layers(folders: list[Path]) -> list:
    """sentence-transformers ``Dense`` modules as ``(torch.nn.Linear, activation name)``, read from their folders."""
    import torch

    layers = []
    for folder in folders:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        activation = _ACTIVATIONS.get(config.get("activation_function", "torch.nn.modules.activation.Tanh"))
        if activation is None:
            raise UserError(f"{folder}: Dense activation {config.get('activation_function')!r} is not supported "
                            f"(supported: Tanh, Identity)")
        linear = torch.nn.Linear(int(config["in_features"]), int(config["out_features"]),
                                 bias=bool(config.get("bias", True)))
        if (folder / "model.safetensors").is_file():
            from safetensors.torch import load_file

            state = load_file(str(folder / "model.safetensors"))
        elif (folder / "pytorch_model.bin").is_file():
            state = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
        else:
            raise UserError(f"{folder}: Dense module without model.safetensors or pytorch_model.bin")
        linear.load_state_dict({k[len("linear."):]: v for k, v in state.items() if k.startswith("linear.")})
        layers.append((linear, activation))
    return layers


def embedding_module(model, pooling: str, normalize: bool, dense: list = ()):
    """``model`` (a Hugging Face ``AutoModel``) followed by pooling, ``dense`` layers and normalisation: float32
    vectors from ``forward(input_ids, attention_mask[, token_type_ids])``."""
    import torch

    class Embedding(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model
            self.dense = torch.nn.ModuleList([layer for layer, _ in dense])
            self.activations = [activation for _, activation in dense]

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                inputs["token_type_ids"] = token_type_ids
            hidden = self.model(**inputs)[0].float()
            if pooling == "mean":
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                vectors = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            elif pooling == "cls":
                vectors = hidden[:, 0]
            elif pooling == "last-token":
                # position of each row's last real token: the largest position whose mask is 1
                positions = torch.cumsum(torch.ones_like(attention_mask), 1) - 1
                last = (positions * attention_mask).argmax(1)
                vectors = hidden.gather(1, last.view(-1, 1, 1).expand(-1, 1, hidden.shape[-1])).squeeze(1)
            else:  # pragma: no cover - checked by the caller
                raise ValueError(pooling)
            for layer, activation in zip(self.dense, self.activations):
                vectors = layer(vectors.to(layer.weight.dtype)).float()
                if activation == "tanh":
                    vectors = torch.tanh(vectors)
            if normalize:
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
            return vectors

    return Embedding().eval()


def export_onnx(module, features: dict[str, np.ndarray], target: Path) -> None:
    """Write ``module`` as an ONNX graph to ``target``, inputs named as the sample ``features``, axes dynamic."""
    import torch

    names = list(features)
    args = tuple(torch.from_numpy(features[name]) for name in names)
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes["embedding"] = {0: "batch"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer and deprecation warnings: the export is checked by the tests
        torch.onnx.export(module.float().cpu(), args, str(target), dynamo=False, input_names=names,
                          output_names=["embedding"], dynamic_axes=axes, opset_version=ONNX_OPSET,
                          do_constant_folding=True)


def quantize_int8(source: Path, target: Path) -> dict:
    """ONNX Runtime dynamic int8 quantization of ``source`` (weights per channel) into ``target``; returns its record."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.ERROR))  # its advice to pre-process, logged on the root logger
    try:
        quantize_dynamic(str(source), str(target), per_channel=True, weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)
    return {"method": "onnxruntime.quantization.quantize_dynamic", "weight_type": "QInt8", "per_channel": True,
            "onnxruntime": onnxruntime.__version__}


def quantize_openvino_int8(source: Path, target: Path, calibration: list[dict[str, np.ndarray]]) -> dict:
    """NNCF static int8 quantization of the ONNX graph ``source`` into OpenVINO IR ``target``; returns its record."""
    import openvino

    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import nncf

        nncf.set_log_level(logging.ERROR)
        # NNCF reports its progress (rich progress bars) on the terminal: this process's stdout is for results
        model = openvino.Core().read_model(str(source))
        quantized = nncf.quantize(model, nncf.Dataset(calibration), model_type=nncf.ModelType.TRANSFORMER,
                                  subset_size=len(calibration))
    openvino.save_model(quantized, str(target), compress_to_fp16=False)
    return {"method": "nncf.quantize (post-training static, ModelType.TRANSFORMER, fast bias correction)",
            "calibration_batches": len(calibration),
            "calibration_texts": int(sum(len(batch["input_ids"]) for batch in calibration)),
            "nncf": nncf.__version__, "openvino": openvino.__version__}


class OnnxRunner:
    """An exported graph run by ONNX Runtime's CPU execution provider."""

    def __init__(self, path: Path):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def __call__(self, features: dict[str, np.ndarray]) -> np.ndarray:
        return self.session.run(None, {name: features[name] for name in self.inputs})[0]


#: OpenVINO's precisions (``INFERENCE_PRECISION_HINT``) and capabilities of the dtypes (int8: the rest in float32).
OPENVINO_PRECISION = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "int8": "f32"}
_OPENVINO_CAPABILITY = {"bfloat16": "BF16", "float16": "FP16", "int8": "INT8"}


def openvino_capabilities(core=None) -> list[str]:
    """OpenVINO's ``OPTIMIZATION_CAPABILITIES`` of the CPU (``BF16`` where it runs bfloat16, ``FP16``, ``INT8``...)."""
    if core is None:
        import openvino

        core = openvino.Core()
    return list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))


class OpenVinoRunner:
    """An exported graph compiled by OpenVINO for the CPU with its precision asked explicitly (without it OpenVINO
    runs bfloat16 where it can); a CPU without that precision is refused, as OpenVINO would silently run float32."""

    def __init__(self, path: Path, dtype: str):
        import openvino

        core = openvino.Core()
        capability = _OPENVINO_CAPABILITY.get(dtype)
        if capability is not None:
            have = openvino_capabilities(core)
            if capability not in have:
                raise UserError(f"--dtype {dtype} --backend openvino: this CPU has no {capability} support "
                                f"(OpenVINO's CPU capabilities: {', '.join(have)}); use --dtype float32")
        config = {"INFERENCE_PRECISION_HINT": OPENVINO_PRECISION[dtype]}
        self.compiled = core.compile_model(str(path), "CPU", config)
        precision = self.compiled.get_property("INFERENCE_PRECISION_HINT")
        self.precision = precision.get_type_name() if hasattr(precision, "get_type_name") else str(precision)
        if self.precision != config["INFERENCE_PRECISION_HINT"]:
            raise UserError(f"--dtype {dtype} --backend openvino: OpenVINO compiled the model for {self.precision}, "
                            f"not {config['INFERENCE_PRECISION_HINT']}; use --dtype float32")
        self.request = self.compiled.create_infer_request()
        self.inputs = [port.get_any_name() for port in self.compiled.inputs]

    def __call__(self, features: dict[str, np.ndarray]) -> np.ndarray:
        result = self.request.infer({name: features[name] for name in self.inputs})
        return np.array(result[self.compiled.output(0)], dtype=np.float32)
