"""Render leaderboard records as JSON, Markdown and self-contained HTML (inline CSS, JS and SVG).

Every text that comes from a contribution is escaped (``html.escape`` for HTML, and for Markdown also
``|`` and backticks), so a system name such as ``<script>`` is shown, never run. The papers' numbers
(from the benchmarks' specs) are escaped the same way, and a paper is linked only through an http(s)
address.

The paper's numbers are "reported in the paper" rows: in HTML a second ``<tbody class="reported">`` of
the same table (the sort script orders only the runs' ``<tbody>``), with no rank, no significance mark
and no "best" highlight, and a numbered source for each row; in Markdown a table of their own.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from ir_datasets_ext.benchmark import benchmarks
from ir_datasets_ext.derived import DERIVED

from ..evaluation.reports import best_marks, markdown_text
from ..evaluation.significance import ALPHA
from ..io.sidecars import COMMIT_KEY
from ..measures.ranking import STOCK, TIE_HANDLING

__all__ = ["json_text", "markdown", "html_page", "best_runs", "index_record", "index_markdown", "index_html",
           "reproduction_record", "reproduction_markdown", "reproduction_html"]

_ASSETS = Path(__file__).with_name("assets")
PALETTE = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#332288", "#117733",
           "#882255")
MAX_CHART_RUNS = len(PALETTE)
REPORTED_LABEL = "reported in the paper"


def json_text(record) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"


def _num(value, digits=4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _gap(value) -> str:
    return "–" if value is None else f"{value:+.4f}"


_md = _md_prose = markdown_text  # the one Markdown escaper (evaluation.reports)


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def best_runs(record, measure) -> set[str]:
    """The runs whose overall ``measure`` is marked best (:func:`negplugins.evaluation.reports.best_marks`).

    The smallest value for a lower-is-better measure, else the largest, compared as shown (4 decimals): runs
    tied for best are all marked, and a column where every run shows the same value (or a single run) has
    no best. Markdown (bold), HTML (``td.best``) and ``negplugins evaluate -f latex`` (bold) follow this rule.
    """
    values = [run["overall"].get(measure) for run in record["runs"]]
    flags = best_marks(values, measure in record["lower_is_better"])
    return {run["name"] for run, flag in zip(record["runs"], flags) if flag}


def _marker(run, measure) -> bool:
    test = (run.get("vs_baseline") or {}).get(measure)
    return bool(test and test["p_randomization_holm"] is not None and test["p_randomization_holm"] < ALPHA)


def _measure_label(record, measure) -> str:
    return measure + (" ↓" if measure in record["lower_is_better"] else "")


# -- the paper's numbers ----------------------------------------------------------------------------

def _reported(record, subset=None) -> dict:
    """``{system: {measure: reported entry}}`` of the record's dataset (one subset, or the whole dataset)."""
    systems: dict[str, dict] = {}
    for r in record.get("reported", ()):
        if r["subset"] == subset:
            systems.setdefault(r["system"], {})[r["measure"]] = r
    return systems


def _paper_measures(record, subset_level=False) -> list[str]:
    """Measures of the paper's numbers that the runs' table lacks (whole dataset, or any subset)."""
    measures = record["measures"]
    found = [r["measure"] for r in record.get("reported", ()) if (r["subset"] is not None) == subset_level]
    return [m for m in dict.fromkeys(found) if m not in measures]


def _source_text(entry) -> str:
    return entry["source"] + (f" ({entry['note']})" if entry["note"] else "") if entry["source"] else entry["note"]


_COLUMN = re.compile(r"^(?P<where>.*), column (?P<column>[^,]+)$")


def _grouped_sources(entries) -> list[str]:
    """The sources of one system's per-subset numbers, each note said once: ``Table 3, row BM25, columns 1p, 2p,
    ..., pni (note)`` where the numbers of one table row share a note (each column used to repeat it)."""
    groups: dict[tuple, list[str]] = {}
    for entry in entries:
        match = _COLUMN.match(entry.get("source") or "")
        where, column = (match["where"], match["column"]) if match else (entry.get("source") or "", None)
        columns = groups.setdefault((where, entry.get("note") or ""), [])
        if column is not None and column not in columns:
            columns.append(column)
    texts = []
    for (where, note), columns in groups.items():
        text = where + (f", column{'s' if len(columns) > 1 else ''} {', '.join(columns)}" if columns else "")
        texts.append(_source_text({"source": text, "note": note}))
    return texts


def _paper_ref(record) -> str:
    paper = record.get("paper") or {}
    return paper.get("reference") or "the paper"


