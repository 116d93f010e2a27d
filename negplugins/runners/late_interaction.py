"""Late interaction (ColBERT-style), the ``colbert`` reranker: MaxSim over L2-normalised token vectors, encoded with
transformers directly as Stanford ColBERT encodes them, with the settings of a Stanford checkpoint, a PyLate folder or
ColBERT's defaults (docs/runners.md, "Late interaction")."""

from __future__ import annotations

import string
from collections import defaultdict
from pathlib import Path

import numpy as np

from .._compat.fast_tokenizer import TokenRows, token_rows
from ..errors import UserError
from ..io.jsonfile import read_json
from ..options import progress_bar
from .encoding_pipeline import EncodingPipeline
from .model_refs import ModelRef, load_error, model_load_errors, quiet_transformers

#: ColBERT's (and PyLate's) default lengths, in tokens, special tokens and the marker included.
COLBERT_DEFAULTS = {"query_maxlen": 32, "doc_maxlen": 180, "attend_to_mask_tokens": False, "mask_punctuation": True}
#: The markers Stanford ColBERT puts in BERT's unused vocabulary slots (query, document).
STANFORD_MARKERS = ("[unused0]", "[unused1]")

_MAX_CONFIG_BYTES = 4 * 1024 * 1024
_CHUNK_DOCS = 1024  # distinct documents whose token vectors are held at once


def _json(path: Path) -> dict | None:
    if not path.is_file():
        return None
    value = read_json(path, what="model configuration", max_bytes=_MAX_CONFIG_BYTES)
    if not isinstance(value, dict):
        raise UserError(f"{path}: expected a JSON object")
    return value


def colbert_settings(path: str | Path) -> dict:
    """The markers, lengths and flags of a model folder, and where they came from (``source``)."""
    path = Path(path)
    settings = {"query_marker": None, "doc_marker": None, **COLBERT_DEFAULTS, "source": "defaults"}
    metadata = _json(path / "artifact.metadata")
    architectures = (_json(path / "config.json") or {}).get("architectures")
    if metadata is not None or (isinstance(architectures, list) and "HF_ColBERT" in architectures):
        metadata = metadata or {}
        settings.update(source="stanford", query_marker=metadata.get("query_token_id", STANFORD_MARKERS[0]),
                        doc_marker=metadata.get("doc_token_id", STANFORD_MARKERS[1]))
        settings.update({key: metadata[key] for key in COLBERT_DEFAULTS if metadata.get(key) is not None})
        return settings
    st = _json(path / "config_sentence_transformers.json") or {}
    if "query_length" in st or "document_length" in st:
        settings.update(source="pylate", query_marker=st.get("query_prefix", "[Q] ") or None,
                        doc_marker=st.get("document_prefix", "[D] ") or None)
        names = {"query_maxlen": "query_length", "doc_maxlen": "document_length",
                 "attend_to_mask_tokens": "attend_to_expansion_tokens"}
        settings.update({key: st[name] for key, name in names.items() if st.get(name) is not None})
        return settings
    settings.update(query_marker=STANFORD_MARKERS[0], doc_marker=STANFORD_MARKERS[1])  # kept if the vocabulary has them
    return settings


def _tensors(folder: Path, names: tuple[str, ...]) -> dict:
    """The tensors ``names`` found in a folder's weights (safetensors, sharded or not, else ``pytorch_model.bin``)."""
    import torch

    found = {}
    index = _json(folder / "model.safetensors.index.json")
    if index is not None:
        weight_map = index.get("weight_map") or {}
        files = sorted({weight_map[name] for name in names if name in weight_map})
    else:
        files = ["model.safetensors"] if (folder / "model.safetensors").is_file() else []
    if files:
        from safetensors import safe_open

        for file in files:
            with safe_open(str(folder / file), framework="pt") as f:
                for name in names:
                    if name in f.keys():
                        found[name] = f.get_tensor(name)
        return found
    if (folder / "pytorch_model.bin").is_file():
        state = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
        return {name: state[name] for name in names if name in state}
    return found


