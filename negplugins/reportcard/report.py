"""The report of ``negplugins benchmark``: Markdown, static HTML and one SVG figure, rendered from its summary.

:func:`report_markdown`, :func:`report_html` and :func:`figure_svg` are pure: the same summary (and the same
benchmark specs, which hold the papers' numbers) give the same bytes; no clock, no absolute path. Every text
is escaped (:mod:`negplugins.rendering`: ``html_text`` in HTML, ``markdown_text`` in Markdown), so a model named
``<script>`` is shown, never run. The HTML page has no script and allows none (its Content-Security-Policy). What
the card says is decided in :mod:`negplugins.reportcard.card`; this module writes it out.

What the report shows:

- **One table across the benchmarks**: per dataset, the model's primary measure and its other measures, then
  the baselines the suite computed on the same data and protocol with no model (stock Pyserini BM25, the
  authors' pipeline where the spec has it; each with the model's difference from it and the paired test's
  p-value), then a few of the paper's systems as context rows (:func:`notable_systems`: the same model where
  the paper has it, BM25, and the paper's best and weakest on the primary measure), in grey italics, labelled
  "reported in the paper" with the paper's table and row, and "not reproduced here" next to the number where
  the spec says the suite could not reproduce it; never ranked, never mixed with the computed rows. Every
  computed number carries its 95% confidence interval (``±`` its half-width; the method is stated in the
  report). Skipped datasets are rows too, with the reason.
- **Where the model stands**: "better than N of M" counts only the systems computed here the same way (the
  baselines); the papers' numbers are context (their range).
- **One figure**: per dataset the model's value (a red diamond) and the baselines' (blue squares), each with its
  interval, among every number the paper reports on the primary measure (grey dots, hollow where not
  reproduced here), on the measure's scale; the axis is reversed for a lower-is-better measure so that better
  is always to the right.
- **Per-subset views**: the model's measures per subset (ComLQ structures, BoolQuestions question types, the
  demo's kinds) beside the baselines' and the paper's per-subset numbers on the primary measure, and the
  negation split where the benchmark marks its negation queries.
"""

from __future__ import annotations

from ..rendering.page import html_document
from ..rendering.text import finite, number
from ..rendering.text import html_text as _e
from ..rendering.text import markdown_code as _md_code
from ..rendering.text import markdown_text as _md
from . import card
from .card import COMPUTED_LABEL, GENERATOR, REPORTED_LABEL, UNREPRODUCED_LABEL, figure_svg, notable_systems, standing

__all__ = ["notable_systems", "report_markdown", "report_html", "figure_svg", "standing"]


# -- Markdown ---------------------------------------------------------------------------------------

