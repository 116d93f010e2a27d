"""``ir_datasets export`` writes every field of the suite's records, ComLQ's ``has_negation`` (a bool) included;
a record type of any other dataset is exported exactly as stock ir_datasets exports it."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from ir_datasets.commands import export

from ir_datasets_ext.datasets.comlq import ComLQQuery
from negplugins._compat import ir_datasets_export, upstream
from negplugins._compat.upstream import UpstreamChangedWarning

BIN = Path(sys.executable).parent


class _Record(NamedTuple):
    """A record type with a bool field that is not the suite's (as ir_datasets' own ``aol-ia`` ``clicked``)."""

    query_id: str
    text: str
    has_negation: bool
    count: int


RECORDS = [_Record("q1", "not\tthis", True, 3), _Record("q2", "that", False, 0)]
COMLQ = [ComLQQuery("q1", "not\tthis", "a", "2in_1", "2in", 3, True, "not\tthis"),
         ComLQQuery("q2", "that", "b", "1p", "1p", 0, False, "that")]


@pytest.fixture
def installed(monkeypatch):
    """The suite's exporters in ir_datasets' tables for this test only."""
    for table in ("DEFAULT_EXPORTERS", "QRELS_EXPORTERS", "SCOREDDOCS_EXPORTERS"):
        monkeypatch.setattr(export, table, dict(getattr(export, table)))
    monkeypatch.setattr(upstream, "_checked", {})
    assert ir_datasets_export.install()


def _export(fmt, records, fields=None):
    out = io.StringIO()
    exporter = export.DEFAULT_EXPORTERS[fmt](type(records[0]), out, fields)
    for record in records:
        exporter.next(record)
    exporter.flush()
    return out.getvalue()


def test_stock_exporters_skip_a_bool_field():
    # what ir_datasets 0.6.3 does on its own: the bool column is gone (the reason for the patch)
    out = io.StringIO()
    stock = export.TsvExporter(_Record, out)
    stock.next(RECORDS[0])
    assert out.getvalue() == "q1\tnot this\t3\n"


def test_bool_fields_of_the_suites_records_are_exported(installed):
    # TSV: ir_datasets writes str(value) with tabs and newlines as spaces; a bool as true/false
    assert _export("tsv", COMLQ) == ("q1\tnot this\ta\t2in_1\t2in\t3\ttrue\tnot this\n"
                                     "q2\tthat\tb\t1p\t1p\t0\tfalse\tthat\n")
    assert _export("tsv", COMLQ, ["has_negation", "query_id"]) == "true\tq1\nfalse\tq2\n"
    lines = [json.loads(line) for line in _export("jsonl", COMLQ).splitlines()]
    assert lines[0] == {"query_id": "q1", "text": "not\tthis", "answer": "a", "type": "2in_1", "structure": "2in",
                        "num_evidence": 3, "has_negation": True, "query": "not\tthis"}
    assert lines[1]["has_negation"] is False and isinstance(lines[1]["num_evidence"], int)
    assert COMLQ[0].has_negation is True  # the records are untouched


def _stock_export(exporter_class, records, fields=None):
    out = io.StringIO()
    exporter = exporter_class(type(records[0]), out, fields)
    for record in records:
        exporter.next(record)
    exporter.flush()
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["tsv", "jsonl"])
def test_other_records_are_exported_as_stock(installed, fmt):
    # a bool field of a record type that is not the suite's stays skipped, byte for byte as ir_datasets alone
    stock_class = {"tsv": export.TsvExporter, "jsonl": export.JsonlExporter}[fmt]
    assert export.DEFAULT_EXPORTERS[fmt] is not stock_class  # the suite's exporter is in the table ...
    ours = _export(fmt, RECORDS)
    assert ours == _stock_export(stock_class, RECORDS)  # ... and writes what the stock one writes
    assert "true" not in ours.lower() and "q1" in ours


def test_install_is_idempotent(installed):
    tsv = export.DEFAULT_EXPORTERS["tsv"]
    assert ir_datasets_export.install() and export.DEFAULT_EXPORTERS["tsv"] is tsv
    assert export.QRELS_EXPORTERS["tsv"] is tsv and export.QRELS_EXPORTERS["trec"] is export.TrecQrelsExporter


def test_a_moved_exporter_is_named_and_nothing_is_replaced(monkeypatch):
    monkeypatch.setattr(export, "DEFAULT_EXPORTERS", dict(export.DEFAULT_EXPORTERS))
    monkeypatch.setattr(upstream, "_checked", {})
    monkeypatch.delattr(export, "JsonlExporter")
    with pytest.warns(UpstreamChangedWarning, match=r"^ir_datasets \S+: ir_datasets\.commands\.export\.JsonlExporter "
                                                    r"is not where .*skip the bool fields"):
        assert not ir_datasets_export.install()
    assert export.DEFAULT_EXPORTERS["tsv"] is export.TsvExporter


def _stock(*args, env=None):
    result = subprocess.run([*args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.realdata
def test_stock_ir_datasets_export_writes_has_negation(comlq_mirror):
    result = _stock(BIN / "ir_datasets", "export", "comlq", "queries")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(rows) == 2909 and {len(row) for row in rows} == {8}  # every field of ComLQQuery
    assert "unsupported data types" not in result.stderr
    assert rows[0][:7] == ["0", "Who is the brother of Moses?", "Aaron", "1p", "1p", "1", "false"]
    # has_negation is true on the 984 queries of the five negation structures (comlq/negation's count,
    # tests/test_registration.py), false on the other 1925
    assert sum(row[6] == "true" for row in rows) == 984 and {row[6] for row in rows} == {"true", "false"}
    assert all((row[6] == "true") == (row[4] in {"2in", "3in", "inp", "pin", "pni"}) for row in rows)
    jsonl = _stock(sys.executable, "-m", "ir_datasets", "export", "comlq/negation", "queries", "--format", "jsonl",
                   "--fields", "query_id", "has_negation")
    records = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert len(records) == 984 and all(record["has_negation"] is True for record in records)
    # with the hook off, the explicit entry point does the same
    off = _stock(BIN / "negplugins-ir_datasets", "export", "comlq", "queries", "--fields", "query_id", "has_negation",
                 env={"NEGPLUGINS_AUTOLOAD": "0"})
    assert off.stdout.splitlines()[0] == "0\tfalse"


@pytest.mark.realdata
def test_python_users_still_get_a_bool(comlq_mirror, installed):
    import ir_datasets

    assert next(ir_datasets.load("comlq").queries_iter()).has_negation is False
    assert next(ir_datasets.load("comlq/negation").queries_iter()).has_negation is True

