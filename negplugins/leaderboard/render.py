"""Render leaderboard records as JSON, Markdown and self-contained HTML (inline CSS, JS and SVG).

Every text that comes from a contribution is escaped (``html.escape`` for HTML, and for Markdown also
``|`` and backticks), so a system name such as ``<script>`` is shown, never run.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from ir_datasets_ext.benchmark import benchmarks

from ..evaluation.significance import ALPHA

__all__ = ["json_text", "markdown", "html_page", "index_record", "index_markdown", "index_html"]

_ASSETS = Path(__file__).with_name("assets")
PALETTE = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#332288", "#117733",
           "#882255")
MAX_CHART_RUNS = len(PALETTE)


def json_text(record) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"


def _num(value, digits=4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _md(text) -> str:
    """Escape metadata for a Markdown table cell (HTML-escaped too: GitHub renders inline HTML)."""
    return html.escape(str(text), quote=True).replace("|", "&#124;").replace("`", "&#96;").replace("\n", " ") \
        .replace("[", "&#91;").replace("]", "&#93;").replace("*", "&#42;").replace("_", "&#95;")


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _best(record, measure):
    """The best overall value of ``measure``: the smallest for a lower-is-better measure, else the largest."""
    values = [r["overall"][measure] for r in record["runs"] if r["overall"][measure] is not None]
    if not values:
        return None
    return min(values) if measure in record["lower_is_better"] else max(values)


def _is_best(record, value, best) -> bool:
    """Whether a run's value is marked best: it shows as the best value does (every run tied for best is marked).

    Values are compared as shown (:func:`_num`, 4 decimals), so two cells that read the same are both marked or
    neither is; with a single run nothing is marked.
    """
    return value is not None and best is not None and len(record["runs"]) > 1 and _num(value) == _num(best)


def _marker(run, measure) -> bool:
    test = (run.get("vs_baseline") or {}).get(measure)
    return bool(test and test["p_randomization_holm"] is not None and test["p_randomization_holm"] < ALPHA)


def _measure_label(record, measure) -> str:
    return measure + (" ↓" if measure in record["lower_is_better"] else "")


# -- Markdown ---------------------------------------------------------------------------------------

def markdown(record) -> str:
    measures = record["measures"]
    lines = [f"# Leaderboard: {_md(record['dataset'])}", "",
             f"{record['queries']} judged queries. Sorted by {_md(record['primary'])}"
             f"{' (lower is better)' if record['primary'] in record['lower_is_better'] else ''}. "
             f"↓ = lower is better. † = differs from the baseline {_md(record['baseline'])} "
             f"(paired randomization test, Holm-corrected, p < {ALPHA}).", ""]
    for note in record["notes"]:
        lines += [f"> Note: {_md(note)}", ""]
    header = ["#", "System", "Run", "Runner", *(_md(_measure_label(record, m)) for m in measures), "Date"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---:", "---", "---", "---", *(["---:"] * len(measures)), "---"]) + "|")
    best = {m: _best(record, m) for m in measures}
    for position, run in enumerate(record["runs"], start=1):
        cells = []
        for m in measures:
            value = run["overall"][m]
            text = _num(value) + ("†" if _marker(run, m) else "")
            if _is_best(record, value, best[m]):
                text = f"**{text}**"
            cells.append(text)
        name = _md(run["name"]) + (" (baseline)" if run["name"] == record["baseline"] else "")
        lines.append("| " + " | ".join([str(position), _md(run["system"]), name, _md(run["runner"]), *cells,
                                        _md(run["date"])]) + " |")
    if record["subsets"]:
        field = record["breakdown_field"] or "subset"
        lines += ["", f"## Per {_md(field)}", ""]
        subsets = list(record["subsets"])
        for m in measures:
            lines += [f"### {_md(_measure_label(record, m))}", ""]
            lines.append("| Run | " + " | ".join(f"{_md(s)} ({record['subsets'][s]})" for s in subsets) + " |")
            lines.append("|---|" + "|".join(["---:"] * len(subsets)) + "|")
            for run in record["runs"]:
                lines.append(f"| {_md(run['name'])} | " + " | ".join(_num(run["subsets"].get(s, {}).get(m))
                                                                    for s in subsets) + " |")
            lines.append("")
    lines += ["", "## Runs", ""]
    for run in record["runs"]:
        lines.append(f"- **{_md(run['name'])}** (`{_md(run['path'])}`): {_md(run['system'])}; tag {_md(run['tag'])}"
                     + (f"; model {_md(run['model'])}" if run["model"] else "")
                     + (f"; {run['queries_without_results']} queries without results"
                        if run["queries_without_results"] else "")
                     + (f"; command: {_md(run['command'])}" if run["command"] else ""))
    lines += ["", f"Significance: {_md(record['significance'])}.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# -- HTML -------------------------------------------------------------------------------------------

def _page(title: str, body: str) -> str:
    css = (_ASSETS / "leaderboard.css").read_text(encoding="utf-8")
    js = (_ASSETS / "leaderboard.js").read_text(encoding="utf-8")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
            f"<title>{_e(title)}</title>\n<style>\n{css}</style>\n</head>\n<body>\n{body}\n"
            f"<script>\n{js}</script>\n</body>\n</html>\n")


def _bar_chart(record, measure) -> str:
    """A grouped bar chart (inline SVG): one group per subset, one bar per run (the first runs by rank)."""
    runs = record["runs"][:MAX_CHART_RUNS]
    subsets = list(record["subsets"])
    values = [run["subsets"].get(s, {}).get(measure) for run in runs for s in subsets]
    present = [v for v in values if v is not None]
    if not present:
        return f"<p class=\"note\">{_e(measure)}: no value in any subset.</p>"
    low = min(0.0, min(present))
    high = max(1.0, max(present))
    width_bar, gap, height, top, bottom, left = 10, 14, 160, 10, 40, 44
    group = width_bar * len(runs) + gap
    width = left + group * len(subsets) + 10

    def y(value):
        return top + (high - value) / (high - low) * height

    parts = [f"<svg class=\"chart\" role=\"img\" width=\"{width}\" height=\"{top + height + bottom}\" "
             f"viewBox=\"0 0 {width} {top + height + bottom}\" xmlns=\"http://www.w3.org/2000/svg\">",
             f"<title>{_e(measure)} per {_e(record['breakdown_field'] or 'subset')}</title>"]
    for tick in sorted({low, 0.0, (low + high) / 2, high}):
        parts.append(f"<line x1=\"{left - 4}\" x2=\"{width - 10}\" y1=\"{y(tick):.1f}\" y2=\"{y(tick):.1f}\" "
                     f"stroke=\"#d0d7de\" stroke-width=\"1\"/>")
        parts.append(f"<text x=\"{left - 6}\" y=\"{y(tick) + 4:.1f}\" font-size=\"10\" text-anchor=\"end\">"
                     f"{tick:.2f}</text>")
    for g, subset in enumerate(subsets):
        x0 = left + g * group + gap / 2
        for r, run in enumerate(runs):
            value = run["subsets"].get(subset, {}).get(measure)
            if value is None:
                continue
            y_value, y_zero = y(value), y(0.0)
            parts.append(f"<rect x=\"{x0 + r * width_bar:.1f}\" y=\"{min(y_value, y_zero):.1f}\" "
                         f"width=\"{width_bar - 1}\" height=\"{max(abs(y_zero - y_value), 0.5):.1f}\" "
                         f"fill=\"{PALETTE[r]}\"><title>{_e(run['name'])}, {_e(subset)}: {value:.4f}</title></rect>")
        parts.append(f"<text x=\"{x0 + width_bar * len(runs) / 2:.1f}\" y=\"{top + height + 16}\" font-size=\"11\" "
                     f"text-anchor=\"middle\">{_e(subset)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def html_page(record) -> str:
    measures = record["measures"]
    best = {m: _best(record, m) for m in measures}
    body = ["<p><a href=\"index.html\">All leaderboards</a></p>",
            f"<h1>Leaderboard: {_e(record['dataset'])}</h1>",
            f"<p>{record['queries']} judged queries. Sorted by {_e(record['primary'])}; click a column header to "
            f"sort. ↓ = lower is better. † = differs from the baseline <b>{_e(record['baseline'])}</b> (paired "
            f"randomization test, Holm-corrected, p &lt; {ALPHA}).</p>"]
    for note in record["notes"]:
        body.append(f"<p class=\"note\">Note: {_e(note)}</p>")
    head = ["<th data-type=\"number\" data-order=\"asc\" class=\"num\">#</th>", "<th data-type=\"text\">System</th>",
            "<th data-type=\"text\">Run</th>", "<th data-type=\"text\">Runner</th>"]
    for m in measures:
        order = "asc" if m in record["lower_is_better"] else "desc"
        head.append(f"<th data-type=\"number\" data-order=\"{order}\" class=\"num\">{_e(_measure_label(record, m))}</th>")
    head.append("<th data-type=\"text\">Date</th>")
    rows = []
    for position, run in enumerate(record["runs"], start=1):
        cells = [f"<td class=\"num\" data-value=\"{position}\">{position}</td>", f"<td>{_e(run['system'])}</td>",
                 f"<td><code>{_e(run['name'])}</code>{' (baseline)' if run['name'] == record['baseline'] else ''}</td>",
                 f"<td>{_e(run['runner'])}</td>"]
        for m in measures:
            value = run["overall"][m]
            test = (run.get("vs_baseline") or {}).get(m)
            tip = ""
            if test and test["mean_diff"] is not None:
                ci = test["ci95"]
                tip = (f" title=\"vs {_e(record['baseline'])}: diff {test['mean_diff']:+.4f}, 95% CI "
                       f"[{_num(ci[0])}, {_num(ci[1])}], p (randomization, Holm) {_num(test['p_randomization_holm'])}, "
                       f"n={test['n']}\"")
            classes = "num best" if _is_best(record, value, best[m]) else "num"
            data = "" if value is None else f"{value:.6f}"
            cells.append(f"<td class=\"{classes}\" data-value=\"{data}\"{tip}>{_num(value)}"
                         f"{'†' if _marker(run, m) else ''}</td>")
        cells.append(f"<td>{_e(run['date'])}</td>")
        rows.append(f"<tr data-run=\"{_e(run['name'])}\">" + "".join(cells) + "</tr>")
    body.append("<table id=\"leaderboard\" class=\"sortable\">\n<thead><tr>" + "".join(head) + "</tr></thead>\n<tbody>\n"
                + "\n".join(rows) + "\n</tbody>\n</table>")
    if record["subsets"]:
        field = record["breakdown_field"] or "subset"
        subsets = list(record["subsets"])
        body.append(f"<h2>Per {_e(field)}</h2>")
        shown = record["runs"][:MAX_CHART_RUNS]
        body.append("<p class=\"legend\">" + "".join(
            f"<span><i style=\"background:{PALETTE[i]}\"></i>{_e(run['name'])}</span>" for i, run in enumerate(shown))
            + (f" <span class=\"note\">(first {MAX_CHART_RUNS} runs)</span>" if len(record["runs"]) > MAX_CHART_RUNS
               else "") + "</p>")
        for m in measures:
            body.append(f"<h3>{_e(_measure_label(record, m))}</h3>")
            body.append(_bar_chart(record, m))
            head_cells = "<th data-type=\"text\">Run</th>" + "".join(
                f"<th data-type=\"number\" class=\"num\">{_e(s)} ({record['subsets'][s]})</th>" for s in subsets)
            sub_rows = []
            for run in record["runs"]:
                values = [run["subsets"].get(s, {}).get(m) for s in subsets]
                sub_rows.append(f"<tr><td><code>{_e(run['name'])}</code></td>" + "".join(
                    f"<td class=\"num\" data-value=\"{'' if v is None else f'{v:.6f}'}\">{_num(v)}</td>" for v in values)
                    + "</tr>")
            body.append(f"<table class=\"sortable subsets\">\n<thead><tr>{head_cells}</tr></thead>\n<tbody>\n"
                        + "\n".join(sub_rows) + "\n</tbody>\n</table>")
    body.append("<h2>Runs</h2>\n<ul>")
    for run in record["runs"]:
        body.append(f"<li><code>{_e(run['path'])}</code>: {_e(run['system'])}; tag <code>{_e(run['tag'])}</code>"
                    + (f"; model {_e(run['model'])}" if run["model"] else "")
                    + (f"; {run['queries_without_results']} queries without results"
                       if run["queries_without_results"] else "")
                    + (f"<br><code>{_e(run['command'])}</code>" if run["command"] else "") + "</li>")
    body.append("</ul>")
    body.append(f"<p class=\"note\">Significance: {_e(record['significance'])}.</p>")
    return _page(f"Leaderboard: {record['dataset']}", "\n".join(body))


# -- index ------------------------------------------------------------------------------------------

def benchmark_description(spec) -> str:
    """What a benchmark tests and its paper's measures, as the index lists them (from its spec)."""
    return f"{spec.summary} ({', '.join(spec.paper_name(m) for m in spec.measures)})"


