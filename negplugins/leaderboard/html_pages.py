"""The leaderboards in self-contained HTML (inline CSS, JS and SVG): one page per dataset, the index, the
reproduction page.

Every text that comes from a contribution or a spec is escaped (:func:`negplugins.rendering.text.html_text`),
so a system name such as ``<script>`` is shown, never run, and a paper is linked only through an http(s)
address (the build keeps no other). The paper's numbers are "reported in the paper" rows: a second
``<tbody class="reported">`` of the same table (the sort script, ``assets/leaderboard.js``, orders only the
runs' ``<tbody>``), with no rank, no significance mark and no "best" highlight, and a numbered source for each
row. What the pages say is decided in :mod:`negplugins.leaderboard.board`.
"""

from __future__ import annotations

from pathlib import Path

from ir_datasets_ext.derived import DERIVED

from ..evaluation.significance import ALPHA
from ..measures import per_pair
from ..rendering.charts import PALETTE, grouped_bar_chart, stacked_bar
from ..rendering.page import html_document
from ..rendering.text import html_text as _e
from ..rendering.text import number, signed
from . import board
from .board import REPORTED_LABEL

__all__ = ["html_page", "index_html", "reproduction_html", "MAX_CHART_RUNS"]

_ASSETS = Path(__file__).with_name("assets")
#: Runs drawn in a chart (one colour each); the tables list them all.
MAX_CHART_RUNS = len(PALETTE)


def _page(title: str, body: str) -> str:
    css = (_ASSETS / "leaderboard.css").read_text(encoding="utf-8")
    js = (_ASSETS / "leaderboard.js").read_text(encoding="utf-8")
    return html_document(title, body, css=css, script=js)


def _paper_link_html(record) -> str:
    paper = record.get("paper") or {}
    ref = _e(board.paper_ref(record))
    return f"<a href=\"{_e(paper['url'])}\">{ref}</a>" if paper.get("url") else ref


def _bar_chart(record, measure) -> str:
    """The runs' ``measure`` per subset as a grouped bar chart (the first :data:`MAX_CHART_RUNS` runs by rank)."""
    runs = record["runs"][:MAX_CHART_RUNS]
    subsets = list(record["subsets"])
    series = [(run["name"], [run["subsets"].get(s, {}).get(measure) for s in subsets]) for run in runs]
    if not any(v is not None for _, values in series for v in values):
        return f"<p class=\"note\">{_e(measure)}: no value in any subset.</p>"
    return grouped_bar_chart(f"{measure} per {record['breakdown_field'] or 'subset'}", subsets, series)


def _num_cell(value) -> str:
    """A sortable number cell of the runs' tables."""
    return f"<td class=\"num\" data-value=\"{'' if value is None else f'{value:.6f}'}\">{number(value)}</td>"


def _reported_cell(entry) -> str:
    """A number reported in the paper, its source as the cell's title (not sortable: no data-value)."""
    if entry is None:
        return "<td class=\"num\">–</td>"
    return f"<td class=\"num\" title=\"{_e(board.source_text(entry))}\">{entry['printed']}</td>"


def _html_sources(sources) -> str:
    if not sources:
        return ""
    return ("<ol class=\"sources\">" + "".join(f"<li id=\"{_e(anchor)}\">{text}</li>" for anchor, text in sources)
            + "</ol>")


def _html_reported_body(record, columns, sources) -> str:
    """The paper's numbers as a ``<tbody class="reported">`` of the leaderboard (no rank, no test, no "best")."""
    systems = board.reported_by_system(record)
    if not systems:
        return ""
    rows = [f"<tr class=\"reported-head\"><th colspan=\"{len(columns) + 5}\" scope=\"rowgroup\">Reported in the paper "
            f"({_paper_link_html(record)}): not ranked, not tested against the runs</th></tr>"]
    for system, values in systems.items():
        anchor = f"source-{len(sources) + 1}"
        sources.append((anchor, f"<b>{_e(system)}</b>: " + "; ".join(
            f"{_e(values[m]['paper_measure'])} {values[m]['printed']}: {_e(board.source_text(values[m]))}"
            for m in columns if m in values)))
        cells = ["<td class=\"num rank\"></td>",
                 f"<td>{_e(system)}<sup class=\"source-ref\"><a href=\"#{anchor}\">{len(sources)}</a></sup></td>",
                 f"<td><span class=\"label\">{REPORTED_LABEL}</span></td>", f"<td>{_paper_link_html(record)}</td>"]
        cells += [_reported_cell(values.get(m)) for m in columns]
        cells.append("<td></td>")
        rows.append(f"<tr class=\"reported\" data-system=\"{_e(system)}\">" + "".join(cells) + "</tr>")
    return "<tbody class=\"reported\">\n" + "\n".join(rows) + "\n</tbody>"


