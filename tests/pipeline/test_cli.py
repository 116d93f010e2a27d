"""The negplugins command line: one-line errors with exit status 2, never a traceback.

The commands run in this process (``main_cli``, tests/conftest.py: :func:`negplugins.cli.main`); the process
itself, its exit status and its signals, is the subject of ``test_demo_runs_offline_end_to_end`` here and of
``tests/safety/``.
"""

import json
import os
import subprocess
import sys

import pytest


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


def test_unknown_dataset_suggests_close_ids(tmp_path, main_cli):
    assert_one_line_error(main_cli("evaluate", "comlg", str(_run(tmp_path, GOOD))), "unknown dataset 'comlg'",
                          "did you mean comlq")
    assert_one_line_error(main_cli("topics", "nevir/tset"), "did you mean nevir/test")


def test_missing_run_file(tmp_path, main_cli):
    assert_one_line_error(main_cli("evaluate", "negplugins-demo", str(tmp_path / "nope.trec")), "nope.trec",
                          "not found")


def test_malformed_run_lines_name_the_line(tmp_path, main_cli):
    run = _run(tmp_path, [*GOOD, "q01 Q0 d03 3 1.0"])
    assert_one_line_error(main_cli("evaluate", "negplugins-demo", str(run)), "run.trec:4", "expected 6 columns")
    run = _run(tmp_path, ["q01 Q0 d01 1 high test"])
    assert_one_line_error(main_cli("evaluate", "negplugins-demo", str(run)), "run.trec:1", "'high' is not a number")


def test_run_for_another_dataset(tmp_path, main_cli):
    run = _run(tmp_path, ["0 Q0 10000 1 9.1 Anserini"])
    assert_one_line_error(main_cli("evaluate", "negplugins-demo", str(run)), "no query of the run",
                          "another dataset")


def test_unknown_measure(tmp_path, main_cli):
    result = main_cli("evaluate", "negplugins-demo", str(_run(tmp_path, GOOD)), "--measures", "nDCG@10", "RightRnk@10")
    assert_one_line_error(result, "RightRnk@10")


def test_measures_written_as_ir_measures_takes_them(tmp_path, main_cli):
    """One string (ir_measures' habit), several arguments, commas, repeated -m, before or after the positionals:
    the same evaluation; -m before the run never takes it."""
    run = str(_run(tmp_path, GOOD))
    forms = [
        ("negplugins-demo", run, "-m", "nDCG@10 RR@10 PairedAcc"),
        ("negplugins-demo", run, "--measures", "nDCG@10", "RR@10", "PairedAcc"),
        ("-m", "nDCG@10", "RR@10", "PairedAcc", "negplugins-demo", run),
        ("-m", "nDCG@10,RR@10", "-m", "PairedAcc", "negplugins-demo", run),
        ("--measures", "nDCG@10, RR@10 , PairedAcc", "negplugins-demo", run),
    ]
    outputs = []
    for form in forms:
        result = main_cli("evaluate", *form, "--json")
        assert result.returncode == 0, (form, result.stderr)
        outputs.append(json.loads(result.stdout))
    assert outputs[0]["measures"] == ["nDCG@10", "RR@10", "PairedAcc"]
    assert all(output == outputs[0] for output in outputs[1:])


def test_unparseable_measure_names_the_accepted_forms(tmp_path, main_cli):
    result = main_cli("evaluate", "negplugins-demo", str(_run(tmp_path, GOOD)), "-m", "nDCG@10;RR@10")
    assert_one_line_error(result, "measure 'nDCG@10;RR@10': cannot parse it", "as one string ('nDCG@10 RR@10'",
                          "as separate arguments", "separated by commas")


def test_measures_option_leaves_positionals_alone():
    from negplugins.cli import build_parser

    parse = build_parser().parse_args
    args = parse(["evaluate", "-m", "nDCG@10", "LSNC_100", "RR", "comlq", "run.trec", "other.trec"])
    assert (args.dataset, args.run, args.measures) == ("comlq", ["run.trec", "other.trec"], ["nDCG@10", "LSNC_100", "RR"])
    # a bad measure that starts like one is still the option's (and refused with its own message later)
    args = parse(["evaluate", "--meas", "nDCG@10", "nDCG@0", "comlq", "run.trec"])
    assert (args.dataset, args.measures) == ("comlq", ["nDCG@10", "nDCG@0"])
    assert parse(["evaluate", "comlq", "run.trec"]).measures is None


def test_split_measures_keeps_parameters_together():
    from negplugins.measures.parsing import looks_like_measure, split_measures

    assert split_measures("nDCG@10 LSNC@100") == split_measures("nDCG@10,LSNC@100") == ["nDCG@10", "LSNC@100"]
    assert split_measures(" nDCG(judged_only=True, dcg='exp-log2')@10 ,RR ") == [
        "nDCG(judged_only=True, dcg='exp-log2')@10", "RR"]
    assert looks_like_measure("NegRecall(conflict=2)@10,LSNC_100") and looks_like_measure("R@abc")
    assert not looks_like_measure("comlq") and not looks_like_measure("runs/comlq/bm25.trec.gz")
    assert not looks_like_measure("nDCG@10,comlq") and not looks_like_measure("")


def test_evaluate_json(tmp_path, main_cli):
    result = main_cli("evaluate", "negplugins-demo", str(_run(tmp_path, GOOD)), "--measures", "RR@10", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    # q01: d01 relevant at rank 1 -> 1; q05: d09 relevant at rank 1 -> 1; 19 judged queries missing -> 0
    assert data["overall"]["RR@10"] == pytest.approx(2 / 21)


def test_topics_file(tmp_path, main_cli):
    result = main_cli("topics", "negplugins-demo", cwd=tmp_path)
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