def index_record(records) -> dict:
    """The index across benchmarks, in the specs' order, each with its leaderboards."""
    families = []
    for spec in benchmarks():
        prefix, title, description = spec.name, spec.title, benchmark_description(spec)
        boards = []
        for record in records:
            if record["family"] != prefix:
                continue
            top = record["runs"][0] if record["runs"] else None
            boards.append({"dataset": record["dataset"], "slug": record["slug"], "runs": len(record["runs"]),
                           "primary": record["primary"],
                           "top": None if top is None else {"name": top["name"], "system": top["system"],
                                                            "value": top["overall"][record["primary"]]}})
        families.append({"family": prefix, "title": title, "description": description, "leaderboards": boards})
    return {"benchmarks": families}


def index_markdown(records) -> str:
    index = index_record(records)
    lines = ["# negplugins leaderboards", "",
             "Built by `negplugins leaderboard build` from the runs in `runs/` (see `runs/README.md`); "
             "checked in CI by `negplugins leaderboard check`. Do not edit by hand.", "",
             "| Benchmark | Dataset | Runs | Best system | Score |", "|---|---|---:|---|---:|"]
    for family in index["benchmarks"]:
        if not family["leaderboards"]:
            lines.append(f"| {_md(family['title'])} | – | 0 | no runs yet | – |")
        for board in family["leaderboards"]:
            top = board["top"]
            lines.append(f"| {_md(family['title'])} | [{_md(board['dataset'])}]({board['slug']}.md) | {board['runs']} | "
                         f"{_md(top['system']) if top else '–'} | "
                         f"{_md(board['primary'])} {_num(top['value']) if top else '–'} |")
    return "\n".join(lines) + "\n"


