"""ComLQ from the real release in ../shared/data, served through the offline mirror."""

import hashlib

import ir_datasets
import pytest

import ir_datasets_ext
from ir_datasets_ext.datasets import comlq
from ir_datasets_ext.download import ChecksumError, DownloadError

pytestmark = pytest.mark.realdata

STRUCTURE_COUNTS = {  # queries, qrels per structure, counted from the release
    "1p": (176, 176), "2p": (227, 330), "3p": (189, 341), "2i": (207, 303), "3i": (267, 480), "pi": (168, 245),
    "ip": (240, 373), "2u": (258, 376), "up": (193, 300), "2in": (278, 412), "3in": (271, 458),
    "inp": (173, 307), "pin": (140, 263), "pni": (122, 237),
}


def test_counts_and_first_last_records(comlq_mirror):
    dataset = ir_datasets.load("comlq")
    queries = list(dataset.queries_iter())
    docs = list(dataset.docs_iter())
    qrels = list(dataset.qrels_iter())
    assert (len(queries), len(docs), len(qrels)) == (2909, 11251, 4601)
    assert queries[0] == comlq.ComLQQuery("0", "Who is the brother of Moses?", "Aaron", "1p", "1p", 1, False, "Who is the brother of Moses?")
    assert queries[-1] == comlq.ComLQQuery(
        "3197", "Which kings invaded northward into Egypt but never gained permanent control over it?", "Piye",
        "2in", "2in", 1, True, "Which kings invaded northward into Egypt but never gained permanent control over it?")
    assert docs[0].doc_id == "10000" and docs[0].text.startswith("Aaron Aaron ( or ;") and docs[0].origin == "evidence"
    assert docs[-1].doc_id == "21250" and docs[-1].origin == "generated"
    assert docs[-1].text.startswith("In the realm of ancient historical texts")
    assert qrels[0] == ir_datasets.formats.TrecQrel("0", "10000", 2, "0")
    assert qrels[-1] == ir_datasets.formats.TrecQrel("3197", "13756", 2, "0")


def test_grades_origins_and_evidence_counts(comlq_mirror):
    dataset = ir_datasets.load("comlq")
    grades = {}
    judged = {}
    query_grades = {}
    for qrel in dataset.qrels_iter():
        grades[qrel.relevance] = grades.get(qrel.relevance, 0) + 1
        judged[qrel.query_id] = judged.get(qrel.query_id, 0) + 1
        query_grades.setdefault(qrel.query_id, set()).add(qrel.relevance)
    assert grades == {2: 1458, 1: 3143}
    assert set(dataset.qrels_defs()) == {1, 2}
    origins = {}
    for doc in dataset.docs_iter():
        origins[doc.origin] = origins.get(doc.origin, 0) + 1
    assert origins == {"evidence": 3975, "distractor": 4000, "generated": 3276}
    for query in dataset.queries_iter():
        assert query.num_evidence == judged[query.query_id]
        if "_" in query.type:
            assert int(query.type.split("_")[1]) == query.num_evidence
        assert query.structure == query.type.split("_")[0]
        # grade 2 exactly when a single passage holds the evidence, 1 for each passage when it is split over 2 or 3
        assert query_grades[query.query_id] == ({2} if query.num_evidence == 1 else {1}), query.query_id
    evidence = {}
    for query in dataset.queries_iter():
        evidence[query.num_evidence] = evidence.get(query.num_evidence, 0) + 1
    # counted from the release: 1,458 single-passage queries, one grade-2 judgement each (the 1,458 above);
    # 1,210 x 2 + 241 x 3 = 3,143 grade-1 judgements
    assert evidence == {1: 1458, 2: 1210, 3: 241}


@pytest.mark.parametrize("structure", comlq.STRUCTURES)
def test_structure_subsets(comlq_mirror, structure):
    dataset = ir_datasets.load(f"comlq/{structure}")
    queries = list(dataset.queries_iter())
    assert {q.structure for q in queries} == {structure}
    assert (len(queries), sum(1 for _ in dataset.qrels_iter())) == STRUCTURE_COUNTS[structure]
    assert all(q.has_negation == (structure in comlq.NEGATION_STRUCTURES) for q in queries)


def test_negation_subset(comlq_mirror):
    dataset = ir_datasets.load("comlq/negation")
    queries = list(dataset.queries_iter())
    assert len(queries) == 984 and sum(1 for _ in dataset.qrels_iter()) == 1677
    assert {q.structure for q in queries} == set(comlq.NEGATION_STRUCTURES)
    assert all(q.has_negation for q in queries)