def html_page(record) -> str:
    measures = record["measures"]
    extra = board.paper_only_measures(record)
    columns = [*measures, *extra]
    best = {m: board.best_runs(record, m) for m in measures}
    body = ["<p><a href=\"index.html\">All leaderboards</a> · <a href=\"reproduction.html\">Reproduction of the "
            "papers</a></p>", f"<h1>Leaderboard: {_e(record['dataset'])}</h1>", _html_sources_line(record)]
    if record["runs"]:
        body.append(f"<p>{record['queries']} judged queries. Sorted by {_e(record['primary'])}; click a column header "
                    f"to sort. ↓ = lower is better. <b>Bold</b> = best (every run tied for it; none where all runs "
                    f"tie). † = differs from the baseline <b>{_e(record['baseline'])}</b> "
                    f"(paired randomization test, Holm-corrected, p &lt; {ALPHA}). {_e(board.ties_sentence(record))} "
                    f"Rows in grey italics are the numbers {REPORTED_LABEL} ({_paper_link_html(record)}): never "
                    f"ranked or tested.</p>")
    else:
        body.append("<p>No contributed run yet (see <code>runs/README.md</code> to add one)."
                    + (f" The rows in grey italics are the numbers {REPORTED_LABEL} ({_paper_link_html(record)}), "
                       "as the benchmark's spec records them." if record.get("reported") else "") + "</p>")
    for note in record["notes"]:
        body.append(f"<p class=\"note\">Note: {_e(note)}</p>")
    head = ["<th data-type=\"number\" data-order=\"asc\" class=\"num\">#</th>", "<th data-type=\"text\">System</th>",
            "<th data-type=\"text\">Run</th>", "<th data-type=\"text\">Runner</th>"]
    for m in columns:
        order = "asc" if m in record["lower_is_better"] else "desc"
        paper_only = " paper-only" if m in extra else ""
        head.append(f"<th data-type=\"number\" data-order=\"{order}\" class=\"num{paper_only}\">"
                    f"{_e(board.label_with_paper(record, m))}</th>")
    head.append("<th data-type=\"text\" class=\"date\">Date</th>")
    rows = []
    for position, run in enumerate(record["runs"], start=1):
        system = _e(run["system"]) + (f" <span class=\"repro\">reproduces {_e(run['reproduces'])}</span>"
                                      if run.get("reproduces") else "")
        cells = [f"<td class=\"num\" data-value=\"{position}\">{position}</td>", f"<td>{system}</td>",
                 f"<td><code>{_e(run['name'])}</code>{' (baseline)' if run['name'] == record['baseline'] else ''}</td>",
                 f"<td>{_e(run['runner'])}</td>"]
        for m in measures:
            value = run["overall"][m]
            test = (run.get("vs_baseline") or {}).get(m)
            tip = ""
            if test and test["mean_diff"] is not None:
                ci = test["ci95"]
                tip = (f" title=\"vs {_e(record['baseline'])}: diff {signed(test['mean_diff'])}, 95% CI "
                       f"[{number(ci[0])}, {number(ci[1])}], p (randomization, Holm) {number(test['p_randomization_holm'])}, "
                       f"n={test['n']}\"")
            classes = "num best" if run["name"] in best[m] else "num"
            data = "" if value is None else f"{value:.6f}"
            cells.append(f"<td class=\"{classes}\" data-value=\"{data}\"{tip}>{number(value)}"
                         f"{'†' if board.differs_from_baseline(run, m) else ''}</td>")
        for _measure in extra:
            cells.append("<td class=\"num\" data-value=\"\" title=\"not computed for the runs\">–</td>")
        cells.append(f"<td class=\"date\">{_e(run['date'])}</td>")
        rows.append(f"<tr data-run=\"{_e(run['name'])}\">" + "".join(cells) + "</tr>")
    if not rows:
        rows.append(f"<tr class=\"empty\"><td colspan=\"{len(columns) + 5}\">No contributed run yet.</td></tr>")
    sources: list = []
    reported_body = _html_reported_body(record, columns, sources)
    body.append("<table id=\"leaderboard\" class=\"sortable\">\n<thead><tr>" + "".join(head)
                + "</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n"
                + (reported_body + "\n" if reported_body else "") + "</table>")
    if not record.get("reported"):
        body.append("<p class=\"note\">The benchmark's spec records no number of its paper "
                    f"({_paper_link_html(record)}) on this dataset.</p>")
    body += _html_per_query(record)
    body += _html_reproductions(record)
    body += _html_subsets(record, sources)
    if sources:
        body.append("<h2>Sources of the paper's numbers</h2>")
        body.append(_html_sources(sources))
    body += _html_doc_field(record)
    body += _html_negation(record)
    if record["runs"]:
        body.append("<h2>Runs</h2>\n<ul class=\"runs\">")
        for run in record["runs"]:
            links = run.get("links") or {}
            files = (f"<a href=\"{_e(links['run'])}\">run file</a> · <a href=\"{_e(links['sidecar'])}\">sidecar</a>"
                     if links else "")
            details = "".join(f"<dt>{_e(label)}</dt><dd>{_html_first_stage(run) if label == 'first stage' else _e(text)}"
                              "</dd>" for label, text in board.provenance(run))
            if run["command"]:
                details += f"<dt>command</dt><dd><code>{_e(run['command'])}</code></dd>"
            body.append(f"<li id=\"run-{_e(run['name'])}\"><code>{_e(run['path'])}</code>"
                        + (f" ({files})" if files else "") + f": {_e(run['system'])}; tag <code>{_e(run['tag'])}</code>"
                        + (f"; model {_e(run['model'])}" if run["model"] else "")
                        + (f"; reproduces {_e(run['reproduces'])}" + (" (the authors' pipeline)"
                                                                       if run.get("authors_pipeline") else "")
                           if run.get("reproduces") else "")
                        + (f"; {run['queries_without_results']} queries without results"
                           if run["queries_without_results"] else "")
                        + f"<dl class=\"provenance\">{details}</dl></li>")
        body.append("</ul>")
        body.append(f"<p class=\"note\">Significance: {_e(record['significance'])}.</p>")
    body.append(f"<p class=\"note built\">{_e(board.built_with(record))}</p>")
    return _page(f"Leaderboard: {record['dataset']}", "\n".join(body))


