import json
import re

import dataset_fixtures as fx
import ir_datasets
import pytest
from dataset_checks import assert_trust_on_first_use, qrels_dict

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext.datasets import excluir
from ir_datasets_ext.util import FormatError


def test_counts_ids_and_labels(mirror):
    fx.write_excluir(mirror)
    dataset = ir_datasets.load("excluir/test")
    docs = list(dataset.docs_iter())
    assert [d.doc_id for d in docs] == ["0", "1", "2", "3", "4", "5"]
    assert docs[2].text == fx.EXCLUIR_CORPUS[2]
    queries = list(dataset.queries_iter())
    assert [q.query_id for q in queries] == ["0", "1", "2"]
    assert queries[1].text == "A German city other than Munich"
    assert queries[1].default_text() == queries[1].text
    assert (queries[1].positive_doc_id, queries[1].negative_doc_id) == ("2", "3")
    # corpus_sub_index = [negative, positive]: positive 1, negative -1
    assert qrels_dict(dataset) == {"0": {"1": 1, "0": -1}, "1": {"2": 1, "3": -1}, "2": {"5": 1, "4": -1}}
    assert set(dataset.qrels_defs()) == {1, -1}
    assert dataset.docs_lang() == "en"


def test_docstore_and_mirror_path(mirror):
    fx.write_excluir(mirror)
    store = ir_datasets.load("excluir/test").docs_store()
    assert store.get("4").text == "Rome is the capital of Italy."
    assert excluir._CORPUS.mirror_path() == mirror / "excluir" / "corpus.json"
    assert excluir._TEST.release.mirror_path() == mirror / "excluir" / "test_manual_final.json"
    assert ir_datasets.load("excluir").docs_count() == 6


def test_malformed_element_names_file_and_line(mirror):
    folder = fx.write_excluir(mirror)
    text = json.dumps(fx.EXCLUIR_QUERIES, indent=2)
    broken = text.replace('"RQ_rewrite": "A German', '"RQ_rewrite": A German', 1)
    (folder / "test_manual_final.json").write_text(broken)
    start = broken.rindex("{", 0, broken.index("A German"))  # the malformed object starts here
    line = broken[:start].count("\n") + 1
    with pytest.raises(FormatError, match=rf"^{re.escape(str(folder))}/test_manual_final\.json:{line}: not valid JSON .*array element 1"):
        list(ir_datasets.load("excluir/test").queries_iter())


def test_missing_field_and_wrong_type(mirror):
    rows = [dict(q) for q in fx.EXCLUIR_QUERIES]
    del rows[2]["RQ_rewrite"]
    fx.write_excluir(mirror, queries=rows)
    with pytest.raises(FormatError, match=r"test_manual_final\.json:\d+ \(query 2\): missing field 'RQ_rewrite'"):
        list(ir_datasets.load("excluir/test").qrels_iter())


def test_bad_corpus_sub_index(mirror):
    rows = [dict(q) for q in fx.EXCLUIR_QUERIES]
    rows[0]["corpus_sub_index"] = [1]
    fx.write_excluir(mirror, queries=rows)
    with pytest.raises(FormatError, match=r"query 0\): corpus_sub_index has 1 entries"):
        list(ir_datasets.load("excluir/test").queries_iter())


def test_corpus_element_not_a_string(mirror):
    fx.write_excluir(mirror, corpus=["a", 5, "c"])
    with pytest.raises(FormatError, match=r"corpus\.json:\d+ \(document 1\): expected a string"):
        list(ir_datasets.load("excluir").docs_iter())


def test_trust_on_first_use(mirror):
    fx.write_excluir(mirror)
    assert_trust_on_first_use(mirror / "excluir" / "corpus.json", excluir._CORPUS.cache_path,
                              lambda: list(ir_datasets.load("excluir").docs_iter()))
