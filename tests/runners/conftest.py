"""Fixtures of the runner tests: tiny locally built models and the loaded MiniLM encoder.

No trained cross-encoder or monoT5 weights are available offline, so the cross-encoder and monoT5 code
paths run on tiny randomly initialised models (a 1-layer BERT with a WordPiece vocabulary written here,
and a 1-layer T5 with a real ``T5Tokenizer`` built from a Unigram vocabulary that has ``true`` and
``false`` pieces). Their scores are meaningless; the tests check the plumbing and the score semantics.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))  # dataset_fixtures

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_WORDS = ("which what was used except in not country throughout nickel the a of is city capital france paris "
          "query document relevant true false metal and or but").split()
_CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789?.,:'-")


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS, *_CHARS, *(f"##{c}" for c in _CHARS)]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=512, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_monot5(tmp_path_factory) -> Path:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer

    folder = tmp_path_factory.mktemp("tiny-monot5")
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -3.0),
             *((f"\u2581{w}", -1.0) for w in _WORDS), *((c, -5.0) for c in _CHARS + list("QDRAEIOUN"))]
    tokenizer = T5Tokenizer(vocab=vocab, extra_ids=0)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=37, num_layers=1, num_decoder_layers=1,
                      num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def minilm_encoder():
    from negplugins.runners.encoders import SentenceEncoder, resolve_model

    return SentenceEncoder(resolve_model(None))