def _html_sources_line(record) -> str:
    paper = record.get("paper") or {}
    parts = [f"Paper: {_paper_link_html(record)}" + (f" ({_e(paper['title'])})" if paper.get("title") else "")]
    if record.get("data_url"):
        parts.append(f"Data: <a href=\"{_e(record['data_url'])}\">{_e(record['data_url'])}</a>")
    return "<p class=\"sources-line\">" + " · ".join(parts) + "</p>"


def _html_first_stage(run) -> str:
    first = run.get("first_stage") or {}
    href = (run.get("links") or {}).get("first_stage")
    text = f"<code>{_e(first.get('run') or '')}</code>"
    return f"<a href=\"{_e(href)}\">{text}</a>" if href else text


def _html_per_query(record) -> list[str]:
    rows = board.tested_runs(record)
    if not rows:
        return []
    measures = record["measures"]
    head = "<th>Run</th>" + "".join(f"<th class=\"num\">{_e(board.measure_label(record, m))}</th>" for m in measures)
    body = []
    for run, tests in rows:
        cells = []
        for m in measures:
            test = tests.get(m)
            units = "pairs" if per_pair(m) else "queries"
            title = (f" title=\"{test['wins']} {units} better than {_e(record['baseline'])}, {test['losses']} worse, "
                     f"{test['ties']} equal, of {test['n']}\"" if test and "wins" in test else "")
            cells.append(f"<td class=\"num wlt\"{title}>{board.wins_losses_text(test)}</td>")
        body.append(f"<tr data-run=\"{_e(run['name'])}\"><td><code>{_e(run['name'])}</code></td>{''.join(cells)}</tr>")
    return [f"<h2>Per query against the baseline {_e(record['baseline'])}</h2>",
            "<p>Wins / losses / ties: the queries on which the run is better than the baseline, worse, or equal "
            "(lower is better for ↓), among those where the measure has a value in both."
            f"{_e(board.pair_units_sentence(record))}</p>",
            f"<table id=\"per-query\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body)
            + "\n</tbody>\n</table>"]


