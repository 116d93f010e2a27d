"""The encoders of the dense runners: :class:`DenseEncoder` (``search dense``, on PyTorch, ONNX Runtime or OpenVINO)
and :class:`SentenceEncoder` (sentence-transformers, for the bi-encoder reranker); docs/runners.md, "Dense retrieval
and reranking"."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import inspect
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..io.files import atomic_directory
from ..io.sidecars import file_sha256
from . import backends
from .encoding_pipeline import TorchForward, dense_pipeline, dense_texts
from .encoding_settings import (
    CALIBRATION_BATCH,
    check_device_dtype,
    encoder_settings,
    json_object_file,
    model_defaults,
    resolve_device,
)
from .model_refs import (
    ModelRef,
    display_name,
    load_error,
    loaded_model_sha256,
    model_load_errors,
    quiet_transformers,
    state_dict_sha256,
)

ENCODER_MANIFEST = "negplugins-encoder.json"
_ENCODER_FORMAT = 2  # 2: exported with eager attention


class SentenceEncoder:
    """Sentence embeddings with sentence-transformers and the model's own modules, L2-normalised (inner product =
    cosine); stock Pyserini gives the same with ``--encoder-class auto --pooling <pooling> --l2-norm``."""

    def __init__(self, ref: ModelRef, device: str = "cpu", model=None):
        """The model of ``ref``'s folder on ``device``, or ``model``, a ``SentenceTransformer`` already loaded."""
        quiet_transformers()
        if model is None:
            try:
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(str(ref.path), device=device, local_files_only=True)
            except model_load_errors() as error:
                raise load_error(ref, error, "sentence encoder") from None
        self.ref = ref
        self.model = model
        self.model.eval()
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimension = int(dim())
        self.max_length = int(self.model.max_seq_length) if self.model.max_seq_length else None
        self.pooling = self._pooling()

    @classmethod
    def from_model(cls, model, name: str | None = None) -> "SentenceEncoder":
        """Wrap a loaded ``SentenceTransformer`` (as MTEB takes a model object): no path, fingerprinted by the weights
        in memory (:func:`state_dict_sha256`), named ``name`` or after the folder it was loaded from."""
        from sentence_transformers import SentenceTransformer

        if not isinstance(model, SentenceTransformer):
            raise UserError(f"the model object is a {type(model).__name__}, not a sentence_transformers."
                            f"SentenceTransformer; give a loaded SentenceTransformer, a model folder or an id")
        loaded_from = ""
        with contextlib.suppress(AttributeError, IndexError, KeyError, TypeError):
            loaded_from = str(getattr(model[0].auto_model.config, "_name_or_path", "") or "")
        shown = name or (display_name(Path(loaded_from)) if loaded_from else "in-memory-model")
        weights = state_dict_sha256(model)
        ref = ModelRef(shown, None, shown, extra={"source": "SentenceTransformer object"
                                                 + (f" loaded from {loaded_from}" if loaded_from else ""),
                                                 "fingerprint": "state_dict_sha256"},
                       fingerprint=weights, files_fingerprint=loaded_model_sha256(model, weights))
        return cls(ref, model=model)

    def _pooling(self) -> str:
        for module in self.model:
            config = getattr(module, "get_config_dict", lambda: {})()
            mode = config.get("pooling_mode") or next(
                (k[len("pooling_mode_"):].replace("_tokens", "") for k, v in config.items()
                 if k.startswith("pooling_mode_") and v is True), None)
            if mode:
                return {"mean": "mean", "cls": "cls", "cls_token": "cls", "lasttoken": "last"}.get(mode, mode)
        return "mean"

    # the interface of DenseEncoder that dense_index and dense_search read
    normalize, prefix, backend, dtype, export, notes = True, "", "torch", "float32", None, ()

    @staticmethod
    def own_settings(pooling: str, max_length: int | None = None) -> dict:
        """The encoding settings (as :func:`encoder_settings`) of a sentence-transformers model used as it is."""
        pooling = {"last": "last-token"}.get(pooling, pooling)
        return {"pooling": pooling, "normalize": True, "max_length": max_length, "prefix": "", "backend": "torch",
                "dtype": "float32"}

    @property
    def settings(self) -> dict:
        return self.own_settings(self.pooling, self.max_length)

    @property
    def device(self) -> str:
        return str(self.model.device)

    def metadata(self) -> dict:
        """The encoder's record in index manifests and sidecars (as :meth:`DenseEncoder.metadata`)."""
        return {**self.settings, "device": self.device, "export": None, "library": "sentence-transformers"}

    def encode(self, texts, batch_size: int = 64, bar=None) -> np.ndarray:
        """``float32`` unit vectors of ``texts``, in the batches of one ``SentenceTransformer.encode`` call
        (:func:`sentence_transformers_batches`), one call per batch so that ``bar`` moves."""
        texts = list(texts)
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for rows in sentence_transformers_batches(texts, batch_size):
            vectors[rows] = self.model.encode([texts[i] for i in rows], batch_size=len(rows), normalize_embeddings=True,
                                              convert_to_numpy=True, show_progress_bar=False)
            if bar is not None:
                bar.update(len(rows))
        return vectors


