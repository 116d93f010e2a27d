"""The report of ``negplugins benchmark``: Markdown, static HTML and one SVG figure, rendered from its summary.

:func:`report_markdown`, :func:`report_html` and :func:`figure_svg` are pure: the same summary (and the same
benchmark specs, which hold the papers' numbers) give the same bytes; no clock, no absolute path. Every text
is escaped (``html.escape``; in Markdown also its markup characters), so a model named ``<script>`` is
shown, never run. The HTML page has no script and allows none (its Content-Security-Policy).

What the report shows:

- **One table across the benchmarks**: per dataset, the model's primary measure and its other measures,
  then a few of the paper's systems as context rows (:func:`notable_systems`: the same model where the
  paper has it, BM25, and the paper's best and weakest on the primary measure), in grey italics, labelled
  "reported in the paper" with the paper's table and row; never ranked, never mixed with the model's row.
  Skipped datasets are rows too, with the reason.
- **One figure**: per dataset a strip of every number the paper reports on the primary measure (grey dots,
  each with its system as a tooltip) and the model's value (a red diamond), on the measure's scale; the
  axis is reversed for a lower-is-better measure so that better is always to the right.
- **Per-subset views**: the model's measures per subset (ComLQ structures, BoolQuestions question types,
  the demo's kinds) beside the paper's per-subset numbers of the context systems, and the negation split
  where the benchmark marks its negation queries.
"""

from __future__ import annotations

import html
import math

from .. import datasets
from ..evaluation.reports import markdown_code, markdown_text
from ..measures import lower_is_better

__all__ = ["notable_systems", "report_markdown", "report_html", "figure_svg", "standing"]

GENERATOR = "negplugins benchmark"
MODEL_COLOUR = "#cf222e"
PAPER_COLOUR = "#6e7781"
REPORTED_LABEL = "reported in the paper"
MAX_CONTEXT = 4


# -- numbers and escaping ---------------------------------------------------------------------------

def _finite(value):
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _num(value) -> str:
    value = _finite(value)
    return "–" if value is None else f"{value:.4f}"


def _paper_num(value) -> str:
    """A paper's number as precise as the paper gave it (0.505, not 0.5050)."""
    return "–" if value is None else f"{round(value, 6):.6f}".rstrip("0").rstrip(".")


def _e(text) -> str:
    return html.escape(str(text), quote=True)


_md = markdown_text
_md_code = markdown_code


# -- the papers' numbers ----------------------------------------------------------------------------

def _spec(entry):
    return datasets.benchmark_of(entry["dataset"])


def _reported(spec, dataset_id: str, subset=None) -> dict:
    """``{system: {measure: Reported}}`` in the spec's order."""
    systems: dict = {}
    if spec is None:
        return systems
    for r in spec.reported_for(dataset_id, subset):
        systems.setdefault(r.system, {})[r.measure] = r
    return systems