def _paper_link_html(record) -> str:
    paper = record.get("paper") or {}
    ref = _e(_paper_ref(record))
    return f"<a href=\"{_e(paper['url'])}\">{ref}</a>" if paper.get("url") else ref


def _paper_link_md(record) -> str:
    paper = record.get("paper") or {}
    ref = _md(_paper_ref(record))
    return f"[{ref}]({paper['url']})" if paper.get("url") else ref


def _subset_header(record, subset) -> str:
    count = record["subsets"].get(subset)
    return f"{subset} ({count})" if count is not None else str(subset)


def _ties_sentence(record) -> str:
    """How the page's numbers order tied documents (the evaluation's ``ties``, docs/measures.md)."""
    ties = record.get("ties") or STOCK
    return f"Ties: {ties}, {TIE_HANDLING[ties]} (docs/measures.md)."


# -- Markdown ---------------------------------------------------------------------------------------

def _md_intro(record) -> list[str]:
    if not record["runs"]:
        return ["No contributed run yet (see `runs/README.md` to add one)."
                + (" The numbers below are the paper's, as the benchmark's spec records them."
                   if record.get("reported") else ""), ""]
    return [f"{record['queries']} judged queries. Sorted by {_md(record['primary'])}"
            f"{' (lower is better)' if record['primary'] in record['lower_is_better'] else ''}. "
            f"↓ = lower is better. **Bold** = best (every run tied for it; none where all runs tie). "
            f"† = differs from the baseline {_md(record['baseline'])} "
            f"(paired randomization test, Holm-corrected, p < {ALPHA}). {_ties_sentence(record)}", ""]


def _md_reported_table(record) -> list[str]:
    systems = _reported(record)
    if not systems:
        return []
    measures = [m for m in [*record["measures"], *_paper_measures(record)]
                if any(m in values for values in systems.values())]
    lines = ["", f"### Reported in the paper ({_paper_link_md(record)})", "",
             "Not ranked and not tested against the runs: the paper's numbers, as the benchmark's spec records them.",
             "", "| System | " + " | ".join(_md(_label_with_paper(record, m)) for m in measures) + " | Source |",
             "|---|" + "|".join(["---:"] * len(measures)) + "|---|"]
    for system, values in systems.items():
        sources = "; ".join(dict.fromkeys(_source_text(values[m]) for m in measures if m in values))
        lines.append(f"| *{_md(system)}* | " + " | ".join(values[m]["printed"] if m in values else "–"
                                                          for m in measures) + f" | {_md(sources)} |")
    return lines


def _label_with_paper(record, measure) -> str:
    reported = [r for r in record.get("reported", ()) if r["measure"] == measure]
    paper_name = reported[0]["paper_measure"] if reported else measure
    label = _measure_label(record, measure)
    return label if paper_name == measure else f"{label} (paper: {paper_name})"


