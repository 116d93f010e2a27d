"""Derived copies (NevIR's test pairs, ExcluIR's test queries) on fixtures in their real format.

The copies are JSON arrays holding the release's fields plus those of an LLM query-rewriting study. The suite reads
one only where the release file is absent from the mirror, verified by its pinned size and SHA-256 (the fixtures'
are pinned by ``pin_derived_copy``), reads only the release's fields, and names the copy wherever data is used.
"""

import json

import dataset_fixtures as fx
import ir_datasets
import pytest
from dataset_checks import pin_derived_copy, qrels_dict

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext.datasets import excluir, nevir
from ir_datasets_ext.derived import DERIVED, DataOrigin
from ir_datasets_ext.download import ChecksumError, DownloadError

TEST_IDS = ["1002-3", "1001-1", "1000-2"]  # the copy's order (reversed against the release fixture)


@pytest.fixture
def nevir_copy(mirror, monkeypatch):
    path = fx.write_nevir_derived(mirror)
    pin_derived_copy(monkeypatch, nevir._FILES["test"], path)
    return path


def test_the_copy_is_read_where_the_release_is_absent(nevir_copy):
    dataset = ir_datasets.load("nevir/test")
    queries = list(dataset.queries_iter())
    assert [q.query_id for q in queries] == [f"{p}_q{i}" for p in TEST_IDS for i in (1, 2)]  # MTEB's ids
    assert [d.doc_id for d in dataset.docs_iter()] == [f"{p}_doc{i}" for p in TEST_IDS for i in (1, 2)]
    release = {row["id"]: row for row in fx.NEVIR_ROWS["test.jsonl"]}
    for query in queries:
        pair, side = query.query_id.rsplit("_", 1)
        assert query.text == query.query == release[pair][side]  # the release's q1 / q2, not a rewritten query
    assert qrels_dict(dataset)["1001-1_q2"] == {"1001-1_doc2": 1, "1001-1_doc1": -1}
    assert dataset.docs_store().get("1000-2_doc1").text == release["1000-2"]["doc1"]
    assert len(list(dataset.scoreddocs_iter())) == 12


def test_the_study_fields_never_reach_the_records(nevir_copy):
    dataset = ir_datasets.load("nevir/test")
    assert nevir.NevIRQuery._fields == ("query_id", "text", "pair_id", "query")
    assert nevir.NevIRDoc._fields == ("doc_id", "text", "pair_id")
    values = [v for record in [*dataset.queries_iter(), *dataset.docs_iter()] for v in record]
    assert values and not any("REWRITTEN" in v or v == "success" for v in values)


def test_the_origin_is_named_by_the_dataset_and_its_documentation(nevir_copy):
    dataset = ir_datasets.load("nevir/test")
    (origin,) = dataset.data_origins()
    assert origin.kind == DERIVED == "derived copy"
    assert origin.file == "nevir/derived/NevIR_test_final.json" and origin.replaces == "test.jsonl"
    assert origin.sha256 == nevir._FILES["test"].derived.sha256
    assert "github.com/AdamF-Optimizer/IR_llm_negation_rewriting" in origin.describe()
    assert origin.describe().startswith("derived copy nevir/derived/NevIR_test_final.json (sha256 ")
    desc = dataset.documentation()["desc"]
    assert "derived copy" in desc and nevir.DERIVED_TEST.sha256 in desc and "IR_llm_negation_rewriting" in desc
    # the other splits have no copy: nothing is claimed for them
    assert ir_datasets.load("nevir/dev").data_origins() == []
    assert "derived copy" not in ir_datasets.load("nevir/dev").documentation()["desc"]


def test_the_release_always_wins(nevir_copy, mirror):
    fx.write_nevir(mirror)  # test.jsonl beside the copy
    dataset = ir_datasets.load("nevir/test")
    assert dataset.data_origins() == []
    assert [q.query_id for q in dataset.queries_iter()][:2] == ["1000-2_q1", "1000-2_q2"]  # the release's order


