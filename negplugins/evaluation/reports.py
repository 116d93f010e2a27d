"""Evaluations and comparisons as a plain-text table, JSON, CSV or LaTeX (docs/evaluation.md, "Output formats")."""

from __future__ import annotations

import csv
import io
import math

from ..errors import UserError
from ..measures import lower_is_better
from ..measures.ranking import TIE_HANDLING
from ..rendering.text import best_marks, json_text, latex_text, number, p_value
from .significance import ALPHA

FORMATS = ("table", "json", "csv", "latex")
_TEST_KEYS = ("n", "mean_diff", "ci95_low", "ci95_high", "t", "p_t", "p_t_holm", "p_randomization",
              "p_randomization_holm")


def _fmt(value, digits=4) -> str:
    """A mean as the text table and LaTeX write it: ``n/a`` where there is none (LaTeX then writes ``--``)."""
    return number(value, digits, missing="n/a")


def _p(value) -> str:
    """A p-value as the text table writes it (``<0.0001``, ``n/a``)."""
    return p_value(value, missing="n/a", below="<0.0001")


def _means(values, measures, digits) -> list[str]:
    return [_fmt(values.get(m), digits) for m in measures]


def _mean_rows(groups, measures, digits) -> list[list[str]]:
    """``[name, queries, *means]`` for each group of ``{name: values}``."""
    return [[name, str(values["queries"]), *_means(values, measures, digits)] for name, values in groups.items()]


def _grid(header, rows) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(w) if i == 0 else str(cell).rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def evaluation_table(ev, digits: int = 4) -> str:
    """One run: a row overall, then one row per subset (and the negation split, where the benchmark has one)."""
    header = [ev.breakdown_field or "subset", "queries", *ev.measures]
    rows = [["all", str(ev.queries), *_means(ev.overall, ev.measures, digits)],
            *_mean_rows(ev.subsets, ev.measures, digits)]
    text = _grid(header, rows)
    if ev.negation:
        text += f"\n\nBy negation (query field {ev.negation_field})\n" + _grid(
            ["group", "queries", *ev.measures], _mean_rows(ev.negation, ev.measures, digits))
    return text


def _per_query_rows(ev):
    ids = sorted({q for values in (ev.per_query or {}).values() for q in values})
    for query_id in ids:
        yield query_id, ev.query_groups.get(query_id, ""), [ev.per_query[m].get(query_id) for m in ev.measures]


def _per_query_table(evaluations, digits) -> str:
    header = ["run", "query", "subset", *evaluations[0].measures]
    rows = [[ev.label, q, group, *(_fmt(v, digits) for v in values)]
            for ev in evaluations for q, group, values in _per_query_rows(ev)]
    return _grid(header, rows)


def _significant(test, measure) -> bool:
    if not test or measure not in test:
        return False
    p = test[measure].get("p_randomization_holm")
    return p is not None and not math.isnan(p) and p < ALPHA


def _comparison_table(cmp, digits, per_query) -> str:

    base = cmp.evaluations[cmp.baseline]
    header = ["run", "queries", *cmp.measures]
    rows = []
    for ev, test in zip(cmp.evaluations, cmp.tests):
        label = ev.label + (" (baseline)" if test is None else "")
        rows.append([label, str(ev.queries), *(_fmt(ev.overall.get(m), digits) + ("*" if _significant(test, m) else "")
                                               for m in cmp.measures)])
    parts = [f"{cmp.dataset}: {len(cmp.evaluations)} runs; * = differs from the baseline {base.label} "
             f"(paired randomization test, Holm-corrected, p < {ALPHA})", _grid(header, rows)]
    test_rows = []
    for ev, test in zip(cmp.evaluations, cmp.tests):
        if test is None:
            continue
        for m in cmp.measures:
            t = test[m]
            low, high = t["ci95"]
            test_rows.append([ev.label, m + (" (lower is better)" if lower_is_better(m) else ""), str(t["n"]),
                              _fmt(t["mean_diff"], digits), f"[{_fmt(low, digits)}, {_fmt(high, digits)}]",
                              _p(t["p_t"]), _p(t["p_t_holm"]), _p(t["p_randomization"]),
                              _p(t["p_randomization_holm"])])
    if test_rows:
        per_pair = "".join(f", {m} per NevIR pair" for m in cmp.measures if m in base.units)
        parts.append(f"\nPaired tests against {base.label} (queries with a value in both runs{per_pair}; 95% CI: "
                     "t-based, of the mean difference; Holm across runs, per measure)")
        parts.append(_grid(["run", "measure", "n", "diff", "95% CI", "p(t)", "p(t) Holm", "p(rand)",
                            "p(rand) Holm"], test_rows))
    if base.subsets:
        sub_rows = []
        for name in base.subsets:
            for ev in cmp.evaluations:
                values = ev.subsets.get(name, {})
                sub_rows.append([name, ev.label, str(values.get("queries", "")),
                                 *_means(values, cmp.measures, digits)])
        parts.append(f"\nPer {base.breakdown_field}")
        parts.append(_grid([base.breakdown_field or "subset", "run", "queries", *cmp.measures], sub_rows))
    if base.negation:
        neg_rows = [[name, ev.label, str(ev.negation.get(name, {}).get("queries", "")),
                     *_means(ev.negation.get(name, {}), cmp.measures, digits)]
                    for name in base.negation for ev in cmp.evaluations]
        parts.append(f"\nBy negation (query field {base.negation_field})")
        parts.append(_grid(["group", "run", "queries", *cmp.measures], neg_rows))
    if per_query:
        parts.append("\nPer query")
        parts.append(_per_query_table(cmp.evaluations, digits))
    return "\n".join(parts)


