"""The facts ir_datasets_ext keeps as data files (``etc/``) are read, and checked, by one loader each.

The papers' numbers (``etc/reported/<benchmark>.csv``, :func:`ir_datasets_ext.benchmark.read_reported`): what a
damaged row makes the loader say. That each number is the paper's is ``tests/test_reported_numbers.py``.
"""

from __future__ import annotations

import pytest

from ir_datasets_ext import benchmarks
from ir_datasets_ext.benchmark import REPORTED_FOLDER, Reported, parse_reported, read_reported

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
        if not spec.reported:
            continue
        rows = read_reported(spec.name)
        assert [(r.system, r.measure, r.value, r.dataset, r.subset, r.source, r.note) for r in rows] == \
               [(r.system, r.measure, r.value, r.dataset, r.subset, r.source, r.note) for r in spec.reported]
        assert all(r.decimals in (None, s.decimals) for r, s in zip(rows, spec.reported))
    assert sum(len(spec.reported) for spec in benchmarks()) == 667  # the count the literals held


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
