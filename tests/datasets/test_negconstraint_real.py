"""NegConstraint from the authors' release in ../shared/data (NegConstraint.zip), served through the offline mirror.

Expected values are read from ../shared/data/negconstraint/SOURCES.md (3,946 passages, 366 queries, 198 judged, one
relevant passage each) and from the unzipped files beside the zip with the json module, not with the suite.
"""

import json
from collections import Counter
from pathlib import Path

import ir_datasets
import pytest
from ir_datasets.formats import TrecQrel

from ir_datasets_ext.datasets import negconstraint

pytestmark = pytest.mark.realdata

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"  # as tests/conftest.py
KIND_COUNTS = {"excluding": 169, "without": 11, "do-not-mention": 13, "other": 5}  # of the 198 judged queries


@pytest.fixture
def release(monkeypatch, missing_real_data):
    """The release through the mirror, in the test's own IR_DATASETS_HOME (the session's shared one has no stamp)."""
    folder = SHARED_DATA / "negconstraint"
    if not (folder / "NegConstraint.zip").is_file():
        missing_real_data(f"the NegConstraint release is not at {folder}")
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(SHARED_DATA))
    return folder / "NegConstraint"


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_counts_and_first_and_last_records(release):
    dataset = ir_datasets.load("negconstraint")
    docs, queries, qrels = list(dataset.docs_iter()), list(dataset.queries_iter()), list(dataset.qrels_iter())
    assert (len(docs), len(queries), len(qrels)) == (3946, 198, 198)
    corpus = _jsonl(release / "corpus.jsonl")
    assert (docs[0].doc_id, docs[0].text) == ("10000", corpus[0]["text"])
    assert (docs[-1].doc_id, docs[-1].text) == ("13945", corpus[-1]["text"])
    assert queries[0] == negconstraint.NegConstraintQuery(
        "0", "Aaron's profile, but don't mention Moses.", "do-not-mention", "Aaron's profile, but don't mention Moses.")
    assert (queries[-1].query_id, queries[-1].constraint) == ("197", "excluding")
    assert qrels[0] == TrecQrel("0", "10000", 1, "0") and qrels[-1] == TrecQrel("197", "10713", 1, "0")


def test_the_judged_queries_are_the_authors_evaluated_ones(release):
    """The authors' GenericDataLoader keeps the queries that appear in test.tsv: "0" to "197", one passage each."""
    judged = [q.query_id for q in ir_datasets.load("negconstraint").queries_iter()]
    assert judged == [str(n) for n in range(198)]
    assert Counter(r.query_id for r in ir_datasets.load("negconstraint").qrels_iter()) == {q: 1 for q in judged}
    everything = list(ir_datasets.load("negconstraint/all-queries").queries_iter())
    assert [q.query_id for q in everything] == [str(n) for n in range(366)]
    assert [q.text for q in everything] == [row["text"] for row in _jsonl(release / "queries.jsonl")]


@pytest.mark.parametrize("kind", negconstraint.CONSTRAINTS)
def test_constraint_subsets(release, kind):
    dataset = ir_datasets.load(f"negconstraint/{kind}")
    queries = list(dataset.queries_iter())
    assert {q.constraint for q in queries} == {kind} and len(queries) == KIND_COUNTS[kind]
    assert sum(1 for _ in dataset.qrels_iter()) == KIND_COUNTS[kind]


def test_recorded_counts_match_the_release(release):
    """etc/metadata.json (what *_count() answers before a download) agrees with the files."""
    for dataset_id in ("negconstraint", "negconstraint/all-queries", *(f"negconstraint/{k}" for k in KIND_COUNTS)):
        dataset = ir_datasets.load(dataset_id)
        assert dataset.queries_count() == sum(1 for _ in dataset.queries_iter()), dataset_id
        assert dataset.qrels_count() == sum(1 for _ in dataset.qrels_iter()), dataset_id
        assert dataset.docs_count() == 3946


def test_docstore_and_the_mirror_file_read_in_place(release, ir_datasets_home):
    store = ir_datasets.load("negconstraint/without").docs_store()
    assert store.get("10020").text.startswith(_jsonl(release / "corpus.jsonl")[20]["text"][:40])
    assert not (ir_datasets_home / "negconstraint" / "NegConstraint.zip").exists()