def ties_line(result) -> str:
    """``ties: stock (what it means)``: the tie handling of an evaluation or comparison, in words."""
    return f"ties: {result.ties} ({TIE_HANDLING[result.ties]})"


def _evaluation_csv_rows(ev, suffix=""):
    for m in ev.measures:
        yield [ev.label, "all", "", m + suffix, "mean", _csv_value(ev.overall.get(m))]
        yield [ev.label, "all", "", m + suffix, "queries", ev.counts.get(m, "")]
    for name, values in ev.subsets.items():
        for m in ev.measures:
            yield [ev.label, name, "", m + suffix, "mean", _csv_value(values.get(m))]
    for name, values in ev.negation.items():
        for m in ev.measures:
            yield [ev.label, f"({name})", "", m + suffix, "mean", _csv_value(values.get(m))]
        if not suffix:  # a removal's rows give no query count per negation group
            yield [ev.label, f"({name})", "", "", "queries", values["queries"]]


def _csv_rows(evaluations, tests, per_query):
    for ev, test in zip(evaluations, tests):
        yield from _evaluation_csv_rows(ev)
        if test:
            for m in ev.measures:
                t = dict(test[m])
                t["ci95_low"], t["ci95_high"] = t["ci95"]
                for key in _TEST_KEYS:
                    yield [ev.label, "all", "", m, key, t[key] if key == "n" else _csv_value(t[key])]
        if per_query and ev.per_query is not None:
            for query_id, group, values in _per_query_rows(ev):
                for m, value in zip(ev.measures, values):
                    if value is not None:
                        yield [ev.label, group or "all", query_id, m, "value", _csv_value(value)]


def _csv_value(value):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(float(value))


