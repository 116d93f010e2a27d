"""The facts ir_datasets_ext keeps as data files (``etc/``) are read, and checked, by one loader each.

The papers' numbers (``etc/reported/<benchmark>.csv``, :func:`ir_datasets_ext.spec.read_reported`): what a
damaged row makes the loader say. That each number is the paper's is ``tests/test_reported_numbers.py``.

The download locations and checksums (``etc/downloads.json``, :func:`ir_datasets_ext.download.pinned_download`):
every file a dataset module reads is pinned there and every entry there is read; a damaged entry is named.
"""

from __future__ import annotations

import json
import pkgutil

import pytest

from ir_datasets_ext import benchmarks
from ir_datasets_ext.datasets import boolquestions, comlq, dureader_retrieval, excluir, negconstraint, nevir
from ir_datasets_ext.derived import DataOrigin
from ir_datasets_ext.download import DOWNLOADS_FILE, check_downloads, download_entry, pinned_download
from ir_datasets_ext.spec import REPORTED_FOLDER, Reported, parse_reported, read_reported

HEADER = "system,measure,value,dataset,subset,source,note,decimals\n"
ROW = 'BM25,nDCG@10,0.505,comlq,2in,"Table 3, row BM25, column 2in",a note,\n'


def test_a_row_reads_as_the_literal_it_replaces():
    assert parse_reported(HEADER + ROW + 'HyDE,nDCG@10,0.34,comlq,,"Table 3, row HyDE, column total",,3\n', "x.csv") == (
        Reported(system="BM25", measure="nDCG@10", value=0.505, dataset="comlq", subset="2in",
                 source="Table 3, row BM25, column 2in", note="a note"),
        Reported(system="HyDE", measure="nDCG@10", value=0.34, dataset="comlq",
                 source="Table 3, row HyDE, column total", decimals=3))


def test_every_benchmark_with_numbers_reads_its_own_file():
    """Each spec's numbers are its file's (the spec only adds its default decimals), none elsewhere."""
    for spec in benchmarks():
        if not spec.paper.reported:
            continue
        rows = read_reported(spec.name)
        assert [(r.system, r.measure, r.value, r.dataset, r.subset, r.source, r.note) for r in rows] == \
               [(r.system, r.measure, r.value, r.dataset, r.subset, r.source, r.note) for r in spec.paper.reported]
        assert all(r.decimals in (None, s.decimals) for r, s in zip(rows, spec.paper.reported))
    assert sum(len(spec.paper.reported) for spec in benchmarks()) == 667  # the count the literals held


@pytest.mark.parametrize("text, message", [
    ("system,measure,value\n" + ROW, "x.csv:1: the header is 'system,measure,value', expected 'system,measure,"),
    (HEADER + "BM25,nDCG@10,0.505\n", "x.csv:2: 3 cells, expected 8"),
    (HEADER + ROW.replace("BM25,", ",", 1), "x.csv:2: column system is empty"),
    (HEADER + ROW.replace('"Table 3, row BM25, column 2in"', ""), "x.csv:2: column source is empty"),
    (HEADER + ROW.replace("0.505", "50.5%"), "x.csv:2: column value holds '50.5%', expected a number"),
    (HEADER + ROW.replace("0.505", "nan"), "x.csv:2: column value holds 'nan', expected a number"),
    (HEADER + ROW.replace("0.505", "50.5"), "x.csv:2: value 50.5 is not a fraction"),
    (HEADER + ROW.replace("a note,", "a note,1.5"), "x.csv:2: column decimals holds '1.5', expected an integer"),
    (HEADER + ROW.replace("a note,", "a note,-1"), "x.csv:2: decimals -1 is negative"),
    (HEADER + ROW + ROW.replace("0.505", "0.5"), "x.csv:3: BM25 nDCG@10 on comlq 2in is recorded on line 2 already"),
])
def test_a_damaged_row_is_named_with_its_line_and_column(text, message):
    with pytest.raises(ValueError) as error:
        parse_reported(text, "x.csv")
    assert str(error.value).startswith(message)


def test_a_benchmark_without_a_file_is_named():
    with pytest.raises(ValueError, match=rf"ir_datasets_ext/{REPORTED_FOLDER}/nope.csv: not found"):
        read_reported("nope")


