"""A list option names each thing once: a value given twice is refused, as any other bad value of the option.

``--benchmarks nevir,nevir``, ``-m nDCG@10,nDCG@10``, a run file named twice, one ``--without-docs`` removal asked
twice or one faiss ``--search-params`` setting given twice is a slip (a typo for another value), never a request
to do the work twice: the command stops before any work with one line naming the option and the value, exit
status 2, and writes nothing. Two spellings of one thing count as one (``./run.trec`` and ``run.trec``;
``NegRecall_10`` and ``NegRecall@10``).
"""

from __future__ import annotations

import pytest

from negplugins.errors import UserError

DEMO = "negplugins-demo"
RUN_LINES = "q01 Q0 d01 1 3.5 test\nq01 Q0 d02 2 1.0 test\nq05 Q0 d09 1 2.0 test\n"

REPEATS = {
    "benchmarks": (["benchmark", "--model", "default", "--benchmarks", "nevir,excluir,nevir"],
                   "--benchmarks: benchmark 'nevir' is given twice; give each benchmark once"),
    "measures": (["evaluate", DEMO, "run.trec", "-m", "nDCG@10,RR@10,nDCG@10"],
                 "--measures: measure 'nDCG@10' is given twice; give each measure once"),
    "measures-repeated-option": (["evaluate", DEMO, "run.trec", "-m", "RR@10", "-m", "RR@10"],
                                 "--measures: measure 'RR@10' is given twice"),
    "measures-two-spellings": (["evaluate", DEMO, "run.trec", "-m", "NegRecall_10", "NegRecall@10"],
                               "--measures: measure 'NegRecall@10' is given twice"),
    "evaluate-runs": (["evaluate", DEMO, "run.trec", "other.trec", "./run.trec"],
                      "run './run.trec' is given twice (as 'run.trec'); give each run once"),
    "validate-runs": (["validate", DEMO, "run.trec", "run.trec"], "run 'run.trec' is given twice"),
    "without-docs": (["evaluate", DEMO, "run.trec", "--without-docs", "text=x", "--without-docs", "text=x"],
                     "--without-docs: removal 'text=x' is given twice; give each removal once"),
}


@pytest.mark.parametrize("case", list(REPEATS))
def test_a_value_given_twice_is_refused_before_any_work(case, main_cli, guard, tmp_path):
    args, message = REPEATS[case]
    (tmp_path / "run.trec").write_text(RUN_LINES)
    (tmp_path / "other.trec").write_text(RUN_LINES.replace("3.5", "2.5"))
    guard.arm(tmp_path)
    result = main_cli(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"negplugins: error: {message}"), result.stderr
    guard.unchanged(allow_new=False)


def test_the_python_api_refuses_the_same_repeats(tmp_path):
    from negplugins.evaluation.scoring import evaluate, evaluate_runs
    from negplugins.reportcard import select_benchmarks
    from negplugins.runners.dense_options import check_search_params

    run = tmp_path / "run.trec"
    run.write_text(RUN_LINES)
    with pytest.raises(UserError, match=r"^--benchmarks: benchmark 'nevir' is given twice"):
        select_benchmarks(["nevir", "nevir"])
    with pytest.raises(UserError, match=r"^--measures: measure 'RR@10' is given twice"):
        evaluate(DEMO, run, measures="RR@10 RR@10")
    with pytest.raises(UserError, match=r"^run '.*run.trec' is given twice"):
        evaluate_runs(DEMO, [run, str(run)], measures=["RR@10"])
    with pytest.raises(UserError, match=r"^--search-params 'nprobe=4, nprobe=8': nprobe is set twice"):
        check_search_params("nprobe=4, nprobe=8")
    check_search_params("nprobe=4,efSearch=8")
    assert [s.name for s in select_benchmarks("nevir,excluir")] == ["excluir", "nevir"]  # registration order
    assert evaluate(DEMO, run, measures="RR@10 nDCG@10").measures == ["RR@10", "nDCG@10"]


def test_check_distinct():
    from negplugins.options import check_distinct

    assert check_distinct(iter(["a", "b"]), "--x", "thing") == ["a", "b"]
    with pytest.raises(UserError, match=r"^--x: thing 'B' is given twice \(as 'b'\); give each thing once$"):
        check_distinct(["b", "c", "B"], "--x", "thing", key=str.lower)
