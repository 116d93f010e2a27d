"""What a dense encoder would use, checked without loading the model: the model folder's own defaults
(sentence-transformers' pooling, token limit, prompts), the backends and dtypes the suite runs, the devices.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import UserError, error_line
from ..io.jsonfile import read_json
from ..options import MAX_LENGTH, check_int
from . import backends
from .model_refs import ModelRef, load_error, model_files_state, model_load_errors

#: ``--backend`` values: PyTorch, or an ONNX export run by ONNX Runtime or OpenVINO (CPU only).
BACKENDS = ("torch", "onnx", "openvino")
#: ``--dtype`` values, and those each backend runs.
DTYPES = ("float32", "float16", "bfloat16", "int8")
BACKEND_DTYPES = {"torch": ("float32", "float16", "bfloat16"), "onnx": ("float32", "int8"),
                  "openvino": ("float32", "bfloat16", "float16", "int8")}
#: Texts from which OpenVINO int8 (NNCF's static quantization) measures activation ranges: the first this many
#: passages of the corpus, with the passage prefix, in batches of :data:`CALIBRATION_BATCH`.
CALIBRATION_PASSAGES = 300
CALIBRATION_BATCH = 8
#: ``--pooling`` values.
POOLINGS = ("mean", "cls", "last-token")
#: sentence-transformers prompt names used as the default passage prefix, in this order (as its ``encode_document``).
PASSAGE_PROMPTS = ("document", "passage", "corpus")
_ST_POOLING = {"mean_tokens": "mean", "mean": "mean", "cls_token": "cls", "cls": "cls", "lasttoken": "last-token"}
_ST_MODULES = ("Transformer", "Pooling", "Dense", "Normalize")
#: How a passage's text is prepared before the encoder's own steps (prefix, case): ``document_text`` with its
#: whitespace as the dataset gives it, for ``search dense``'s index and the bi-encoder reranker alike. Part of every
#: :func:`encoding_fingerprint`: change it when that preparation changes, and no stored vector is taken for a new one.
PASSAGE_TEXT = "negplugins.datasets.document_text, whitespace as given"
#: Model types whose position ids start after the padding index (RoBERTa's scheme): ``pad_token_id + 1`` fewer
#: positions hold tokens than ``max_position_embeddings`` says.
_OFFSET_POSITIONS = ("roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "mpnet", "data2vec-text",
                     "roberta-prelayernorm", "ibert", "luke", "markuplm", "xmod")


def json_object_file(path: Path, what: str) -> dict:
    if not path.is_file():
        return {}
    value = read_json(path, what=what, max_bytes=1 << 20)
    if not isinstance(value, dict):
        raise UserError(f"{path}: expected a JSON object ({what})")
    return value


@dataclass(frozen=True)
class ModelDefaults:
    """What a model folder's sentence-transformers files say about its use: pooling, token limit, prompts, extra
    layers; a plain Hugging Face model gets sentence-transformers' defaults (mean pooling, no prompts)."""

    pooling: str | None  # None: a pooling the suite does not run (max, weighted mean, ...); --pooling must say
    pooling_found: str  # the model's own name of its pooling, for messages
    max_length: int
    lowercase: bool
    prompts: dict
    dense: tuple  # folders of sentence-transformers Dense modules, in order
    include_prompt: bool = True

    @property
    def query_prefix(self) -> str:
        return self.prompts.get("query", "") or ""

    @property
    def passage_prefix(self) -> str:
        return next((self.prompts[name] or "" for name in PASSAGE_PROMPTS if name in self.prompts), "")