def report_markdown(summary: dict) -> str:
    """The report in Markdown (GitHub's flavour); the figure is ``figure.svg`` beside it."""
    model = summary["model"]
    lines = [f"<!-- {GENERATOR} report: rewritten by each run of negplugins benchmark -->",
             f"# Negation report card: {_md(model.get('name'))}", "",
             f"- Model: {_md(card.model_line(summary))}"]
    lines += [f"- Protocol: {_md(text)}" for text in card.protocol_lines(summary)]
    lines += [f"- {label}: {_md(text)}" for label, text in card.method_lines(summary)]
    lines += [f"- Date of the newest run: {_md(summary.get('date') or '–')}",
              f"- Versions: {_md(card.versions_line(summary))}", "",
              "## Across the benchmarks", "",
              f"The model's rows are in bold. The rows {COMPUTED_LABEL} are baselines the suite ran on the same data "
              "and protocol with no model, each with the model's difference from it. Rows in italics are numbers "
              f"{REPORTED_LABEL} of each benchmark (a few systems per benchmark, chosen for context: the same model "
              "where the paper has it, BM25, the paper's best and weakest); they are not ranked, not computed by this "
              f"suite, may use another protocol (see their source), and say \"{UNREPRODUCED_LABEL}\" where this suite "
              "could not reproduce them.", "",
              "| Benchmark | Dataset | System | Primary measure | Value | Other measures |",
              "|---|---|---|---|---:|---|"]
    for entry in summary["benchmarks"]:
        spec = card.spec_of(entry)
        if entry["status"] != "done":
            lines.append(f"| {_md(entry['title'])} | {_md_code(entry['dataset'])} | skipped: {_md(card.short_reason(entry))} "
                         "| | | |")
            continue
        primary = entry["primary"]
        lines.append(f"| **{_md(entry['title'])}** | {_md_code(entry['dataset'])}{card.origin_mark(entry, _md)} | "
                     f"**{_md(model.get('name'))}** "
                     f"({_md(card.depth_text(entry))}) | {_md(card.measure_name(spec, primary))}{card.arrow(primary)} | "
                     f"**{card.with_interval(entry['overall'].get(primary), card.interval_of(entry, primary))}** | "
                     f"{_md_others(entry, entry, spec)} |")
        for baseline in entry.get("baselines") or ():
            versus = card.vs_model_text(baseline)
            lines.append(f"| | | {_md_code(baseline['name'])} {_md(baseline['system'])}: "
                         f"{_md(card.baseline_why(baseline, spec))}"
                         f"{'; ' + _md(versus) if versus else ''} | | "
                         f"{card.with_interval(baseline['overall'].get(primary), card.interval_of(baseline, primary))} | "
                         f"{_md_others(entry, baseline, spec)} |")
        reported = card.reported_values(spec, entry["dataset"])
        for system, why in notable_systems(spec, entry["dataset"], primary, model):
            values = reported[system]
            value = values.get(primary)
            rest = " · ".join(f"{_md(card.measure_name(spec, m))} {_md(card.paper_text(spec, values[m]))}"
                              for m in card.other_measures(entry) if m in values)
            source = card.source_text(value) if value is not None else card.source_text(next(iter(values.values())))
            lines.append(f"| | | *{_md(system)}*: {REPORTED_LABEL}, {_md(why)} ({_md(source)}) | | "
                         f"*{_md(card.paper_text(spec, value))}* | {rest or '–'} |")
    lines += ["", "## Where the model stands", "",
              f"![The model's primary measure on each benchmark beside the baselines {COMPUTED_LABEL} and the numbers "
              f"{REPORTED_LABEL}](figure.svg)", "",
              f"| Benchmark | Dataset | Measure | The model | Systems {COMPUTED_LABEL} | The paper's systems |",
              "|---|---|---|---:|---|---|"]
    for entry in card.done_entries(summary):
        info = standing(entry)
        lines.append(f"| {_md(entry['title'])} | {_md_code(entry['dataset'])} | "
                     f"{_md(card.measure_name(card.spec_of(entry), info['measure']))}{card.arrow(info['measure'])} | "
                     f"{card.with_interval(info['value'], info['interval'])} | {_md(card.computed_text(info))} | "
                     f"{_md(card.paper_range_text(info, card.spec_of(entry)))} |")
    for entry in card.done_entries(summary):
        lines += _md_subsets(entry, model)
    skipped = [e for e in summary["benchmarks"] if e["status"] != "done"]
    if skipped:
        lines += ["", "## Skipped", ""]
        lines += [f"- {_md(e['title'])} ({_md_code(e['dataset'])}): {_md(e['reason'])}" for e in skipped]
    notes = [(e, note) for e in card.done_entries(summary) for note in e.get("notes") or ()]
    notes += [(e, f"{system}: {UNREPRODUCED_LABEL}. {card.spec_of(e).reproduction_notes[system]}")
              for e in card.done_entries(summary) for system in card.unreproduced_shown(e, model)]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {_md(e['title'])} ({_md_code(e['dataset'])}): {_md(note)}" for e, note in notes]
    lines += ["", "## Files", ""]
    for entry in card.done_entries(summary):
        first = f"; first stage {_md_code(entry['first_stage'])}" if entry.get("first_stage") else ""
        lines.append(f"- {_md(entry['title'])}: run {_md_code(entry['run'])} (sidecar {_md_code(entry['sidecar'])})"
                     f"{first}; results {_md_code(entry['results'])}; system: {_md(entry['system'])}")
        for baseline in entry.get("baselines") or ():
            results = _md_code(baseline["results"]) if baseline.get("results") else "none (not evaluated)"
            lines.append(f"  - baseline {_md(baseline['system'])}: run {_md_code(baseline['run'])} (sidecar "
                         f"{_md_code(baseline['sidecar'])}); results {results}")
    return "\n".join(lines) + "\n"