def index_html(records) -> str:
    index = index_record(records)
    body = ["<h1>negplugins leaderboards</h1>",
            "<p>Negation, exclusion and Boolean-logic retrieval benchmarks. Built by <code>negplugins leaderboard "
            "build</code> from the contributed runs; see <code>runs/README.md</code> to add one.</p>",
            "<table id=\"index\" class=\"sortable\">\n<thead><tr><th data-type=\"text\">Benchmark</th>"
            "<th data-type=\"text\">Dataset</th><th data-type=\"number\" class=\"num\">Runs</th>"
            "<th data-type=\"text\">Best system</th><th data-type=\"text\">Measure</th>"
            "<th data-type=\"number\" class=\"num\">Score</th></tr></thead>\n<tbody>"]
    for family in index["benchmarks"]:
        if not family["leaderboards"]:
            body.append(f"<tr><td title=\"{_e(family['description'])}\">{_e(family['title'])}</td><td>–</td>"
                        "<td class=\"num\" data-value=\"0\">0</td><td>no runs yet</td><td></td>"
                        "<td class=\"num\" data-value=\"\">–</td></tr>")
        for board in family["leaderboards"]:
            top = board["top"]
            value = top["value"] if top else None
            body.append(f"<tr><td title=\"{_e(family['description'])}\">{_e(family['title'])}</td>"
                        f"<td><a href=\"{_e(board['slug'])}.html\">{_e(board['dataset'])}</a></td>"
                        f"<td class=\"num\" data-value=\"{board['runs']}\">{board['runs']}</td>"
                        f"<td>{_e(top['system']) if top else '–'}</td><td>{_e(board['primary'])}</td>"
                        f"<td class=\"num\" data-value=\"{'' if value is None else f'{value:.6f}'}\">{_num(value)}</td></tr>")
    body.append("</tbody>\n</table>")
    return _page("negplugins leaderboards", "\n".join(body))
