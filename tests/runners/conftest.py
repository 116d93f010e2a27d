"""Fixtures of the runner tests: the loaded MiniLM encoder.

No trained cross-encoder or monoT5 weights are available offline, so the cross-encoder and monoT5 code
paths run on the tiny randomly initialised models of ``tests/conftest.py`` (``tiny_cross_encoder``,
``tiny_monot5``). Their scores are meaningless; the tests check the plumbing and the score semantics.
"""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def minilm_encoder():
    from negplugins.runners.encoders import DenseEncoder, resolve_model

    return DenseEncoder(resolve_model(None), device="cpu")
