"""The strict BEIR folder reader: every problem is reported with its file and line."""

from __future__ import annotations

import json

import pytest

from negplugins.beir import BeirFormatError, read_beir_folder


def write_folder(root, corpus=None, queries=None, qrels=None):
    corpus = corpus if corpus is not None else [{"_id": "d1", "title": "T", "text": "one"}, {"_id": "d2", "text": "two"}]
    queries = queries if queries is not None else [{"_id": "q1", "text": "first", "metadata": {"kind": "not"}},
                                                   {"_id": "q2", "text": "second"}]
    qrels = qrels if qrels is not None else "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t-1\n"
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        (root / name).write_text(rows if isinstance(rows, str) else "".join(json.dumps(r) + "\n" for r in rows),
                                 encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return root


def test_reads_a_valid_folder(tmp_path):
    folder = read_beir_folder(write_folder(tmp_path / "b"))
    assert folder.corpus == {"d1": {"title": "T", "text": "one"}, "d2": {"title": "", "text": "two"}}
    assert folder.queries == {"q1": "first", "q2": "second"}
    assert folder.judged_queries == {"q1": "first"}
    assert folder.qrels == {"q1": {"d1": 1, "d2": -1}}
    assert folder.query_metadata == {"q1": {"kind": "not"}}
    assert folder.counts() == {"docs": 2, "queries": 2, "judged_queries": 1, "qrels": 2, "qrels_label_-1": 1,
                               "qrels_label_1": 1}


def test_matches_beir_generic_data_loader(tmp_path):
    loader = pytest.importorskip("beir.datasets.data_loader")
    root = write_folder(tmp_path / "b")
    corpus, queries, qrels = loader.GenericDataLoader(data_folder=str(root)).load("test")
    folder = read_beir_folder(root)
    assert queries == folder.judged_queries
    assert qrels == folder.qrels
    assert {k: v["text"] for k, v in corpus.items()} == {k: v["text"] for k, v in folder.corpus.items()}


@pytest.mark.parametrize("missing", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_missing_file(tmp_path, missing):
    root = write_folder(tmp_path / "b")
    (root / missing).unlink()
    with pytest.raises(BeirFormatError, match=rf"{missing}: file not found"):
        read_beir_folder(root)


def test_missing_folder(tmp_path):
    with pytest.raises(BeirFormatError, match="BEIR folder not found"):
        read_beir_folder(tmp_path / "nowhere")


@pytest.mark.parametrize("corpus, message", [
    ('{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": \n', r"corpus.jsonl:2: not valid JSON"),
    ('{"_id": "d1", "text": "one"}\n\n{"_id": "d2", "text": "x"}\n', r"corpus.jsonl:2: blank line"),
    ('{"_id": "d1", "text": "one"}\n["d2"]\n', r"corpus.jsonl:2: expected a JSON object"),
    ('{"text": "one"}\n', r"corpus.jsonl:1: missing field '_id'"),
    ('{"_id": 7, "text": "one"}\n', r"corpus.jsonl:1: field '_id' must be a string"),
    ('{"_id": "d1"}\n', r"corpus.jsonl:1: missing field 'text'"),
    ('{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n', r"corpus.jsonl:2: duplicate document id 'd1' \(first on line 1\)"),
    ('{"_id": "d1", "title": null, "text": "a"}\n', r"corpus.jsonl:1: field 'title' must be a string"),
    ("", r"corpus.jsonl: no documents"),
])
def test_malformed_corpus(tmp_path, corpus, message):
    with pytest.raises(BeirFormatError, match=message):
        read_beir_folder(write_folder(tmp_path / "b", corpus=corpus))


@pytest.mark.parametrize("queries, message", [
    ('{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b", \n', r"queries.jsonl:2: not valid JSON"),
    ('{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n', r"queries.jsonl:2: duplicate query id 'q1'"),
    ('{"_id": "q1", "text": "a", "metadata": 3}\n', r"queries.jsonl:1: field 'metadata' must be a JSON object"),
    ('{"_id": "", "text": "a"}\n', r"queries.jsonl:1: empty '_id'"),
])
def test_malformed_queries(tmp_path, queries, message):
    with pytest.raises(BeirFormatError, match=message):
        read_beir_folder(write_folder(tmp_path / "b", queries=queries))


@pytest.mark.parametrize("qrels, message", [
    ("q1\td1\t1\n", r"test.tsv:1: missing header line"),
    ("", r"test.tsv: empty file"),
    ("query-id\tcorpus-id\tscore\n", r"test.tsv: no judgements"),
    ("query-id corpus-id score\nq1\td1\t1\n", r"test.tsv:1: expected the header"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n", r"test.tsv:3: expected 3 tab-separated fields"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t1\t0\n", r"test.tsv:2: expected 3 tab-separated fields"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t1.0\n", r"test.tsv:2: score '1.0' is not an integer"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t1\nq9\td1\t1\n", r"test.tsv:3: query id 'q9' is not in queries.jsonl"),
    ("query-id\tcorpus-id\tscore\nq1\td9\t1\n", r"test.tsv:2: corpus id 'd9' is not in corpus.jsonl"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t0\n", r"test.tsv:3: second judgement"),
])
def test_malformed_qrels(tmp_path, qrels, message):
    with pytest.raises(BeirFormatError, match=message):
        read_beir_folder(write_folder(tmp_path / "b", qrels=qrels))


def test_unjudged_documents_allowed_on_request(tmp_path):
    root = write_folder(tmp_path / "b", qrels="query-id\tcorpus-id\tscore\nq1\td9\t1\n")
    assert read_beir_folder(root, require_docs=False).qrels == {"q1": {"d9": 1}}


def test_other_split(tmp_path):
    root = write_folder(tmp_path / "b")
    (root / "qrels" / "test.tsv").rename(root / "qrels" / "dev.tsv")
    assert read_beir_folder(root, split="dev").qrels == {"q1": {"d1": 1, "d2": -1}}


def test_not_utf8(tmp_path):
    root = write_folder(tmp_path / "b")
    (root / "corpus.jsonl").write_bytes(b'{"_id": "d1", "text": "\xff"}\n')
    with pytest.raises(BeirFormatError, match=r"corpus.jsonl:\d+: not UTF-8"):
        read_beir_folder(root)
