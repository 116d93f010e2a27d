"""NegConstraint's readers on small zips in the release's format, and a damaged release in the mirror."""

import json
import zipfile

import ir_datasets
import pytest
from ir_datasets.util.download import LocalDownload

import ir_datasets_ext
from ir_datasets_ext.datasets import negconstraint
from ir_datasets_ext.download import ChecksumError
from ir_datasets_ext.util import FormatError

CORPUS = [{"_id": "10000", "text": "Aaron was the brother of Moses."},
          {"_id": "10001", "text": "Aalborg is a city in Denmark."},
          {"_id": "10002", "text": "The trial of Tom Robinson is central to the novel."}]
QUERIES = [{"_id": "0", "text": "Aaron's profile, but don't mention Moses."},
           {"_id": "1", "text": "Provide an introduction to Aalborg without Denmark."},
           {"_id": "2", "text": "Examine justice in To Kill a Mockingbird, excluding the trial of Tom Robinson."},
           {"_id": "3", "text": "An unjudged query, not including anything."}]
QRELS = "query-id\tcorpus-id\tscore\r\n0\t10000\t1\r\n1\t10001\t1\r\n2\t10002\t1\r\n"


def _jsonl(rows) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def write_release(path, corpus=None, queries=None, qrels=QRELS):
    """A zip laid out as NegConstraint.zip: ``NegConstraint/`` with the three files, stored uncompressed."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("NegConstraint/", "")
        archive.writestr(negconstraint.CORPUS, corpus if corpus is not None else _jsonl(CORPUS))
        archive.writestr(negconstraint.QUERIES, queries if queries is not None else _jsonl(QUERIES))
        archive.writestr(negconstraint.QRELS, qrels)
    return path


def _release(tmp_path, **files):
    return negconstraint.open_release(LocalDownload(write_release(tmp_path / "NegConstraint.zip", **files), mkdir=False))


def test_records_of_a_small_release(tmp_path):
    docs, queries, qrels = _release(tmp_path)
    assert list(docs.docs_iter()) == [negconstraint.NegConstraintDoc(r["_id"], r["text"]) for r in CORPUS]
    assert [(q.query_id, q.constraint) for q in queries.queries_iter()] == [
        ("0", "do-not-mention"), ("1", "without"), ("2", "excluding"), ("3", "other")]
    assert all(q.query == q.text == q.default_text() for q in queries.queries_iter())
    assert [(r.query_id, r.doc_id, r.relevance) for r in qrels.qrels_iter()] == [
        ("0", "10000", 1), ("1", "10001", 1), ("2", "10002", 1)]  # CRLF lines, header skipped


@pytest.mark.parametrize("text, kind", [
    ("Examine X, excluding Y.", "excluding"),
    ("What drove it (Exclude details of Z)?", "excluding"),
    ("Introduce A without B.", "without"),
    ("Provide A, but do not mention B", "do-not-mention"),
    ("Analyze A, but do not refer to B.", "do-not-mention"),
    ("List A, but avoid mentioning B.", "do-not-mention"),
    ("Discuss A, avoiding any mention of B.", "do-not-mention"),
    ("Discuss A (excluding B), without C.", "excluding"),  # the first kind of CONSTRAINT_CUES that matches
    ("Provide a non Islamic summary about Avicenna", "other"),
    ("Introduce Alexis Carrel, but not including the Nobel Prize", "other"),
])
def test_constraint_kind(text, kind):
    assert negconstraint.constraint_kind(text) == kind


def test_corpus_line_that_is_not_json_names_file_and_line(tmp_path):
    docs, _, qrels = _release(tmp_path, corpus=_jsonl(CORPUS[:1]) + '{"_id": "10001", "text": \n' + _jsonl(CORPUS[2:]))
    with pytest.raises(FormatError, match=r"^NegConstraint/corpus\.jsonl:2: "):
        list(docs.docs_iter())
    with pytest.raises(FormatError, match=r"^NegConstraint/corpus\.jsonl:2: not a JSON object"):
        list(qrels.qrels_iter())


def test_corpus_line_without_its_text_is_refused(tmp_path):
    docs, _, _ = _release(tmp_path, corpus=_jsonl([{"_id": "10000"}]))
    with pytest.raises(FormatError, match=r"^NegConstraint/corpus\.jsonl:1: missing field 'text'"):
        list(docs.docs_iter())


def test_qrels_row_naming_an_unknown_passage(tmp_path):
    _, _, qrels = _release(tmp_path, qrels=QRELS + "3\t19999\t1\r\n")
    with pytest.raises(FormatError, match=r"^NegConstraint/test\.tsv:5: passage '19999' is not in "
                                          r"NegConstraint/corpus\.jsonl$"):
        list(qrels.qrels_iter())


def test_qrels_row_naming_an_unknown_query(tmp_path):
    _, _, qrels = _release(tmp_path, qrels=QRELS + "9\t10000\t1\r\n")
    with pytest.raises(FormatError, match=r"^NegConstraint/test\.tsv:5: query '9' is not in NegConstraint/queries"):
        list(qrels.qrels_iter())


@pytest.mark.parametrize("qrels, message", [
    ("qid\tdocid\trel\r\n0\t10000\t1\r\n", r"NegConstraint/test\.tsv:1: expected the header"),
    ("query-id\tcorpus-id\tscore\r\n0\t10000\r\n", r"NegConstraint/test\.tsv:2: expected query-id, corpus-id and an "
                                                   r"integer score"),
    ("query-id\tcorpus-id\tscore\r\n0\t10000\tone\r\n", r"NegConstraint/test\.tsv:2: expected query-id"),
])
def test_malformed_qrels(tmp_path, qrels, message):
    _, _, handler = _release(tmp_path, qrels=qrels)
    with pytest.raises(FormatError, match=message):
        list(handler.qrels_iter())


def test_query_line_that_is_not_json(tmp_path):
    _, queries, _ = _release(tmp_path, queries=_jsonl(QUERIES[:2]) + "not json\n")
    with pytest.raises(FormatError, match=r"^NegConstraint/queries\.jsonl:3: "):
        list(queries.queries_iter())


def _damaged_mirror(mirror, content: bytes):
    (mirror / "negconstraint").mkdir()
    path = mirror / "negconstraint" / "NegConstraint.zip"
    path.write_bytes(content)
    return path


def test_truncated_zip_in_the_mirror_is_refused_and_nothing_is_cached(mirror, isolated_ir_datasets_home, tmp_path):
    path = _damaged_mirror(mirror, write_release(tmp_path / "small.zip").read_bytes())
    with pytest.raises(ChecksumError, match=rf"^{path}: \d[\d,]* bytes, expected 1,063,203 for "
                                            r"negconstraint/NegConstraint\.zip \(truncated or a different version\?\)$"):
        next(ir_datasets.load("negconstraint").docs_iter())
    assert not (isolated_ir_datasets_home / "negconstraint").exists() or not any(
        (isolated_ir_datasets_home / "negconstraint").iterdir()), "nothing may be left in the cache"


def test_altered_zip_of_the_right_size_is_refused(mirror, isolated_ir_datasets_home):
    path = _damaged_mirror(mirror, b"\0" * 1_063_203)
    with pytest.raises(ChecksumError, match=rf"^{path}: md5 [0-9a-f]{{32}}, expected 6d8306ff5fe32d9a9a964debdef71de4"):
        next(ir_datasets.load("negconstraint/all-queries").queries_iter())
    assert not (isolated_ir_datasets_home / "negconstraint").exists() or not any(
        (isolated_ir_datasets_home / "negconstraint").iterdir()), "nothing may be left in the cache"


def test_the_command_line_says_it_in_one_line(mirror, tmp_path, main_cli):
    path = _damaged_mirror(mirror, b"PK")
    result = main_cli("topics", "negconstraint", "--output", tmp_path / "topics.tsv")
    assert result.returncode != 0 and not (tmp_path / "topics.tsv").exists()
    assert result.stderr.strip().count("\n") == 0 and str(path) in result.stderr
    assert "2 bytes, expected 1,063,203" in result.stderr and "Traceback" not in result.stderr


def test_registered_ids_and_pinned_source():
    spec = ir_datasets_ext.benchmark_of("negconstraint/excluding")
    assert spec is negconstraint.SPEC and spec.breakdown.subsets == negconstraint.CONSTRAINTS
    for dataset_id in ("negconstraint", "negconstraint/all-queries", *(f"negconstraint/{k}" for k in spec.breakdown.subsets)):
        assert dataset_id in ir_datasets.registry
    release = negconstraint._RELEASE
    assert (release.size, release.sha256) == (
        1_063_203, "0b1c8560b5cbba5b053ad1cc4c86e7d66e073d2b4079ff3a94b2697047492925")  # ../shared/data/negconstraint/SOURCES.md
    assert negconstraint.REVISION in release.url and release.url.endswith("/NegConstraint.zip")
