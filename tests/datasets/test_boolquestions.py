import json
import logging
import re

import dataset_fixtures as fx
import ir_datasets
import pytest
from dataset_checks import assert_trust_on_first_use, fresh_home, qrels_dict

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext.datasets import boolquestions
from ir_datasets_ext.util import FormatError


def test_msmarco_json_array(mirror):
    fx.write_boolquestions(mirror)
    dataset = ir_datasets.load("boolquestions/msmarco")
    queries = list(dataset.queries_iter())
    assert [(q.query_id, q.question_type) for q in queries] == [("1", "and"), ("2", "or"), ("3", "not"), ("4", "not"),
                                                                ("5", "not"), ("6", "and"), ("7", "or")]
    assert queries[2].default_text() == "cats but not dogs"
    assert qrels_dict(dataset) == {"1": {"10": 1, "11": -1}, "2": {"10": 1, "12": 1},
                                   "3": {"12": 1, "10": -1}, "4": {"13": 1, "14": -1},
                                   "5": {"15": boolquestions.CONFLICT_LABEL, "11": -1}, "6": {"13": -1}, "7": {"14": 1}}
    assert len(list(dataset.qrels_iter())) == 12  # one row per passage: the conflict and the repeat once each
    assert dataset.qrels_handler().label_counts().null_negatives == 2
    counts = dataset.qrels_handler().label_counts()
    assert (counts.null_negatives, counts.null_only, counts.repeated_negatives, counts.conflicts) == (2, 1, 1, 1)
    assert dataset.qrels_defs()[boolquestions.CONFLICT_LABEL].startswith("Listed by the release among both")
    docs = list(dataset.docs_iter())
    assert len(docs) == 6 and docs[0].title == "" and docs[0].default_text() == "msmarco passage 10"
    assert dataset.docs_store().get("13").text == "msmarco passage 13"


def test_nq_json_lines_titles_and_subsets(mirror):
    fx.write_boolquestions(mirror)
    dataset = ir_datasets.load("boolquestions/nq")
    assert [q.query_id for q in dataset.queries_iter()] == ["nq1", "nq2", "nq3"]
    assert qrels_dict(dataset)["nq3"] == {"103": 1, "102": -1}
    assert dataset.qrels_handler().label_counts().null_negatives == 2
    doc = dataset.docs_store().get("102")
    assert (doc.title, doc.text, doc.default_text()) == ("Title 102", "nq passage 102", "Title 102 nq passage 102")
    sizes = {}
    for question_type in ("and", "or", "not"):
        subset = ir_datasets.load(f"boolquestions/nq/{question_type}")
        queries = list(subset.queries_iter())
        assert {q.question_type for q in queries} == {question_type}
        assert {q.query_id for q in subset.qrels_iter()} == {q.query_id for q in queries}
        sizes[question_type] = len(queries)
    assert sizes == {"and": 1, "or": 1, "not": 1}
    assert ir_datasets.load("boolquestions/nq/not").qrels_handler().label_counts().null_negatives == 2
    assert ir_datasets.load("boolquestions/nq/and").qrels_handler().label_counts().null_negatives == 0
    msmarco_not = ir_datasets.load("boolquestions/msmarco/not")
    assert [q.query_id for q in msmarco_not.queries_iter()] == ["3", "4", "5"]
    assert {(q.query_id, q.doc_id, q.relevance) for q in msmarco_not.qrels_iter()} == {
        ("3", "12", 1), ("3", "10", -1), ("4", "13", 1), ("4", "14", -1), ("5", "15", 2), ("5", "11", -1)}
    assert msmarco_not.qrels_handler().label_counts().conflicts == 1
    assert ir_datasets.load("boolquestions/msmarco/or").qrels_handler().label_counts().null_only == 1