def _latex(evaluations, tests, digits) -> str:

    measures = evaluations[0].measures
    several = len(evaluations) > 1
    marked = {}
    if several:
        for m in measures:
            flags = best_marks([ev.overall.get(m) for ev in evaluations], lower_is_better(m), digits)
            marked[m] = {id(ev) for ev, flag in zip(evaluations, flags) if flag}

    def cell(ev, test, m, values):
        value = values.get(m)
        text = _fmt(value, digits)
        if text == "n/a":
            return "--"
        if values is ev.overall and id(ev) in marked.get(m, ()):
            text = rf"\textbf{{{text}}}"
        if values is ev.overall and _significant(test, m):
            text += r"$^\dagger$"
        return text

    head = [("Run" if several else latex_text(evaluations[0].breakdown_field or "Subset"))]
    lines = [rf"\begin{{tabular}}{{{'l' + 'r' * len(measures)}}}", r"\toprule",
             " & ".join([*head, *(latex_text(m) for m in measures)]) + r" \\", r"\midrule"]
    if several:
        for ev, test in zip(evaluations, tests):
            label = latex_text(ev.label) + (" (baseline)" if test is None else "")
            lines.append(" & ".join([label, *(cell(ev, test, m, ev.overall) for m in measures)]) + r" \\")
    else:
        ev = evaluations[0]
        lines.append(" & ".join(["all", *(cell(ev, None, m, ev.overall) for m in measures)]) + r" \\")
        if ev.subsets:
            lines.append(r"\midrule")
            for name, values in ev.subsets.items():
                lines.append(" & ".join([latex_text(name), *(cell(ev, None, m, values) for m in measures)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if several and evaluations[0].subsets:
        field = latex_text(evaluations[0].breakdown_field or "Subset")
        lines += ["", rf"\begin{{tabular}}{{ll{'r' * len(measures)}}}", r"\toprule",
                  " & ".join([field, "Run", *(latex_text(m) for m in measures)]) + r" \\", r"\midrule"]
        names = list(evaluations[0].subsets)
        for i, name in enumerate(names):
            for j, ev in enumerate(evaluations):
                values = ev.subsets.get(name, {})
                first = latex_text(name) if j == 0 else ""
                lines.append(" & ".join([first, latex_text(ev.label), *(cell(ev, None, m, values) for m in measures)])
                             + r" \\")
            if i < len(names) - 1:
                lines.append(r"\midrule")
        lines += [r"\bottomrule", r"\end{tabular}"]
    if several:
        base = evaluations[[t is None for t in tests].index(True)].label
        lines.append(f"% $^\\dagger$: differs from {latex_text(base)} (paired randomization test, Holm-corrected, "
                     f"p < {ALPHA}); bold: best")
    return "\n".join(lines)


def render(result, fmt: str = "table", per_query: bool = False, digits: int = 4, diagnostics=None) -> str:
    """An evaluation or comparison in ``fmt``, with ``diagnostics`` after it (LaTeX refuses them)."""

    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    comparison = hasattr(result, "evaluations")  # a Comparison (duck-typed: results imports this module)
    evaluations = result.evaluations if comparison else [result]
    tests = result.tests if comparison else [None]
    if fmt == "json":
        record = result.to_dict(per_query=per_query)
        if diagnostics is not None:
            record["diagnostics"] = diagnostics.to_dict()
        return json_text(record).removesuffix("\n")  # every format is returned without its last newline
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["run", "subset", "query_id", "measure", "statistic", "value"])
        writer.writerows(_csv_rows(evaluations, tests, per_query))
        if diagnostics is not None:
            writer.writerows(_diagnostics_csv_rows(diagnostics))
        return out.getvalue().rstrip("\n")
    if fmt == "latex":
        if per_query:
            raise UserError("per-query values are not written as LaTeX; use --format csv or json with --per-query")
        if diagnostics is not None:
            raise UserError("diagnostics (--by-doc-field, --without-docs) are not written as LaTeX; use --format "
                            "table, csv or json")
        return _latex(evaluations, tests, digits) + f"\n% {ties_line(result)}"
    if comparison:
        text = _comparison_table(result, digits, per_query)
    else:
        text = evaluation_table(result, digits)
        if per_query:
            text += "\n\nPer query\n" + _per_query_table([result], digits)
    if diagnostics is not None:
        text += "\n\n" + diagnostics_table(diagnostics, digits)
    return "\n".join([text, ties_line(result), *(f"note: {n}" for n in result.notes)])


# -- diagnostics ------------------------------------------------------------------------------------

def diagnostics_table(diag, digits: int = 4) -> str:
    """Plain text of :func:`~negplugins.evaluation.diagnostics.diagnose`: shares of the top k, removals."""
    parts = []
    if diag.field is not None:
        subset_name = diag.breakdown_field or "subset"
        parts.append(f"Share of the top {diag.k} by document {diag.field} (mean over the judged queries with "
                     "results; each query's shares sum to 1)")
        rows = []
        for shares in diag.shares:
            rows.append([shares.run, "all", str(shares.queries), *_means(shares.overall, shares.values, digits)])
            rows += [[shares.run, *row] for row in _mean_rows(shares.subsets, shares.values, digits)]
        values = diag.shares[0].values if diag.shares else diag.values
        parts.append(_grid(["run", subset_name, "queries", *values], rows))
    for removal in diag.removals:
        if parts:
            parts.append("")
        parts.append(f"Without {removal.field}={removal.value}: {removal.documents} documents removed from the runs "
                     f"and the qrels ({removal.judged} judgements removed, {removal.queries_dropped} queries left "
                     "without judgements dropped)")
        measures = removal.evaluations[0].measures if removal.evaluations else []
        rows = []
        for ev in removal.evaluations:
            rows.append([ev.label, "all", str(ev.queries), *_means(ev.overall, measures, digits)])
            rows += [[ev.label, *row] for row in _mean_rows(ev.subsets, measures, digits)]
            rows += [[ev.label, f"({row[0]})", *row[1:]] for row in _mean_rows(ev.negation, measures, digits)]
        parts.append(_grid(["run", diag.breakdown_field or "subset", "queries", *measures], rows))
    return "\n".join(parts)


def _diagnostics_csv_rows(diag):
    for shares in diag.shares:
        for value in shares.values:
            measure = f"share@{shares.k}[{shares.field}={value}]"
            yield [shares.run, "all", "", measure, "mean", _csv_value(shares.overall.get(value))]
            yield [shares.run, "all", "", measure, "queries", shares.queries]
            for name, values in shares.subsets.items():
                yield [shares.run, name, "", measure, "mean", _csv_value(values.get(value))]
    for removal in diag.removals:
        for ev in removal.evaluations:
            yield from _evaluation_csv_rows(ev, f"[without {removal.field}={removal.value}]")