def _module_downloads():
    """Every release file and derived copy the dataset modules read: ``{(folder, file): object}``."""
    files = [comlq._RELEASE, negconstraint._RELEASE, excluir._CORPUS, excluir._TEST_RELEASE, excluir.DERIVED_TEST,
             nevir.DERIVED_TEST,
             dureader_retrieval._TARBALL, *dureader_retrieval.CMTEB_FILES.values(),
             *(f.release if hasattr(f, "release") else f for f in nevir._FILES.values()),
             *(f for corpus in boolquestions._FILES.values() for f in corpus.values())]
    return {(f.benchmark, f.path if isinstance(f, DataOrigin) else f.file): f for f in files}


def test_every_download_the_modules_read_is_pinned_in_the_data_file_and_no_other():
    listed = json.loads(pkgutil.get_data("ir_datasets_ext", DOWNLOADS_FILE))
    pinned = {(folder, file) for folder, files in listed.items() for file in files}
    used = _module_downloads()
    assert set(used) == pinned and len(pinned) == 17
    for (folder, file), download in used.items():
        entry = listed[folder][file]
        if isinstance(download, DataOrigin):  # a derived copy: bytes pinned, never trusted on first use
            assert (download.url, download.sha256, download.size, download.replaces, download.source) == \
                   (entry["url"], entry["expected_sha256"], entry["size"], entry["derived_from"], entry["origin"])
        else:
            assert (download.url, download.md5, download.sha256, download.size) == \
                   (entry["url"], entry.get("expected_md5"), entry.get("expected_sha256"), entry.get("size"))
    # the values as the literals had them (comlq's release: github.com/xgl-git/ComLQR-main, its published size)
    assert comlq._RELEASE.sha256 == "b893a9f4bc71dcb0675b8a90915138dbdcf14634968b953f9cab433f8ff00dce"
    assert comlq._RELEASE.size == 3380755 and comlq._RELEASE.md5 == "cefc6d391dc416546fdddb0f217c4c7c"
    assert excluir._CORPUS._source is not None and comlq._RELEASE._source is None  # Drive files through gdrive


def test_release_urls_are_pinned_to_the_specs_data_revision():
    """The spec's ``data_revision`` (MTEB's dataset revision) is the one in its files' URLs."""
    for module in (comlq, nevir, boolquestions):
        spec = module.SPEC
        releases = [d for (folder, _), d in _module_downloads().items()
                    if folder == spec.name and not isinstance(d, DataOrigin)]
        assert releases and all(f"/{spec.data.revision}/" in d.url for d in releases), spec.name


@pytest.mark.parametrize("files, message", [
    ({"comlq": {"dataset.zip": {}}}, "x.json: comlq/dataset.zip: expected an object with at least a url"),
    ({"comlq": {"dataset.zip": {"url": "ftp:/x"}}}, "x.json: comlq/dataset.zip: url is 'ftp:/x', expected text"),
    ({"comlq": {"dataset.zip": {"url": "https://x", "md5": "ab"}}}, "x.json: comlq/dataset.zip: unknown field 'md5'"),
    ({"comlq": {"dataset.zip": {"url": "https://x", "expected_sha256": "AB"}}},
     "x.json: comlq/dataset.zip: expected_sha256 is 'AB', expected text matching [0-9a-f]{64}"),
    ({"comlq": {"dataset.zip": {"url": "https://x", "size": "12"}}},
     "x.json: comlq/dataset.zip: size is '12', expected a non-negative integer"),
    ({"nevir": {"derived/x.json": {"url": "https://x", "derived_from": "test.jsonl", "origin": "a repo"}}},
     "x.json: nevir/derived/x.json: a derived copy needs expected_sha256, size"),
    ([], "x.json: expected an object of benchmark folders"),
])
def test_a_damaged_download_entry_is_named_with_its_field(files, message):
    with pytest.raises(ValueError) as error:
        check_downloads(files, "x.json")
    assert str(error.value).startswith(message)


def test_a_file_the_data_file_does_not_pin_is_named():
    with pytest.raises(KeyError, match="comlq/nope.zip is not in ir_datasets_ext/etc/downloads.json"):
        pinned_download("comlq", "nope.zip")
    with pytest.raises(KeyError, match="comlq/dataset.zip is not a derived copy"):
        DataOrigin.pinned("comlq", "dataset.zip")
    assert download_entry("comlq", "dataset.zip")["size"] == 3380755


def test_every_file_without_a_checksum_is_read_whole_before_it_is_trusted():
    used = _module_downloads().values()
    unpinned = [d for d in used if not isinstance(d, DataOrigin) and d.md5 is None and d.sha256 is None]
    assert len(unpinned) == 10 and all(d._validate is not None for d in unpinned)
    with pytest.raises(ValueError, match="nevir/test.jsonl has no checksum .* must give a validate"):
        pinned_download("nevir", "test.jsonl")
