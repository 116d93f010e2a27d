"""Export to BEIR's layout, read back by BEIR's own GenericDataLoader with the same counts and labels."""

from __future__ import annotations

import json

import dataset_fixtures as fx
import pytest

from negplugins import datasets
from negplugins.beir import read_beir_folder
from negplugins.beir.export import export_beir
from negplugins.errors import UserError

GenericDataLoader = pytest.importorskip("beir.datasets.data_loader").GenericDataLoader


def assert_round_trip(dataset_id, folder):
    """BEIR's loader gives the dataset's documents, judged queries and every qrels label (-1 included)."""
    dataset = datasets.load(dataset_id)
    corpus, queries, qrels = GenericDataLoader(data_folder=str(folder)).load("test")
    docs = {doc.doc_id: doc for doc in dataset.docs_iter()}
    expected_qrels = datasets.qrels_dict(dataset)
    assert len(corpus) == len(docs)
    assert corpus.keys() == docs.keys()
    for doc_id, doc in docs.items():
        assert corpus[doc_id]["text"] == doc.text
        assert corpus[doc_id]["title"] == (getattr(doc, "title", "") or "")
    assert qrels == expected_qrels
    all_queries = {q.query_id: q for q in dataset.queries_iter()}
    assert queries == {qid: all_queries[qid].default_text() for qid in expected_qrels}
    strict = read_beir_folder(folder, require_docs=False)
    assert strict.qrels == expected_qrels
    assert strict.queries == {qid: q.default_text() for qid, q in all_queries.items()}
    return corpus, queries, qrels, strict


def test_demo_round_trip_keeps_negatives(tmp_path):
    folder = tmp_path / "demo"
    info = export_beir("negplugins-demo", folder)
    _, _, qrels, strict = assert_round_trip("negplugins-demo", folder)
    negatives = [(q, d) for q, docs in qrels.items() for d, label in docs.items() if label == -1]
    assert negatives and info["qrels_label_-1"] == len(negatives)
    assert info["docs"] == 36 and info["qrels"] == 52 and info["queries"] == info["judged_queries"]
    assert {m["kind"] for m in strict.query_metadata.values()} <= {"exclusion", "negation-pair", "and", "or", "not"}
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore"
    assert "q01\td02\t-1" in lines
    first = json.loads((folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first.keys() == {"_id", "title", "text"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]  # no temporary folder left behind


@pytest.mark.parametrize("dataset_id, write", [
    ("excluir/test", fx.write_excluir),
    ("nevir/test", fx.write_nevir),
    ("boolquestions/nq", fx.write_boolquestions),
    ("boolquestions/msmarco/not", fx.write_boolquestions),
])
def test_fixture_datasets_round_trip(tmp_path, mirror, dataset_id, write):
    write(mirror)
    folder = tmp_path / "out"
    info = export_beir(dataset_id, folder)
    _, _, qrels, strict = assert_round_trip(dataset_id, folder)
    assert info["qrels_label_-1"] == sum(label == -1 for docs in qrels.values() for label in docs.values()) > 0
    if dataset_id.startswith("boolquestions"):
        assert {m["question_type"] for m in strict.query_metadata.values()} <= {"and", "or", "not"}


def test_titles_are_kept(tmp_path, mirror):
    fx.write_boolquestions(mirror)
    export_beir("boolquestions/nq", tmp_path / "nq")
    corpus, _, _ = GenericDataLoader(data_folder=str(tmp_path / "nq")).load("test")
    assert corpus["101"] == {"title": "Title 101", "text": "nq passage 101"}


def test_existing_folder_is_not_replaced(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(UserError, match="not empty"):
        export_beir("negplugins-demo", folder)
    with pytest.raises(UserError, match="more than a BEIR export"):
        export_beir("negplugins-demo", folder, overwrite=True)
    assert (folder / "notes.txt").read_text() == "keep me"


def test_overwrite_replaces_an_earlier_export(tmp_path):
    folder = tmp_path / "demo"
    export_beir("negplugins-demo", folder)
    (folder / "corpus.jsonl").write_text("garbage\n")
    with pytest.raises(UserError, match="not empty"):
        export_beir("negplugins-demo", folder)
    export_beir("negplugins-demo", folder, overwrite=True)
    assert read_beir_folder(folder).counts()["docs"] == 36


def test_failure_leaves_nothing(tmp_path, monkeypatch):
    from negplugins.beir import export

    def broken(query):
        raise UserError("boom")

    monkeypatch.setattr(export, "_query_line", broken)
    with pytest.raises(UserError, match="boom"):
        export_beir("negplugins-demo", tmp_path / "demo")
    assert list(tmp_path.iterdir()) == []


def test_unknown_dataset(tmp_path):
    with pytest.raises(UserError, match="did you mean"):
        export_beir("negplugins-dem", tmp_path / "x")


def test_cli(tmp_path, cli, capsys):
    assert cli(["export", "beir", "negplugins-demo", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "36 documents" in out and "-1: " in out
    assert cli(["export", "beir", "negplugins-demo", str(tmp_path / "demo")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert cli(["export", "beir", "negplugins-demo", str(tmp_path / "demo"), "--overwrite"]) == 0
    assert cli(["export", "beir", "nope", str(tmp_path / "nope")]) == 2
    assert "unknown dataset" in capsys.readouterr().err


@pytest.mark.realdata
@pytest.mark.parametrize("dataset_id", ["comlq", "comlq/2in"])
def test_comlq_round_trip(tmp_path, comlq_mirror, dataset_id):
    folder = tmp_path / "comlq"
    info = export_beir(dataset_id, folder)
    corpus, queries, qrels, strict = assert_round_trip(dataset_id, folder)
    assert len(corpus) == 11251
    if dataset_id == "comlq":
        assert info["queries"] == 2909 and info["qrels"] == 4601
    meta = strict.query_metadata["0"] if "0" in strict.query_metadata else next(iter(strict.query_metadata.values()))
    assert meta.keys() == {"answer", "type", "structure", "num_evidence", "has_negation"}
    assert isinstance(meta["num_evidence"], int) and isinstance(meta["has_negation"], bool)
    if dataset_id == "comlq/2in":
        assert all(m["structure"] == "2in" and m["has_negation"] for m in strict.query_metadata.values())
