"""The counts etc/metadata.json records answer before any download, and agree with the real files where they are here.

Sources of the counts: NevIR, the paper's Table 1 (948, 225 and 1,383 pairs; each pair is two queries, two documents,
four judgements and four scored pairs); ExcluIR, its paper (3,452 queries, 90,406 documents) and one positive and
one negative per query; BoolQuestions, its paper's Table 1 (questions per corpus and type); DuReader-retrieval, its
paper (2,000 dev queries, 8,096,668 passages) and C-MTEB's copy (100,001 passages); NegConstraint and ComLQ, their
releases (tests/datasets/test_negconstraint_real.py, tests/test_comlq_dataset.py).
"""

from pathlib import Path

import ir_datasets
import pytest

import ir_datasets_ext  # noqa: F401

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"  # as tests/conftest.py

#: dataset id -> (docs, queries, qrels); None where no count is verified
RECORDED = {
    "nevir/train": (1896, 1896, 3792), "nevir/dev": (450, 450, 900), "nevir/test": (2766, 2766, 5532),
    "excluir/test": (90406, 3452, 6904),
    "boolquestions/msmarco": (None, 1151, None), "boolquestions/msmarco/and": (None, 354, None),
    "boolquestions/msmarco/or": (None, 469, None), "boolquestions/msmarco/not": (None, 328, None),
    "boolquestions/nq": (None, 1258, None), "boolquestions/nq/and": (None, 403, None),
    "boolquestions/nq/or": (None, 485, None), "boolquestions/nq/not": (None, 370, None),
    "dureader-retrieval/dev": (8096668, 2000, None), "dureader-retrieval/dev-100k": (100001, 2000, None),
    "negconstraint": (3946, 198, 198), "negconstraint/all-queries": (3946, 366, 198),
}


@pytest.mark.parametrize("dataset_id", RECORDED)
def test_counts_answer_before_any_download(dataset_id, isolated_ir_datasets_home):
    dataset = ir_datasets.load(dataset_id)
    assert (dataset.docs_count(), dataset.queries_count(), dataset.qrels_count()) == RECORDED[dataset_id]
    assert list(isolated_ir_datasets_home.iterdir()) == []


def test_nevir_scored_pairs_are_recorded():
    assert ir_datasets.load("nevir/test").scoreddocs_count() == 5532


@pytest.mark.realdata
@pytest.mark.parametrize("dataset_id, copy", [("nevir/test", "nevir/derived/NevIR_test_final.json"),
                                              ("excluir/test", "excluir/derived/ExcluIR_test_manual_final.json")])
def test_recorded_counts_match_the_derived_copies(dataset_id, copy, monkeypatch, missing_real_data):
    if not (SHARED_DATA / copy).is_file():
        missing_real_data(f"the derived copy {SHARED_DATA / copy} is not here")
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(SHARED_DATA))
    dataset = ir_datasets.load(dataset_id)
    assert dataset.queries_count() == sum(1 for _ in dataset.queries_iter())
    assert dataset.qrels_count() == sum(1 for _ in dataset.qrels_iter())