def _html_reproductions(record) -> list[str]:
    rows = record.get("reproductions") or []
    if not rows:
        return []
    out = ["<h2>Runs beside the paper's systems they reproduce</h2>",
           "<p>Gap = run minus paper. See also the <a href=\"reproduction.html\">reproduction page</a>.</p>",
           "<table id=\"reproductions\">\n<thead><tr><th>Run</th><th>Reproduces</th><th>Measure</th><th>Subset</th>"
           "<th class=\"num\">Paper</th><th class=\"num\">Run</th><th class=\"num\">Gap</th><th>Source</th>"
           "</tr></thead>\n"
           "<tbody>"]
    for r in rows:
        out.append(f"<tr><td><code>{_e(r['run'])}</code></td><td>{_e(r['system'])}"
                   f"{' (authors’ pipeline)' if r['authors_pipeline'] else ''}</td><td>{_e(r['measure'])}</td>"
                   f"<td>{_e(r['subset'] or 'all')}</td><td class=\"num paper\">{r['paper_printed']}</td>"
                   f"<td class=\"num\">{number(r['value'])}{_e(board.on_copy(r))}</td><td class=\"num gap\">{signed(r['gap'])}</td>"
                   f"<td>{_e(r['source'])}</td></tr>")
    out.append("</tbody>\n</table>")
    return out


def _html_subsets(record, sources) -> list[str]:
    if not record["subsets"]:
        return []
    field = record["breakdown_field"] or "subset"
    subsets = list(record["subsets"])
    out = [f"<h2>Per {_e(field)}</h2>"]
    shown = record["runs"][:MAX_CHART_RUNS]
    if shown:
        out.append("<p class=\"legend\">" + "".join(
            f"<span><i style=\"background:{PALETTE[i]}\"></i>{_e(run['name'])}</span>" for i, run in enumerate(shown))
            + (f" <span class=\"note\">(first {MAX_CHART_RUNS} runs)</span>" if len(record["runs"]) > MAX_CHART_RUNS
               else "") + "</p>")
    for m in board.subset_measures(record):
        out.append(f"<h3>{_e(board.measure_label(record, m))}</h3>")
        if record["runs"] and m in record["measures"]:
            out.append(_bar_chart(record, m))
        head_cells = "<th data-type=\"text\">Run</th>" + "".join(
            f"<th data-type=\"number\" class=\"num\">{_e(board.subset_header(record, s))}</th>" for s in subsets)
        sub_rows = []
        for run in record["runs"]:
            values = [run["subsets"].get(s, {}).get(m) for s in subsets]
            sub_rows.append(f"<tr><td><code>{_e(run['name'])}</code></td>" + "".join(
                _num_cell(v) for v in values)
                + "</tr>")
        if not sub_rows:
            sub_rows.append(f"<tr class=\"empty\"><td colspan=\"{len(subsets) + 1}\">No contributed run yet.</td></tr>")
        reported_rows = []
        for system, values in board.reported_per_subset(record, m).items():
            anchor = f"source-{len(sources) + 1}"
            sources.append((anchor, f"<b>{_e(system)}</b>, {_e(m)} per {_e(field)}: " + "; ".join(
                _e(text) for text in board.grouped_sources(values.values()))))
            reported_rows.append(
                f"<tr class=\"reported\" data-system=\"{_e(system)}\"><td>{_e(system)}<sup class=\"source-ref\">"
                f"<a href=\"#{anchor}\">{len(sources)}</a></sup> <span class=\"label\">{REPORTED_LABEL}</span></td>"
                + "".join(_reported_cell(values.get(s)) for s in subsets) + "</tr>")
        reported = ("<tbody class=\"reported\">\n" + "\n".join(reported_rows) + "\n</tbody>\n") if reported_rows else ""
        out.append(f"<table class=\"sortable subsets\">\n<thead><tr>{head_cells}</tr></thead>\n<tbody>\n"
                   + "\n".join(sub_rows) + "\n</tbody>\n" + reported + "</table>")
    return out