def _md_others(entry, source, spec) -> str:
    """The other measures of ``source`` (the model's entry or a baseline), each with its interval."""
    others = " · ".join(f"{_md(card.measure_name(spec, m))}{card.arrow(m)} "
                        f"{card.with_interval(source['overall'].get(m), card.interval_of(source, m))}" for m in card.other_measures(entry))
    return others or "–"


def _paper_header(spec, system) -> str:
    return f"{system} ({REPORTED_LABEL}{', ' + UNREPRODUCED_LABEL if card.unreproduced(spec, system) else ''})"


def _md_subsets(entry, model) -> list[str]:
    lines = []
    spec = card.spec_of(entry)
    measures = entry["measures"]
    primary = entry["primary"]
    baselines = entry.get("baselines") or []
    if entry["subsets"]:
        columns = card.subset_columns(entry, model)
        lines += ["", f"## {_md(entry['title'])} ({_md_code(entry['dataset'])}) per {_md(entry['breakdown_field'])}",
                  ""]
        head = [_md(entry["breakdown_field"]), "queries", *(_md(card.measure_name(spec, m)) + card.arrow(m) for m in measures),
                *(f"{_md(b['name'])} ({COMPUTED_LABEL}) {_md(primary)}" for b in baselines),
                *(f"*{_md(_paper_header(spec, system))}* {_md(primary)}" for system, _ in columns)]
        lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for subset, values in entry["subsets"].items():
            cells = [_md(subset), str(values.get("queries", "–")),
                     *(card.with_interval(values.get(m), card.interval_of(entry, m, subset=subset)) for m in measures),
                     *(card.with_interval(b["subsets"].get(subset, {}).get(primary), card.interval_of(b, primary, subset=subset))
                       for b in baselines),
                     *(f"*{v[subset].printed}*" if v.get(subset) is not None else "–" for _, v in columns)]
            lines.append("| " + " | ".join(cells) + " |")
    split = entry.get("negation_split")
    if split:
        lines += ["", f"## {_md(entry['title'])} ({_md_code(entry['dataset'])}): negation queries and the others "
                      f"(by {_md(split['field'])})", "",
                  "| queries | count | " + " | ".join([*(_md(card.measure_name(spec, m)) + card.arrow(m) for m in measures),
                                                      *(f"{_md(b['name'])} ({COMPUTED_LABEL}) {_md(primary)}"
                                                        for b in baselines)]) + " |",
                  "|---|---:|" + "---:|" * (len(measures) + len(baselines))]
        for group, values in split["groups"].items():
            cells = [card.with_interval(values.get(m), card.interval_of(entry, m, group=group)) for m in measures]
            cells += [card.with_interval(card.group_value(b, group, primary), card.interval_of(b, primary, group=group)) for b in baselines]
            lines.append(f"| {_md(group)} | {values.get('queries', '–')} | " + " | ".join(cells) + " |")
    return lines


# -- HTML -------------------------------------------------------------------------------------------

_CSS = """body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1b1f24; line-height: 1.45; }
h1, h2 { font-weight: 600; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.92rem; }
th, td { border-bottom: 1px solid #d0d7de; padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
div.wide { overflow-x: auto; max-width: 100%; }
tbody.benchmark { border-top: 2px solid #8c959f; }
tr.model td { font-weight: 600; }
tr.model td.value { color: #cf222e; }
tr.reported td, td.reported, th.reported { font-style: italic; color: #57606a; background: #f6f8fa; font-weight: 400; }
tr.baseline td { color: #0a3069; }
td.baseline, th.baseline { color: #0a3069; }
.ci { color: #57606a; font-size: 0.85em; }
.unreproduced { font-style: normal; font-size: 0.78rem; color: #9a6700; white-space: nowrap; }
tr.skipped td { color: #57606a; }
.label { font-size: 0.78rem; border: 1px solid #afb8c1; border-radius: 0.6rem; padding: 0 0.4rem; font-style: normal;
         white-space: nowrap; }
.note { color: #57606a; font-size: 0.9rem; }
dl.model dt { font-weight: 600; float: left; clear: left; width: 9rem; }
dl.model dd { margin-left: 9.5rem; word-break: break-all; }
svg.figure { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
code { font-size: 0.85rem; }
"""


