import re

import dataset_fixtures as fx
import ir_datasets
import pytest
from dataset_checks import assert_trust_on_first_use, fresh_home, qrels_dict

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext.datasets import nevir
from ir_datasets_ext.util import FormatError


@pytest.mark.parametrize("split, pairs", [("train", ["0", "1"]), ("dev", ["0"]), ("test", ["1000-2", "1001-1", "1002-3"])])
def test_counts_and_ids(mirror, split, pairs):
    fx.write_nevir(mirror)
    dataset = ir_datasets.load(f"nevir/{split}")
    assert [d.doc_id for d in dataset.docs_iter()] == [f"{p}_doc{i}" for p in pairs for i in (1, 2)]
    queries = list(dataset.queries_iter())
    assert [q.query_id for q in queries] == [f"{p}_q{i}" for p in pairs for i in (1, 2)]
    assert all(q.default_text() == q.text for q in queries)
    assert len(list(dataset.qrels_iter())) == 4 * len(pairs)
    assert len(list(dataset.scoreddocs_iter())) == 4 * len(pairs)


def test_labels_scoreddocs_and_docstore(mirror):
    fx.write_nevir(mirror)
    dataset = ir_datasets.load("nevir/test")
    assert qrels_dict(dataset)["1000-2_q1"] == {"1000-2_doc1": 1, "1000-2_doc2": -1}
    assert qrels_dict(dataset)["1000-2_q2"] == {"1000-2_doc2": 1, "1000-2_doc1": -1}
    candidates = {}
    for scored in dataset.scoreddocs_iter():
        assert scored.score == nevir.CANDIDATE_SCORE
        candidates.setdefault(scored.query_id, []).append(scored.doc_id)
    assert candidates["1001-1_q2"] == ["1001-1_doc1", "1001-1_doc2"]
    assert all(len(docs) == 2 for docs in candidates.values()) and len(candidates) == 6
    row = fx.NEVIR_ROWS["test.jsonl"][1]
    assert dataset.docs_store().get("1001-1_doc2").text == row["doc2"]
    assert dataset.docs_store().get("1001-1_doc2").pair_id == "1001-1"
    # per-split docstores: the train documents are not in the test store and vice versa
    assert ir_datasets.load("nevir/train").docs_store().get("0_doc1").text == fx.NEVIR_ROWS["train.jsonl"][0]["doc1"]
    with pytest.raises(KeyError):
        dataset.docs_store().get("0_doc1")
    assert dataset.docs_count() == 6


def test_mirror_paths_and_pinned_urls(mirror):
    assert nevir._FILES["dev"].mirror_path() == mirror / "nevir" / "validation.jsonl"
    assert nevir._FILES["test"].release.url == ("https://huggingface.co/datasets/orionweller/NevIR/resolve/"
                                        "6263585072ce3b435ed09658613553fbf4e74184/test.jsonl")


def test_malformed_line(mirror):
    fx.write_nevir(mirror)
    path = mirror / "nevir" / "train.jsonl"
    path.write_text(path.read_text() + '{"q1": "x", "q2": \n')
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}:3: not valid JSON"):
        list(ir_datasets.load("nevir/train").queries_iter())


def test_missing_field_and_duplicate_id(mirror, monkeypatch, tmp_path_factory):
    fx.write_nevir(mirror)
    rows = [dict(r) for r in fx.NEVIR_ROWS["test.jsonl"]]
    del rows[2]["doc2"]
    fx.write_jsonl(mirror / "nevir" / "test.jsonl", rows)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(mirror))}/nevir/test\.jsonl:3: missing field 'doc2'"):
        list(ir_datasets.load("nevir/test").docs_iter())
    rows = [dict(r) for r in fx.NEVIR_ROWS["test.jsonl"]]
    rows[1]["id"] = rows[0]["id"]
    fresh_home(monkeypatch, tmp_path_factory)
    fx.write_jsonl(mirror / "nevir" / "test.jsonl", rows)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(mirror))}/nevir/test\.jsonl:2: pair id '1000-2' occurs twice"):
        list(ir_datasets.load("nevir/test").qrels_iter())


def test_wrong_type(mirror):
    fx.write_nevir(mirror)
    rows = [dict(r) for r in fx.NEVIR_ROWS["validation.jsonl"]]
    rows[0]["q2"] = ["not", "a", "string"]
    fx.write_jsonl(mirror / "nevir" / "validation.jsonl", rows)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(mirror))}/nevir/validation\.jsonl:1: field 'q2' is list"):
        list(ir_datasets.load("nevir/dev").queries_iter())


def test_trust_on_first_use(mirror):
    fx.write_nevir(mirror)
    assert_trust_on_first_use(mirror / "nevir" / "test.jsonl", nevir._FILES["test"].release.cache_path,
                              lambda: list(ir_datasets.load("nevir/test").queries_iter()))


def test_rows_without_id_fall_back_to_line_numbers_with_a_warning(mirror, caplog):
    """MTEB's NevIR ids (``1000-2_q1``) come from the rows' ``id``; a row without one cannot match them."""
    import logging

    fx.write_nevir(mirror)
    with caplog.at_level(logging.WARNING):
        assert [q.query_id for q in ir_datasets.load("nevir/train").queries_iter()] == ["0_q1", "0_q2", "1_q1", "1_q2"]
    assert "train.jsonl: 2 row(s) have no 'id' (line(s) 1, 2); their pair ids are 0-based line numbers" in caplog.text
    assert "not comparable with MTEB's" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        list(ir_datasets.load("nevir/test").qrels_iter())
    assert "have no 'id'" not in caplog.text  # every test row has its MTEB id


def test_paired_accuracy_on_the_dataset_names_left_out_queries(mirror):
    """A pair whose file row lost a query is reported, not silently dropped (here: qrels filtered by hand)."""
    import ir_measures

    from negplugins.measures import IncompletePairsWarning, PairedAcc

    fx.write_nevir(mirror)
    qrels = [q for q in ir_datasets.load("nevir/test").qrels_iter() if q.query_id != "1001-1_q2"]
    run = {q.query_id: {} for q in qrels}
    for q in qrels:
        run[q.query_id][q.doc_id] = float(q.relevance)
    with pytest.warns(IncompletePairsWarning, match=r"1 query \(1001-1_q1\) judged like a pair member"):
        values = {m.query_id: m.value for m in ir_measures.iter_calc([PairedAcc], qrels, run)}
    assert values == {"1000-2_q1": 1.0, "1000-2_q2": 1.0, "1002-3_q1": 1.0, "1002-3_q2": 1.0}