def _html_doc_field(record) -> list[str]:
    info = record.get("doc_field")
    if not info:
        return []
    primary = record["primary"]
    values = info["values"]
    out = [f"<h2>Top {info['k']} by document {_e(info['field'])}</h2>", f"<p>{_e(board.doc_field_intro(record))}</p>",
           "<p class=\"legend\">" + "".join(f"<span><i style=\"background:{PALETTE[i % len(PALETTE)]}\"></i>"
                                            f"{_e(v)}</span>" for i, v in enumerate(values)) + "</p>"]
    head = ("<th data-type=\"text\">Run</th>" + "".join(f"<th data-type=\"number\" class=\"num\">{_e(v)}</th>"
                                                        for v in values)
            + "<th data-type=\"text\">Top " + str(info["k"]) + "</th>"
            + (f"<th data-type=\"number\" class=\"num\">{_e(primary)}</th>" if info["without"] else "")
            + "".join(f"<th data-type=\"number\" class=\"num\">{_e(primary)} without {_e(v)}</th>"
                      for v in info["without"]))
    rows = []
    for run in record["runs"]:
        d = run["doc_field"]
        cells = [f"<td><code>{_e(run['name'])}</code></td>", *(_num_cell(d["shares"].get(v)) for v in values),
                 f"<td>{stacked_bar(d['shares'], values, run['name'])}</td>"]
        cells += [_num_cell(run["overall"].get(primary))] if info["without"] else []
        cells += [_num_cell(d["without"][v]["overall"].get(primary)) for v in info["without"]]
        rows.append(f"<tr data-run=\"{_e(run['name'])}\">" + "".join(cells) + "</tr>")
    out.append(f"<table id=\"doc-field\" class=\"sortable\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
               + "\n".join(rows) + "\n</tbody>\n</table>")
    return out


def _html_negation(record) -> list[str]:
    split = record.get("negation_split")
    if not split:
        return []
    groups = list(split["queries"])
    measures = record["measures"]
    head = "<th data-type=\"text\">Run</th>" + "".join(
        f"<th data-type=\"number\" class=\"num\">{_e(m)} {_e(g)} ({split['queries'][g]})</th>" for m in measures
        for g in groups)
    rows = []
    for run in record["runs"]:
        neg = run.get("negation") or {}
        cells = "".join(
            _num_cell(neg.get(g, {}).get(m)) for m in measures for g in groups)
        rows.append(f"<tr data-run=\"{_e(run['name'])}\"><td><code>{_e(run['name'])}</code></td>{cells}</tr>")
    return ["<h2>Negation vs no negation</h2>", f"<p>{_e(board.negation_intro(record))}</p>",
            f"<table id=\"negation\" class=\"sortable\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>"]


def index_html(records) -> str:
    index = board.index_record(records)
    body = ["<h1>negplugins leaderboards</h1>",
            "<p>Negation, exclusion and Boolean-logic retrieval benchmarks. Built by <code>negplugins leaderboard "
            "build</code> from the contributed runs; see <code>runs/README.md</code> to add one. Every page also "
            "lists the numbers reported in the benchmark's paper; the <a href=\"reproduction.html\">reproduction "
            "page</a> sets them beside this suite's runs.</p>",
            "<table id=\"index\" class=\"sortable\">\n<thead><tr><th data-type=\"text\">Benchmark</th>"
            "<th data-type=\"text\">Dataset</th><th data-type=\"number\" class=\"num\">Runs</th>"
            "<th data-type=\"number\" class=\"num\">Paper's numbers</th>"
            "<th data-type=\"text\">Best system</th><th data-type=\"text\">Measure</th>"
            "<th data-type=\"number\" class=\"num\">Score</th></tr></thead>\n<tbody>"]
    for family in index["benchmarks"]:
        if not family["leaderboards"]:
            body.append(f"<tr><td title=\"{_e(family['description'])}\">{_e(family['title'])}</td><td>–</td>"
                        "<td class=\"num\" data-value=\"0\">0</td><td class=\"num\" data-value=\"0\">0</td>"
                        "<td>no runs yet</td><td></td><td class=\"num\" data-value=\"\">–</td></tr>")
        for page in family["leaderboards"]:
            top = page["top"]
            value = top["value"] if top else None
            body.append(f"<tr><td title=\"{_e(family['description'])}\">{_e(family['title'])}</td>"
                        f"<td><a href=\"{_e(page['slug'])}.html\">{_e(page['dataset'])}</a></td>"
                        f"<td class=\"num\" data-value=\"{page['runs']}\">{page['runs']}</td>"
                        f"<td class=\"num\" data-value=\"{page['reported']}\">{page['reported']}</td>"
                        f"<td>{_e(top['system']) if top else 'no runs yet'}</td><td>{_e(page['primary'])}</td>"
                        f"{_num_cell(value)}</tr>")
    body.append("</tbody>\n</table>")
    return _page("negplugins leaderboards", "\n".join(body))


