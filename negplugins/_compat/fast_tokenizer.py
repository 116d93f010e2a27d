"""Token ids of many texts from a private copy of a transformers tokenizer's Rust object, in several threads (the
transformers call reconfigures the shared object on every call, one thread at a time). The copy is checked on
:data:`PROBE_TEXTS` against the transformers call, which is used instead where they differ.
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

__all__ = ["PROBE_TEXTS", "TokenRows", "token_rows"]

#: Texts on which the Rust copy must give the transformers call's ids before it is used.
PROBE_TEXTS = ("negplugins", "", "[CLS] a [SEP] b [MASK] <s> </s> <pad>", "Crème brûlée, naïve café: ÅÄÖ 東京 🙂",
               " ".join(["a longer probe text, tokenized past the limit"] * 400))


class TokenRows(NamedTuple):
    """The token ids of a list of texts, without padding: row ``i`` is ``ids[offsets[i]:offsets[i] + lengths[i]]``;
    ``types`` holds the token type ids the same way, or ``None`` when they were not asked for."""

    ids: np.ndarray
    types: np.ndarray | None
    lengths: np.ndarray

    @property
    def offsets(self) -> np.ndarray:
        return np.cumsum(self.lengths) - self.lengths

    @staticmethod
    def concat(parts: list[TokenRows]) -> TokenRows:
        """The rows of ``parts``, one after another (``parts`` must not be empty)."""
        if len(parts) == 1:
            return parts[0]
        types = None if parts[0].types is None else np.concatenate([part.types for part in parts])
        return TokenRows(np.concatenate([part.ids for part in parts]), types,
                         np.concatenate([part.lengths for part in parts]))


def _rows(id_lists: list, type_lists: list | None) -> TokenRows:
    lengths = np.fromiter(map(len, id_lists), dtype=np.int64, count=len(id_lists))
    total = int(lengths.sum())
    ids = np.fromiter(itertools.chain.from_iterable(id_lists), dtype=np.int64, count=total)
    types = None if type_lists is None else np.fromiter(itertools.chain.from_iterable(type_lists), dtype=np.int64,
                                                        count=total)
    return TokenRows(ids, types, lengths)


def _with_transformers(tokenizer, max_length: int, with_types: bool) -> Callable[[list[str]], TokenRows]:
    """The transformers call itself, one thread at a time (it changes its Rust object's settings per call)."""
    lock = threading.Lock()

    def call(texts: list[str]) -> TokenRows:
        with lock:
            encoded = tokenizer(list(texts), truncation="longest_first", max_length=max_length, padding=False,
                                return_token_type_ids=with_types, return_attention_mask=False)
        return _rows(encoded["input_ids"], encoded["token_type_ids"] if with_types else None)

    return call


def _rust_copy(tokenizer, max_length: int):
    """The Rust tokenizer, copied and set up as transformers sets it for these arguments; ``None`` if it has none."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not getattr(tokenizer, "is_fast", False):
        return None
    from tokenizers import Tokenizer

    copy = Tokenizer.from_str(backend.to_str())
    copy.no_padding()
    copy.enable_truncation(max_length=max_length, stride=0, strategy="longest_first",
                           direction=tokenizer.truncation_side)
    copy.encode_special_tokens = bool(getattr(tokenizer, "split_special_tokens", False))
    return copy


def _with_rust(copy, with_types: bool) -> Callable[[list[str]], TokenRows]:
    # encode_batch_fast (tokenizers >= 0.20) skips the character offsets, which are not needed here
    encode = getattr(copy, "encode_batch_fast", None) or copy.encode_batch

    def call(texts: list[str]) -> TokenRows:
        encodings = encode(list(texts), add_special_tokens=True)
        return _rows([e.ids for e in encodings], [e.type_ids for e in encodings] if with_types else None)

    return call


def _same(a: TokenRows, b: TokenRows) -> bool:
    return np.array_equal(a.lengths, b.lengths) and np.array_equal(a.ids, b.ids) and \
        (a.types is None) == (b.types is None) and (a.types is None or np.array_equal(a.types, b.types))


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def token_rows(tokenizer, max_length: int, with_types: bool) -> Callable[[list[str]], TokenRows]:
    """A thread-safe ``texts -> TokenRows``: the ids ``tokenizer(texts, truncation=True, max_length=max_length)``
    gives (``with_types``: and the token type ids); built and checked once per tokenizer and setting."""
    key = (int(max_length), bool(with_types), tokenizer.truncation_side,
           bool(getattr(tokenizer, "split_special_tokens", False)))
    with _CACHE_LOCK:
        cached = _CACHE.setdefault(tokenizer, {})
        if key in cached:
            return cached[key]
    chosen = fallback = _with_transformers(tokenizer, max_length, with_types)
    problem = copy = None
    try:
        copy = _rust_copy(tokenizer, max_length)
    except Exception as error:  # noqa: BLE001 - an upstream change: the transformers call still works
        problem = f"its Rust tokenizer cannot be set up as transformers sets it ({type(error).__name__}: {error})"
    if copy is not None:
        fast = _with_rust(copy, with_types)
        try:
            if _same(fast(list(PROBE_TEXTS)), fallback(list(PROBE_TEXTS))):
                chosen = fast
            else:
                problem = "its Rust tokenizer gives other ids than the transformers call on the probe texts"
        except Exception as error:  # noqa: BLE001 - as above
            problem = f"its Rust tokenizer fails on the probe texts ({type(error).__name__}: {error})"
    if problem:
        from .upstream import UpstreamChangedWarning, version

        warnings.warn(UpstreamChangedWarning(
            f"transformers {version('transformers')}, {type(tokenizer).__name__}: {problem}; the encoders tokenize "
            f"with the transformers call instead (the same ids, one thread at a time: slower on a GPU)"), stacklevel=2)
    chosen.rust = chosen is not fallback
    with _CACHE_LOCK:
        _CACHE.setdefault(tokenizer, {})[key] = chosen
    return chosen
