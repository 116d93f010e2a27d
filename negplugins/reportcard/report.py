"""The report of ``negplugins benchmark`` (Markdown, static HTML and one SVG figure), rendered from its summary
by the templates in ``templates/``; the same summary and specs give the same bytes (docs/report-card.md)."""

from __future__ import annotations

from pathlib import Path

from ..rendering.page import BREAK, Alt, Body, Cell, Code, Interval, Label, Marked, Raw, Row, Table, html_document
from ..rendering.page import template_environment as _environment
from ..rendering.text import html_text as _e
from ..rendering.text import markdown_text as _md
from . import card
from .card import COMPUTED_LABEL, GENERATOR, REPORTED_LABEL, UNREPRODUCED_LABEL, figure_svg, notable_systems, standing

__all__ = ["notable_systems", "report_markdown", "report_html", "figure_svg", "standing"]

_FOLDER = Path(__file__).parent
_TEMPLATES = _environment(_FOLDER)


def _interval(source, measure, **where) -> Interval:
    return Interval(_mean(source, measure, **where), card.half_width(card.interval_of(source, measure, **where)))


def _mean(source, measure, subset=None, group=None):
    if subset is not None:
        return source["subsets"].get(subset, {}).get(measure)
    if group is not None:
        return card.group_value(source, group, measure)
    return source["overall"].get(measure)


def _others(entry, source, spec) -> list:
    """The other measures of ``source`` (the model's entry or a baseline), each with its interval."""
    parts = []
    for m in card.other_measures(entry):
        parts += [" · "] if parts else []
        parts += [card.measure_name(spec, m) + card.arrow(m) + " ", _interval(source, m)]
    return parts or ["–"]


def _paper_value(spec, r):
    """A paper's number, marked where this suite could not reproduce it."""
    if r is None:
        return "–"
    return [Raw(r.printed), *([" ", Label(UNREPRODUCED_LABEL, "unreproduced")] if card.unreproduced(spec, r.system)
                              else [])]


def _model_rows(entry, model, spec) -> list[Row]:
    primary = entry["primary"]
    rows = [Row([Cell(Marked(entry["title"], "**")), Cell([Code(entry["dataset"]), card.origin_mark(entry)]),
                 Cell(Alt(f"**{_md(model.get('name'))}** ({_md(card.depth_text(entry))})",
                          f"{_e(model.get('name'))} <span class=\"label\">this model, {_e(card.depth_text(entry))}</span>")),
                 Cell(card.measure_name(spec, primary) + card.arrow(primary)),
                 Cell(Marked(_interval(entry, primary), "**"), cls="num value"), Cell(_others(entry, entry, spec))],
                {"class": "model"})]
    for baseline in entry.get("baselines") or ():
        versus = card.vs_model_text(baseline)
        rows.append(Row([Cell(None), Cell(None), Cell([
            Code(baseline["name"]), " ", baseline["system"], Alt(": ", f" <span class=\"label\">{COMPUTED_LABEL}</span> "),
            card.baseline_why(baseline, spec), "; " + versus if versus else ""]), Cell(None),
            Cell(_interval(baseline, primary), cls="num"), Cell(_others(entry, baseline, spec))],
            {"class": "baseline", "data-baseline": baseline["name"]}))
    reported = card.reported_values(spec, entry["dataset"])
    for system, why in notable_systems(spec, entry["dataset"], primary, model):
        values = reported[system]
        value = values.get(primary)
        rest = []
        for m in card.other_measures(entry):
            if m in values:
                rest += [" · "] if rest else []
                rest += [card.measure_name(spec, m) + " ", _paper_value(spec, values[m])]
        source = card.source_text(value if value is not None else next(iter(values.values())))
        link = (f" <a href=\"{_e(spec.paper.url)}\">{_e(spec.paper.reference)}</a>"
                if spec.paper.url.startswith(("https://", "http://")) else "")
        rows.append(Row([Cell(None), Cell(None), Cell(Alt(
            f"*{_md(system)}*: {REPORTED_LABEL}, {_md(why)} ({_md(source)})",
            f"{_e(system)} <span class=\"label\">{REPORTED_LABEL}</span> {_e(why)};"
            f"{link} {_e(source)}")), Cell(None),
            Cell(Marked(_paper_value(spec, value)), cls="num"), Cell(rest or "–")],
            {"class": "reported", "data-system": system}))
    return rows


def _benchmarks_table(summary) -> Table:
    model = summary["model"]
    bodies = []
    for entry in summary["benchmarks"]:
        if entry["status"] != "done":
            rows = [Row([Cell(entry["title"]), Cell(Code(entry["dataset"])),
                         Cell([Alt("skipped: ", "<span class=\"label\">skipped</span> "), card.short_reason(entry)],
                              colspan=4), *(Cell(None, only="markdown") for _ in range(3))], {"class": "skipped"})]
        else:
            rows = _model_rows(entry, model, card.spec_of(entry))
        bodies.append(Body(rows, {"class": "benchmark", "data-dataset": entry["dataset"]}))
    head = [Cell("Benchmark"), Cell("Dataset"), Cell("System"), Cell("Primary measure"),
            Cell("Value", cls="num"), Cell("Other measures")]
    return Table(head, bodies, {"id": "report-card"})