def encode_texts(encoder, texts, batch_size: int, bar) -> np.ndarray:
    """``encoder.encode(texts, batch_size)`` advancing ``bar`` (at the end for a caller's encoder without ``bar``)."""
    if "bar" in inspect.signature(encoder.encode).parameters:
        return encoder.encode(texts, batch_size=batch_size, bar=bar)
    vectors = encoder.encode(texts, batch_size=batch_size)
    bar.update(len(texts))
    return vectors


def sentence_transformers_batches(texts: list[str], batch_size: int) -> list[list[int]]:
    """Text positions in the batches ``SentenceTransformer.encode(texts, batch_size)`` makes (longest first)."""
    order = np.argsort([-len(text) for text in texts]).tolist()
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


class DenseEncoder:
    """Text -> vectors for dense retrieval: the model's tokenizer, a backend, pooling, normalisation, prefix; options
    left ``None`` are the model's own (:class:`ModelDefaults`); ``cache`` keeps the ONNX exports (default: a temporary
    folder); OpenVINO int8 needs ``calibration``, the texts as fed to the model."""

    def __init__(self, ref: ModelRef, *, prefix: str | None = None, role: str = "passage", pooling: str | None = None,
                 normalize: bool | None = None, max_length: int | None = None, backend: str = "torch",
                 dtype: str = "float32", device: str | None = "auto", cache: str | os.PathLike | None = None,
                 calibration: list[str] | None = None):
        quiet_transformers()
        settings = encoder_settings(ref, prefix=prefix, role=role, pooling=pooling, normalize=normalize,
                                    max_length=max_length, backend=backend, dtype=dtype)
        self.ref, self.role = ref, role
        self.pooling, self.normalize, self.max_length, self.prefix, self.backend, self.dtype = settings.values()
        self.device = resolve_device(device, backend)
        self.notes = check_device_dtype(self.device, dtype) if backend == "torch" else []
        defaults = model_defaults(ref)
        self.lowercase = defaults.lowercase
        self._cache = cache
        self.calibration = calibration
        if backend == "openvino" and dtype == "int8" and not calibration:
            raise UserError("--backend openvino --dtype int8: the quantization needs calibration texts (the corpus's "
                            "first passages, as search dense gives them)")
        self._tmp = None
        self.export: dict | None = None
        try:
            from transformers import AutoModel, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(str(ref.path), local_files_only=True)
            # an exported graph runs faster with eager attention: the ONNX export of PyTorch's fused attention
            # (sdpa) is a pattern ONNX Runtime and OpenVINO do not fuse (OpenVINO bfloat16 on MiniLM, 2 CPU
            # cores: 76.8 against 66.0 passages/s; the vectors agree to a cosine of 0.99999)
            attention = {} if backend == "torch" else {"attn_implementation": "eager"}
            model = AutoModel.from_pretrained(str(ref.path), local_files_only=True, **attention)
        except model_load_errors() as error:
            raise load_error(ref, error, "dense encoder") from None
        if getattr(model.config, "is_encoder_decoder", False):  # T5-style (GTR, sentence-T5): the encoder alone
            model = model.get_encoder()
        if self.tokenizer.pad_token is None:  # decoder models: pad with the end-of-sequence token
            self.tokenizer.pad_token = self.tokenizer.eos_token
        accepted = inspect.signature(model.forward).parameters  # token_type_ids: BERT yes, RoBERTa/Llama no
        self._inputs = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in accepted]
        module = backends.embedding_module(model, self.pooling, self.normalize, backends.dense_layers(defaults.dense))
        self.runner = self._runner(module)
        self.dimension = int(self.runner(self._features(["negplugins"])).shape[1])

    @property
    def settings(self) -> dict:
        return {"pooling": self.pooling, "normalize": self.normalize, "max_length": self.max_length,
                "prefix": self.prefix, "backend": self.backend, "dtype": self.dtype}

    def metadata(self) -> dict:
        """The encoder's record in index manifests and sidecars."""
        return {**self.settings, "device": self.device, "export": self.export}

    def with_prefix(self, prefix: str, role: str) -> DenseEncoder:
        """The same loaded model with another prefix (queries and passages of one model)."""
        other = copy.copy(self)
        other.prefix, other.role = prefix, role
        return other

    def _features(self, texts: list[str]) -> dict[str, np.ndarray]:
        return self._tokenize([self.prefix + t for t in texts])

    def _tokenize(self, texts: list[str]) -> dict[str, np.ndarray]:
        if self.lowercase:
            texts = [t.lower() for t in texts]
        encoded = self.tokenizer(texts, padding=True, truncation="longest_first", max_length=self.max_length,
                                 return_tensors="np")
        return {name: np.ascontiguousarray(encoded[name], dtype=np.int64) for name in self._inputs if name in encoded}

    def _runner(self, module):
        if self.backend == "torch":
            import torch

            # weights in the dtype (model.half() / model.to(bfloat16)): faster on the CPU than autocast, which casts
            # float32 weights at every call; pooling and normalisation stay float32
            device = torch.device(self.device)
            return TorchForward(module.to(device=device, dtype=getattr(torch, self.dtype)).eval(), device)
        needed = ("onnx", "onnxruntime") if self.backend == "onnx" else ("onnx", "openvino")
        missing = [name for name in needed if importlib.util.find_spec(name) is None]
        if missing:
            raise UserError(f"--backend {self.backend} needs {' and '.join(missing)} (not installed): "
                            f"pip install 'negplugins[fast]'")
        path = self._exported(module)
        if self.backend == "onnx":
            return backends.OnnxRunner(path)
        return backends.OpenVinoRunner(path, self.dtype)

    def _exported(self, module) -> Path:
        """The ONNX file (OpenVINO int8: IR) of this model, pooling and dtype, from the cache or exported into it."""
        from ..datasets import slug

        if self._cache is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="negplugins-onnx-")
            self._cache = self._tmp.name
        static = self.backend == "openvino" and self.dtype == "int8"  # NNCF, calibrated; else ONNX Runtime's
        variant = "int8-static" if static else "int8" if self.dtype == "int8" else "float32"
        key = {"format": _ENCODER_FORMAT, "kind": "onnx-encoder", "model_sha256": self.ref.sha256,
               "model_files_sha256": self.ref.files_sha256, "pooling": self.pooling, "normalize": self.normalize,
               "variant": variant, "opset": backends.ONNX_OPSET}
        if static:
            key["calibration_sha256"] = hashlib.sha256(json.dumps(self.calibration).encode()).hexdigest()
        name = (f"{slug(self.ref.name)}-{self.ref.sha256[:12]}-{self.pooling}-"
                f"{'norm' if self.normalize else 'raw'}-{variant}"
                + (f"-{key['calibration_sha256'][:12]}" if static else ""))
        folder = Path(self._cache) / name
        graph = folder / ("model.xml" if static else "model.onnx")  # OpenVINO IR: its weights in model.bin

        def checksums(where: Path) -> dict:
            main = where / graph.name
            return {"sha256": file_sha256(main), **({"bin_sha256": file_sha256(main.with_suffix(".bin"))}
                                                     if static else {})}

        try:
            manifest = json_object_file(folder / ENCODER_MANIFEST, "encoder manifest") or None
        except UserError:
            manifest = None
        if manifest is not None and {k: manifest.get(k) for k in key} == key and graph.is_file() \
                and (not static or graph.with_suffix(".bin").is_file()):
            found = checksums(folder)
            if found == {k: manifest.get(k) for k in found}:
                self.export = {"path": str(graph.resolve()), **manifest}
                return graph
        import torch

        sample = self._features(["negplugins", "a longer sample text, for the export of the graph"])
        with atomic_directory(folder) as tmp:
            target = tmp / ("model-float32.onnx" if self.dtype == "int8" else "model.onnx")
            backends.export_onnx(module, sample, target)
            record = dict(key, exporter=f"torch.onnx.export (TorchScript) torch {torch.__version__}",
                          inputs=list(sample))
            if static:
                texts = self.calibration
                batches = [self._tokenize(texts[i:i + CALIBRATION_BATCH])
                           for i in range(0, len(texts), CALIBRATION_BATCH)]
                record["quantization"] = backends.quantize_openvino_int8(target, tmp / "model.xml", batches)
            elif self.dtype == "int8":
                record["quantization"] = backends.quantize_int8(target, tmp / "model.onnx")
            if self.dtype == "int8":
                target.unlink()
            record.update(checksums(tmp))
            (tmp / ENCODER_MANIFEST).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        self.export = {"path": str(graph.resolve()), **record}
        return graph

    def encode(self, texts, batch_size: int = 64, bar=None) -> np.ndarray:
        """``float32`` vectors of ``texts``, encoded as one group of the pipeline; ``bar`` advances by batch."""
        return next(self.encode_groups([texts], batch_size, None if bar is None else bar.update))

    def encode_groups(self, groups, batch_size: int = 64, progress=None):
        """Each group's vectors (as :meth:`encode`), the next groups tokenized while the model runs."""
        return dense_pipeline(self, batch_size).run((dense_texts(self, group) for group in groups), progress)
