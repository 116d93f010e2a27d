import dataset_fixtures as fx
import ir_datasets
import pytest
from dataset_checks import assert_trust_on_first_use, qrels_dict

import ir_datasets_ext  # noqa: F401
from ir_datasets_ext.datasets import dureader_retrieval as du
from ir_datasets_ext.util import FormatError


@pytest.mark.parametrize("top_folder", ["dureader-retrieval-baseline-dataset", ""])
def test_full_collection_and_dev(mirror, top_folder):
    fx.write_du_tarball(mirror, top_folder=top_folder)
    dataset = ir_datasets.load("dureader-retrieval/dev")
    docs = list(dataset.docs_iter())
    texts = [text for part in fx.DU_PARTS for text in part]
    assert [(d.doc_id, d.text) for d in docs] == list(zip(fx.DU_IDS, texts))
    queries = list(dataset.queries_iter())
    assert [q.query_id for q in queries] == ["dev_q1", "dev_q2"]
    assert queries[0].default_text() == "中国的首都是哪里"
    assert qrels_dict(dataset) == {"dev_q1": {"pid000": 1, "pid004": 1}, "dev_q2": {"pid005": 1}}
    assert dataset.docs_store().get("pid003").text == "长城是中国古代的军事防御工程。"
    assert dataset.docs_lang() == "zh" and dataset.queries_lang() == "zh"
    # only the needed members were extracted
    extracted = du.BaselineExtract(du._TARBALL).directory()
    assert sorted(p.relative_to(extracted).as_posix() for p in extracted.rglob("*") if p.is_file()) == sorted(
        list(du.PARTS) + ["passage2id.map.json", "dev/dev.json"])


def test_map_at_top_level_and_out_of_order(mirror):
    id_map = {str(n): pid for n, pid in reversed(list(enumerate(fx.DU_IDS)))}
    fx.write_du_tarball(mirror, fx.du_members(id_map=id_map, map_in_collection=False))
    assert [d.doc_id for d in ir_datasets.load("dureader-retrieval").docs_iter()] == fx.DU_IDS


def test_mirror_path(mirror):
    assert du._TARBALL.mirror_path() == mirror / "dureader_retrieval" / "dureader-retrieval-baseline-dataset.tar.gz"
    assert du.CMTEB_FILES["qrels"].mirror_path() == (
        mirror / "dureader_retrieval" / "C-MTEB/DuRetrieval-qrels/data/dev-00000-of-00001-d3c385852a7c0c9d.parquet")


def test_missing_member_is_named(mirror):
    members = fx.du_members()
    del members["passage-collection/part-02"]
    fx.write_du_tarball(mirror, members)
    with pytest.raises(FormatError, match=r"not found.*passage-collection/part-02"):
        list(ir_datasets.load("dureader-retrieval/dev").queries_iter())
    assert not du.BaselineExtract(du._TARBALL).directory().exists()
    assert [p.name for p in du.BaselineExtract(du._TARBALL).directory().parent.glob("baseline*")] == []


def test_passage_line_without_four_fields(mirror):
    parts = fx.du_part_lines()
    parts[2] = parts[2] + "-\tno text field\n"
    id_map = {str(n): f"pid{n:03d}" for n in range(7)}
    fx.write_du_tarball(mirror, fx.du_members(parts_text=parts, id_map=id_map))
    with pytest.raises(FormatError, match=r"^passage-collection/part-02:3: expected 4 TAB-separated fields"):
        list(ir_datasets.load("dureader-retrieval").docs_iter())


def test_map_without_line_and_malformed_dev(mirror, monkeypatch, tmp_path_factory):
    rows = [dict(r) for r in fx.DU_DEV]
    del rows[1]["question"]
    path = fx.write_du_tarball(mirror, fx.du_members(dev_rows=rows))  # refused before its hash is recorded
    with pytest.raises(FormatError, match=rf"^{path}:dureader-retrieval-baseline-dataset/dev/dev\.json:2: missing "
                                          r"field 'question'"):
        list(ir_datasets.load("dureader-retrieval/dev").queries_iter())
    id_map = {str(n): pid for n, pid in enumerate(fx.DU_IDS) if n != 3}
    fx.write_du_tarball(mirror, fx.du_members(id_map=id_map))
    with pytest.raises(FormatError, match=r"passage2id\.map\.json: no passage id for line 3 \(passage-collection/part-02:1\)"):
        list(ir_datasets.load("dureader-retrieval").docs_iter())


def test_trust_on_first_use(mirror):
    path = fx.write_du_tarball(mirror)
    assert_trust_on_first_use(path, du._TARBALL.cache_path, du._TARBALL.path)


# -- dev-100k (C-MTEB parquet) ----------------------------------------------------------------------

@pytest.fixture
def unpinned_cmteb(monkeypatch):
    """The fixture parquet files cannot match the published checksums: verify them by trust on first use."""
    for download in du.CMTEB_FILES.values():
        monkeypatch.setattr(download, "sha256", None)
        monkeypatch.setattr(download, "size", None)


def test_dev_100k(mirror, unpinned_cmteb):
    fx.write_cmteb(mirror)
    dataset = ir_datasets.load("dureader-retrieval/dev-100k")
    assert [d.doc_id for d in dataset.docs_iter()] == ["c1", "c2", "c3", "c4"]
    queries = list(dataset.queries_iter())
    assert [(q.query_id, q.default_text()) for q in queries] == [("q1", "首都是哪里"), ("q2", "黄河有多长")]
    assert qrels_dict(dataset) == {"q1": {"c1": 1}, "q2": {"c3": 1, "c4": 1}}
    assert dataset.docs_store().get("c3").text == "黄河很长。"
    assert dataset.docs_lang() == "zh" and dataset.queries_lang() == "zh"


def test_dev_100k_wrong_columns(mirror, unpinned_cmteb):
    fx.write_cmteb(mirror, qrels={"query-id": ["q1"], "corpus-id": ["c1"], "score": [1]})
    with pytest.raises(FormatError, match=r"DuRetrieval-qrels/data/dev-.*\.parquet: missing column\(s\) qid, pid; "
                                          r"expected qid, pid, score, found query-id, corpus-id, score"):
        list(ir_datasets.load("dureader-retrieval/dev-100k").qrels_iter())


def test_dev_100k_pinned_checksum_rejects_other_file(mirror):
    fx.write_cmteb(mirror)
    from ir_datasets_ext.download import ChecksumError

    with pytest.raises(ChecksumError, match="expected 118,461"):
        list(ir_datasets.load("dureader-retrieval/dev-100k").queries_iter())
    assert not du.CMTEB_FILES["queries"].cache_path.exists()


def test_dev_100k_trust_on_first_use(mirror, unpinned_cmteb):
    paths = fx.write_cmteb(mirror)
    assert_trust_on_first_use(paths["queries"], du.CMTEB_FILES["queries"].cache_path,
                              lambda: list(ir_datasets.load("dureader-retrieval/dev-100k").queries_iter()))