def _standing_table(summary) -> Table:
    rows = []
    for entry in card.done_entries(summary):
        info, spec = standing(entry), card.spec_of(entry)
        rows.append(Row([Cell(entry["title"]), Cell(Code(entry["dataset"])),
                         Cell(card.measure_name(spec, info["measure"]) + card.arrow(info["measure"])),
                         Cell(card.with_interval(info["value"], info["interval"]), cls="num"),
                         Cell(card.computed_text(info)), Cell(card.paper_range_text(info, spec))]))
    head = [Cell("Benchmark"), Cell("Dataset"), Cell("Measure"), Cell("The model", cls="num"),
            Cell(f"Systems {COMPUTED_LABEL}"), Cell(Raw("The paper's systems"))]
    return Table.of(head, rows, id="standing-table")


def _baseline_heads(entry) -> list[Cell]:
    return [Cell([b["name"], BREAK, f"({COMPUTED_LABEL}) {entry['primary']}"], cls="num baseline",
                 title=b["system"]) for b in entry.get("baselines") or []]


def _measure_heads(entry, spec) -> list[Cell]:
    return [Cell(card.measure_name(spec, m) + card.arrow(m), cls="num") for m in entry["measures"]]


def _subset_table(entry, model) -> Table:
    spec, primary, baselines = card.spec_of(entry), entry["primary"], entry.get("baselines") or []
    columns = card.subset_columns(entry, model)
    head = [Cell(entry["breakdown_field"]), Cell("queries", cls="num"), *_measure_heads(entry, spec),
            *_baseline_heads(entry)]
    for system, _ in columns:
        unreproduced = ", " + UNREPRODUCED_LABEL if card.unreproduced(spec, system) else ""
        head.append(Cell(Alt(f"*{_md(f'{system} ({REPORTED_LABEL}{unreproduced})')}* {_md(primary)}",
                             f"{_e(system)}<br>(paper{unreproduced}) {_e(primary)}"), cls="num reported"))
    rows = [Row([Cell(subset), Cell(str(values.get("queries", "–")), cls="num"),
                 *(Cell(_interval(entry, m, subset=subset), cls="num") for m in entry["measures"]),
                 *(Cell(_interval(b, primary, subset=subset), cls="num baseline") for b in baselines),
                 *(Cell(Marked(Raw(v[subset].printed)) if v.get(subset) is not None else "–", cls="num reported")
                   for _, v in columns)])
            for subset, values in entry["subsets"].items()]
    return Table.of(head, rows, **{"class": "subsets", "data-dataset": entry["dataset"]})


def _negation_table(entry) -> Table:
    spec, primary = card.spec_of(entry), entry["primary"]
    head = [Cell("queries"), Cell("count", cls="num"), *_measure_heads(entry, spec),
            *_baseline_heads(entry)]
    rows = [Row([Cell(group), Cell(str(values.get("queries", "–")), cls="num"),
                 *(Cell(_interval(entry, m, group=group), cls="num") for m in entry["measures"]),
                 *(Cell(_interval(b, primary, group=group), cls="num baseline") for b in entry.get("baselines") or [])])
            for group, values in entry["negation_split"]["groups"].items()]
    return Table.of(head, rows, **{"class": "negation"})


def _context(summary: dict) -> dict:
    model = summary["model"]
    done = card.done_entries(summary)
    notes = [(e, note) for e in done for note in e.get("notes") or ()]
    notes += [(e, f"{system}: {UNREPRODUCED_LABEL}. {card.spec_of(e).paper.reproduction_notes[system]}")
              for e in done for system in card.unreproduced_shown(e, model)]
    views = [{"entry": e, "subsets": _subset_table(e, model) if e["subsets"] else None,
              "context": bool(card.subset_columns(e, model) or e.get("baselines")),
              "negation": _negation_table(e) if e.get("negation_split") else None} for e in done]
    return {"summary": summary, "model": model, "card": card, "done": done, "views": views, "notes": notes,
            "skipped": [e for e in summary["benchmarks"] if e["status"] != "done"],
            "benchmarks": _benchmarks_table(summary), "standing": _standing_table(summary),
            "COMPUTED": COMPUTED_LABEL, "REPORTED": REPORTED_LABEL, "UNREPRODUCED": UNREPRODUCED_LABEL,
            "GENERATOR": GENERATOR}


def report_markdown(summary: dict) -> str:
    """The report in Markdown (GitHub's flavour); the figure is ``figure.svg`` beside it."""
    return _TEMPLATES.get_template("report.md.j2").render(**_context(summary))


def report_html(summary: dict) -> str:
    """The report as one static HTML page (inline CSS and SVG; no script)."""
    body = _TEMPLATES.get_template("report.html.j2").render(figure=figure_svg(summary, standalone=False),
                                                            **_context(summary))
    return html_document(f"Negation report card: {summary['model'].get('name')}", body.rstrip("\n"),
                         css=(_FOLDER / "assets" / "report.css").read_text(encoding="utf-8"), generator=GENERATOR)