def _plain(name: str) -> str:
    name = name.strip().lower()
    for prefix in ("sentence-transformers/", "cross-encoder/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name


def _same_model(system: str, model: dict) -> bool:
    names = {_plain(str(model.get(key) or "")) for key in ("name", "id")} - {""}
    names |= {name.split("/")[-1] for name in names}
    system = _plain(system)
    return system in names or system.split(" (")[0] in names


def notable_systems(spec, dataset_id: str, measure: str, model: dict) -> list[tuple[str, str]]:
    """The paper's systems shown as context rows for ``dataset_id``: ``[(system, why), ...]`` in the spec's order.

    At most :data:`MAX_CONTEXT`: the same model as ``model`` where the paper reports it, BM25, and the
    systems with the paper's best and weakest value of ``measure`` (lower is better where the measure
    says so). Chosen for context, never ranked.
    """
    systems = _reported(spec, dataset_id)
    why: dict[str, str] = {}
    for system in systems:
        if _same_model(system, model):
            why.setdefault(system, "the same model, in the paper")
    for system in systems:
        if system.lower() == "bm25":
            why.setdefault(system, "BM25 in the paper")
    valued = [(s, v[measure].value) for s, v in systems.items() if measure in v]
    if valued:
        lower = lower_is_better(measure)
        best = (min if lower else max)(valued, key=lambda item: item[1])[0]
        worst = (max if lower else min)(valued, key=lambda item: item[1])[0]
        why.setdefault(best, "the paper's best")
        why.setdefault(worst, "the paper's weakest")
    chosen = [s for s in systems if s in why][:MAX_CONTEXT]
    return [(s, why[s]) for s in chosen]


def standing(entry: dict) -> dict:
    """Where the model stands on ``entry``'s primary measure among the paper's numbers on the whole dataset.

    ``{"measure", "value", "reported": [(system, value, source), ...], "better_than": k, "lower": bool}``:
    ``better_than`` counts the reported systems whose value the model's beats (strictly; lower is better
    where the measure says so), None without a model value.
    """
    measure = entry["primary"]
    value = _finite(entry["overall"].get(measure))
    spec = _spec(entry)
    reported = [(system, values[measure].value, _source(values[measure]))
                for system, values in _reported(spec, entry["dataset"]).items() if measure in values]
    lower = lower_is_better(measure)
    better = None
    if value is not None:
        better = sum(1 for _, v, _ in reported if (value < v if lower else value > v))
    return {"measure": measure, "value": value, "reported": reported, "better_than": better, "lower": lower}


def _source(r) -> str:
    return r.source + (f" ({r.note})" if r.note else "") if r.source else r.note


def _paper_name(spec, measure: str) -> str:
    name = spec.paper_name(measure) if spec is not None else measure
    return measure if name == measure else f"{measure} ({name})"


def _arrow(measure: str) -> str:
    return " ↓" if lower_is_better(measure) else ""


# -- shared text ------------------------------------------------------------------------------------

def _model_line(summary) -> str:
    model = summary["model"]
    parameters = model.get("parameters")
    size = f"{parameters:,} parameters" if isinstance(parameters, int) else "size unknown"
    return (f"{model.get('id')} ({model.get('used_as')}), {size}, weights SHA-256 {model.get('sha256')}"
            + (f", revision {model['revision']}" if model.get("revision") else "")
            + (f"; {model['source']}" if model.get("source") else ""))


def _versions_line(summary) -> str:
    return ", ".join(f"{name} {version}" for name, version in sorted((summary.get("versions") or {}).items()))


def _protocol_lines(summary) -> list[str]:
    protocol = summary.get("protocol") or {}
    return [f"full-corpus benchmarks: {protocol.get('retrieval')}, to each benchmark's depth",
            f"NevIR: {protocol.get('pairs')}"]


def _short(entry) -> str:
    """A skipped dataset's reason in a few words (the whole reason is in the report's Skipped section)."""
    reason = entry.get("reason") or "no reason recorded"
    head = reason.split(":")[0]
    return f"{head} (see Skipped below)" if len(reason) > 80 else reason


def _done(summary):
    return [e for e in summary["benchmarks"] if e["status"] == "done"]


def _other_measures(entry) -> list[str]:
    return [m for m in entry["measures"] if m != entry["primary"]]


def _depth_text(entry) -> str:
    if entry["protocol"] == "pairs":
        return f"each query's {entry['depth']} candidates"
    return f"top {entry['depth']}"


def _standing_text(info) -> str:
    n = len(info["reported"])
    if not n:
        return "no number of the paper on this dataset"
    values = [v for _, v, _ in info["reported"]]
    span = f"{n} system{'s' if n > 1 else ''} reported, {_paper_num(min(values))} to {_paper_num(max(values))}"
    if info["better_than"] is None:
        return span
    return f"{span}; the model is better than {info['better_than']} of {n}"


# -- Markdown ---------------------------------------------------------------------------------------

def report_markdown(summary: dict) -> str:
    """The report in Markdown (GitHub's flavour); the figure is ``figure.svg`` beside it."""
    model = summary["model"]
    lines = [f"<!-- {GENERATOR} report: rewritten by each run of negplugins benchmark -->",
             f"# Negation report card: {_md(model.get('name'))}", "",
             f"- Model: {_md(_model_line(summary))}"]
    lines += [f"- Protocol: {_md(text)}" for text in _protocol_lines(summary)]
    lines += [f"- Date of the newest run: {_md(summary.get('date') or '–')}",
              f"- Versions: {_md(_versions_line(summary))}", "",
              "## Across the benchmarks", "",
              f"The model's rows are in bold. Rows in italics are numbers {REPORTED_LABEL} of each benchmark (a few "
              "systems per benchmark, chosen for context: the same model where the paper has it, BM25, the paper's "
              "best and weakest); they are not ranked, not computed by this suite, and may use another protocol "
              "(see their source).", "",
              "| Benchmark | Dataset | System | Primary measure | Value | Other measures |",
              "|---|---|---|---|---:|---|"]
    for entry in summary["benchmarks"]:
        spec = _spec(entry)
        if entry["status"] != "done":
            lines.append(f"| {_md(entry['title'])} | {_md_code(entry['dataset'])} | skipped: {_md(_short(entry))} "
                         "| | | |")
            continue
        primary = entry["primary"]
        others = " · ".join(f"{_md(_paper_name(spec, m))}{_arrow(m)} {_num(entry['overall'].get(m))}"
                            for m in _other_measures(entry))
        lines.append(f"| **{_md(entry['title'])}** | {_md_code(entry['dataset'])} | **{_md(model.get('name'))}** "
                     f"({_md(_depth_text(entry))}) | {_md(_paper_name(spec, primary))}{_arrow(primary)} | "
                     f"**{_num(entry['overall'].get(primary))}** | {others or '–'} |")
        reported = _reported(spec, entry["dataset"])
        for system, why in notable_systems(spec, entry["dataset"], primary, model):
            values = reported[system]
            value = values.get(primary)
            rest = " · ".join(f"{_md(_paper_name(spec, m))} {_paper_num(values[m].value)}"
                              for m in _other_measures(entry) if m in values)
            source = _source(value) if value is not None else _source(next(iter(values.values())))
            lines.append(f"| | | *{_md(system)}*: {REPORTED_LABEL}, {_md(why)} ({_md(source)}) | | "
                         f"*{_paper_num(value.value) if value is not None else '–'}* | {rest or '–'} |")
    lines += ["", "## Where the model stands", "",
              f"![The model's primary measure on each benchmark among the numbers {REPORTED_LABEL}](figure.svg)", "",
              "| Benchmark | Dataset | Measure | The model | The paper's systems |", "|---|---|---|---:|---|"]
    for entry in _done(summary):
        info = standing(entry)
        lines.append(f"| {_md(entry['title'])} | {_md_code(entry['dataset'])} | "
                     f"{_md(_paper_name(_spec(entry), info['measure']))}{_arrow(info['measure'])} | "
                     f"{_num(info['value'])} | {_md(_standing_text(info))} |")
    for entry in _done(summary):
        lines += _md_subsets(entry, model)
    skipped = [e for e in summary["benchmarks"] if e["status"] != "done"]
    if skipped:
        lines += ["", "## Skipped", ""]
        lines += [f"- {_md(e['title'])} ({_md_code(e['dataset'])}): {_md(e['reason'])}" for e in skipped]
    notes = [(e, note) for e in _done(summary) for note in e.get("notes") or ()]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {_md(e['title'])} ({_md_code(e['dataset'])}): {_md(note)}" for e, note in notes]
    lines += ["", "## Files", ""]
    for entry in _done(summary):
        first = f"; first stage {_md_code(entry['first_stage'])}" if entry.get("first_stage") else ""
        lines.append(f"- {_md(entry['title'])}: run {_md_code(entry['run'])} (sidecar {_md_code(entry['sidecar'])})"
                     f"{first}; results {_md_code(entry['results'])}; system: {_md(entry['system'])}")
    return "\n".join(lines) + "\n"


def _subset_columns(entry, model):
    """The context systems with per-subset numbers on the primary measure: ``[(system, {subset: value})]``."""
    spec = _spec(entry)
    columns = []
    for system, _ in notable_systems(spec, entry["dataset"], entry["primary"], model):
        values = {subset: _reported(spec, entry["dataset"], subset).get(system, {}).get(entry["primary"])
                  for subset in entry["subsets"]}
        if any(v is not None for v in values.values()):
            columns.append((system, values))
    return columns


def _md_subsets(entry, model) -> list[str]:
    lines = []
    spec = _spec(entry)
    measures = entry["measures"]
    if entry["subsets"]:
        columns = _subset_columns(entry, model)
        lines += ["", f"## {_md(entry['title'])} ({_md_code(entry['dataset'])}) per {_md(entry['breakdown_field'])}",
                  ""]
        head = [_md(entry["breakdown_field"]), "queries", *(_md(_paper_name(spec, m)) + _arrow(m) for m in measures),
                *(f"*{_md(system)}* ({REPORTED_LABEL}) {_md(entry['primary'])}" for system, _ in columns)]
        lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for subset, values in entry["subsets"].items():
            cells = [_md(subset), str(values.get("queries", "–")), *(_num(values.get(m)) for m in measures),
                     *(f"*{_paper_num(v[subset].value)}*" if v.get(subset) is not None else "–" for _, v in columns)]
            lines.append("| " + " | ".join(cells) + " |")
    split = entry.get("negation_split")
    if split:
        lines += ["", f"## {_md(entry['title'])} ({_md_code(entry['dataset'])}): negation queries and the others "
                      f"(by {_md(split['field'])})", "",
                  "| queries | count | " + " | ".join(_md(_paper_name(spec, m)) + _arrow(m) for m in measures) + " |",
                  "|---|---:|" + "---:|" * len(measures)]
        for group, values in split["groups"].items():
            lines.append(f"| {_md(group)} | {values.get('queries', '–')} | "
                         + " | ".join(_num(values.get(m)) for m in measures) + " |")
    return lines


# -- the figure -------------------------------------------------------------------------------------

_LEFT, _PLOT_LEFT, _PLOT_RIGHT, _WIDTH = 10, 300, 700, 960
_TOP, _ROW = 58, 56


def figure_svg(summary: dict, standalone: bool = True) -> str:
    """The figure: per dataset, the paper's numbers on its primary measure and the model's value, as SVG.

    ``standalone`` adds the XML declaration's namespace attributes needed by a separate ``.svg`` file (an
    inline SVG in HTML needs none, but accepts them).
    """
    rows = summary["benchmarks"]
    height = _TOP + _ROW * len(rows) + 16
    parts = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"standing\" class=\"figure\" role=\"img\" "
             f"width=\"{_WIDTH}\" height=\"{height}\" viewBox=\"0 0 {_WIDTH} {height}\" "
             f"font-family=\"system-ui, sans-serif\" aria-labelledby=\"standing-title\">",
             "<title id=\"standing-title\">Where the model stands: its primary measure on each benchmark (red "
             f"diamond) among the numbers {REPORTED_LABEL} (grey dots)</title>",
             f"<desc>{GENERATOR} figure of {_e(summary['model'].get('name'))}</desc>",
             f"<rect x=\"0\" y=\"0\" width=\"{_WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>",
             f"<text x=\"{_LEFT}\" y=\"20\" font-size=\"15\" font-weight=\"600\">Where "
             f"{_e(summary['model'].get('name'))} stands (better to the right)</text>",
             f"<path d=\"M {_PLOT_LEFT} 38 l 6 -6 l 6 6 l -6 6 z\" fill=\"{MODEL_COLOUR}\"/>",
             f"<text x=\"{_PLOT_LEFT + 18}\" y=\"42\" font-size=\"12\">this model</text>",
             f"<circle cx=\"{_PLOT_LEFT + 116}\" cy=\"38\" r=\"4.5\" fill=\"{PAPER_COLOUR}\" fill-opacity=\"0.55\"/>",
             f"<text x=\"{_PLOT_LEFT + 126}\" y=\"42\" font-size=\"12\">a system {REPORTED_LABEL} "
             "(hover for its name)</text>"]
    for i, entry in enumerate(rows):
        parts.append(_figure_row(entry, _TOP + i * _ROW, summary["model"]))
    parts.append("</svg>")
    return "\n".join(parts) + ("\n" if standalone else "")