def markdown(record) -> str:
    measures = record["measures"]
    lines = [f"# Leaderboard: {_md(record['dataset'])}", "", _md_sources_line(record), "", *_md_intro(record)]
    for note in record["notes"]:
        lines += [f"> Note: {_md(note)}", ""]
    if record["runs"]:
        header = ["#", "System", "Run", "Runner", *(_md(_measure_label(record, m)) for m in measures), "Date"]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(["---:", "---", "---", "---", *(["---:"] * len(measures)), "---"]) + "|")
        best = {m: best_runs(record, m) for m in measures}
        for position, run in enumerate(record["runs"], start=1):
            cells = []
            for m in measures:
                value = run["overall"][m]
                text = _num(value) + ("†" if _marker(run, m) else "")
                if run["name"] in best[m]:
                    text = f"**{text}**"
                cells.append(text)
            name = _md(run["name"]) + (" (baseline)" if run["name"] == record["baseline"] else "")
            system = _md(run["system"]) + (f" (reproduces {_md(run['reproduces'])})" if run.get("reproduces") else "")
            lines.append("| " + " | ".join([str(position), system, name, _md(run["runner"]), *cells,
                                            _md(run["date"])]) + " |")
    lines += _md_reported_table(record)
    if not record.get("reported"):
        lines += ["", f"The benchmark's spec records no number of its paper ({_paper_link_md(record)}) on this "
                      "dataset."]
    lines += _md_per_query(record)
    lines += _md_reproductions(record)
    lines += _md_subsets(record)
    lines += _md_doc_field(record)
    lines += _md_negation(record)
    if record["runs"]:
        lines += ["", "## Runs", ""]
        for run in record["runs"]:
            links = run.get("links") or {}
            files = (f"[run file]({_md_href(links['run'])}) · [sidecar]({_md_href(links['sidecar'])})"
                     if links else f"`{_md(run['path'])}`")
            lines.append(f"- **{_md(run['name'])}** ({files}): {_md(run['system'])}; tag {_md(run['tag'])}"
                         + (f"; model {_md(run['model'])}" if run["model"] else "")
                         + (f"; reproduces {_md(run['reproduces'])}" + (" (the authors' pipeline)"
                                                                         if run.get("authors_pipeline") else "")
                            if run.get("reproduces") else "")
                         + (f"; {run['queries_without_results']} queries without results"
                            if run["queries_without_results"] else ""))
            for label, text in _provenance(run):
                lines.append(f"  - {label}: " + (_md_first_stage(run) if label == "first stage" else _md(text)))
            if run["command"]:
                lines.append(f"  - command: {_md(run['command'])}")
        lines += ["", f"Significance: {_md(record['significance'])}.", ""]
    lines += ["", _md_prose(_built_with(record)), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _md_href(href: str) -> str:
    """A relative link of the suite's own making, for a Markdown link target (spaces and parentheses escaped)."""
    return href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _md_sources_line(record) -> str:
    paper = record.get("paper") or {}
    parts = [f"Paper: {_paper_link_md(record)}" + (f" ({_md(paper['title'])})" if paper.get("title") else "")]
    if record.get("data_url"):
        parts.append(f"Data: [{_md(record['data_url'])}]({record['data_url']})")
    parts.append("[All leaderboards](README.md) · [Reproduction of the papers](reproduction.md)")
    return " · ".join(parts)


def _md_first_stage(run) -> str:
    first = run.get("first_stage") or {}
    href = (run.get("links") or {}).get("first_stage")
    text = _md(first.get("run") or "")
    return f"[{text}]({_md_href(href)})" if href else text


def _built_with(record) -> str:
    version = (record.get("built_with") or {}).get("negplugins", "")
    return (f"Built with negplugins {version} by negplugins leaderboard build from the runs and their sidecars (the "
            "same bytes on every rebuild from the same runs); each run's provenance names the suite version and, "
            "when its sidecar records one, the git commit it was made with.")


def _provenance(run) -> list[tuple[str, str]]:
    """``(label, text)`` lines of what made a run: parameters, first stage, index, versions, date."""
    items = []
    parameters = run.get("parameters") or {}
    if parameters:
        items.append(("parameters", ", ".join(f"{k}={_compact(v)}" for k, v in sorted(parameters.items()))))
    first = run.get("first_stage")
    if first and first.get("run"):
        items.append(("first stage", first["run"]))
    if run.get("index"):
        items.append(("index", run["index"]))
    if run.get("model_sha256"):
        items.append(("model weights SHA-256", run["model_sha256"]))
    if run.get("data_origin"):
        items.append(("data", "; ".join(run["data_origin"])))
    versions = dict(run.get("versions") or {})
    versions.pop(COMMIT_KEY, None)
    suite = versions.pop("negplugins", None)
    made = f"negplugins {suite or 'unknown'}" + (f" (commit {run['commit']})" if run.get("commit")
                                                  else " (no git commit recorded)")
    items.append(("made with", ", ".join([made, *(f"{k} {v}" for k, v in sorted(versions.items()))])))
    if run.get("date"):
        items.append(("date", run["date"]))
    return items


def _compact(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _per_query_rows(record) -> list[tuple[dict, dict]]:
    """``(run, {measure: {"wins", "losses", "ties", "n"}})`` of each run tested against the baseline."""
    return [(run, run["vs_baseline"]) for run in record["runs"] if run.get("vs_baseline")]


def _wlt(test) -> str:
    return "–" if test is None or "wins" not in test else f"{test['wins']} / {test['losses']} / {test['ties']}"


def _md_per_query(record) -> list[str]:
    rows = _per_query_rows(record)
    if not rows:
        return []
    measures = record["measures"]
    lines = ["", f"## Per query against the baseline {_md(record['baseline'])}", "",
             "Wins / losses / ties: the queries on which the run is better than the baseline, worse, or equal "
             "(lower is better for ↓), among those where the measure has a value in both.", "",
             "| Run | " + " | ".join(_md(_measure_label(record, m)) for m in measures) + " |",
             "|---|" + "|".join(["---:"] * len(measures)) + "|"]
    for run, tests in rows:
        lines.append(f"| {_md(run['name'])} | " + " | ".join(_wlt(tests.get(m)) for m in measures) + " |")
    return lines


def _md_reproductions(record) -> list[str]:
    rows = record.get("reproductions") or []
    if not rows:
        return []
    lines = ["", "## Runs beside the paper's systems they reproduce", "",
             "Gap = run minus paper.", "",
             "| Run | Reproduces | Measure | Subset | Paper | Run | Gap | Source |",
             "|---|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        authors = " (authors’ pipeline)" if r["authors_pipeline"] else ""
        lines.append(f"| {_md(r['run'])} | {_md(r['system'])}{authors} | {_md(r['measure'])} | "
                     f"{_md(r['subset'] or 'all')} | {r['paper_printed']} | {_num(r['value'])}{_on_copy(r)} | "
                     f"{_gap(r['gap'])} | {_md(r['source'])} |")
    return lines


def _subset_measures(record) -> list[str]:
    measures = list(record["measures"]) if record["runs"] else []
    return measures + [m for m in dict.fromkeys(r["measure"] for r in record.get("reported", ()) if r["subset"])
                       if m not in measures]


def _md_subsets(record) -> list[str]:
    if not record["subsets"]:
        return []
    field = record["breakdown_field"] or "subset"
    lines = ["", f"## Per {_md(field)}", ""]
    subsets = list(record["subsets"])
    for m in _subset_measures(record):
        lines += [f"### {_md(_measure_label(record, m))}", ""]
        lines.append("| Run | " + " | ".join(_md(_subset_header(record, s)) for s in subsets) + " |")
        lines.append("|---|" + "|".join(["---:"] * len(subsets)) + "|")
        for run in record["runs"]:
            lines.append(f"| {_md(run['name'])} | " + " | ".join(_num(run["subsets"].get(s, {}).get(m))
                                                                for s in subsets) + " |")
        reported = _reported_per_subset(record, m)
        for system, values in reported.items():
            lines.append(f"| *{_md(system)}* ({REPORTED_LABEL}) | " + " | ".join(
                values[s]["printed"] if s in values else "–" for s in subsets) + " |")
        if reported:
            lines += ["", "Sources: " + "; ".join(
                f"*{_md(system)}*: " + "; ".join(_md(text) for text in _grouped_sources(values.values()))
                for system, values in reported.items()) + "."]
        lines.append("")
    return lines


def _reported_per_subset(record, measure) -> dict:
    """``{system: {subset: entry}}`` of the paper's per-subset numbers for ``measure``."""
    systems: dict[str, dict] = {}
    for r in record.get("reported", ()):
        if r["subset"] is not None and r["measure"] == measure:
            systems.setdefault(r["system"], {})[r["subset"]] = r
    return systems


def _doc_field_intro(record) -> str:
    info = record["doc_field"]
    counts = ", ".join(f"{v} {n}" for v, n in info["documents"].items())
    text = (f"Share of each run's top {info['k']} from each value of the documents' {info['field']} "
            f"(mean over the judged queries; the corpus: {counts}).")
    if info["without"]:
        text += (f" \"{record['primary']} without V\": scored again with the documents of {info['field']} V removed "
                 "from the runs (those below move up) and the qrels.")
    return text


def _md_doc_field(record) -> list[str]:
    info = record.get("doc_field")
    if not info:
        return []
    primary = record["primary"]
    header = ["Run", *(_md(v) for v in info["values"]), *([_md(primary)] if info["without"] else []),
              *(f"{_md(primary)} without {_md(v)}" for v in info["without"])]
    lines = ["", f"## Top {info['k']} by document {_md(info['field'])}", "", _md_prose(_doc_field_intro(record)), "",
             "| " + " | ".join(header) + " |", "|---|" + "|".join(["---:"] * (len(header) - 1)) + "|"]
    for run in record["runs"]:
        d = run["doc_field"]
        cells = [_num(d["shares"].get(v)) for v in info["values"]]
        cells += [_num(run["overall"].get(primary))] if info["without"] else []
        cells += [_num(d["without"][v]["overall"].get(primary)) for v in info["without"]]
        lines.append(f"| {_md(run['name'])} | " + " | ".join(cells) + " |")
    return lines


def _negation_intro(record) -> str:
    split = record["negation_split"]
    return (f"The negation queries: query field {split['field']} is {' or '.join(split['negation_values'])} "
            f"({split['queries'].get('negation', 0)} queries); the others: {split['queries'].get('no negation', 0)}.")


def _md_negation(record) -> list[str]:
    split = record.get("negation_split")
    if not split:
        return []
    groups = list(split["queries"])
    measures = record["measures"]
    lines = ["", "## Negation vs no negation", "", _md_prose(_negation_intro(record)), "",
             "| Run | " + " | ".join(f"{_md(m)} {_md(g)}" for m in measures for g in groups) + " |",
             "|---|" + "|".join(["---:"] * (len(measures) * len(groups))) + "|"]
    for run in record["runs"]:
        neg = run.get("negation") or {}
        lines.append(f"| {_md(run['name'])} | " + " | ".join(_num(neg.get(g, {}).get(m)) for m in measures
                                                            for g in groups) + " |")
    return lines


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


#: Width of a character of an 11-pixel axis label, rounded up (system-ui, digits and lowercase letters).
_CHAR_WIDTH = 7


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
    # a label wider than its group would run into the next: all labels are then turned 45 degrees
    label_width = max(len(str(s)) for s in subsets) * _CHAR_WIDTH
    turned = label_width > group - 4
    if turned:
        bottom = int(label_width * 0.71) + 24
        width += int(label_width * 0.71)  # the first label reaches left of its group
        left += int(label_width * 0.71)

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
        x_label = x0 + width_bar * len(runs) / 2
        if turned:
            parts.append(f"<text x=\"{x_label:.1f}\" y=\"{top + height + 14}\" font-size=\"11\" text-anchor=\"end\" "
                         f"transform=\"rotate(-45 {x_label:.1f} {top + height + 14})\">{_e(subset)}</text>")
        else:
            parts.append(f"<text x=\"{x_label:.1f}\" y=\"{top + height + 16}\" font-size=\"11\" "
                         f"text-anchor=\"middle\">{_e(subset)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def _stacked_bar(shares: dict, values: list[str], label: str) -> str:
    """One run's shares as a 160 x 12 stacked bar (inline SVG), a value per colour in ``values``' order."""
    width, height = 160, 12
    parts = [f"<svg class=\"stack\" role=\"img\" width=\"{width}\" height=\"{height}\" "
             f"viewBox=\"0 0 {width} {height}\" "
             f"xmlns=\"http://www.w3.org/2000/svg\"><title>{_e(label)}: "
             + _e(", ".join(f"{v} {_num(shares.get(v))}" for v in values)) + "</title>"]
    x = 0.0
    for i, value in enumerate(values):
        share = shares.get(value) or 0.0
        if share <= 0:
            continue
        parts.append(f"<rect x=\"{x:.2f}\" y=\"0\" width=\"{share * width:.2f}\" height=\"{height}\" "
                     f"fill=\"{PALETTE[i % len(PALETTE)]}\"/>")
        x += share * width
    parts.append("</svg>")
    return "".join(parts)


def _num_cell(value) -> str:
    """A sortable number cell of the runs' tables."""
    return f"<td class=\"num\" data-value=\"{'' if value is None else f'{value:.6f}'}\">{_num(value)}</td>"


def _reported_cell(entry) -> str:
    """A number reported in the paper, its source as the cell's title (not sortable: no data-value)."""
    if entry is None:
        return "<td class=\"num\">–</td>"
    return f"<td class=\"num\" title=\"{_e(_source_text(entry))}\">{entry['printed']}</td>"


def _html_sources(sources) -> str:
    if not sources:
        return ""
    return ("<ol class=\"sources\">" + "".join(f"<li id=\"{_e(anchor)}\">{text}</li>" for anchor, text in sources)
            + "</ol>")


def _html_reported_body(record, columns, sources) -> str:
    """The paper's numbers as a ``<tbody class="reported">`` of the leaderboard (no rank, no test, no "best")."""
    systems = _reported(record)
    if not systems:
        return ""
    rows = [f"<tr class=\"reported-head\"><th colspan=\"{len(columns) + 5}\" scope=\"rowgroup\">Reported in the paper "
            f"({_paper_link_html(record)}): not ranked, not tested against the runs</th></tr>"]
    for system, values in systems.items():
        anchor = f"source-{len(sources) + 1}"
        sources.append((anchor, f"<b>{_e(system)}</b>: " + "; ".join(
            f"{_e(values[m]['paper_measure'])} {values[m]['printed']}: {_e(_source_text(values[m]))}"
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
    extra = _paper_measures(record)
    columns = [*measures, *extra]
    best = {m: best_runs(record, m) for m in measures}
    body = ["<p><a href=\"index.html\">All leaderboards</a> · <a href=\"reproduction.html\">Reproduction of the "
            "papers</a></p>", f"<h1>Leaderboard: {_e(record['dataset'])}</h1>", _html_sources_line(record)]
    if record["runs"]:
        body.append(f"<p>{record['queries']} judged queries. Sorted by {_e(record['primary'])}; click a column header "
                    f"to sort. ↓ = lower is better. <b>Bold</b> = best (every run tied for it; none where all runs "
                    f"tie). † = differs from the baseline <b>{_e(record['baseline'])}</b> "
                    f"(paired randomization test, Holm-corrected, p &lt; {ALPHA}). {_e(_ties_sentence(record))} "
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
                    f"{_e(_label_with_paper(record, m))}</th>")
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
                tip = (f" title=\"vs {_e(record['baseline'])}: diff {test['mean_diff']:+.4f}, 95% CI "
                       f"[{_num(ci[0])}, {_num(ci[1])}], p (randomization, Holm) {_num(test['p_randomization_holm'])}, "
                       f"n={test['n']}\"")
            classes = "num best" if run["name"] in best[m] else "num"
            data = "" if value is None else f"{value:.6f}"
            cells.append(f"<td class=\"{classes}\" data-value=\"{data}\"{tip}>{_num(value)}"
                         f"{'†' if _marker(run, m) else ''}</td>")
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
                              "</dd>" for label, text in _provenance(run))
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
    body.append(f"<p class=\"note built\">{_e(_built_with(record))}</p>")
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
    rows = _per_query_rows(record)
    if not rows:
        return []
    measures = record["measures"]
    head = "<th>Run</th>" + "".join(f"<th class=\"num\">{_e(_measure_label(record, m))}</th>" for m in measures)
    body = []
    for run, tests in rows:
        cells = []
        for m in measures:
            test = tests.get(m)
            title = (f" title=\"{test['wins']} queries better than {_e(record['baseline'])}, {test['losses']} worse, "
                     f"{test['ties']} equal, of {test['n']}\"" if test and "wins" in test else "")
            cells.append(f"<td class=\"num wlt\"{title}>{_wlt(test)}</td>")
        body.append(f"<tr data-run=\"{_e(run['name'])}\"><td><code>{_e(run['name'])}</code></td>{''.join(cells)}</tr>")
    return [f"<h2>Per query against the baseline {_e(record['baseline'])}</h2>",
            "<p>Wins / losses / ties: the queries on which the run is better than the baseline, worse, or equal "
            "(lower is better for ↓), among those where the measure has a value in both.</p>",
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
                   f"<td class=\"num\">{_num(r['value'])}{_e(_on_copy(r))}</td><td class=\"num gap\">{_gap(r['gap'])}</td>"
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
    for m in _subset_measures(record):
        out.append(f"<h3>{_e(_measure_label(record, m))}</h3>")
        if record["runs"] and m in record["measures"]:
            out.append(_bar_chart(record, m))
        head_cells = "<th data-type=\"text\">Run</th>" + "".join(
            f"<th data-type=\"number\" class=\"num\">{_e(_subset_header(record, s))}</th>" for s in subsets)
        sub_rows = []
        for run in record["runs"]:
            values = [run["subsets"].get(s, {}).get(m) for s in subsets]
            sub_rows.append(f"<tr><td><code>{_e(run['name'])}</code></td>" + "".join(
                f"<td class=\"num\" data-value=\"{'' if v is None else f'{v:.6f}'}\">{_num(v)}</td>" for v in values)
                + "</tr>")
        if not sub_rows:
            sub_rows.append(f"<tr class=\"empty\"><td colspan=\"{len(subsets) + 1}\">No contributed run yet.</td></tr>")
        reported_rows = []
        for system, values in _reported_per_subset(record, m).items():
            anchor = f"source-{len(sources) + 1}"
            sources.append((anchor, f"<b>{_e(system)}</b>, {_e(m)} per {_e(field)}: " + "; ".join(
                _e(text) for text in _grouped_sources(values.values()))))
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
    out = [f"<h2>Top {info['k']} by document {_e(info['field'])}</h2>", f"<p>{_e(_doc_field_intro(record))}</p>",
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
        cells = [f"<td><code>{_e(run['name'])}</code></td>"]
        for v in values:
            x = d["shares"].get(v)
            cells.append(f"<td class=\"num\" data-value=\"{'' if x is None else f'{x:.6f}'}\">{_num(x)}</td>")
        cells.append(f"<td>{_stacked_bar(d['shares'], values, run['name'])}</td>")
        if info["without"]:
            x = run["overall"].get(primary)
            cells.append(f"<td class=\"num\" data-value=\"{'' if x is None else f'{x:.6f}'}\">{_num(x)}</td>")
        for v in info["without"]:
            x = d["without"][v]["overall"].get(primary)
            cells.append(f"<td class=\"num\" data-value=\"{'' if x is None else f'{x:.6f}'}\">{_num(x)}</td>")
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
    return ["<h2>Negation vs no negation</h2>", f"<p>{_e(_negation_intro(record))}</p>",
            f"<table id=\"negation\" class=\"sortable\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>"]


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
                           "primary": record["primary"], "reported": len(record.get("reported", ())),
                           "top": None if top is None else {"name": top["name"], "system": top["system"],
                                                            "value": top["overall"][record["primary"]]}})
        families.append({"family": prefix, "title": title, "description": description, "leaderboards": boards})
    return {"benchmarks": families, "reproduction": "reproduction.html"}


def index_markdown(records) -> str:
    index = index_record(records)
    lines = ["# negplugins leaderboards", "",
             "Built by `negplugins leaderboard build` from the runs in `runs/` (see `runs/README.md`); "
             "checked in CI by `negplugins leaderboard check`. Do not edit by hand. Every page also lists the "
             "numbers reported in the benchmark's paper; [reproduction.md](reproduction.md) sets them beside "
             "this suite's runs.", "",
             "| Benchmark | Dataset | Runs | Paper's numbers | Best system | Score |", "|---|---|---:|---:|---|---:|"]
    for family in index["benchmarks"]:
        if not family["leaderboards"]:
            lines.append(f"| {_md(family['title'])} | – | 0 | 0 | no runs yet | – |")
        for board in family["leaderboards"]:
            top = board["top"]
            lines.append(f"| {_md(family['title'])} | [{_md(board['dataset'])}]({board['slug']}.md) | "
                         f"{board['runs']} | {board['reported']} | {_md(top['system']) if top else 'no runs yet'} | "
                         f"{_md(board['primary'])} {_num(top['value']) if top else '–'} |")
    return "\n".join(lines) + "\n"


def index_html(records) -> str:
    index = index_record(records)
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
        for board in family["leaderboards"]:
            top = board["top"]
            value = top["value"] if top else None
            body.append(f"<tr><td title=\"{_e(family['description'])}\">{_e(family['title'])}</td>"
                        f"<td><a href=\"{_e(board['slug'])}.html\">{_e(board['dataset'])}</a></td>"
                        f"<td class=\"num\" data-value=\"{board['runs']}\">{board['runs']}</td>"
                        f"<td class=\"num\" data-value=\"{board['reported']}\">{board['reported']}</td>"
                        f"<td>{_e(top['system']) if top else 'no runs yet'}</td><td>{_e(board['primary'])}</td>"
                        f"{_num_cell(value)}</tr>")
    body.append("</tbody>\n</table>")
    return _page("negplugins leaderboards", "\n".join(body))


# -- reproduction page ------------------------------------------------------------------------------

def reproduction_record(records) -> dict:
    """Per benchmark: each number of its paper, the suite's runs that reproduce it, the authors' pipeline.

    ``rows`` holds one entry per reported number (whole dataset first, then subsets of reproduced
    systems): ``suite`` and ``authors`` list the runs (``run``, ``value``, ``gap`` = run minus paper)
    whose sidecar names the system, without and with ``authors_pipeline``. ``notes`` are the spec's
    ``reproduction_notes`` (why the numbers differ); ``other_runs`` the runs reproducing no system.
    """
    families = []
    for spec in benchmarks():
        own = [record for record in records if record["family"] == spec.name]
        paper = own[0]["paper"] if own else None
        rows, reproduced = [], set()
        for record in own:
            for run in record["runs"]:
                if run.get("reproduces"):
                    reproduced.add((record["dataset"], run["reproduces"]))
        for record in own:
            reported = record.get("reported", ())
            for r in [*(r for r in reported if r["subset"] is None), *(r for r in reported if r["subset"] is not None)]:
                if r["subset"] is not None and (record["dataset"], r["system"]) not in reproduced:
                    continue
                row = {"dataset": record["dataset"], "slug": record["slug"], "system": r["system"],
                       "measure": r["measure"], "paper_measure": r["paper_measure"], "subset": r["subset"],
                       "paper": r["value"], "paper_printed": r["printed"], "source": r["source"], "note": r["note"], "suite": [], "authors": []}
                for run in record["runs"]:
                    if run.get("reproduces") != r["system"]:
                        continue
                    values = run["overall"] if r["subset"] is None else run["subsets"].get(r["subset"], {})
                    value = values.get(r["measure"])
                    gap = None if value is None or r["value"] is None else round(value - r["value"], 6) + 0.0
                    row["authors" if run.get("authors_pipeline") else "suite"].append(
                        {"run": run["name"], "system": run["system"], "value": value, "gap": gap,
                         **({"data_origin": run["data_origin"]} if run.get("data_origin") else {})})
                rows.append(row)
        other = [{"dataset": record["dataset"], "slug": record["slug"], "run": run["name"], "system": run["system"],
                  "measure": record["primary"], "value": run["overall"].get(record["primary"])}
                 for record in own for run in record["runs"] if not run.get("reproduces")]
        data = [line for row in rows for entry in (*row["suite"], *row["authors"]) for line in entry.get("data_origin", ())]
        families.append({"family": spec.name, "title": spec.title,
                         "paper": (paper or {}).get("reference", spec.paper), "paper_url": (paper or {}).get("url", ""),
                         "rows": rows, **({"data_origin": list(dict.fromkeys(data))} if data else {}),
                         "notes": {k: spec.reproduction_notes[k] for k in sorted(spec.reproduction_notes)},
                         "other_runs": other})
    return {"benchmarks": families,
            "explanation": "Each number a benchmark's paper reports (as its spec records it, with its place in the "
                           "paper) beside this suite's runs that reproduce the system (sidecar field reproduces) and "
                           "the runs that follow the authors' own pipeline (authors_pipeline); gap = run minus paper."}


def _on_copy(entry) -> str:
    """`` on a derived copy`` after a reproduction made on one (the family's Data line names it)."""
    return f" on a {DERIVED}" if entry.get("data_origin") else ""


def _runs_cell_md(entries) -> str:
    return "<br>".join(f"{_md(e['run'])} {_num(e['value'])} ({_gap(e['gap'])}{_on_copy(e)})" for e in entries) or "–"


def reproduction_markdown(records) -> str:
    data = reproduction_record(records)
    lines = ["# Reproducing the papers", "", "Built by `negplugins leaderboard build`; do not edit by hand. "
             + _md_prose(data["explanation"]), "", "[All leaderboards](README.md)", ""]
    for family in data["benchmarks"]:
        ref = f"[{_md(family['paper'])}]({family['paper_url']})" if family["paper_url"] else _md(family["paper"])
        lines += [f"## {_md(family['title'])} ({ref})", ""]
        if not family["rows"]:
            lines += ["The benchmark's spec records no number of its paper yet.", ""]
        else:
            lines += ["| Dataset | System | Measure | Subset | Paper | This suite (gap) | Authors' pipeline (gap) "
                      "| Source |",
                      "|---|---|---|---|---:|---|---|---|"]
            for row in family["rows"]:
                lines.append(f"| [{_md(row['dataset'])}]({row['slug']}.md) | {_md(row['system'])} | "
                             f"{_md(row['paper_measure'])} | {_md(row['subset'] or 'all')} | "
                             f"{row['paper_printed']} | "
                             f"{_runs_cell_md(row['suite'])} | {_runs_cell_md(row['authors'])} | "
                             f"{_md(_source_text(row))} |")
            lines.append("")
        if family.get("data_origin"):
            lines += [f"Data of the runs marked \"on a {DERIVED}\": " + "; ".join(
                _md(line) for line in family["data_origin"]) + ".", ""]
        if family["notes"]:
            lines += ["Why the numbers differ:", ""]
            lines += [f"- **{_md(system)}**: {_md_prose(text)}" for system, text in family["notes"].items()]
            lines.append("")
        if family["other_runs"]:
            lines.append("This suite's other runs (reproducing no system of the paper): " + ", ".join(
                f"{_md(r['run'])} on {_md(r['dataset'])} ({_md(r['measure'])} {_num(r['value'])})"
                for r in family["other_runs"]) + ".")
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _runs_cell_html(entries) -> str:
    if not entries:
        return "<td>–</td>"
    return "<td>" + "<br>".join(
        f"<code>{_e(e['run'])}</code> <span class=\"num\">{_num(e['value'])}</span> "
        f"<span class=\"gap\">({_gap(e['gap'])}{_e(_on_copy(e))})</span>" for e in entries) + "</td>"


def reproduction_html(records) -> str:
    data = reproduction_record(records)
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
                    f"<td class=\"num reported\" title=\"{_e(_source_text(row))}\">{row['paper_printed']}</td>"
                    + _runs_cell_html(row["suite"]) + _runs_cell_html(row["authors"])
                    + f"<td class=\"source\">{_e(_source_text(row))}</td></tr>")
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
                f"({_e(r['measure'])} {_num(r['value'])})" for r in family["other_runs"]) + ".</p>")
    return _page("Reproducing the papers", "\n".join(body))
