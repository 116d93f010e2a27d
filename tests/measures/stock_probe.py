"""Run in a child process by test_stock_measures_untouched.py: every stock number that process computes, as JSON.

Usage: ``python stock_probe.py MEASURES SUITE_MEASURES QRELS RUN [QRELS RUN ...]``. MEASURES and SUITE_MEASURES
are space-separated measure names (SUITE_MEASURES may be empty); each QRELS and RUN are TREC files (the run's
scores written at full precision). Prints a JSON list on stdout, one object per QRELS and RUN, in their order:
``calc_aggregate``, ``iter_calc`` (sorted), ``evaluator`` and ``calc`` of MEASURES, ``pytrec_eval`` (its own
``RelevanceEvaluator``), PyTerrier's ``pt.Experiment`` means and per-query values, and which of the suite's
modules the process has loaded. Values are ``repr`` strings, so that the comparison is exact (NaN included). With
SUITE_MEASURES (a hooked process), ``mixed`` holds MEASURES and SUITE_MEASURES computed in one ``calc_aggregate``
call, ``suite_per_query`` the suite's per-query values, and ``mixed_per_query`` the rows of one ``iter_calc`` of
both. Several pairs share one process (its imports, the costly part, are done once).

This file imports nothing of the suite: in a pristine process it must stay pristine.
"""

import json
import sys


def _values(mapping):
    return {str(measure): repr(float(value)) for measure, value in mapping.items()}


def _metrics(metrics):
    """Sorted: ir_measures' own order depends on string hashing (it groups measures in a set)."""
    return sorted([metric.query_id, str(metric.measure), repr(float(metric.value))] for metric in metrics)


def _pyterrier(qrels_path, run_path, names):
    import ir_measures
    import pandas as pd
    import pyterrier as pt

    run = pd.DataFrame([(s.query_id, s.doc_id, s.score) for s in ir_measures.read_trec_run(run_path)],
                       columns=["qid", "docno", "score"])
    qrels = pd.DataFrame([(q.query_id, q.doc_id, q.relevance) for q in ir_measures.read_trec_qrels(qrels_path)],
                         columns=["qid", "docno", "label"])
    topics = pd.DataFrame({"qid": sorted(set(qrels.qid)), "query": "x"})
    measures = [ir_measures.parse_measure(name) for name in names]
    means = pt.Experiment([run], topics, qrels, eval_metrics=measures, names=["run"])
    per_query = pt.Experiment([run], topics, qrels, eval_metrics=measures, names=["run"], perquery=True)
    return {"means": {column: repr(means.iloc[0][column]) for column in means.columns if column != "name"},
            "per_query": sorted([row.qid, row.measure, repr(float(row.value))] for row in per_query.itertuples())}


def probe(qrels_path, run_path, names, suite_names=""):
    """Every value of one QRELS and RUN, as a dict (see the module's docstring)."""
    import ir_measures
    import pytrec_eval

    measures = [ir_measures.parse_measure(name) for name in names.split()]
    qrels = list(ir_measures.read_trec_qrels(qrels_path))
    run = list(ir_measures.read_trec_run(run_path))
    aggregated, per_query = ir_measures.calc(measures, qrels, run)
    qrels_dict = ir_measures.util.QrelsConverter(qrels).as_dict_of_dict()
    run_dict = ir_measures.util.RunConverter(run).as_dict_of_dict()
    trec_measures = {"recip_rank", "ndcg_cut_10", "P_1", "recall_5", "map", "success_1"}
    trec = pytrec_eval.RelevanceEvaluator(qrels_dict, trec_measures).evaluate(run_dict)
    out = {
        "calc_aggregate": _values(ir_measures.calc_aggregate(measures, qrels, run)),
        "iter_calc": _metrics(ir_measures.iter_calc(measures, qrels, run)),
        "evaluator": _values(ir_measures.evaluator(measures, qrels).calc_aggregate(run_dict)),
        "calc": [_values(aggregated), _metrics(per_query)],
        "pytrec_eval": {q: {m: repr(v) for m, v in sorted(values.items())} for q, values in sorted(trec.items())},
        "pyterrier": _pyterrier(qrels_path, run_path, names.split()),
    }
    if suite_names:
        suite = [ir_measures.parse_measure(name) for name in suite_names.split()]
        out["mixed"] = _values(ir_measures.calc_aggregate(measures + suite, qrels, run))
        out["suite_per_query"] = _metrics(ir_measures.iter_calc(suite, qrels, run))
        out["mixed_per_query"] = _metrics(ir_measures.iter_calc(measures + suite, qrels, run))
    out["loaded"] = sorted(name for name in sys.modules
                           if name.split(".")[0] in ("negplugins", "ir_datasets_ext", "_negplugins_autoload"))
    out["pipeline_attributes"] = sorted(vars(ir_measures.DefaultPipeline))
    return out


def main(names, suite_names, *paths):
    pairs = list(zip(paths[::2], paths[1::2]))
    print(json.dumps([probe(qrels_path, run_path, names, suite_names) for qrels_path, run_path in pairs]))


if __name__ == "__main__":
    main(*sys.argv[1:])
