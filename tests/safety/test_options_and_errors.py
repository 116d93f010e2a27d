"""Numeric options at their edges, measures with bad parameters, and bugs told apart from user errors.

Every command-line case runs ``negplugins`` (:func:`negplugins.cli.main`, in this process: ``main_cli`` of
``conftest.py``) and checks both the one-line message (option, value and accepted range named; exit status 2; no
traceback) and, with ``guard``, that the inputs and the output folder are byte for byte as before, with no file
added. The values are refused while the command line is parsed, so no case needs a JVM, a model or any data beyond
the embedded demo. The process itself is the subject of :func:`test_closed_pipe_is_quiet` only, which keeps one.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
from safety_helpers import PROJECT_ROOT, assert_clean_error

from negplugins.errors import UserError
from negplugins.options import MAX_CUTOFF, MAX_HITS, MAX_PERMUTATIONS, MAX_THREADS, bounded_int, check_int

DEMO = "negplugins-demo"
# two queries of the demo dataset, judged there (see tests/pipeline/test_cli.py)
RUN_LINES = "q01 Q0 d01 1 3.5 test\nq01 Q0 d02 2 1.0 test\nq05 Q0 d09 1 2.0 test\n"


@pytest.fixture
def workspace(tmp_path):
    """A folder holding a run, a second run and a user's own file: everything a case must not touch."""
    (tmp_path / "run.trec").write_text(RUN_LINES)
    (tmp_path / "other.trec").write_text(RUN_LINES.replace("3.5", "0.5"))
    (tmp_path / "notes.txt").write_text("my own notes\n")
    return tmp_path


def _refused(cli, guard, workspace, args, *fragments):
    """Run ``negplugins ARGS`` in ``workspace``; a clean usage error naming ``fragments``, nothing written."""
    guard.arm(workspace)
    result = cli(*args, cwd=workspace)
    assert_clean_error(result, *fragments, codes=(2,))
    assert len([line for line in result.stderr.splitlines() if line.strip()]) == 1, result.stderr
    guard.unchanged(allow_new=False)
    return result


# -- every numeric option of every command, at its edges ------------------------------------------------------

OUT = ["--output", "out.trec"]