def _figure_row(entry, top, model) -> str:
    middle = top + 22
    label = f"{entry['title']} ({entry['dataset']})"
    parts = [f"<g class=\"row\" data-dataset=\"{_e(entry['dataset'])}\">",
             f"<text x=\"{_LEFT}\" y=\"{middle - 3}\" font-size=\"13\" font-weight=\"600\">{_e(label)}</text>"]
    if entry["status"] != "done":
        parts.append(f"<text x=\"{_LEFT}\" y=\"{middle + 13}\" font-size=\"11\" fill=\"{PAPER_COLOUR}\">skipped: "
                     "data not available</text>")
        parts.append(f"<line x1=\"{_PLOT_LEFT}\" x2=\"{_PLOT_RIGHT}\" y1=\"{middle}\" y2=\"{middle}\" "
                     "stroke=\"#d0d7de\" stroke-dasharray=\"4 4\"/></g>")
        return "\n".join(parts)
    info = standing(entry)
    measure = info["measure"]
    spec = _spec(entry)
    axis = f"{_paper_name(spec, measure)}" + (" (lower is better: axis reversed)" if info["lower"] else "")
    parts.append(f"<text x=\"{_LEFT}\" y=\"{middle + 13}\" font-size=\"11\" fill=\"#57606a\">{_e(axis)}</text>")
    values = [v for _, v, _ in info["reported"]] + ([info["value"]] if info["value"] is not None else [])
    low, high = min([0.0, *values]), max([1.0, *values])

    def x(value):
        share = (value - low) / (high - low)
        return _PLOT_LEFT + (1 - share if info["lower"] else share) * (_PLOT_RIGHT - _PLOT_LEFT)

    parts.append(f"<line x1=\"{_PLOT_LEFT}\" x2=\"{_PLOT_RIGHT}\" y1=\"{middle}\" y2=\"{middle}\" stroke=\"#afb8c1\"/>")
    for k in range(5):
        tick = low + (high - low) * k / 4
        parts.append(f"<line x1=\"{x(tick):.1f}\" x2=\"{x(tick):.1f}\" y1=\"{middle - 3}\" y2=\"{middle + 3}\" "
                     "stroke=\"#afb8c1\"/>")
        parts.append(f"<text x=\"{x(tick):.1f}\" y=\"{middle + 16}\" font-size=\"9\" text-anchor=\"middle\" "
                     f"fill=\"#57606a\">{tick:.2f}</text>")
    for j, (system, value, source) in enumerate(info["reported"]):
        dy = (-5, 0, 5)[j % 3]
        parts.append(f"<circle class=\"reported\" cx=\"{x(value):.1f}\" cy=\"{middle + dy - 2}\" r=\"4.5\" "
                     f"fill=\"{PAPER_COLOUR}\" fill-opacity=\"0.55\"><title>{_e(system)}: {_paper_num(value)} "
                     f"({REPORTED_LABEL}: {_e(source)})</title></circle>")
    if info["value"] is not None:
        cx = x(info["value"])
        parts.append(f"<path class=\"model\" d=\"M {cx:.1f} {middle - 9} l 7 7 l -7 7 l -7 -7 z\" "
                     f"fill=\"{MODEL_COLOUR}\" stroke=\"#ffffff\" stroke-width=\"1\"><title>"
                     f"{_e(model.get('name'))}: {_num(info['value'])}</title></path>")
        parts.append(f"<text x=\"{cx:.1f}\" y=\"{middle - 12}\" font-size=\"11\" font-weight=\"600\" "
                     f"text-anchor=\"middle\" fill=\"{MODEL_COLOUR}\">{_num(info['value'])}</text>")
    n = len(info["reported"])
    if not n:
        summary_text = "no paper numbers"
    elif info["better_than"] is None:
        summary_text = f"{n} reported"
    else:
        summary_text = f"better than {info['better_than']} of {n}"
    parts.append(f"<text x=\"{_PLOT_RIGHT + 16}\" y=\"{middle + 4}\" font-size=\"12\">{_e(summary_text)}</text>")
    parts.append("</g>")
    return "\n".join(parts)


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
            f"<dt>Model</dt><dd>{_e(_model_line(summary))}</dd>"]
    body += [f"<dt>Protocol</dt><dd>{_e(text)}</dd>" for text in _protocol_lines(summary)]
    body += [f"<dt>Newest run</dt><dd>{_e(summary.get('date') or '–')}</dd>",
             f"<dt>Versions</dt><dd>{_e(_versions_line(summary))}</dd>", "</dl>",
             "<h2>Across the benchmarks</h2>",
             f"<p>The model's rows are in bold, its values in red. Rows in grey italics are numbers {REPORTED_LABEL} "
             "of each benchmark (a few systems per benchmark, chosen for context: the same model where the paper has "
             "it, BM25, the paper's best and weakest); they are not ranked, not computed by this suite, and may use "
             "another protocol (their source is given). ↓ = lower is better.</p>",
             "<div class=\"wide\">", _html_table(summary), "</div>", "<h2>Where the model stands</h2>",
             figure_svg(summary, standalone=False),
             "<table id=\"standing-table\">\n<thead><tr><th>Benchmark</th><th>Dataset</th><th>Measure</th>"
             "<th class=\"num\">The model</th><th>The paper's systems</th></tr></thead>\n<tbody>"]
    for entry in _done(summary):
        info = standing(entry)
        body.append(f"<tr><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code></td>"
                    f"<td>{_e(_paper_name(_spec(entry), info['measure']) + _arrow(info['measure']))}</td>"
                    f"<td class=\"num\">{_num(info['value'])}</td><td>{_e(_standing_text(info))}</td></tr>")
    body.append("</tbody>\n</table>")
    for entry in _done(summary):
        body += _html_subsets(entry, model)
    skipped = [e for e in summary["benchmarks"] if e["status"] != "done"]
    if skipped:
        body.append("<h2>Skipped</h2>\n<ul id=\"skipped\">")
        body += [f"<li>{_e(e['title'])} (<code>{_e(e['dataset'])}</code>): {_e(e['reason'])}</li>" for e in skipped]
        body.append("</ul>")
    notes = [(e, note) for e in _done(summary) for note in e.get("notes") or ()]
    if notes:
        body.append("<h2>Notes</h2>\n<ul>")
        body += [f"<li>{_e(e['title'])} (<code>{_e(e['dataset'])}</code>): {_e(note)}</li>" for e, note in notes]
        body.append("</ul>")
    body.append("<h2>Files</h2>\n<ul>")
    for entry in _done(summary):
        first = f"; first stage <code>{_e(entry['first_stage'])}</code>" if entry.get("first_stage") else ""
        body.append(f"<li>{_e(entry['title'])}: run <code>{_e(entry['run'])}</code> (sidecar "
                    f"<code>{_e(entry['sidecar'])}</code>){first}; results <code>{_e(entry['results'])}</code>; "
                    f"system: {_e(entry['system'])}</li>")
    body.append("</ul>")
    title = f"Negation report card: {model.get('name')}"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<meta name=\"generator\" content=\"{GENERATOR}\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">\n"
            f"<title>{_e(title)}</title>\n<style>\n{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body)
            + "\n</body>\n</html>\n")