def _projection(path: Path, source: str, hidden: int, ref: ModelRef):
    """``(layers, description)``: the ``(weight, bias or None)`` linear layers applied in order, and what they are."""
    if source == "stanford":
        weight = _tensors(path, ("linear.weight",)).get("linear.weight")
        if weight is None:
            return [], "identity (the checkpoint has no linear.weight)"
        return [(weight, None)], "linear.weight of the checkpoint"
    if source == "pylate":
        modules = path / "modules.json"
        listed = read_json(modules, what="modules.json", max_bytes=_MAX_CONFIG_BYTES) if modules.is_file() else []
        layers, names = [], []
        for module in listed if isinstance(listed, list) else []:
            if not isinstance(module, dict) or "Dense" not in str(module.get("type", "")):
                continue
            folder = path / str(module.get("path", ""))
            config = _json(folder / "config.json") or {}
            activation = str(config.get("activation_function") or "torch.nn.modules.linear.Identity")
            if not activation.endswith("Identity"):
                raise UserError(f"model {ref.id!r}: {folder.name} has activation {activation}; only identity "
                                f"projections are supported for ColBERT")
            tensors = _tensors(folder, ("linear.weight", "linear.bias"))
            if "linear.weight" not in tensors:
                raise UserError(f"model {ref.id!r}: {folder} has no linear.weight")
            layers.append((tensors["linear.weight"], tensors.get("linear.bias")))
            names.append(folder.name)
        if layers:
            return layers, f"Dense modules {', '.join(names)}"
    return [], f"identity (no projection layer; token vectors of the hidden size, {hidden})"


def maxsim(query, document) -> float:
    """``sum_i max_j query[i] . document[j]`` of two token-vector matrices (torch tensors)."""
    if document.shape[0] == 0:
        return 0.0
    return float((query @ document.T).amax(dim=1).sum())