EDGES = [
    # (command line before the option, option, value, range in the message)
    (["search", "bm25", DEMO, *OUT], "--hits", "0", f"from 1 to {MAX_HITS}"),
    (["search", "bm25", DEMO, *OUT], "--hits", "-1", f"from 1 to {MAX_HITS}"),
    (["search", "bm25", DEMO, *OUT], "--hits", "10000000000", f"from 1 to {MAX_HITS}"),
    (["search", "bm25", DEMO, *OUT], "--hits", "ten", f"from 1 to {MAX_HITS}"),
    (["search", "bm25", DEMO, *OUT], "--hits", "2.5", f"from 1 to {MAX_HITS}"),
    (["search", "bm25", DEMO, *OUT], "--k1", "nan", "a finite number >= 0"),
    (["search", "bm25", DEMO, *OUT], "--k1", "inf", "a finite number >= 0"),
    (["search", "bm25", DEMO, *OUT], "--k1", "-0.5", "a finite number >= 0"),
    (["search", "bm25", DEMO, *OUT], "--b", "1.5", "a finite number from 0 to 1"),
    (["search", "bm25", DEMO, *OUT], "--b", "-inf", "a finite number from 0 to 1"),
    (["search", "bm25", DEMO, *OUT], "--b", "NaN", "a finite number from 0 to 1"),
    (["search", "bm25", DEMO, *OUT], "--threads", "0", f"from 1 to {MAX_THREADS}"),
    (["search", "bm25", DEMO, *OUT], "--threads", "100000", f"from 1 to {MAX_THREADS}"),
    (["search", "bm25", DEMO, *OUT], "--batch-size", "-1", "from 1 to 65536"),
    (["search", "bm25", DEMO, *OUT], "--batch-size", "0", "from 1 to 65536"),
    (["index", DEMO, "--index", "idx"], "--threads", "0", f"from 1 to {MAX_THREADS}"),
    (["index", DEMO, "--index", "idx"], "--threads", "-3", f"from 1 to {MAX_THREADS}"),
    (["demo", "--workdir", "demo"], "--threads", "0", f"from 1 to {MAX_THREADS}"),
    (["evaluate", DEMO, "run.trec", "other.trec"], "--permutations", "-5", f"from 1 to {MAX_PERMUTATIONS}"),
    (["evaluate", DEMO, "run.trec", "other.trec"], "--permutations", "0", f"from 1 to {MAX_PERMUTATIONS}"),
    (["evaluate", DEMO, "run.trec", "other.trec"], "--permutations", "1000000000", f"from 1 to {MAX_PERMUTATIONS}"),
    (["search", "dense", DEMO, *OUT], "--hits", "0", f"from 1 to {MAX_HITS}"),
    (["search", "dense", DEMO, *OUT], "--batch-size", "-1", "from 1 to 65536"),
    (["search", "dense", DEMO, *OUT], "--shard-num", "0", "from 1 to 10000"),
    (["search", "dense", DEMO, *OUT], "--shard-id", "-1", "from 0 to 9999"),
    (["search", "rerank", DEMO, "--run", "run.trec", "--model", "m", *OUT], "--top-k", "0", f"from 1 to {MAX_HITS}"),
    (["search", "rerank", DEMO, "--run", "run.trec", "--model", "m", *OUT], "--batch-size", "-1", "from 1 to 65536"),
    (["search", "rerank", DEMO, "--run", "run.trec", "--model", "m", *OUT], "--max-length", "0", "from 1 to 100000"),
    (["search", "bm25s", DEMO, *OUT], "--hits", "0", f"from 1 to {MAX_HITS}"),
    (["search", "bm25s", DEMO, *OUT], "--k1", "nan", "a finite number >= 0"),
    (["search", "bm25s", DEMO, *OUT], "--b", "1.5", "a finite number from 0 to 1"),
    (["search", "beir-dense", DEMO, *OUT], "--hits", "inf", f"from 1 to {MAX_HITS}"),
    (["search", "beir-dense", DEMO, *OUT], "--batch-size", "0", "from 1 to 65536"),
    (["search", "beir-dense", DEMO, *OUT], "--max-length", "-1", "from 1 to 100000"),
    (["search", "beir-rerank", DEMO, "--run", "run.trec", "--model", "m", *OUT], "--top-k", "-1",
     f"from 1 to {MAX_HITS}"),
    (["search", "beir-rerank", DEMO, "--run", "run.trec", "--model", "m", *OUT], "--batch-size", "0",
     "from 1 to 65536"),
    (["import", "beir", "results.json", "--dataset", DEMO, *OUT], "--hits", "0", f"from 1 to {MAX_HITS}"),
]


@pytest.mark.parametrize("before, option, value, accepted", EDGES,
                         ids=[f"{' '.join(c[:2])} {o}={v}" for c, o, v, _ in EDGES])
def test_numeric_option_out_of_range(main_cli, guard, workspace, before, option, value, accepted):
    # argparse reads "-inf" as an option name, so users (and this test) write --b=-inf
    given = [f"{option}={value}"] if value.startswith("-") and not value[1:2].isdigit() else [option, value]
    result = _refused(main_cli, guard, workspace, [*before, *given], f"argument {option}", repr(value), accepted)
    assert result.stdout == ""