def _html_table(summary) -> str:
    model = summary["model"]
    rows = ["<table id=\"report-card\">", "<thead><tr><th>Benchmark</th><th>Dataset</th><th>System</th>"
            "<th>Primary measure</th><th class=\"num\">Value</th><th>Other measures</th></tr></thead>"]
    for entry in summary["benchmarks"]:
        spec = _spec(entry)
        rows.append(f"<tbody class=\"benchmark\" data-dataset=\"{_e(entry['dataset'])}\">")
        if entry["status"] != "done":
            rows.append(f"<tr class=\"skipped\"><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code>"
                        f"</td><td colspan=\"4\"><span class=\"label\">skipped</span> {_e(_short(entry))}</td></tr>")
            rows.append("</tbody>")
            continue
        primary = entry["primary"]
        others = " · ".join(f"{_e(_paper_name(spec, m) + _arrow(m))} {_num(entry['overall'].get(m))}"
                            for m in _other_measures(entry))
        rows.append(f"<tr class=\"model\"><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code></td>"
                    f"<td>{_e(model.get('name'))} <span class=\"label\">this model, {_e(_depth_text(entry))}</span>"
                    f"</td><td>{_e(_paper_name(spec, primary) + _arrow(primary))}</td>"
                    f"<td class=\"num value\">{_num(entry['overall'].get(primary))}</td><td>{others or '–'}</td></tr>")
        reported = _reported(spec, entry["dataset"])
        for system, why in notable_systems(spec, entry["dataset"], primary, model):
            values = reported[system]
            value = values.get(primary)
            rest = " · ".join(f"{_e(_paper_name(spec, m))} {_paper_num(values[m].value)}"
                              for m in _other_measures(entry) if m in values)
            source = _source(value) if value is not None else _source(next(iter(values.values())))
            link = (f" <a href=\"{_e(spec.paper_url)}\">{_e(spec.paper)}</a>"
                    if spec.paper_url.startswith(("https://", "http://")) else "")
            rows.append(f"<tr class=\"reported\" data-system=\"{_e(system)}\"><td></td><td></td>"
                        f"<td>{_e(system)} <span class=\"label\">{REPORTED_LABEL}</span> {_e(why)};{link} "
                        f"{_e(source)}</td><td></td>"
                        f"<td class=\"num\">{_paper_num(value.value) if value is not None else '–'}</td>"
                        f"<td>{rest or '–'}</td></tr>")
        rows.append("</tbody>")
    rows.append("</table>")
    return "\n".join(rows)


