"""The real derived copies in ../shared/data: NevIR's 1,383 test pairs and ExcluIR's 3,452 test queries.

Expected counts: NevIR's from MTEB's NevIR statistics (2,766 queries, 2,763 distinct query texts, 187,891 query
characters, lengths 19 to 168, longest document 1,316 characters; ../shared/data/nevir/SOURCES.md) and MTEB's qrels
(2,766 = 1,383 x 2 positive judgements, ``orionweller/NevIR-mteb`` qrels/test.jsonl); ExcluIR's from its paper and
../shared/data/excluir/SOURCES.md (3,452 queries, largest document index 90,399). The first and last pairs are read from the file itself
with the json module, not with the suite.
"""

import json
from collections import Counter
from pathlib import Path

import ir_datasets
import pytest

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext.datasets import excluir, nevir
from ir_datasets_ext.download import DownloadError

pytestmark = pytest.mark.realdata

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"  # as tests/conftest.py

NEVIR_COPY = SHARED_DATA / "nevir" / "derived" / "NevIR_test_final.json"
EXCLUIR_COPY = SHARED_DATA / "excluir" / "derived" / "ExcluIR_test_manual_final.json"


@pytest.fixture
def real_copies(monkeypatch, missing_real_data):
    for path in (NEVIR_COPY, EXCLUIR_COPY):
        if not path.is_file():
            missing_real_data(f"the derived copy {path} is not here")
    monkeypatch.setenv("IR_DATASETS_EXT_MIRROR", str(SHARED_DATA))
    return SHARED_DATA


def test_nevir_counts_match_mtebs_statistics(real_copies):
    dataset = ir_datasets.load("nevir/test")
    queries = list(dataset.queries_iter())
    qrels = list(dataset.qrels_iter())
    docs = list(dataset.docs_iter())
    assert len({q.pair_id for q in queries}) == 1383
    assert len(queries) == 2766 and len(docs) == 2766
    assert Counter(q.relevance for q in qrels) == {1: 2766, -1: 2766}  # MTEB's 2,766 qrels are the positives
    assert len({q.text for q in queries}) == 2763
    assert sum(len(q.text) for q in queries) == 187891
    assert (min(len(q.text) for q in queries), max(len(q.text) for q in queries)) == (19, 168)
    assert max(len(d.text) for d in docs) == 1316
    assert len(list(dataset.scoreddocs_iter())) == 5532
    assert all(q.query_id == f"{q.pair_id}_q{i}" for q, i in zip(queries, [1, 2] * 1383))  # MTEB's ids


def test_nevir_first_and_last_pair_and_no_extra_field(real_copies):
    rows = json.loads(NEVIR_COPY.read_text(encoding="utf-8"))
    dataset = ir_datasets.load("nevir/test")
    queries = list(dataset.queries_iter())
    docs = list(dataset.docs_iter())
    assert queries[0].query_id == "1230-2_q1" and queries[0].text == "Who had no love for the violin?"
    assert docs[0].doc_id == "1230-2_doc1" and docs[0].text == rows[0]["doc1"]
    assert queries[-1].query_id == "1179-2_q2" and queries[-1].text == rows[-1]["q2"]
    assert docs[-1].doc_id == "1179-2_doc2" and docs[-1].text == rows[-1]["doc2"]
    by_id = {q.query_id: q.text for q in queries}
    assert all(by_id[f"{r['id']}_q1"] == r["q1"] and by_id[f"{r['id']}_q2"] == r["q2"] for r in rows)
    # the study's fields (rewritten queries, exclusion criteria, status, ...) are in the file, never in a record
    assert set(rows[0]) - {"id", "q1", "q2", "doc1", "doc2"} >= {"WorkerId", "rewritten_query_q1", "status"}
    assert nevir.NevIRQuery._fields == ("query_id", "text", "pair_id", "query")
    assert nevir.NevIRDoc._fields == ("doc_id", "text", "pair_id")
    rewritten = {r[f"rewritten_query_{s}"] for r in rows for s in ("q1", "q2")} - {r[s] for r in rows for s in ("q1", "q2")}
    assert rewritten and not rewritten & set(by_id.values())


def test_nevir_names_its_derived_origin(real_copies):
    dataset = ir_datasets.load("nevir/test")
    (origin,) = dataset.data_origins()
    assert origin == nevir.DERIVED_TEST
    assert origin.sha256 == "54966e458db57107785599eb07ae24fb8a01f2cd52c3e0c263f2899795d8dbfe"  # ../shared/data/nevir/SOURCES.md
    assert origin.size == NEVIR_COPY.stat().st_size == 3_548_953
    assert "33ae782b421d03609035c36b60db2851f0bcfd40" in origin.source


def test_excluir_reads_the_real_queries_without_a_corpus(real_copies):
    rows = json.loads(EXCLUIR_COPY.read_text(encoding="utf-8"))
    dataset = ir_datasets.load("excluir/test")
    queries = list(dataset.queries_iter())
    assert len(queries) == 3452 and [q.query_id for q in queries] == [str(i) for i in range(3452)]
    assert queries[0].text == rows[0]["RQ_rewrite"] and queries[0].text != rows[0]["rewritten_query"]
    assert (queries[0].negative_doc_id, queries[0].positive_doc_id) == ("47431", "47432")
    assert queries[-1].text == rows[-1]["RQ_rewrite"]
    assert all((q.negative_doc_id, q.positive_doc_id) == tuple(str(i) for i in r["corpus_sub_index"])
               for q, r in zip(queries, rows))
    assert max(int(q.positive_doc_id) for q in queries) <= 90399
    assert max(max(int(q.positive_doc_id), int(q.negative_doc_id)) for q in queries) == 90399
    assert Counter(q.relevance for q in dataset.qrels_iter()) == {1: 3452, -1: 3452}
    assert [o.sha256 for o in dataset.data_origins()] == [excluir.DERIVED_TEST.sha256] == [
        "32120b42c5cc8204e29aeb33cc69f39c07469fcc5aeb256e04fc7732420cc51b"]
    with pytest.raises(DownloadError, match=r"excluir/corpus\.json: not found"):
        next(iter(dataset.docs_iter()))