def test_a_release_in_the_cache_wins_over_the_copy(nevir_copy, mirror, isolated_ir_datasets_home):
    cached = nevir._FILES["test"].release.cache_path
    cached.parent.mkdir(parents=True, exist_ok=True)
    fx.write_jsonl(cached, fx.NEVIR_ROWS["test.jsonl"])  # fetched earlier, online
    assert ir_datasets.load("nevir/test").data_origins() == []


def test_without_a_mirror_the_release_is_fetched_not_the_copy(nevir_copy, monkeypatch):
    monkeypatch.delenv("IR_DATASETS_EXT_MIRROR")
    assert nevir._FILES["test"].origin() is None
    assert nevir._FILES["test"].file == "test.jsonl"


def test_a_file_that_is_not_the_copy_is_refused_in_one_line(mirror):
    fx.write_nevir_derived(mirror)  # not pinned: the real copy's size and SHA-256 are expected
    with pytest.raises(ChecksumError) as error:
        list(ir_datasets.load("nevir/test").queries_iter())
    message = str(error.value)
    assert "\n" not in message
    assert "NevIR_test_final.json" in message and f"expected {nevir.DERIVED_TEST.size:,}" in message
    assert "neither the release's test.jsonl nor the derived copy this suite knows" in message


def test_same_size_other_bytes_is_refused_by_its_sha256(mirror, monkeypatch):
    path = fx.write_nevir_derived(mirror)
    pin_derived_copy(monkeypatch, nevir._FILES["test"], path)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"Nickel", b"Copper", 1))  # same length
    with pytest.raises(ChecksumError, match=r"sha256 [0-9a-f]{64}, expected [0-9a-f]{64} for "
                                            r"nevir/derived/NevIR_test_final\.json: the file is neither"):
        list(ir_datasets.load("nevir/test").qrels_iter())


def test_neither_file_names_both(mirror):
    with pytest.raises(DownloadError) as error:
        list(ir_datasets.load("nevir/test").queries_iter())
    message = str(error.value)
    assert str(mirror / "nevir" / "test.jsonl") in message and "nor its derived copy" in message
    assert str(mirror / "nevir" / "derived" / "NevIR_test_final.json") in message


def test_a_malformed_copy_names_the_copy_and_the_pair(mirror, monkeypatch):
    rows = [dict(r) for r in fx.NEVIR_DERIVED_ROWS]
    del rows[1]["doc2"]
    path = fx.write_nevir_derived(mirror, rows)
    pin_derived_copy(monkeypatch, nevir._FILES["test"], path)
    with pytest.raises(ValueError, match=r"^derived/NevIR_test_final\.json:\d+ \(pair 1\): missing field 'doc2'"):
        list(ir_datasets.load("nevir/test").docs_iter())


def test_origin_record_round_trips():
    record = nevir.DERIVED_TEST.to_dict()
    assert list(record) == sorted(record) and record["kind"] == "derived copy"
    assert record["file"] == "nevir/derived/NevIR_test_final.json"
    assert DataOrigin.from_dict(record) == nevir.DERIVED_TEST
    assert json.loads(json.dumps(record)) == record


def test_excluir_queries_from_the_copy_and_no_corpus(mirror, monkeypatch):
    path = fx.write_excluir_derived(mirror)
    pin_derived_copy(monkeypatch, excluir._TEST, path)
    dataset = ir_datasets.load("excluir/test")
    queries = list(dataset.queries_iter())
    assert [q.query_id for q in queries] == ["0", "1", "2"]
    assert [q.text for q in queries] == [q["RQ_rewrite"] for q in fx.EXCLUIR_QUERIES]  # not rewritten_query
    assert excluir.ExcluIRQuery._fields == ("query_id", "text", "positive_doc_id", "negative_doc_id", "query")
    assert qrels_dict(dataset) == {"0": {"1": 1, "0": -1}, "1": {"2": 1, "3": -1}, "2": {"5": 1, "4": -1}}
    assert [o.file for o in dataset.data_origins()] == ["excluir/derived/ExcluIR_test_manual_final.json"]
    with pytest.raises(DownloadError, match=r"excluir/corpus\.json: not found"):  # why nothing can be evaluated
        next(iter(dataset.docs_iter()))
    fx.write_excluir(mirror)  # the release's files: the copy gives way
    assert dataset.data_origins() == []