def report_html(summary: dict) -> str:
    """The report as one static HTML page (inline CSS and SVG; no script)."""
    model = summary["model"]
    body = [f"<h1>Negation report card: {_e(model.get('name'))}</h1>", "<dl class=\"model\">",
            f"<dt>Model</dt><dd>{_e(card.model_line(summary))}</dd>"]
    body += [f"<dt>Protocol</dt><dd>{_e(text)}</dd>" for text in card.protocol_lines(summary)]
    body += [f"<dt>{_e(label)}</dt><dd>{_e(text)}</dd>" for label, text in card.method_lines(summary)]
    body += [f"<dt>Newest run</dt><dd>{_e(summary.get('date') or '–')}</dd>",
             f"<dt>Versions</dt><dd>{_e(card.versions_line(summary))}</dd>", "</dl>",
             "<h2>Across the benchmarks</h2>",
             f"<p>The model's rows are in bold, its values in red. Rows in blue are baselines {COMPUTED_LABEL}: the "
             "suite ran them on the same data and protocol with no model, and gives the model's difference from each. "
             f"Rows in grey italics are numbers {REPORTED_LABEL} of each benchmark (a few systems per benchmark, "
             "chosen for context: the same model where the paper has it, BM25, the paper's best and weakest); they are "
             f"not ranked, not computed by this suite, may use another protocol (their source is given), and say "
             f"\"{UNREPRODUCED_LABEL}\" where this suite could not reproduce them. ± is the half-width of the 95% "
             "confidence interval. ↓ = lower is better.</p>",
             "<div class=\"wide\">", _html_table(summary), "</div>", "<h2>Where the model stands</h2>",
             figure_svg(summary, standalone=False),
             "<table id=\"standing-table\">\n<thead><tr><th>Benchmark</th><th>Dataset</th><th>Measure</th>"
             f"<th class=\"num\">The model</th><th>Systems {COMPUTED_LABEL}</th><th>The paper's systems</th></tr>"
             "</thead>\n<tbody>"]
    for entry in card.done_entries(summary):
        info = standing(entry)
        body.append(f"<tr><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code></td>"
                    f"<td>{_e(card.measure_name(card.spec_of(entry), info['measure']) + card.arrow(info['measure']))}</td>"
                    f"<td class=\"num\">{card.with_interval(info['value'], info['interval'])}</td>"
                    f"<td>{_e(card.computed_text(info))}</td><td>{_e(card.paper_range_text(info, card.spec_of(entry)))}"
                    "</td></tr>")
    body.append("</tbody>\n</table>")
    for entry in card.done_entries(summary):
        body += _html_subsets(entry, model)
    skipped = [e for e in summary["benchmarks"] if e["status"] != "done"]
    if skipped:
        body.append("<h2>Skipped</h2>\n<ul id=\"skipped\">")
        body += [f"<li>{_e(e['title'])} (<code>{_e(e['dataset'])}</code>): {_e(e['reason'])}</li>" for e in skipped]
        body.append("</ul>")
    notes = [(e, note) for e in card.done_entries(summary) for note in e.get("notes") or ()]
    notes += [(e, f"{system}: {UNREPRODUCED_LABEL}. {card.spec_of(e).reproduction_notes[system]}")
              for e in card.done_entries(summary) for system in card.unreproduced_shown(e, model)]
    if notes:
        body.append("<h2>Notes</h2>\n<ul>")
        body += [f"<li>{_e(e['title'])} (<code>{_e(e['dataset'])}</code>): {_e(note)}</li>" for e, note in notes]
        body.append("</ul>")
    body.append("<h2>Files</h2>\n<ul>")
    for entry in card.done_entries(summary):
        first = f"; first stage <code>{_e(entry['first_stage'])}</code>" if entry.get("first_stage") else ""
        baselines = "".join(f"; baseline {_e(b['system'])}: run <code>{_e(b['run'])}</code>, results "
                            + (f"<code>{_e(b['results'])}</code>" if b.get("results") else "none (not evaluated)")
                            for b in entry.get("baselines") or ())
        body.append(f"<li>{_e(entry['title'])}: run <code>{_e(entry['run'])}</code> (sidecar "
                    f"<code>{_e(entry['sidecar'])}</code>){first}; results <code>{_e(entry['results'])}</code>; "
                    f"system: {_e(entry['system'])}{baselines}</li>")
    body.append("</ul>")
    title = f"Negation report card: {model.get('name')}"
    return html_document(title, "\n".join(body), css=_CSS, generator=GENERATOR)