def _pooling_of(config: dict) -> tuple[str | None, str]:
    mode = config.get("pooling_mode")
    if not mode:
        modes = [k[len("pooling_mode_"):] for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
        mode = "+".join(modes) if modes else "mean_tokens"
    return _ST_POOLING.get(mode), mode


@lru_cache(maxsize=32)
def _model_defaults(path: str, stamp: tuple) -> ModelDefaults:
    folder = Path(path)
    modules = []
    if (folder / "modules.json").is_file():
        value = read_json(folder / "modules.json", what="sentence-transformers modules", max_bytes=1 << 20)
        modules = value if isinstance(value, list) else []
    pooling, found, include_prompt, dense = "mean", "mean_tokens", True, []
    for module in modules:
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        sub = folder / str(module.get("path", ""))
        if kind not in _ST_MODULES:
            raise UserError(f"model {folder}: its sentence-transformers module {module.get('type')!r} is not supported "
                            f"by search dense (supported: {', '.join(_ST_MODULES)})")
        if kind == "Pooling":
            config = json_object_file(sub / "config.json", "sentence-transformers pooling")
            pooling, found = _pooling_of(config)
            include_prompt = bool(config.get("include_prompt", True))
        elif kind == "Dense":
            dense.append(sub)
    sbert = json_object_file(folder / "sentence_bert_config.json", "sentence-transformers config")
    max_length = sbert.get("max_seq_length")
    if not isinstance(max_length, int) or max_length <= 0:
        limit = json_object_file(folder / "tokenizer_config.json", "tokenizer config").get("model_max_length")
        positions = json_object_file(folder / "config.json", "model config").get("max_position_embeddings")
        max_length = limit if isinstance(limit, int) and 0 < limit <= 100_000 else \
            min(positions, 512) if isinstance(positions, int) and positions > 0 else 512
    prompts = json_object_file(folder / "config_sentence_transformers.json", "sentence-transformers config").get("prompts")
    prompts = {str(k): str(v) for k, v in prompts.items() if isinstance(v, str)} if isinstance(prompts, dict) else {}
    return ModelDefaults(pooling, found, int(max_length), bool(sbert.get("do_lower_case", False)), prompts,
                         tuple(dense), include_prompt)


def model_defaults(ref: ModelRef) -> ModelDefaults:
    """The :class:`ModelDefaults` of a resolved model (cached per state of its files, the modules' included)."""
    return _model_defaults(str(ref.path), model_files_state(ref.path))


def check_backend_dtype(backend: str, dtype: str) -> None:
    """One line naming the option when ``backend`` or ``dtype`` is unknown or the pair is not run by the suite."""
    if backend not in BACKENDS:
        raise UserError(f"--backend {backend}: expected one of {', '.join(BACKENDS)}")
    if dtype not in DTYPES:
        raise UserError(f"--dtype {dtype}: expected one of {', '.join(DTYPES)}")
    if dtype not in BACKEND_DTYPES[backend]:
        hint = {"int8": "use --backend onnx or openvino", "bfloat16": "use --backend openvino or torch",
                "float16": "use --backend torch (on a GPU) or openvino"}[dtype]
        raise UserError(f"--dtype {dtype} is not run by --backend {backend} (it runs "
                        f"{', '.join(BACKEND_DTYPES[backend])}); {hint}")


def resolve_device(device: str | None, backend: str = "torch") -> str:
    """``auto`` (or ``None``) -> ``cuda`` when PyTorch sees a GPU, else ``cpu``; ``cpu``, ``cuda``, ``cuda:N`` and
    ``mps`` are checked against what this machine has. ONNX Runtime and OpenVINO run on the CPU here."""
    text = "auto" if device is None else str(device).strip().lower()
    if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", text):
        raise UserError(f"--device {device}: expected auto, cpu, cuda, cuda:N or mps")
    if backend != "torch":
        if text not in ("auto", "cpu"):
            raise UserError(f"--device {device}: --backend {backend} runs on the CPU only; use --backend torch "
                            f"for {text}")
        return "cpu"
    if text == "cpu":
        return text
    import torch

    if text == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if text == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise UserError(f"--device {device}: Apple's MPS is not available to this PyTorch ({torch.__version__})")
        return text
    if not torch.cuda.is_available():
        why = "built without CUDA" if torch.version.cuda is None else "finds no CUDA device"
        raise UserError(f"--device {device}: CUDA is not available (PyTorch {torch.__version__} {why})")
    index = int(text.split(":")[1]) if ":" in text else None
    if index is not None and index >= torch.cuda.device_count():
        raise UserError(f"--device {device}: no such GPU (PyTorch sees {torch.cuda.device_count()})")
    return text


def check_device_dtype(device: str, dtype: str) -> list[str]:
    """Raise when the resolved ``device`` cannot run ``dtype`` with PyTorch; return notes for slow combinations."""
    if dtype == "float32":
        return []
    import torch

    if device.startswith("cuda"):
        if dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
            raise UserError(f"--dtype bfloat16 --device {device}: this GPU has no bfloat16 support; use --dtype float16")
        return []
    try:  # the operations of a transformer layer, in this dtype, on this device
        layer = torch.nn.Linear(8, 8).to(device=device, dtype=getattr(torch, dtype))
        x = torch.ones(2, 8, device=device, dtype=getattr(torch, dtype))
        torch.nn.functional.layer_norm(torch.nn.functional.gelu(layer(x)), (8,)).softmax(-1).sum().item()
    except (RuntimeError, TypeError) as error:
        raise UserError(f"--dtype {dtype} --device {device}: PyTorch {torch.__version__} cannot run it "
                        f"({error_line(error)}); use --dtype float32") from None
    if device == "cpu" and dtype == "float16":
        return ["--dtype float16 on the CPU: PyTorch runs it, mostly more slowly than float32; bfloat16 or "
                "--backend openvino are the fast CPU options"]
    if device == "cpu" and dtype == "bfloat16" and backends.cpu_bf16() is False:
        return ["--dtype bfloat16: this CPU has no bfloat16 instructions (avx512_bf16, amx_bf16), so PyTorch emulates "
                "them: the same vectors, more slowly than float32"]
    return []


def encoder_settings(ref: ModelRef, *, prefix: str | None = None, role: str = "passage", pooling: str | None = None,
                     normalize: bool | None = None, max_length: int | None = None, backend: str = "torch",
                     dtype: str = "float32") -> dict:
    """The settings that shape the vectors (pooling, normalize, max_length, prefix, backend, dtype) of a
    :class:`DenseEncoder` with these options, checked without loading the model; ``None``: the model's own."""
    check_backend_dtype(backend, dtype)
    if pooling is not None and pooling not in POOLINGS:
        raise UserError(f"--pooling {pooling}: expected one of {', '.join(POOLINGS)}")
    if max_length is not None:
        check_int(max_length, "--max-length", 1, MAX_LENGTH)
    if role not in ("passage", "query"):
        raise ValueError(role)
    defaults = model_defaults(ref)
    if max_length is not None:
        check_token_limit(ref, int(max_length))
    if pooling is None and defaults.pooling is None:
        raise UserError(f"model {ref.id!r}: its pooling {defaults.pooling_found!r} is not run by search dense; "
                        f"choose --pooling ({', '.join(POOLINGS)})")
    if prefix is None:
        prefix = defaults.query_prefix if role == "query" else defaults.passage_prefix
    if prefix and not defaults.include_prompt:
        raise UserError(f"model {ref.id!r}: its pooling leaves the prompt's tokens out (include_prompt false), "
                        f"which search dense does not do; give --{role}-prefix ''")
    return {"pooling": pooling or defaults.pooling, "normalize": True if normalize is None else bool(normalize),
            "max_length": int(max_length or defaults.max_length), "prefix": str(prefix), "backend": backend,
            "dtype": dtype}


def encoding_fingerprint(ref: ModelRef, settings: dict, text: str = PASSAGE_TEXT) -> str:
    """SHA-256 of what makes an encoder's vectors: the model's files (:attr:`ModelRef.files_sha256`), the encoding
    ``settings`` and how the ``text`` is prepared (:data:`PASSAGE_TEXT`); stored vectors are reused while it matches."""
    record = {"model": ref.files_sha256, "settings": settings, "text": text}
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()


@lru_cache(maxsize=32)
def _token_limits(path: str, stamp: tuple, pair: bool) -> tuple[int, int | None]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    low = int(tokenizer.num_special_tokens_to_add(pair=pair)) + 1
    config = json_object_file(Path(path) / "config.json", "model config")
    positions = config.get("max_position_embeddings", config.get("n_positions"))
    if not isinstance(positions, int) or isinstance(positions, bool) or positions <= 0:
        return low, None
    if config.get("model_type") in _OFFSET_POSITIONS:
        pad = config.get("pad_token_id")
        positions -= (pad if isinstance(pad, int) else 1) + 1
    return low, positions


def token_limits(ref: ModelRef, pair: bool = False) -> tuple[int, int | None]:
    """``(least, most)`` tokens per input the model honours as a token limit: its tokenizer's special tokens (of a
    pair with ``pair``) and one of text, and its position embeddings (``None``: no such bound in its config)."""
    try:
        return _token_limits(str(ref.path), model_files_state(ref.path), pair)
    except model_load_errors() as error:
        raise load_error(ref, error, "tokenizer") from None


def check_token_limit(ref: ModelRef, max_length: int, option: str = "--max-length", pair: bool = False) -> None:
    """One line naming ``option`` when the model cannot honour ``max_length`` tokens per input (:func:`token_limits`);
    transformers would otherwise quietly leave a text below the special tokens untruncated."""
    low, high = token_limits(ref, pair)
    if low <= max_length and (high is None or max_length <= high):
        return
    room = f"{low} to {high}" if high is not None else f"at least {low}"
    why = f"{low - 1} special tokens{' to a pair' if pair else ''} and at least one of text" + \
        (f"; {high} positions" if high is not None else "")
    raise UserError(f"{option} {max_length}: model {ref.id!r} takes a token limit of {room} ({why})")
