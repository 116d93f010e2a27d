"""Registration of the four benchmarks: ids, documentation, default_text, nothing fetched eagerly."""

import io
import json
import re
from importlib import resources

import dataset_fixtures as fx
import ir_datasets
import pytest

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext import util
from ir_datasets_ext.util import FormatError, iter_json_array, iter_json_object_items

QUERY_IDS = [
    "excluir/test", "nevir/train", "nevir/dev", "nevir/test",
    *[f"boolquestions/{c}{s}" for c in ("msmarco", "nq") for s in ("", "/and", "/or", "/not")],
    "dureader-retrieval/dev", "dureader-retrieval/dev-100k",
]


def _bibliography() -> dict[str, str]:
    """BibTeX key -> entry, from the family entry (``_``) of each documentation file of the suite."""
    entries = {}
    for path in resources.files("ir_datasets_ext").joinpath("docs").iterdir():
        family = util.Documentation(f"docs/{path.name}").get_key("_") or {}
        if "bibtex" in family:
            entries[re.match(r"@\w+\{([^,\s]+),", family["bibtex"]).group(1)] = family["bibtex"]
    return entries


def test_the_bibliography_is_read():
    assert set(_bibliography()) == {"Xu2026ComLQ", "Zhang2024ExcluIR", "Weller2024NevIR", "Zhang2024BoolQuestions",
                                    "Qiu2022DuReaderRetrieval", "Xu2025NSIR"}


@pytest.mark.parametrize("dataset_id", QUERY_IDS + ["excluir", "dureader-retrieval", "negconstraint",
                                                   "negconstraint/excluding", "negconstraint/all-queries"])
def test_registered_with_documentation_and_nothing_fetched(dataset_id, isolated_ir_datasets_home):
    dataset = ir_datasets.load(dataset_id)
    documentation = dataset.documentation()
    assert isinstance(documentation.get("desc"), str) and documentation["desc"].strip()
    # cited either by its own BibTeX entry or by keys that each resolve to an entry of the suite's documentation
    cited = documentation.get("bibtex_ids") or []
    assert cited and set(cited) <= set(_bibliography())
    if "bibtex" in documentation:
        assert all(_bibliography()[key] == documentation["bibtex"] for key in cited)
    assert dataset.has_docs()
    assert list(isolated_ir_datasets_home.iterdir()) == []


@pytest.mark.parametrize("family", ["nevir", "boolquestions"])
def test_every_family_has_a_bare_root(family, isolated_ir_datasets_home):
    """As ir_datasets' ``beir``: a family of several corpora is an entry with documentation only, listing its ids."""
    from negplugins import datasets
    from negplugins.errors import UserError

    assert {spec.name for spec in ir_datasets_ext.benchmarks()} <= set(ir_datasets.registry)
    root = ir_datasets.load(family)
    assert not (root.has_docs() or root.has_queries() or root.has_qrels())
    assert root.documentation()["pretty_name"] and f"{family}/" in root.documentation()["desc"]
    with pytest.raises(UserError, match=rf"^{family}: the dataset has no queries; use {family}/"):
        datasets.query_texts(root)
    with pytest.raises(UserError, match=rf"^{family}: the dataset has no documents; use {family}/"):
        datasets.docs_root_id(family)
    assert list(isolated_ir_datasets_home.iterdir()) == []


def test_stock_ir_datasets_loads_the_roots():
    """Through the import hook alone (no import of the suite), as a user of ir_datasets would."""
    import subprocess
    import sys

    code = "import ir_datasets; print([ir_datasets.load(n).documentation()['pretty_name'] for n in ('nevir', 'boolquestions')])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout == "['NevIR (Negation in Neural IR)', 'BoolQuestions']\n"


def test_unknown_ids_are_suggested_without_regard_to_case():
    from negplugins import datasets
    from negplugins.errors import UnknownDatasetError

    with pytest.raises(UnknownDatasetError, match=r"unknown dataset 'ComLQ'; did you mean comlq\?$"):
        datasets.load("ComLQ")
    with pytest.raises(UnknownDatasetError, match=r"did you mean nevir/test\b"):
        datasets.load("NevIR/Test")
    with pytest.raises(UnknownDatasetError, match=r"did you mean excluir/test\b"):
        datasets.load("ExcluIR/tset")


@pytest.mark.parametrize("dataset_id", QUERY_IDS)
def test_queries_have_default_text(dataset_id, mirror, monkeypatch):
    from ir_datasets_ext.datasets import dureader_retrieval

    for download in dureader_retrieval.CMTEB_FILES.values():
        monkeypatch.setattr(download, "sha256", None)
        monkeypatch.setattr(download, "size", None)
    fx.write_excluir(mirror)
    fx.write_nevir(mirror)
    fx.write_boolquestions(mirror)
    fx.write_du_tarball(mirror)
    fx.write_cmteb(mirror)
    dataset = ir_datasets.load(dataset_id)
    queries = list(dataset.queries_iter())
    assert queries and all(isinstance(q.default_text(), str) and q.default_text() for q in queries)
    assert all(isinstance(q.query_id, str) for q in queries)
    assert all(isinstance(q.query_id, str) and isinstance(q.doc_id, str) for q in dataset.qrels_iter())


def test_streaming_json_parsers_across_chunk_boundaries(monkeypatch):
    monkeypatch.setattr(util._JsonScanner.__init__, "__defaults__", (3,))  # 3-character chunks
    data = json.dumps([{"a": i, "text": "é" * i} for i in range(20)] + [1234567, "x"], indent=1).encode()
    items = list(iter_json_array(io.BytesIO(data), "f.json"))
    assert [element for _, _, element in items] == json.loads(data)
    assert items[1][0] == f"f.json:{data.decode()[:data.decode().index('{', 5)].count(chr(10)) + 1}"
    assert list(iter_json_object_items(io.BytesIO(b'{"0": "a", "1" : 7}'), "m.json")) == [("0", "a"), ("1", 7)]
    with pytest.raises(FormatError, match=r"^f\.json:1: expected ',' or '\]'"):
        list(iter_json_array(io.BytesIO(b"[1, 2"), "f.json"))
    with pytest.raises(FormatError, match=r"^m\.json:2: not valid JSON"):
        list(iter_json_object_items(io.BytesIO(b'{"0": "a",\n "1": x}'), "m.json"))


@pytest.mark.parametrize("dataset_id", QUERY_IDS)
def test_topic_files_for_every_dataset_and_subset(dataset_id, mirror, monkeypatch, tmp_path):
    from ir_datasets_ext.datasets import dureader_retrieval
    from negplugins.io.topics import write_topics

    for download in dureader_retrieval.CMTEB_FILES.values():
        monkeypatch.setattr(download, "sha256", None)
        monkeypatch.setattr(download, "size", None)
    fx.write_excluir(mirror)
    fx.write_nevir(mirror)
    fx.write_boolquestions(mirror)
    fx.write_du_tarball(mirror)
    fx.write_cmteb(mirror)
    path, count = write_topics(dataset_id, tmp_path / "topics.tsv")
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    queries = list(ir_datasets.load(dataset_id).queries_iter())
    assert count == len(rows) == len(queries) > 0
    assert [row[0] for row in rows] == [q.query_id for q in queries]
    assert all(len(row) == 2 and row[1] == " ".join(q.default_text().split()) for row, q in zip(rows, queries))