def _html_num_ci(value, interval) -> str:
    half = card.half_width(interval)
    if half is None or finite(value) is None:
        return number(value)
    return f"{number(value)} <span class=\"ci\">± {half:.4f}</span>"


def _html_others(entry, source, spec) -> str:
    others = " · ".join(f"{_e(card.measure_name(spec, m) + card.arrow(m))} "
                        f"{_html_num_ci(source['overall'].get(m), card.interval_of(source, m))}"
                        for m in card.other_measures(entry))
    return others or "–"


def _html_paper_value(spec, r) -> str:
    if r is None:
        return "–"
    mark = f" <span class=\"unreproduced\">{UNREPRODUCED_LABEL}</span>" if card.unreproduced(spec, r.system) else ""
    return r.printed + mark


def _html_table(summary) -> str:
    model = summary["model"]
    rows = ["<table id=\"report-card\">", "<thead><tr><th>Benchmark</th><th>Dataset</th><th>System</th>"
            "<th>Primary measure</th><th class=\"num\">Value</th><th>Other measures</th></tr></thead>"]
    for entry in summary["benchmarks"]:
        spec = card.spec_of(entry)
        rows.append(f"<tbody class=\"benchmark\" data-dataset=\"{_e(entry['dataset'])}\">")
        if entry["status"] != "done":
            rows.append(f"<tr class=\"skipped\"><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code>"
                        f"</td><td colspan=\"4\"><span class=\"label\">skipped</span> {_e(card.short_reason(entry))}</td></tr>")
            rows.append("</tbody>")
            continue
        primary = entry["primary"]
        rows.append(f"<tr class=\"model\"><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code>"
                    f"{card.origin_mark(entry, _e)}</td>"
                    f"<td>{_e(model.get('name'))} <span class=\"label\">this model, {_e(card.depth_text(entry))}</span>"
                    f"</td><td>{_e(card.measure_name(spec, primary) + card.arrow(primary))}</td>"
                    f"<td class=\"num value\">{_html_num_ci(entry['overall'].get(primary), card.interval_of(entry, primary))}"
                    f"</td><td>{_html_others(entry, entry, spec)}</td></tr>")
        for baseline in entry.get("baselines") or ():
            versus = card.vs_model_text(baseline)
            rows.append(f"<tr class=\"baseline\" data-baseline=\"{_e(baseline['name'])}\"><td></td><td></td>"
                        f"<td><code>{_e(baseline['name'])}</code> {_e(baseline['system'])} "
                        f"<span class=\"label\">{COMPUTED_LABEL}</span> "
                        f"{_e(card.baseline_why(baseline, spec))}{'; ' + _e(versus) if versus else ''}</td><td></td>"
                        "<td class=\"num\">"
                        f"{_html_num_ci(baseline['overall'].get(primary), card.interval_of(baseline, primary))}</td>"
                        f"<td>{_html_others(entry, baseline, spec)}</td></tr>")
        reported = card.reported_values(spec, entry["dataset"])
        for system, why in notable_systems(spec, entry["dataset"], primary, model):
            values = reported[system]
            value = values.get(primary)
            rest = " · ".join(f"{_e(card.measure_name(spec, m))} {_html_paper_value(spec, values[m])}"
                              for m in card.other_measures(entry) if m in values)
            source = card.source_text(value) if value is not None else card.source_text(next(iter(values.values())))
            link = (f" <a href=\"{_e(spec.paper_url)}\">{_e(spec.paper)}</a>"
                    if spec.paper_url.startswith(("https://", "http://")) else "")
            rows.append(f"<tr class=\"reported\" data-system=\"{_e(system)}\"><td></td><td></td>"
                        f"<td>{_e(system)} <span class=\"label\">{REPORTED_LABEL}</span> {_e(why)};{link} "
                        f"{_e(source)}</td><td></td>"
                        f"<td class=\"num\">{_html_paper_value(spec, value)}</td>"
                        f"<td>{rest or '–'}</td></tr>")
        rows.append("</tbody>")
    rows.append("</table>")
    return "\n".join(rows)


