"""Resolve once, pass down: one evaluation resolves its dataset id once and hands the object down."""

import collections
from pathlib import Path

import negplugins.datasets as datasets
from negplugins.evaluation import evaluate

REPO = Path(__file__).resolve().parents[2]


def _count_loads(monkeypatch):
    calls = collections.Counter()
    original = datasets.load

    def counting(dataset_id):
        calls[dataset_id] += 1
        return original(dataset_id)

    monkeypatch.setattr(datasets, "load", counting)
    return calls


def test_evaluate_resolves_the_dataset_once(monkeypatch, tmp_path):
    calls = _count_loads(monkeypatch)
    evaluation = evaluate("negplugins-demo", REPO / "runs" / "negplugins-demo" / "bm25.trec")
    assert evaluation.queries == 21
    # validation, the doc-id set and its cache path get the loaded dataset, not the id again
    assert dict(calls) == {"negplugins-demo": 1}


def test_docs_root_id_uses_the_dataset_it_is_given(monkeypatch):
    dataset = datasets.load("negplugins-demo")
    calls = _count_loads(monkeypatch)
    assert datasets.docs_root_id("negplugins-demo", dataset) == "negplugins-demo"
    assert calls["negplugins-demo"] == 0
