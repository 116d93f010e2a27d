"""``write_run`` to a ``.gz`` path: compressed deterministically, read back by ``read_run``."""

from __future__ import annotations

import gzip
import os
import time

from negplugins.io.trec import read_run, write_run


def test_gz_run_is_deterministic_and_readable(tmp_path):
    results = [("q1", [("d2", 2.5), ("d1", 1.0)]), ("q2", [("d3", 0.1234567)])]
    write_run(tmp_path / "a.trec.gz", results, "tag")
    time.sleep(1.1)  # a gzip header with a time stamp would now differ
    write_run(tmp_path / "sub" / "b.trec.gz", results, "tag")  # another name: no file name in the header
    write_run(tmp_path / "c.trec", results, "tag")
    a, b = (tmp_path / "a.trec.gz").read_bytes(), (tmp_path / "sub" / "b.trec.gz").read_bytes()
    assert a == b and a[:2] == b"\x1f\x8b"
    assert gzip.decompress(a) == (tmp_path / "c.trec").read_bytes() == \
        b"q1 Q0 d2 1 2.500000 tag\nq1 Q0 d1 2 1.000000 tag\nq2 Q0 d3 1 0.123457 tag\n"
    assert read_run(tmp_path / "a.trec.gz") == {"q1": {"d2": 2.5, "d1": 1.0}, "q2": {"d3": 0.123457}}
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []
