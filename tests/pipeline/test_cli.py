"""The negplugins command line: one-line errors with exit status 2, never a traceback."""

import json
import os
import subprocess
import sys

import pytest


def negplugins(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "negplugins", *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ))


def assert_one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("negplugins: error: ") and "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def _run(tmp_path, lines):
    path = tmp_path / "run.trec"
    path.write_text("".join(line + "\n" for line in lines))
    return path


GOOD = ["q01 Q0 d01 1 3.5 test", "q01 Q0 d02 2 1.0 test", "q05 Q0 d09 1 2.0 test"]


def test_unknown_dataset_suggests_close_ids(tmp_path):
    assert_one_line_error(negplugins("evaluate", "comlg", str(_run(tmp_path, GOOD))), "unknown dataset 'comlg'",
                          "did you mean comlq")
    assert_one_line_error(negplugins("topics", "nevir/tset"), "did you mean nevir/test")


def test_missing_run_file(tmp_path):
    assert_one_line_error(negplugins("evaluate", "negplugins-demo", str(tmp_path / "nope.trec")), "nope.trec",
                          "not found")


def test_malformed_run_lines_name_the_line(tmp_path):
    run = _run(tmp_path, [*GOOD, "q01 Q0 d03 3 1.0"])
    assert_one_line_error(negplugins("evaluate", "negplugins-demo", str(run)), "run.trec:4", "expected 6 columns")
    run = _run(tmp_path, ["q01 Q0 d01 1 high test"])
    assert_one_line_error(negplugins("evaluate", "negplugins-demo", str(run)), "run.trec:1", "'high' is not a number")


def test_run_for_another_dataset(tmp_path):
    run = _run(tmp_path, ["0 Q0 10000 1 9.1 Anserini"])
    assert_one_line_error(negplugins("evaluate", "negplugins-demo", str(run)), "no query of the run",
                          "another dataset")


def test_unknown_measure(tmp_path):
    result = negplugins("evaluate", "negplugins-demo", str(_run(tmp_path, GOOD)), "--measures", "nDCG@10", "RightRnk@10")
    assert_one_line_error(result, "RightRnk@10")


def test_evaluate_json(tmp_path):
    result = negplugins("evaluate", "negplugins-demo", str(_run(tmp_path, GOOD)), "--measures", "RR@10", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    # q01: d01 relevant at rank 1 -> 1; q05: d09 relevant at rank 1 -> 1; 19 judged queries missing -> 0
    assert data["overall"]["RR@10"] == pytest.approx(2 / 21)


def test_topics_file(tmp_path):
    result = negplugins("topics", "negplugins-demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "topics" / "negplugins-demo.tsv").read_text().splitlines()
    assert len(lines) == 21 and all(len(line.split("\t")) == 2 for line in lines)
    assert lines[0].startswith("q01\tWhich programming language did Guido van Rossum create")


@pytest.mark.java
def test_demo_runs_offline_end_to_end(tmp_path):
    env = dict(os.environ, IR_DATASETS_EXT_MIRROR=str(tmp_path / "no-mirror"))
    result = subprocess.run([sys.executable, "-m", "negplugins", "demo"], capture_output=True, text=True, env=env,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "negplugins-demo: 21 queries" in result.stdout
    header = next(line for line in result.stdout.splitlines() if line.startswith("kind"))
    assert "nDCG@10" in header
    assert list(tmp_path.iterdir()) == []  # the demo cleans up its temporary folder