def _html_subsets(entry, model) -> list[str]:
    spec = _spec(entry)
    measures = entry["measures"]
    body = []
    if entry["subsets"]:
        columns = _subset_columns(entry, model)
        body.append(f"<h2>{_e(entry['title'])} (<code>{_e(entry['dataset'])}</code>) per "
                    f"{_e(entry['breakdown_field'])}</h2>")
        if columns:
            body.append(f"<p class=\"note\">Columns in grey italics: the numbers {REPORTED_LABEL} per "
                        f"{_e(entry['breakdown_field'])} for the context systems above (not computed here).</p>")
        head = ([f"<th>{_e(entry['breakdown_field'])}</th>", "<th class=\"num\">queries</th>"]
                + [f"<th class=\"num\">{_e(_paper_name(spec, m) + _arrow(m))}</th>" for m in measures]
                + [f"<th class=\"num reported\">{_e(system)}<br>(paper) {_e(entry['primary'])}</th>"
                   for system, _ in columns])
        rows = []
        for subset, values in entry["subsets"].items():
            cells = ([f"<td>{_e(subset)}</td>", f"<td class=\"num\">{_e(values.get('queries', '–'))}</td>"]
                     + [f"<td class=\"num\">{_num(values.get(m))}</td>" for m in measures]
                     + [f"<td class=\"num reported\">{_paper_num(v[subset].value) if v.get(subset) else '–'}</td>"
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
            f"<th class=\"num\">{_e(_paper_name(spec, m) + _arrow(m))}</th>" for m in measures)
        rows = [f"<tr><td>{_e(group)}</td><td class=\"num\">{_e(values.get('queries', '–'))}</td>"
                + "".join(f"<td class=\"num\">{_num(values.get(m))}</td>" for m in measures) + "</tr>"
                for group, values in split["groups"].items()]
        body.append("<table class=\"negation\">\n<thead><tr>" + head + "</tr></thead>\n<tbody>\n" + "\n".join(rows)
                    + "\n</tbody>\n</table>")
    return body
