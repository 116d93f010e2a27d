"""Helpers for the evaluation tests: fixture writers of tests/datasets and small run writers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))


def write_trec(path: Path, ranking: dict, tag: str = "t") -> Path:
    """``{query_id: [doc_id, ...]}`` (best first) as a TREC run with decreasing scores."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for query_id, docs in ranking.items():
        for rank, doc_id in enumerate(docs, start=1):
            lines.append(f"{query_id} Q0 {doc_id} {rank} {100 - rank:.6f} {tag}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def trec():
    return write_trec