def test_ranges_are_documented_in_help(main_cli):
    result = main_cli("search", "bm25", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for fragment in (f"1 to {MAX_HITS}", "from 0 to 1", "a finite number >= 0", f"1 to {MAX_THREADS}"):
        assert fragment in text, fragment
    help_text = " ".join(main_cli("evaluate", "--help").stdout.split())
    assert f"1 to {MAX_PERMUTATIONS}" in help_text


def test_shard_id_beyond_shard_num(main_cli, guard, workspace):
    # both values are in range on their own; together they are checked before any model or data is loaded
    _refused(main_cli, guard, workspace, ["search", "dense", DEMO, *OUT, "--shard-num", "2", "--shard-id", "2"],
             "--shard-id", "from 0 to 1", "got 2", "--shard-num 2")


# -- measures with bad parameters: refused before pytrec_eval can abort the process ------------------------

BAD_MEASURES = [
    ("nDCG@0", f"the cutoff must be an integer from 1 to {MAX_CUTOFF}, got 0"),
    ("P@0", "got 0"),
    ("RightRank@0", "got 0"),
    ("LSNC_0", "got 0"),
    ("DeltaR@0", "got 0"),
    ("nDCG@10000000000", "got 10000000000"),
    ("nDCG@1.5", "got 1.5"),
    ("nDCG@-1", "cannot parse it"),
    ("R@abc", "cannot parse it"),
    ("nDCG(foo=1)@10", "unknown parameter 'foo'; nDCG accepts cutoff (int, as @k), dcg (one of 'log2', 'exp-log2'), "
                       "gains (dict), judged_only (bool)"),
    ("RR(rel=1.5)", "invalid param rel=1.5; RR accepts cutoff (int, as @k), judged_only (bool), rel (int)"),
    # what the measure takes, also when it takes nothing (the list was empty)
    ("PairedAcc@10", "PairedAcc takes no parameters, and no cutoff (@k)"),
    ("PairedAcc_10", "PairedAcc takes no parameters, and no cutoff (@k)"),
    ("PairedAcc(foo=1)", "unknown parameter 'foo'; PairedAcc takes no parameters"),
    ("NumQ@10", "NumQ takes no parameters, and no cutoff (@k)"),
    ("Rprec@10", "Rprec takes no cutoff (@k); it accepts judged_only (bool), rel (int)"),
    ("RightRank(rel=2)@10", "unknown parameter 'rel'; RightRank accepts cutoff (int, as @k)"),
    # the suite's own checks are usage errors too (LSNC's over was an "internal error")
    ("LSNC(over='all')@100", "expected one of 'judged', 'labelled'; LSNC accepts cutoff (int, as @k), over (str)"),
    ("LSNC(over=3)@100", "invalid param over=3; LSNC accepts"),
    ("NegRecall(conflict='2')@10", "invalid param conflict='2'; NegRecall accepts conflict (int), cutoff (int, as @k)"),
]


@pytest.mark.parametrize("measure, fragment", BAD_MEASURES, ids=[m for m, _ in BAD_MEASURES])
def test_measure_with_bad_parameter(main_cli, guard, workspace, measure, fragment):
    result = _refused(main_cli, guard, workspace, ["evaluate", DEMO, "run.trec", "-m", "RR@10", measure, "-o", "out.txt"],
                      f"measure {measure!r}", fragment)
    assert result.returncode == 2  # pytrec_eval never saw it (its abort would end this process, failing the run)


def test_good_measures_still_evaluate(main_cli, workspace):
    # the check lets valid parameters through, trec_eval's name_k style included
    result = main_cli("evaluate", DEMO, "run.trec", "-m", "nDCG@1000000", "LSNC_100", "nDCG(judged_only=True)@10",
                     "--json", cwd=workspace)
    assert result.returncode == 0, result.stderr


# -- the Python API refuses the same values (one place: negplugins.options) ---------------------------------

def test_api_refuses_the_same_values(tmp_path):
    from negplugins.evaluation.scoring import evaluate_runs
    from negplugins.evaluation.significance import compare, randomization_test
    from negplugins.runners.bm25 import bm25_search

    out = tmp_path / "out.trec"
    with pytest.raises(UserError, match=r"--k1: expected a finite number >= 0, got nan"):
        bm25_search(DEMO, out, k1=math.nan)
    with pytest.raises(UserError, match=r"--batch-size: expected an integer from 1 to 65536, got -1"):
        bm25_search(DEMO, out, batch_size=-1)
    with pytest.raises(UserError, match=r"--hits: expected an integer from 1 to 100000, got 10000000000"):
        bm25_search(DEMO, out, hits=10_000_000_000)
    with pytest.raises(UserError, match=r"--hits: .* got True"):
        bm25_search(DEMO, out, hits=True)
    with pytest.raises(UserError, match=r"--permutations: expected an integer from 1 to 1000000, got -5"):
        randomization_test([0.1, 0.2, 0.3], [0.2, 0.3, 0.5], permutations=-5)
    with pytest.raises(UserError, match=r"--permutations: .* got 0"):
        compare([{"m": {"q": 0.1}}, {"m": {"q": 0.2}}], ["m"], permutations=0)
    run = tmp_path / "run.trec"
    run.write_text(RUN_LINES)
    with pytest.raises(UserError, match=r"--permutations: .* got 0"):
        evaluate_runs(DEMO, [run, run], permutations=0)  # 0 no longer means "the default"
    assert not out.exists()


def test_option_types_parse_the_edges_exactly():
    parse = bounded_int(1, 5)
    assert [parse("1"), parse("5"), parse(" 3 ")] == [1, 5, 3]
    assert check_int(5, "--x", 1, 5) == 5
    with pytest.raises(UserError, match=r"--x: expected an integer from 1 to 5, got 5\.0"):
        check_int(5.0, "--x", 1, 5)


# -- user errors are one line; bugs keep their traceback under -v ------------------------------------------

def _broken(*args, **kwargs):
    raise ZeroDivisionError("injected loader bug")


@pytest.fixture
def faulty(monkeypatch):
    """A dataset loader that raises a ZeroDivisionError (a bug), for the commands run in this process."""
    import negplugins.datasets
    import negplugins.evaluation.validation

    monkeypatch.setattr(negplugins.datasets, "qrels_dict", _broken)
    monkeypatch.setattr(negplugins.evaluation.validation, "doc_id_set", _broken)


def test_loader_bug_shows_traceback_with_v(main_cli, guard, workspace, faulty):
    guard.arm(workspace)
    for args in (["-v", "evaluate", DEMO, "run.trec"], ["evaluate", DEMO, "run.trec", "-v"]):
        result = main_cli(*args, cwd=workspace)
        assert result.returncode == 1, result.stderr
        assert "Traceback (most recent call last)" in result.stderr
        assert "ZeroDivisionError: injected loader bug" in result.stderr
        assert "IR_DATASETS_EXT_MIRROR" not in result.stderr and "not available" not in result.stderr
    guard.unchanged(allow_new=False)


def test_loader_bug_without_v_is_one_internal_error_line(main_cli, guard, workspace, faulty):
    guard.arm(workspace)
    result = main_cli("evaluate", DEMO, "run.trec", "-o", "out.txt", cwd=workspace)
    assert_clean_error(result, "negplugins: internal error: ZeroDivisionError: injected loader bug",
                       "run with -v for the traceback", codes=(1,))
    assert "IR_DATASETS_EXT_MIRROR" not in result.stderr
    guard.unchanged(allow_new=False)


def test_document_check_bug_is_not_a_data_error(main_cli, guard, workspace, faulty):
    guard.arm(workspace)
    result = main_cli("validate", DEMO, "run.trec", "--verbose", cwd=workspace)
    assert result.returncode == 1
    assert "ZeroDivisionError: injected loader bug" in result.stderr and "Traceback" in result.stderr
    assert "cannot read the documents" not in result.stderr
    guard.unchanged(allow_new=False)


def test_v_after_the_subcommand_is_accepted(main_cli, workspace):
    result = main_cli("evaluate", DEMO, "run.trec", "-m", "RR@10", "-v", cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "RR@10" in result.stdout


def test_closed_pipe_is_quiet(workspace):
    # `negplugins evaluate ... | head -0`: the reader is gone before the first write
    child = subprocess.Popen([sys.executable, "-m", "negplugins", "evaluate", DEMO, "run.trec", "--per-query",
                              "--json"], cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    child.stdout.close()
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 0, stderr
    assert stderr == ""
