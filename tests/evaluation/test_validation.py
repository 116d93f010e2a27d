"""Run validation: every kind of problem with its line number; invalid runs are not scored."""

import gzip

import numpy as np
import pytest

from negplugins.cli import main
from negplugins.errors import UserError
from negplugins.evaluation import validation
from negplugins.evaluation.scoring import evaluate
from negplugins.evaluation.validation import DocIdSet, validate_run

GOOD = "q01 Q0 d01 1 3.0 t\nq01 Q0 d02 2 2.0 t\n"


def check(tmp_path, text, kind, line, name="run.trec"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    report = validate_run("negplugins-demo", path)
    assert not report.valid
    assert kind in report.counts, report.to_text()
    assert report.problems[kind][0][0] == line, report.to_text()
    return report


def test_valid_run_and_missing_queries(tmp_path):
    path = tmp_path / "ok.trec"
    path.write_text(GOOD + "q02 Q0 d03 1 1.0 t\nq02 Q0 d04 2 1.0 t\n", encoding="utf-8")  # ties are fine
    report = validate_run("negplugins-demo", path)
    assert report.valid, report.to_text()
    assert report.lines == 4 and report.queries == 2
    assert len(report.missing_queries) == 19 and report.missing_queries[0] == "q03"
    assert "19 of 21 dataset queries have no result" in report.to_text()


@pytest.mark.parametrize("text, kind, line", [
    (GOOD + "q01 Q0 d03 3 1.0\n", "columns", 3),
    (GOOD + "q01 Q0 d03 3 high t\n", "score", 3),
    (GOOD + "q01 Q0 d03 3 nan t\n", "score", 3),
    (GOOD + "q01 Q0 d03 third 1.0 t\n", "rank", 3),
    (GOOD + "q01 Q0 d01 3 1.0 t\n", "duplicate", 3),
    ("q01 Q0 d01 1 1.0 t\nq01 Q0 d02 2 2.0 t\n", "rank-order", 2),
    ("q01 Q0 d01 1 2.0 t\nq01 Q0 d02 1 1.0 t\n", "rank-order", 2),
    (GOOD + "nope Q0 d01 1 1.0 t\nnope Q0 d02 2 0.5 t\n", "unknown-query", 3),
    (GOOD + "q01 Q0 zz99 3 1.0 t\n", "unknown-document", 3),
    ("", "empty", 0),
])
def test_each_problem_kind(tmp_path, text, kind, line):
    report = check(tmp_path, text, kind, line)
    assert report.counts[kind] == 1
    assert f"run.trec:{line}: [{kind}]" in report.to_text() or (line == 0 and f"[{kind}]" in report.to_text())


def test_rank_order_checked_by_rank_not_file_order(tmp_path):
    path = tmp_path / "shuffled.trec"
    path.write_text("q01 Q0 d02 2 2.0 t\nq01 Q0 d01 1 3.0 t\n", encoding="utf-8")
    assert validate_run("negplugins-demo", path).valid


def test_encoding_problem(tmp_path):
    path = tmp_path / "run.trec"
    path.write_bytes(GOOD.encode() + b"q01 Q0 d\xff3 3 1.0 t\n")
    report = validate_run("negplugins-demo", path)
    assert report.problems["encoding"][0][0] == 3


def test_listing_capped_counts_complete(tmp_path):
    text = "".join(f"q01 Q0 bad{n} {n} {1000 - n} t\n" for n in range(1, 51))
    report = check(tmp_path, text, "unknown-document", 1)
    assert report.counts["unknown-document"] == 50
    assert len(report.problems["unknown-document"]) == validation.MAX_LISTED
    assert "... and 30 more" in report.to_text()


def test_size_limit_and_gzip_bomb(tmp_path, monkeypatch):
    monkeypatch.setenv("NEGPLUGINS_MAX_RUN_BYTES", "100000")
    bomb = tmp_path / "bomb.trec.gz"
    with gzip.open(bomb, "wb") as f:  # ~1 MB of lines, a few KB compressed
        f.write(b"q01 Q0 d01 1 1.0 t\n" * 60000)
    assert bomb.stat().st_size < 100000
    report = validate_run("negplugins-demo", bomb)
    assert not report.valid and report.problems["size"][0][1].startswith("gzip expansion exceeds the limit")
    assert report.lines < 6000  # stopped early, not read to the end
    big = tmp_path / "big.trec"
    big.write_bytes(b"x" * 100001)
    assert validate_run("negplugins-demo", big).counts["size"] == 1
    long_line = tmp_path / "long.trec"
    long_line.write_bytes(b"q" * 70000)
    assert "line longer" in validate_run("negplugins-demo", long_line).problems["size"][0][1]


def test_gzip_run_accepted(tmp_path):
    path = tmp_path / "run.trec.gz"
    with gzip.open(path, "wt") as f:
        f.write(GOOD)
    assert validate_run("negplugins-demo", path).valid


def test_evaluate_refuses_invalid_run(tmp_path):
    path = tmp_path / "bad.trec"
    path.write_text(GOOD + "q01 Q0 d01 3 1.0 t\nq01 Q0 zz 4 0.5 t\n", encoding="utf-8")
    with pytest.raises(UserError) as error:
        evaluate("negplugins-demo", path)
    message = str(error.value)
    assert "not scored" in message and "bad.trec:3: [duplicate]" in message and "bad.trec:4: [unknown-document]" in message


def test_validate_cli_exit_codes(tmp_path, capsys):
    good = tmp_path / "good.trec"
    good.write_text(GOOD, encoding="utf-8")
    bad = tmp_path / "bad.trec"
    bad.write_text("q01 Q0 d01 1 x t\n", encoding="utf-8")
    assert main(["validate", "negplugins-demo", str(good)]) == 0
    assert main(["validate", "negplugins-demo", str(bad)]) == 1
    assert "bad.trec:1: [score]" in capsys.readouterr().out
    assert main(["validate", "negplugins-demo", str(tmp_path / "missing.trec")]) == 2
    assert main(["validate", "no-such-dataset", str(good)]) == 2
    assert main(["evaluate", "negplugins-demo", str(bad)]) == 2
    assert "not scored" in capsys.readouterr().err


def test_validate_beside_evaluate_and_skipping_the_document_check(tmp_path, capsys):
    """``validate`` is defined in negplugins/cli.py next to ``evaluate``; ``--no-check-docs`` (``import beir``'s
    name) skips the document id check."""
    from negplugins import cli

    commands = next(a for a in cli.build_parser()._actions if a.dest == "command").choices
    names = list(commands)
    assert names.index("validate") == names.index("evaluate") + 1
    from negplugins.evaluation import commands as evaluation_commands

    assert commands["validate"].get_default("func") is evaluation_commands._cmd_validate
    unknown_doc = tmp_path / "unknown-doc.trec"
    unknown_doc.write_text("q01 Q0 zz 1 1.0 t\n", encoding="utf-8")
    assert main(["validate", "negplugins-demo", str(unknown_doc)]) == 1
    assert "[unknown-document]" in capsys.readouterr().out
    assert main(["validate", "negplugins-demo", str(unknown_doc), "--no-check-docs"]) == 0
    assert "--no-check-docs" in commands["validate"].format_help()


def test_doc_id_set_cache(tmp_path, isolated_ir_datasets_home):
    path = tmp_path / "run.trec"
    path.write_text(GOOD, encoding="utf-8")
    validate_run("negplugins-demo", path)
    cached = isolated_ir_datasets_home / "negplugins" / "docids" / "negplugins-demo.npz"
    assert cached.is_file()
    assert len(DocIdSet.load(cached)) == 36


@pytest.mark.parametrize("ids", [["a", "bb", "ccc", "d01"], [f"{'x' * 40}{n}" for n in range(5)]])
def test_doc_id_set_exact_and_hashed(tmp_path, ids):
    id_set = DocIdSet.from_ids(ids)
    assert id_set.hashed == (max(map(len, ids)) > 24)
    found = id_set.contains(ids + ["zz", "a" * 50, "", ids[0] + "x"])
    assert found.tolist() == [True] * len(ids) + [False] * 4
    id_set.save(tmp_path / "s.npz")
    again = DocIdSet.load(tmp_path / "s.npz")
    assert np.array_equal(again.keys, id_set.keys) and again.hashed == id_set.hashed


def test_the_summary_counts_problems_in_words(tmp_path):
    """``invalid run ...: 1 encoding problem`` (it read "1 encoding"), each kind with its own words, plural when due."""
    from negplugins.evaluation.validation import KINDS, count_text

    DEMO = "negplugins-demo"
    path = tmp_path / "run.trec"
    path.write_bytes(b"q01 Q0 d01 1 3.5 t\nq01 Q0 d02 2 \xff t\nq01 Q0 d01 3 1.0 t\nq99 Q0 d01 1 1.0 t\n")
    report = validate_run(DEMO, path)
    assert report.summary() == (f"{path}: invalid run for {DEMO}: 1 encoding problem, "
                                "1 duplicate (query, document) pair, 1 unknown query id")
    assert [count_text(kind, 2) for kind in ("columns", "unknown-document")] == [
        "2 lines without 6 columns", "2 unknown document ids"]
    assert all(count_text(kind, 1) and "{" not in count_text(kind, 3) for kind in KINDS)
    empty = tmp_path / "empty.trec"
    empty.write_text("")
    assert validate_run(DEMO, empty).summary().endswith(f"invalid run for {DEMO}: no line")