def test_docstore_lookup(comlq_mirror):
    store = ir_datasets.load("comlq/2in").docs_store()
    assert store.get("17975").text.startswith("Moses, a central figure in biblical history")
    assert store.get("13975").origin == "distractor"


def test_documentation(comlq_mirror):
    doc = ir_datasets.load("comlq").documentation()
    assert doc["pretty_name"].startswith("ComLQ")
    assert "Xu2026ComLQ" in doc["bibtex"]
    assert "2in" in ir_datasets.load("comlq/2in").documentation()["desc"]


def _mirror_with(tmp_path, monkeypatch, content: bytes):
    root = tmp_path / "mirror"
    (root / "comlq").mkdir(parents=True)
    (root / "comlq" / "dataset.zip").write_bytes(content)
    monkeypatch.setenv(ir_datasets_ext.MIRROR_ENV, str(root))
    return root / "comlq" / "dataset.zip"


def test_truncated_mirror_file_is_rejected_and_a_retry_works(shared_data, tmp_path, monkeypatch,
                                                             isolated_ir_datasets_home):
    real = (shared_data / "comlq" / "dataset.zip").read_bytes()
    mirror_file = _mirror_with(tmp_path, monkeypatch, real[: len(real) // 2])
    with pytest.raises(ChecksumError, match=r"dataset\.zip: 1,690,377 bytes, expected 3,380,755"):
        next(ir_datasets.load("comlq").queries_iter())
    cache = isolated_ir_datasets_home / "comlq"
    assert not cache.exists() or not any(cache.iterdir()), "nothing may be left in the cache"
    mirror_file.write_bytes(real)
    assert sum(1 for _ in ir_datasets.load("comlq").queries_iter()) == 2909
    assert hashlib.md5(mirror_file.read_bytes()).hexdigest() == "cefc6d391dc416546fdddb0f217c4c7c"
    assert not (cache / "dataset.zip").exists()  # the verified mirror file is read in place


def test_altered_mirror_file_is_rejected(shared_data, tmp_path, monkeypatch, isolated_ir_datasets_home):
    real = bytearray((shared_data / "comlq" / "dataset.zip").read_bytes())
    real[1000] ^= 0xFF
    _mirror_with(tmp_path, monkeypatch, bytes(real))
    with pytest.raises(ChecksumError, match="md5 .* expected cefc6d391dc416546fdddb0f217c4c7c"):
        next(ir_datasets.load("comlq").docs_iter())
    cache = isolated_ir_datasets_home / "comlq"
    assert not cache.exists() or not any(cache.iterdir()), "nothing may be left in the cache"


def test_missing_mirror_file_names_the_expected_path(tmp_path, monkeypatch):
    monkeypatch.setenv(ir_datasets_ext.MIRROR_ENV, str(tmp_path))
    with pytest.raises(DownloadError, match=r"comlq/dataset\.zip: not found"):
        next(ir_datasets.load("comlq").queries_iter())


def test_mirror_file_is_read_in_place(comlq_mirror, monkeypatch, isolated_ir_datasets_home):
    assert sum(1 for _ in ir_datasets.load("comlq").qrels_iter()) == 4601
    assert not (isolated_ir_datasets_home / "comlq" / "dataset.zip").exists()  # no copy: the mirror file is used
    assert sum(1 for _ in ir_datasets.load("comlq").qrels_iter()) == 4601  # verified once, stamped
    # with no copy in the cache the mirror must stay there: a moved mirror is named in the error
    monkeypatch.setenv(ir_datasets_ext.MIRROR_ENV, "/nonexistent-mirror")
    with pytest.raises(DownloadError, match=r"/nonexistent-mirror/comlq/dataset\.zip: not found"):
        sum(1 for _ in ir_datasets.load("comlq").qrels_iter())


def test_recorded_counts_match_the_release(comlq_mirror):
    """etc/metadata.json (what *_count() answers before a download) agrees with the files."""
    for dataset_id in ["comlq", "comlq/negation", *(f"comlq/{s}" for s in comlq.STRUCTURES)]:
        dataset = ir_datasets.load(dataset_id)
        assert dataset.queries_count() == sum(1 for _ in dataset.queries_iter())
        assert dataset.qrels_count() == sum(1 for _ in dataset.qrels_iter())
    assert ir_datasets.load("comlq").docs_count() == sum(1 for _ in ir_datasets.load("comlq").docs_iter())