def _runs_cell_html(entries) -> str:
    if not entries:
        return "<td>–</td>"
    return "<td>" + "<br>".join(
        f"<code>{_e(e['run'])}</code> <span class=\"num\">{number(e['value'])}</span> "
        f"<span class=\"gap\">({signed(e['gap'])}{_e(board.on_copy(e))})</span>" for e in entries) + "</td>"


def reproduction_html(records) -> str:
    data = board.reproduction_record(records)
    body = ["<p><a href=\"index.html\">All leaderboards</a></p>", "<h1>Reproducing the papers</h1>",
            f"<p>{_e(data['explanation'])} Rows in grey italics are the numbers {REPORTED_LABEL}.</p>"]
    for family in data["benchmarks"]:
        ref = (f"<a href=\"{_e(family['paper_url'])}\">{_e(family['paper'])}</a>" if family["paper_url"]
               else _e(family["paper"]))
        body.append(f"<h2 id=\"{_e(family['family'])}\">{_e(family['title'])} ({ref})</h2>")
        if not family["rows"]:
            body.append("<p class=\"note\">The benchmark's spec records no number of its paper yet.</p>")
        else:
            rows = []
            for row in family["rows"]:
                rows.append(
                    f"<tr class=\"reproduction\" data-system=\"{_e(row['system'])}\">"
                    f"<td><a href=\"{_e(row['slug'])}.html\">{_e(row['dataset'])}</a></td>"
                    f"<td class=\"reported\">{_e(row['system'])}</td><td>{_e(row['paper_measure'])}</td>"
                    f"<td>{_e(row['subset'] or 'all')}</td>"
                    f"<td class=\"num reported\" title=\"{_e(board.source_text(row))}\">{row['paper_printed']}</td>"
                    + _runs_cell_html(row["suite"]) + _runs_cell_html(row["authors"])
                    + f"<td class=\"source\">{_e(board.source_text(row))}</td></tr>")
            body.append(f"<table class=\"reproduction\" id=\"reproduction-{_e(family['family'])}\">\n<thead><tr>"
                        "<th>Dataset</th><th>System</th><th>Measure</th><th>Subset</th>"
                        f"<th class=\"num\">Paper ({REPORTED_LABEL})</th><th>This suite (gap)</th>"
                        "<th>Authors' pipeline (gap)</th><th>Source</th></tr></thead>\n<tbody>\n"
                        + "\n".join(rows) + "\n</tbody>\n</table>")
        if family.get("data_origin"):
            body.append(f"<p class=\"note data-origin\">Data of the runs marked \u201con a {DERIVED}\u201d: "
                        + "; ".join(_e(line) for line in family["data_origin"]) + ".</p>")
        if family["notes"]:
            body.append("<h3>Why the numbers differ</h3>\n"
                        f"<dl class=\"explanations\" id=\"explanations-{_e(family['family'])}\">"
                        + "".join(
                f"<dt>{_e(system)}</dt><dd>{_e(text)}</dd>" for system, text in family["notes"].items()) + "</dl>")
        if family["other_runs"]:
            body.append("<p class=\"note\">This suite's other runs (reproducing no system of the paper): " + ", ".join(
                f"<a href=\"{_e(r['slug'])}.html\"><code>{_e(r['run'])}</code></a> on {_e(r['dataset'])} "
                f"({_e(r['measure'])} {number(r['value'])})" for r in family["other_runs"]) + ".</p>")
    return _page("Reproducing the papers", "\n".join(body))
