"""One reading of a run in every path: pyarrow's split and Python's split give the same answer.

A run a stock tool would misread (a UTF-8 byte-order mark, which ir_measures and trec_eval read as part of the first
query id) or refuse (a line with a column missing, seen by a single-space split as an empty column) is refused by
``validate`` and by ``evaluate`` with its file and line; a document id with a trailing NUL byte is not the corpus's
id without it.
"""

import re

import dataset_fixtures as fx
import ir_measures
import pytest

from negplugins.evaluation import validation
from negplugins.evaluation.validation import DocIdSet
from negplugins.io.sidecars import run_tag_problems, run_tags
from negplugins.io.trec import RunFormatError, read_run

DEMO = "negplugins-demo"
LINES = ["q01 Q0 d01 1 3.0 t", "q01 Q0 d02 2 2.0 t", "q02 Q0 d03 1 1.0 t", "q02 Q0 d04 2 0.5 t"]
BOM_MESSAGE = "the file starts with a UTF-8 byte-order mark"
COLUMNS_MESSAGE = "expected 6 columns 'qid Q0 docid rank score tag', got 5"

#: name -> (run bytes, line of the problem, kind, message)
CASES = {
    "byte-order mark": (b"\xef\xbb\xbf" + "\n".join(LINES).encode() + b"\n", 1, "encoding", BOM_MESSAGE),
    "tag missing, trailing space": ("\n".join([*LINES[:2], "q02 Q0 d03 1 1.0 ", LINES[3]]).encode() + b"\n", 3,
                                    "columns", COLUMNS_MESSAGE),
    "tag missing, last line without newline": ("\n".join([*LINES[:3], "q02 Q0 d04 2 0.5 "]).encode(), 4, "columns",
                                               COLUMNS_MESSAGE),
    "Q0 missing, two spaces": ("\n".join([LINES[0], "q01  d02 2 2.0 t", *LINES[2:]]).encode() + b"\n", 2,
                               "columns", COLUMNS_MESSAGE),
    "Q0 missing, leading space": ("\n".join([*LINES[:3], " q02 d04 2 0.5 t"]).encode() + b"\n", 4, "columns",
                                  COLUMNS_MESSAGE),
    "document id with a trailing NUL": ("\n".join([LINES[0], "q01 Q0 d02\0 2 2.0 t", *LINES[2:]]).encode() + b"\n",
                                        2, "unknown-document", "document id 'd02\\x00' is not in the corpus"),
}


def _write(tmp_path, name):
    path = tmp_path / "run.trec"
    path.write_bytes(CASES[name][0])
    return path


@pytest.mark.parametrize("name", list(CASES))
def test_validate_names_the_line(tmp_path, main_cli, name):
    path = _write(tmp_path, name)
    _, line, kind, message = CASES[name]
    result = main_cli("validate", DEMO, path)
    assert result.returncode == 1, result.stdout
    assert f"{path}:{line}: [{kind}] {message}" in result.stdout


@pytest.mark.parametrize("name", list(CASES))
def test_evaluate_refuses_in_one_line(tmp_path, main_cli, name):
    path = _write(tmp_path, name)
    _, line, kind, message = CASES[name]
    result = main_cli("evaluate", DEMO, path, "-m", "nDCG@10")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("negplugins: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert f"not scored: {path}:{line}: [{kind}] {message}" in result.stderr


@pytest.mark.parametrize("name", list(CASES))
def test_the_columns_read_as_the_lines_do(tmp_path, monkeypatch, name):
    path = _write(tmp_path, name)
    fast, fast_run = validation.validate_run(DEMO, path, return_run=True)
    monkeypatch.setattr(validation, "parse_columns", lambda data: None)  # Python's split only
    slow, slow_run = validation.validate_run(DEMO, path, return_run=True)
    assert not fast.valid and fast.to_dict() == slow.to_dict()
    assert dict(fast_run) == slow_run


@pytest.mark.parametrize("name", [name for name in CASES if CASES[name][2] != "unknown-document"])
def test_the_first_stage_reader_refuses_the_line(tmp_path, name):
    """``search rerank`` reads its first stage with :func:`read_run`: the same line is refused."""
    path = _write(tmp_path, name)
    _, line, _, message = CASES[name]
    with pytest.raises(RunFormatError, match="^" + re.escape(f"{path}:{line}: {message}")):
        read_run(path)


@pytest.mark.parametrize("space", ["\u00a0", "\x1c", "\u2028"])
def test_the_tag_check_splits_as_the_run_reader_does(tmp_path, space):
    """White space Python's ``str.split()`` knows but ``bytes.split()`` does not ends the tag for every reader."""
    path = tmp_path / "run.trec"
    path.write_text("\n".join(f"{line}{space}" for line in LINES) + "\n", encoding="utf-8")
    assert validation.validate_run(DEMO, path).valid
    assert run_tags(path) == {"t"} and run_tag_problems("t", path) == []


def test_stock_ir_measures_reads_the_mark_into_the_first_query_id(tmp_path):
    """Why the mark is refused: stock reading scores ``q01`` without its first line, with no word said."""
    path = _write(tmp_path, "byte-order mark")
    first = next(ir_measures.read_trec_run(str(path)))
    assert first.query_id == "\ufeffq01"


def test_nevir_refuses_a_document_id_with_a_trailing_nul(mirror, tmp_path, main_cli):
    """``579-3_doc1`` is shorter than ``1000-2_doc1``: with its NUL it fits the width of a fixed-width id array, which
    drops the NUL, and was found in the corpus (and scored as another document)."""
    fx.write_nevir(mirror)
    fx.write_jsonl(mirror / "nevir" / "test.jsonl", [fx._nevir_pair(3, "1000-2"), fx._nevir_pair(6, "579-3")])
    path = tmp_path / "pairs.trec"
    path.write_bytes(b"1000-2_q1 Q0 1000-2_doc1 1 0.9 t\n1000-2_q1 Q0 1000-2_doc2 2 0.1 t\n"
                     b"1000-2_q2 Q0 1000-2_doc2 1 0.9 t\n1000-2_q2 Q0 1000-2_doc1 2 0.1 t\n"
                     b"579-3_q1 Q0 579-3_doc1\0 1 0.9 t\n579-3_q1 Q0 579-3_doc2 2 0.1 t\n"
                     b"579-3_q2 Q0 579-3_doc2 1 0.9 t\n579-3_q2 Q0 579-3_doc1 2 0.1 t\n")
    result = main_cli("validate", "nevir/test", path)
    assert result.returncode == 1, result.stdout
    assert f"{path}:5: [unknown-document] document id '579-3_doc1\\x00' is not in the corpus" in result.stdout
    result = main_cli("evaluate", "nevir/test", path)
    assert result.returncode == 2 and "PairedAcc" not in result.stdout
    assert f"not scored: {path}:5: [unknown-document]" in result.stderr
    path.write_bytes(path.read_bytes().replace(b"\0", b""))
    assert main_cli("evaluate", "nevir/test", path).returncode == 0


def test_doc_id_set_compares_ids_byte_for_byte():
    exact = DocIdSet.from_ids(["d01", "d02", "a\0b"])
    assert not exact.hashed
    assert exact.contains(["d01", "d01\0", "d02\0\0", "a\0b", "a"]).tolist() == [True, False, False, True, False]
    with_nul = DocIdSet.from_ids(["d01\0", "d02"])  # an S array would keep 'd01'
    assert with_nul.contains(["d01\0", "d01", "d02", "d02\0"]).tolist() == [True, False, True, False]