def _html_subsets(entry, model) -> list[str]:
    spec = card.spec_of(entry)
    measures = entry["measures"]
    primary = entry["primary"]
    baselines = entry.get("baselines") or []
    body = []
    if entry["subsets"]:
        columns = card.subset_columns(entry, model)
        body.append(f"<h2>{_e(entry['title'])} (<code>{_e(entry['dataset'])}</code>) per "
                    f"{_e(entry['breakdown_field'])}</h2>")
        if columns or baselines:
            body.append(f"<p class=\"note\">Columns in blue: the baselines {COMPUTED_LABEL}; in grey italics: the "
                        f"numbers {REPORTED_LABEL} per {_e(entry['breakdown_field'])} for the context systems above "
                        "(not computed here).</p>")
        head = ([f"<th>{_e(entry['breakdown_field'])}</th>", "<th class=\"num\">queries</th>"]
                + [f"<th class=\"num\">{_e(card.measure_name(spec, m) + card.arrow(m))}</th>" for m in measures]
                + [f"<th class=\"num baseline\" title=\"{_e(b['system'])}\">{_e(b['name'])}<br>({COMPUTED_LABEL}) "
                   f"{_e(primary)}</th>" for b in baselines]
                + [f"<th class=\"num reported\">{_e(system)}<br>(paper"
                   f"{', ' + UNREPRODUCED_LABEL if card.unreproduced(spec, system) else ''}) {_e(primary)}</th>"
                   for system, _ in columns])
        rows = []
        for subset, values in entry["subsets"].items():
            cells = ([f"<td>{_e(subset)}</td>", f"<td class=\"num\">{_e(values.get('queries', '–'))}</td>"]
                     + [f"<td class=\"num\">{_html_num_ci(values.get(m), card.interval_of(entry, m, subset=subset))}</td>"
                        for m in measures]
                     + ["<td class=\"num baseline\">" + _html_num_ci(b["subsets"].get(subset, {}).get(primary),
                                                                     card.interval_of(b, primary, subset=subset)) + "</td>"
                        for b in baselines]
                     + [f"<td class=\"num reported\">{v[subset].printed if v.get(subset) else '–'}</td>"
                        for _, v in columns])
            rows.append("<tr>" + "".join(cells) + "</tr>")
        body.append(f"<div class=\"wide\"><table class=\"subsets\" data-dataset=\"{_e(entry['dataset'])}\">\n"
                    "<thead><tr>" + "".join(head) + "</tr></thead>\n<tbody>\n" + "\n".join(rows)
                    + "\n</tbody>\n</table></div>")
    split = entry.get("negation_split")
    if split:
        body.append(f"<h2>{_e(entry['title'])} (<code>{_e(entry['dataset'])}</code>): negation queries and the "
                    f"others (by {_e(split['field'])})</h2>")
        head = "<th>queries</th><th class=\"num\">count</th>" + "".join(
            f"<th class=\"num\">{_e(card.measure_name(spec, m) + card.arrow(m))}</th>" for m in measures) + "".join(
            f"<th class=\"num baseline\" title=\"{_e(b['system'])}\">{_e(b['name'])}<br>({COMPUTED_LABEL}) "
            f"{_e(primary)}</th>" for b in baselines)
        rows = []
        for group, values in split["groups"].items():
            cells = "".join(f"<td class=\"num\">{_html_num_ci(values.get(m), card.interval_of(entry, m, group=group))}</td>"
                            for m in measures)
            cells += "".join("<td class=\"num baseline\">" + _html_num_ci(card.group_value(b, group, primary),
                                                                          card.interval_of(b, primary, group=group))
                             + "</td>" for b in baselines)
            rows.append(f"<tr><td>{_e(group)}</td><td class=\"num\">{_e(values.get('queries', '–'))}</td>"
                        f"{cells}</tr>")
        body.append("<table class=\"negation\">\n<thead><tr>" + head + "</tr></thead>\n<tbody>\n" + "\n".join(rows)
                    + "\n</tbody>\n</table>")
    return body