class ColbertScorer:
    """Scores ``(query, document)`` pairs by MaxSim; ``max_length`` overrides the document length (``doc_maxlen``)."""

    def __init__(self, ref: ModelRef, batch_size: int, max_length: int | None = None, device: str = "cpu"):
        quiet_transformers()
        import torch

        self.ref, self.batch_size, self.device = ref, batch_size, torch.device(device)
        settings, layers, hidden = self._load()
        self.layers = [(w.to(self.device, torch.float32), None if b is None else b.to(self.device, torch.float32))
                       for w, b in layers]
        self.dim = hidden
        for weight, _ in self.layers:
            if weight.shape[1] != self.dim:
                raise UserError(f"model {ref.id!r}: its projection expects {weight.shape[1]} inputs, not {self.dim}")
            self.dim = weight.shape[0]
        self._settings(settings, max_length)
        symbols = string.punctuation if self.mask_punctuation else ""
        encoded = (self.tokenizer.encode(symbol, add_special_tokens=False) for symbol in symbols)
        self.skiplist = {ids[0] for ids in encoded if ids}

    def _load(self) -> tuple[dict, list, int]:
        """Load the model and tokenizer; ``(settings, projection layers, hidden size)``."""
        ref = self.ref
        try:
            from transformers import AutoModel, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(str(ref.path), local_files_only=True)
            self.model, info = AutoModel.from_pretrained(str(ref.path), local_files_only=True, output_loading_info=True)
            settings = colbert_settings(ref.path)
            hidden = int(self.model.config.hidden_size)
            layers, self.projection = _projection(ref.path, settings["source"], hidden, ref)
        except model_load_errors() as error:
            raise load_error(ref, error, "ColBERT-style encoder") from None
        if getattr(self.model.config, "is_encoder_decoder", False):
            raise UserError(f"model {ref.id!r} cannot be loaded as a ColBERT-style encoder: it is an encoder-decoder "
                            f"model (use --reranker monot5 for a monoT5)")
        # the pooler is not used (token vectors are the last hidden states); any other missing weight would be random
        missing = sorted(key for key in info.get("missing_keys") or [] if not key.startswith("pooler."))
        if missing:
            raise UserError(f"model {ref.id!r} cannot be loaded as a ColBERT-style encoder: its checkpoint lacks "
                            f"{len(missing)} weight(s) of the encoder ({missing[0]}, ...), which would be random")
        self.model.to(self.device).eval()
        return settings, layers, hidden

    def _settings(self, settings: dict, max_length: int | None) -> None:
        """Lengths, flags and markers, checked against the tokenizer."""
        ref = self.ref
        if max_length:
            settings["doc_maxlen"] = int(max_length)
        self.query_maxlen = int(settings["query_maxlen"])
        self.doc_maxlen = int(settings["doc_maxlen"])
        self.attend_to_mask_tokens = bool(settings["attend_to_mask_tokens"])
        self.mask_punctuation = bool(settings["mask_punctuation"])
        self.source = settings["source"]
        self.query_marker, self.query_marker_id = self._marker(settings["query_marker"], self.source == "defaults")
        self.doc_marker, self.doc_marker_id = self._marker(settings["doc_marker"], self.source == "defaults")
        if self.tokenizer.mask_token_id is None:
            raise UserError(f"model {ref.id!r}: its tokenizer has no [MASK] token, which ColBERT's query augmentation "
                            f"pads queries with")
        if self.tokenizer.pad_token_id is None:
            raise UserError(f"model {ref.id!r}: its tokenizer has no padding token")
        for name, length in (("query_maxlen", self.query_maxlen), ("doc_maxlen", self.doc_maxlen)):
            if length < 3 + (self.query_marker_id is not None):
                raise UserError(f"model {ref.id!r}: {name} {length} leaves no room for text")

    def _marker(self, marker: str | None, optional: bool):
        """``(token, id)`` of a marker; ``(None, None)`` when there is none (or, for default markers, no such token)."""
        if not marker:
            return None, None
        unk = self.tokenizer.unk_token_id
        vocab = self.tokenizer.get_vocab()
        for candidate in (marker, marker.strip()):
            if candidate in vocab and vocab[candidate] != unk:
                return candidate, vocab[candidate]
        if optional:
            return None, None
        raise UserError(f"model {self.ref.id!r}: its ColBERT marker {marker!r} is not a token of its tokenizer")

    def parameters(self) -> dict:
        """The settings recorded in the run's sidecar."""
        return {"query_maxlen": self.query_maxlen, "doc_maxlen": self.doc_maxlen, "query_marker": self.query_marker,
                "doc_marker": self.doc_marker, "query_augmentation": "[MASK] to query_maxlen",
                "attend_to_mask_tokens": self.attend_to_mask_tokens, "mask_punctuation": self.mask_punctuation,
                "projection": self.projection, "dim": self.dim, "normalized": True,
                "similarity": "MaxSim (sum over query tokens of the max dot product over document tokens)",
                "settings_from": self.source}

    def _ids(self, texts: list[str], length: int, marker_id: int | None) -> list[list[int]]:
        room = length - (marker_id is not None)
        encoded = self.tokenizer(list(texts), add_special_tokens=True, truncation=True, max_length=room)["input_ids"]
        if marker_id is None:
            return [list(ids) for ids in encoded]
        return [[ids[0], marker_id, *ids[1:]] for ids in encoded]

    def _encode(self, ids: list[list[int]], length: int, pad_id: int, attend_padding: bool):
        import torch

        input_ids = torch.full((len(ids), length), pad_id, dtype=torch.long)
        attention = torch.zeros((len(ids), length), dtype=torch.long)
        for row, sequence in enumerate(ids):
            input_ids[row, :len(sequence)] = torch.tensor(sequence, dtype=torch.long)
            attention[row, :len(sequence)] = 1
        if attend_padding:
            attention[:] = 1
        return self._vectors(input_ids, attention), input_ids, attention

    def _vectors(self, input_ids, attention):
        """The normalised (projected) token vectors of a padded batch."""
        import torch.nn.functional as F

        hidden = self.model(input_ids=input_ids.to(self.device), attention_mask=attention.to(self.device))
        vectors = hidden.last_hidden_state.float()
        for weight, bias in self.layers:
            vectors = F.linear(vectors, weight, bias)
        return F.normalize(vectors, p=2, dim=-1)

    def encode_queries(self, texts: list[str]) -> list:
        """Token vectors of each query, ``(query_maxlen, dim)`` tensors (``[MASK]`` augmentation included)."""
        import torch

        out: list = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                rows = order[start:start + self.batch_size]
                ids = self._ids([texts[i] for i in rows], self.query_maxlen, self.query_marker_id)
                vectors, _, _ = self._encode(ids, self.query_maxlen, self.tokenizer.mask_token_id,
                                             self.attend_to_mask_tokens)
                for i, row in zip(rows, vectors):
                    out[i] = row.cpu()
        return out

    def encode_documents(self, texts: list[str]) -> list:
        """Token vectors of each document, ``(tokens kept, dim)`` tensors: no padding, no punctuation if masked;
        batches of at most ``batch_size x doc_maxlen`` padded tokens, sorted by length."""
        tokenize = token_rows(self.tokenizer, self.doc_maxlen - (self.doc_marker_id is not None), False)
        if self.doc_marker_id is not None:
            tokenize = _with_marker(tokenize, self.doc_marker_id)
        pipeline = EncodingPipeline(tokenize, self._document_rows, token_budget=max(1, self.batch_size) * self.doc_maxlen,
                                    row_shape=None, pad_id=self.tokenizer.pad_token_id)
        return next(pipeline.run([texts]))

    def _document_rows(self, features: dict) -> list:
        import torch

        input_ids, attention = torch.from_numpy(features["input_ids"]), torch.from_numpy(features["attention_mask"])
        with torch.inference_mode():
            vectors = self._vectors(input_ids, attention).cpu()
        keep = attention.bool()
        if self.skiplist:
            keep &= ~torch.isin(input_ids, torch.tensor(sorted(self.skiplist), dtype=torch.long))
        return [row[mask] for row, mask in zip(vectors, keep)]

    def score(self, pairs: list[tuple[str, str]], progress: bool | None = False) -> list[float]:
        """MaxSim of each pair; each distinct query and document is encoded once."""
        import torch

        queries = sorted({q for q, _ in pairs})
        encoded = dict(zip(queries, self.encode_queries(queries)))
        by_doc: dict[str, list[int]] = defaultdict(list)
        for i, (_, doc) in enumerate(pairs):
            by_doc[doc].append(i)
        docs = sorted(by_doc)
        scores = [0.0] * len(pairs)
        with torch.inference_mode(), progress_bar(len(docs), f"scoring with {self.ref.name}", progress) as bar:
            for start in range(0, len(docs), _CHUNK_DOCS):
                chunk = docs[start:start + _CHUNK_DOCS]
                for doc, vectors in zip(chunk, self.encode_documents(chunk)):
                    for i in by_doc[doc]:
                        scores[i] = maxsim(encoded[pairs[i][0]], vectors)
                bar.update(len(chunk))
        return scores


def _with_marker(tokenize, marker_id: int):
    """``tokenize`` with ColBERT's marker inserted after each text's first token (``[CLS]``), as ``_ids`` does."""
    def call(texts: list[str]) -> TokenRows:
        rows = tokenize(texts)
        if (rows.lengths == 0).any():
            raise UserError("a ColBERT document tokenized to no token at all: its tokenizer adds no [CLS]")
        return TokenRows(np.insert(rows.ids, rows.offsets + 1, marker_id), None, rows.lengths + 1)

    return call
