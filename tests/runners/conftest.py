"""Fixtures of the runner tests (the loaded MiniLM encoder is tests/conftest.py's ``minilm_encoder``).

No trained cross-encoder or monoT5 weights are available offline, so the cross-encoder and monoT5 code
paths run on the tiny randomly initialised models of ``tests/conftest.py`` (``tiny_cross_encoder``,
``tiny_monot5``). Their scores are meaningless; the tests check the plumbing and the score semantics.
"""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def first_stage():
    """A writer of a hand-made first-stage run: for each query every document, scores decreasing with the doc
    number (``first_stage(path, queries=..., docs=...)`` returns ``path``)."""
    demo_docs = [f"d{n:02d}" for n in range(1, 37)]

    def write(path, queries=("q01", "q02", "q05"), docs=demo_docs):
        with open(path, "w") as f:
            for q in queries:
                for rank, d in enumerate(docs, start=1):
                    f.write(f"{q} Q0 {d} {rank} {100 - rank}.0 first\n")
        return path

    return write