def test_null_passages_are_logged(mirror, caplog):
    fx.write_boolquestions(mirror)
    with caplog.at_level(logging.WARNING):
        list(ir_datasets.load("boolquestions/nq").qrels_iter())
    assert "skipped 2 negative context(s) with a null passage_id (0 question(s) have only null negatives)" \
        in caplog.text
    assert "both positive and negative" not in caplog.text


def test_conflicts_and_repeats_are_logged(mirror, caplog):
    fx.write_boolquestions(mirror)
    with caplog.at_level(logging.WARNING):
        list(ir_datasets.load("boolquestions/msmarco").qrels_iter())
    assert "MSMARCO/eval.json: 1 passage(s) listed as both positive and negative for a question, labelled 2" \
        in caplog.text
    assert "MSMARCO/eval.json: 1 repeated negative passage id(s) counted once" in caplog.text
    assert "(1 question(s) have only null negatives)" in caplog.text


def test_mirror_paths(mirror):
    assert boolquestions._FILES["msmarco"]["eval"].mirror_path() == mirror / "boolquestions" / "MSMARCO" / "eval.json"
    assert boolquestions._FILES["nq"]["corpus"].mirror_path() == \
        mirror / "boolquestions" / "NaturalQuestions" / "corpus.jsonl"
    assert boolquestions._FILES["nq"]["corpus"].url.endswith("/resolve/main/NaturalQuestions/corpus.jsonl")


def test_unknown_question_type(mirror):
    fx.write_boolquestions(mirror)
    rows = [dict(r) for r in fx.BQ_NQ_EVAL]
    rows[1]["question_type"] = "xor"
    fx.write_jsonl(mirror / "boolquestions" / "NaturalQuestions" / "eval.json", rows)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(mirror))}/boolquestions/NaturalQuestions/eval\.json:2: question_type 'xor' is not one of"):
        list(ir_datasets.load("boolquestions/nq").queries_iter())
    rows = [dict(r) for r in fx.BQ_MSMARCO_EVAL]
    rows[3]["question_type"] = "NOT"
    (mirror / "boolquestions" / "MSMARCO" / "eval.json").write_text(json.dumps(rows, indent=1))
    with pytest.raises(FormatError, match=rf"^{re.escape(str(mirror))}/boolquestions/MSMARCO/eval\.json:\d+ \(question 3\): question_type 'NOT'"):
        list(ir_datasets.load("boolquestions/msmarco/and").queries_iter())


def test_malformed_line_and_missing_field(mirror, monkeypatch, tmp_path_factory):
    fx.write_boolquestions(mirror)
    corpus = mirror / "boolquestions" / "NaturalQuestions" / "corpus.jsonl"
    rows = [dict(r) for r in fx.BQ_NQ_CORPUS]
    del rows[2]["title"]
    fx.write_jsonl(corpus, rows)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(corpus))}:3: missing field 'title'"):
        list(ir_datasets.load("boolquestions/nq").docs_iter())
    rows[2]["title"] = "T"
    fx.write_jsonl(corpus, rows)
    corpus.write_text(corpus.read_text() + "{not json}\n")
    fresh_home(monkeypatch, tmp_path_factory)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(corpus))}:5: not valid JSON"):
        list(ir_datasets.load("boolquestions/nq").docs_iter())
    rows = [dict(r) for r in fx.BQ_NQ_EVAL]
    rows[0]["positive_ctxs"] = "101"
    fresh_home(monkeypatch, tmp_path_factory)
    fx.write_jsonl(mirror / "boolquestions" / "NaturalQuestions" / "eval.json", rows)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(mirror))}/boolquestions/NaturalQuestions/eval\.json:1: field 'positive_ctxs' is str"):
        list(ir_datasets.load("boolquestions/nq").qrels_iter())


def test_trust_on_first_use(mirror):
    fx.write_boolquestions(mirror)
    download = boolquestions._FILES["msmarco"]["eval"]
    assert_trust_on_first_use(mirror / "boolquestions" / "MSMARCO" / "eval.json", download.cache_path,
                              lambda: list(ir_datasets.load("boolquestions/msmarco").queries_iter()))
