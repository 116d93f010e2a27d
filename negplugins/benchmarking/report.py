"""The report of ``negplugins benchmark``: Markdown, static HTML and one SVG figure, rendered from its summary.

:func:`report_markdown`, :func:`report_html` and :func:`figure_svg` are pure: the same summary (and the same
benchmark specs, which hold the papers' numbers) give the same bytes; no clock, no absolute path. Every text
is escaped (``html.escape``; in Markdown :func:`~negplugins.evaluation.reports.markdown_text`), so a model named
``<script>`` is shown, never run. The HTML page has no script and allows none (its Content-Security-Policy).

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

import html
import math

from .. import datasets
from ..evaluation.reports import markdown_code, markdown_text
from ..measures import lower_is_better

__all__ = ["notable_systems", "report_markdown", "report_html", "figure_svg", "standing"]

GENERATOR = "negplugins benchmark"
MODEL_COLOUR = "#cf222e"
BASELINE_COLOUR = "#0969da"
PAPER_COLOUR = "#6e7781"
REPORTED_LABEL = "reported in the paper"
COMPUTED_LABEL = "computed here"
UNREPRODUCED_LABEL = "not reproduced here"
MAX_CONTEXT = 4


# -- numbers and escaping ---------------------------------------------------------------------------

def _finite(value):
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _num(value) -> str:
    value = _finite(value)
    return "–" if value is None else f"{value:.4f}"


def _half_width(interval) -> float | None:
    if not interval or len(interval) != 2 or _finite(interval[0]) is None or _finite(interval[1]) is None:
        return None
    return (interval[1] - interval[0]) / 2


def _num_ci(value, interval) -> str:
    """``0.5855 ± 0.0112``: the value and the half-width of its 95% t interval (symmetric); else the value alone."""
    half = _half_width(interval)
    shown = _num(value)
    return shown if half is None or _finite(value) is None else f"{shown} ± {half:.4f}"


def _interval(entry, measure, subset=None, group=None):
    """The 95% interval of one of ``entry``'s means (overall, a subset's or a negation group's), or None."""
    ci = entry.get("ci95") or {}
    if subset is not None:
        ci = (ci.get("subsets") or {}).get(subset) or {}
    elif group is not None:
        ci = (ci.get("negation_split") or {}).get(group) or {}
    else:
        ci = ci.get("overall") or {}
    return ci.get(measure)


def _p(value) -> str:
    value = _finite(value)
    return "–" if value is None else ("< 0.0001" if value < 1e-4 else f"{value:.4f}")


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


def _unreproduced(spec, system) -> bool:
    return spec is not None and not spec.is_reproduced(system)


def _paper_text(spec, r) -> str:
    """A paper's number with its digits, and "not reproduced here" where the suite could not reproduce it."""
    if r is None:
        return "–"
    return r.printed + (f" ({UNREPRODUCED_LABEL})" if _unreproduced(spec, r.system) else "")


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
    """Where the model stands on ``entry``'s primary measure: among the systems computed here, and the papers'.

    ``{"measure", "value", "interval", "lower", "computed": [baseline entries with a value], "better_than": k,
    "significantly_better": b, "significantly_worse": w, "reported": [(system, Reported, source), ...]}``.
    ``better_than`` counts the baselines (computed by the suite on the same data and protocol) whose value the
    model's beats (strictly; lower is better where the measure says so), None without a model value; the
    ``significantly_*`` counts are those where the paired randomization test (Holm) is below 0.05. The paper's
    numbers are context only: they are not counted.
    """
    from ..evaluation.significance import ALPHA

    measure = entry["primary"]
    value = _finite(entry["overall"].get(measure))
    spec = _spec(entry)
    reported = [(system, values[measure], _source(values[measure]))
                for system, values in _reported(spec, entry["dataset"]).items() if measure in values]
    lower = lower_is_better(measure)
    computed = [b for b in entry.get("baselines") or () if _finite(b["overall"].get(measure)) is not None]
    better = significantly_better = significantly_worse = None
    if value is not None:
        better = sum(1 for b in computed if (value < b["overall"][measure] if lower else value > b["overall"][measure]))
        significantly_better = significantly_worse = 0
        for b in computed:
            test = b.get("vs_model") or {}
            p, diff = _finite(test.get("p_randomization_holm")), _finite(test.get("mean_diff"))
            if p is None or diff is None or p >= ALPHA or diff == 0:
                continue
            if (diff < 0) == lower:
                significantly_better += 1
            else:
                significantly_worse += 1
    return {"measure": measure, "value": value, "interval": _interval(entry, measure), "lower": lower,
            "computed": computed, "better_than": better, "significantly_better": significantly_better,
            "significantly_worse": significantly_worse, "reported": reported}


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


def _method_lines(summary) -> list[tuple[str, str]]:
    """``[(label, text)]``: how the baselines, the intervals and the comparisons were computed."""
    statistics = summary.get("statistics") or {}
    lines = [("Baselines", "systems with no model, computed here on the same data, protocol, depth and measures "
                           "as the model: stock Pyserini BM25 on every full-corpus benchmark, and the authors' own "
                           "pipeline where the suite has it; only they count in \"better than N of M\"")]
    if statistics.get("intervals"):
        lines.append(("Intervals", "± is the half-width of the " + statistics["intervals"]))
    if statistics.get("comparison"):
        lines.append(("Comparison", statistics["comparison"]))
    return lines


def _short(entry) -> str:
    """A skipped dataset's reason in a few words (the whole reason is in the report's Skipped section)."""
    reason = entry.get("reason") or "no reason recorded"
    head = reason.split(":")[0]
    return f"{head} (see Skipped below)" if len(reason) > 80 else reason


def _done(summary):
    return [e for e in summary["benchmarks"] if e["status"] == "done"]


def _origin_mark(entry, escape) -> str:
    """`` (derived copy, see Notes)`` after a dataset read from a derived copy (its note names file, SHA-256, source)."""
    kinds = list(dict.fromkeys(str(o.get("kind", "")) for o in entry.get("data_origin") or ()))
    return " " + escape(f"({', '.join(kinds)}, see Notes)") if kinds else ""


def _other_measures(entry) -> list[str]:
    return [m for m in entry["measures"] if m != entry["primary"]]


def _depth_text(entry) -> str:
    if entry["protocol"] == "pairs":
        return f"each query's {entry['depth']} candidates"
    return f"top {entry['depth']}"


def _vs_model_text(baseline) -> str:
    """``the model − it: −0.0702 ± 0.0090, p < 0.0001 (2909 queries)``; why it has no result; or ''."""
    test = baseline.get("vs_model")
    if not test or _finite(test.get("mean_diff")) is None:
        return f"no result: {baseline['reason']}" if baseline.get("reason") else ""
    half = _half_width(test.get("ci95"))
    diff = f"{test['mean_diff']:+.4f}" + (f" ± {half:.4f}" if half is not None else "")
    return f"the model − it: {diff}, p {_p(test.get('p_randomization_holm'))} ({test.get('n')} queries)"


def _baseline_why(baseline, spec) -> str:
    why = COMPUTED_LABEL + ", the same data and protocol"
    if baseline.get("reproduces"):
        why += f"; the paper's {baseline['reproduces']}" + (" as the authors' own code runs it"
                                                            if baseline.get("authors_pipeline") else "")
    return why


def _standing_computed_text(info) -> str:
    n = len(info["computed"])
    if not n:
        return "no baseline computed here"
    values = ", ".join(f"{b['system']} {_num(b['overall'][info['measure']])}" for b in info["computed"])
    if info["better_than"] is None:
        return f"{n} computed here: {values}"
    text = f"better than {info['better_than']} of {n} computed here ({values})"
    significant = []
    if info["significantly_better"]:
        significant.append(f"significantly better than {info['significantly_better']}")
    if info["significantly_worse"]:
        significant.append(f"significantly worse than {info['significantly_worse']}")
    return text + ("; " + ", ".join(significant) if significant else "; no difference significant at 0.05")


def _standing_paper_text(info, spec) -> str:
    n = len(info["reported"])
    if not n:
        return "no number of the paper on this dataset"
    lowest = min(info["reported"], key=lambda item: item[1].value)[1]
    highest = max(info["reported"], key=lambda item: item[1].value)[1]
    text = f"{n} system{'s' if n > 1 else ''} reported, {lowest.printed} to {highest.printed} (context, not counted)"
    unreproduced = [f"{system} {r.printed}" for system, r, _ in info["reported"] if _unreproduced(spec, system)]
    return text + (f"; {UNREPRODUCED_LABEL}: {', '.join(unreproduced)}" if unreproduced else "")


def _figure_summary_text(info) -> str:
    if not info["computed"]:
        return "no baseline computed"
    if info["better_than"] is None:
        return f"{len(info['computed'])} computed here"
    return f"better than {info['better_than']} of {len(info['computed'])} computed here"


# -- Markdown ---------------------------------------------------------------------------------------

def report_markdown(summary: dict) -> str:
    """The report in Markdown (GitHub's flavour); the figure is ``figure.svg`` beside it."""
    model = summary["model"]
    lines = [f"<!-- {GENERATOR} report: rewritten by each run of negplugins benchmark -->",
             f"# Negation report card: {_md(model.get('name'))}", "",
             f"- Model: {_md(_model_line(summary))}"]
    lines += [f"- Protocol: {_md(text)}" for text in _protocol_lines(summary)]
    lines += [f"- {label}: {_md(text)}" for label, text in _method_lines(summary)]
    lines += [f"- Date of the newest run: {_md(summary.get('date') or '–')}",
              f"- Versions: {_md(_versions_line(summary))}", "",
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
        spec = _spec(entry)
        if entry["status"] != "done":
            lines.append(f"| {_md(entry['title'])} | {_md_code(entry['dataset'])} | skipped: {_md(_short(entry))} "
                         "| | | |")
            continue
        primary = entry["primary"]
        lines.append(f"| **{_md(entry['title'])}** | {_md_code(entry['dataset'])}{_origin_mark(entry, _md)} | "
                     f"**{_md(model.get('name'))}** "
                     f"({_md(_depth_text(entry))}) | {_md(_paper_name(spec, primary))}{_arrow(primary)} | "
                     f"**{_num_ci(entry['overall'].get(primary), _interval(entry, primary))}** | "
                     f"{_md_others(entry, entry, spec)} |")
        for baseline in entry.get("baselines") or ():
            versus = _vs_model_text(baseline)
            lines.append(f"| | | {_md_code(baseline['name'])} {_md(baseline['system'])}: "
                         f"{_md(_baseline_why(baseline, spec))}"
                         f"{'; ' + _md(versus) if versus else ''} | | "
                         f"{_num_ci(baseline['overall'].get(primary), _interval(baseline, primary))} | "
                         f"{_md_others(entry, baseline, spec)} |")
        reported = _reported(spec, entry["dataset"])
        for system, why in notable_systems(spec, entry["dataset"], primary, model):
            values = reported[system]
            value = values.get(primary)
            rest = " · ".join(f"{_md(_paper_name(spec, m))} {_md(_paper_text(spec, values[m]))}"
                              for m in _other_measures(entry) if m in values)
            source = _source(value) if value is not None else _source(next(iter(values.values())))
            lines.append(f"| | | *{_md(system)}*: {REPORTED_LABEL}, {_md(why)} ({_md(source)}) | | "
                         f"*{_md(_paper_text(spec, value))}* | {rest or '–'} |")
    lines += ["", "## Where the model stands", "",
              f"![The model's primary measure on each benchmark beside the baselines {COMPUTED_LABEL} and the numbers "
              f"{REPORTED_LABEL}](figure.svg)", "",
              f"| Benchmark | Dataset | Measure | The model | Systems {COMPUTED_LABEL} | The paper's systems |",
              "|---|---|---|---:|---|---|"]
    for entry in _done(summary):
        info = standing(entry)
        lines.append(f"| {_md(entry['title'])} | {_md_code(entry['dataset'])} | "
                     f"{_md(_paper_name(_spec(entry), info['measure']))}{_arrow(info['measure'])} | "
                     f"{_num_ci(info['value'], info['interval'])} | {_md(_standing_computed_text(info))} | "
                     f"{_md(_standing_paper_text(info, _spec(entry)))} |")
    for entry in _done(summary):
        lines += _md_subsets(entry, model)
    skipped = [e for e in summary["benchmarks"] if e["status"] != "done"]
    if skipped:
        lines += ["", "## Skipped", ""]
        lines += [f"- {_md(e['title'])} ({_md_code(e['dataset'])}): {_md(e['reason'])}" for e in skipped]
    notes = [(e, note) for e in _done(summary) for note in e.get("notes") or ()]
    notes += [(e, f"{system}: {UNREPRODUCED_LABEL}. {_spec(e).reproduction_notes[system]}")
              for e in _done(summary) for system in _unreproduced_shown(e, model)]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {_md(e['title'])} ({_md_code(e['dataset'])}): {_md(note)}" for e, note in notes]
    lines += ["", "## Files", ""]
    for entry in _done(summary):
        first = f"; first stage {_md_code(entry['first_stage'])}" if entry.get("first_stage") else ""
        lines.append(f"- {_md(entry['title'])}: run {_md_code(entry['run'])} (sidecar {_md_code(entry['sidecar'])})"
                     f"{first}; results {_md_code(entry['results'])}; system: {_md(entry['system'])}")
        for baseline in entry.get("baselines") or ():
            results = _md_code(baseline["results"]) if baseline.get("results") else "none (not evaluated)"
            lines.append(f"  - baseline {_md(baseline['system'])}: run {_md_code(baseline['run'])} (sidecar "
                         f"{_md_code(baseline['sidecar'])}); results {results}")
    return "\n".join(lines) + "\n"


def _unreproduced_shown(entry, model) -> list[str]:
    """The paper's systems on the card for ``entry`` that the suite could not reproduce (their notes are given)."""
    spec = _spec(entry)
    if spec is None:
        return []
    shown = {system for system, _ in notable_systems(spec, entry["dataset"], entry["primary"], model)}
    return [system for system in spec.reported_systems(entry["dataset"])
            if system in shown and _unreproduced(spec, system) and system in spec.reproduction_notes]


def _md_others(entry, source, spec) -> str:
    """The other measures of ``source`` (the model's entry or a baseline), each with its interval."""
    others = " · ".join(f"{_md(_paper_name(spec, m))}{_arrow(m)} "
                        f"{_num_ci(source['overall'].get(m), _interval(source, m))}" for m in _other_measures(entry))
    return others or "–"


def _subset_columns(entry, model):
    """The context systems with per-subset numbers on the primary measure: ``[(system, {subset: Reported})]``."""
    spec = _spec(entry)
    columns = []
    for system, _ in notable_systems(spec, entry["dataset"], entry["primary"], model):
        values = {subset: _reported(spec, entry["dataset"], subset).get(system, {}).get(entry["primary"])
                  for subset in entry["subsets"]}
        if any(v is not None for v in values.values()):
            columns.append((system, values))
    return columns


def _paper_header(spec, system) -> str:
    return f"{system} ({REPORTED_LABEL}{', ' + UNREPRODUCED_LABEL if _unreproduced(spec, system) else ''})"


def _md_subsets(entry, model) -> list[str]:
    lines = []
    spec = _spec(entry)
    measures = entry["measures"]
    primary = entry["primary"]
    baselines = entry.get("baselines") or []
    if entry["subsets"]:
        columns = _subset_columns(entry, model)
        lines += ["", f"## {_md(entry['title'])} ({_md_code(entry['dataset'])}) per {_md(entry['breakdown_field'])}",
                  ""]
        head = [_md(entry["breakdown_field"]), "queries", *(_md(_paper_name(spec, m)) + _arrow(m) for m in measures),
                *(f"{_md(b['name'])} ({COMPUTED_LABEL}) {_md(primary)}" for b in baselines),
                *(f"*{_md(_paper_header(spec, system))}* {_md(primary)}" for system, _ in columns)]
        lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for subset, values in entry["subsets"].items():
            cells = [_md(subset), str(values.get("queries", "–")),
                     *(_num_ci(values.get(m), _interval(entry, m, subset=subset)) for m in measures),
                     *(_num_ci(b["subsets"].get(subset, {}).get(primary), _interval(b, primary, subset=subset))
                       for b in baselines),
                     *(f"*{v[subset].printed}*" if v.get(subset) is not None else "–" for _, v in columns)]
            lines.append("| " + " | ".join(cells) + " |")
    split = entry.get("negation_split")
    if split:
        lines += ["", f"## {_md(entry['title'])} ({_md_code(entry['dataset'])}): negation queries and the others "
                      f"(by {_md(split['field'])})", "",
                  "| queries | count | " + " | ".join([*(_md(_paper_name(spec, m)) + _arrow(m) for m in measures),
                                                      *(f"{_md(b['name'])} ({COMPUTED_LABEL}) {_md(primary)}"
                                                        for b in baselines)]) + " |",
                  "|---|---:|" + "---:|" * (len(measures) + len(baselines))]
        for group, values in split["groups"].items():
            cells = [_num_ci(values.get(m), _interval(entry, m, group=group)) for m in measures]
            cells += [_num_ci(_group_value(b, group, primary), _interval(b, primary, group=group)) for b in baselines]
            lines.append(f"| {_md(group)} | {values.get('queries', '–')} | " + " | ".join(cells) + " |")
    return lines


def _group_value(baseline, group, measure):
    """A baseline's mean of ``measure`` over one group of the negation split (None without it)."""
    return ((baseline.get("negation_split") or {}).get("groups") or {}).get(group, {}).get(measure)


# -- the figure -------------------------------------------------------------------------------------

_LEFT, _PLOT_LEFT, _PLOT_RIGHT, _WIDTH = 10, 300, 700, 960
_TOP, _ROW = 58, 56


def figure_svg(summary: dict, standalone: bool = True) -> str:
    """The figure: per dataset, the model's and the baselines' values with their intervals among the paper's.

    ``standalone`` adds the XML declaration's namespace attributes needed by a separate ``.svg`` file (an
    inline SVG in HTML needs none, but accepts them).
    """
    rows = summary["benchmarks"]
    height = _TOP + _ROW * len(rows) + 16
    parts = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"standing\" class=\"figure\" role=\"img\" "
             f"width=\"{_WIDTH}\" height=\"{height}\" viewBox=\"0 0 {_WIDTH} {height}\" "
             f"font-family=\"system-ui, sans-serif\" aria-labelledby=\"standing-title\">",
             "<title id=\"standing-title\">Where the model stands: its primary measure on each benchmark (red "
             f"diamond) beside the baselines {COMPUTED_LABEL} (blue squares), each with its 95% interval, among the "
             f"numbers {REPORTED_LABEL} (grey dots; hollow: {UNREPRODUCED_LABEL})</title>",
             f"<desc>{GENERATOR} figure of {_e(summary['model'].get('name'))}</desc>",
             f"<rect x=\"0\" y=\"0\" width=\"{_WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>",
             f"<text x=\"{_LEFT}\" y=\"20\" font-size=\"15\" font-weight=\"600\">Where "
             f"{_e(summary['model'].get('name'))} stands (better to the right)</text>",
             f"<path d=\"M {_PLOT_LEFT} 38 l 6 -6 l 6 6 l -6 6 z\" fill=\"{MODEL_COLOUR}\"/>",
             f"<text x=\"{_PLOT_LEFT + 18}\" y=\"42\" font-size=\"12\">this model</text>",
             f"<rect x=\"{_PLOT_LEFT + 92}\" y=\"33\" width=\"9\" height=\"9\" fill=\"{BASELINE_COLOUR}\"/>",
             f"<text x=\"{_PLOT_LEFT + 106}\" y=\"42\" font-size=\"12\">a baseline {COMPUTED_LABEL}</text>",
             f"<circle cx=\"{_PLOT_LEFT + 250}\" cy=\"38\" r=\"4.5\" fill=\"{PAPER_COLOUR}\" fill-opacity=\"0.55\"/>",
             f"<text x=\"{_PLOT_LEFT + 260}\" y=\"42\" font-size=\"12\">a system {REPORTED_LABEL} "
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
    computed = [(b, b["overall"][measure], _interval(b, measure)) for b in info["computed"]]
    values = [r.value for _, r, _ in info["reported"]] + [v for _, v, _ in computed]
    values += [info["value"]] if info["value"] is not None else []
    for interval in [info["interval"], *(i for _, _, i in computed)]:
        if _half_width(interval) is not None:
            values += list(interval)
    low, high = min([0.0, *values]), max([1.0, *values])

    def x(value):
        share = (value - low) / (high - low)
        return _PLOT_LEFT + (1 - share if info["lower"] else share) * (_PLOT_RIGHT - _PLOT_LEFT)

    def whisker(interval, y, colour):
        if _half_width(interval) is None:
            return []
        return [f"<line class=\"interval\" x1=\"{x(interval[0]):.1f}\" x2=\"{x(interval[1]):.1f}\" y1=\"{y}\" "
                f"y2=\"{y}\" stroke=\"{colour}\" stroke-width=\"2\"/>"]

    parts.append(f"<line x1=\"{_PLOT_LEFT}\" x2=\"{_PLOT_RIGHT}\" y1=\"{middle}\" y2=\"{middle}\" stroke=\"#afb8c1\"/>")
    for k in range(5):
        tick = low + (high - low) * k / 4
        parts.append(f"<line x1=\"{x(tick):.1f}\" x2=\"{x(tick):.1f}\" y1=\"{middle - 3}\" y2=\"{middle + 3}\" "
                     "stroke=\"#afb8c1\"/>")
        parts.append(f"<text x=\"{x(tick):.1f}\" y=\"{middle + 16}\" font-size=\"9\" text-anchor=\"middle\" "
                     f"fill=\"#57606a\">{tick:.2f}</text>")
    for j, (system, r, source) in enumerate(info["reported"]):
        dy = (-5, 0, 5)[j % 3]
        hollow = _unreproduced(spec, system)
        fill = (f"fill=\"#ffffff\" stroke=\"{PAPER_COLOUR}\"" if hollow
                else f"fill=\"{PAPER_COLOUR}\" fill-opacity=\"0.55\"")
        mark = f", {UNREPRODUCED_LABEL}" if hollow else ""
        parts.append(f"<circle class=\"reported\" cx=\"{x(r.value):.1f}\" cy=\"{middle + dy - 2}\" r=\"4.5\" "
                     f"{fill}><title>{_e(system)}: {r.printed} ({REPORTED_LABEL}{mark}: {_e(source)})</title></circle>")
    for b, value, interval in computed:
        parts += whisker(interval, middle + 6, BASELINE_COLOUR)
        parts.append(f"<rect class=\"baseline\" x=\"{x(value) - 4.5:.1f}\" y=\"{middle + 1.5}\" width=\"9\" "
                     f"height=\"9\" fill=\"{BASELINE_COLOUR}\"><title>{_e(b['system'])}: "
                     f"{_num_ci(value, interval)} ({COMPUTED_LABEL})</title></rect>")
    if info["value"] is not None:
        cx = x(info["value"])
        parts += whisker(info["interval"], middle - 2, MODEL_COLOUR)
        parts.append(f"<path class=\"model\" d=\"M {cx:.1f} {middle - 9} l 7 7 l -7 7 l -7 -7 z\" "
                     f"fill=\"{MODEL_COLOUR}\" stroke=\"#ffffff\" stroke-width=\"1\"><title>"
                     f"{_e(model.get('name'))}: {_num_ci(info['value'], info['interval'])}</title></path>")
        parts.append(f"<text x=\"{cx:.1f}\" y=\"{middle - 12}\" font-size=\"11\" font-weight=\"600\" "
                     f"text-anchor=\"middle\" fill=\"{MODEL_COLOUR}\">{_num(info['value'])}</text>")
    parts.append(f"<text x=\"{_PLOT_RIGHT + 16}\" y=\"{middle + 4}\" font-size=\"12\">"
                 f"{_e(_figure_summary_text(info))}</text>")
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
            f"<dt>Model</dt><dd>{_e(_model_line(summary))}</dd>"]
    body += [f"<dt>Protocol</dt><dd>{_e(text)}</dd>" for text in _protocol_lines(summary)]
    body += [f"<dt>{_e(label)}</dt><dd>{_e(text)}</dd>" for label, text in _method_lines(summary)]
    body += [f"<dt>Newest run</dt><dd>{_e(summary.get('date') or '–')}</dd>",
             f"<dt>Versions</dt><dd>{_e(_versions_line(summary))}</dd>", "</dl>",
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
    for entry in _done(summary):
        info = standing(entry)
        body.append(f"<tr><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code></td>"
                    f"<td>{_e(_paper_name(_spec(entry), info['measure']) + _arrow(info['measure']))}</td>"
                    f"<td class=\"num\">{_num_ci(info['value'], info['interval'])}</td>"
                    f"<td>{_e(_standing_computed_text(info))}</td><td>{_e(_standing_paper_text(info, _spec(entry)))}"
                    "</td></tr>")
    body.append("</tbody>\n</table>")
    for entry in _done(summary):
        body += _html_subsets(entry, model)
    skipped = [e for e in summary["benchmarks"] if e["status"] != "done"]
    if skipped:
        body.append("<h2>Skipped</h2>\n<ul id=\"skipped\">")
        body += [f"<li>{_e(e['title'])} (<code>{_e(e['dataset'])}</code>): {_e(e['reason'])}</li>" for e in skipped]
        body.append("</ul>")
    notes = [(e, note) for e in _done(summary) for note in e.get("notes") or ()]
    notes += [(e, f"{system}: {UNREPRODUCED_LABEL}. {_spec(e).reproduction_notes[system]}")
              for e in _done(summary) for system in _unreproduced_shown(e, model)]
    if notes:
        body.append("<h2>Notes</h2>\n<ul>")
        body += [f"<li>{_e(e['title'])} (<code>{_e(e['dataset'])}</code>): {_e(note)}</li>" for e, note in notes]
        body.append("</ul>")
    body.append("<h2>Files</h2>\n<ul>")
    for entry in _done(summary):
        first = f"; first stage <code>{_e(entry['first_stage'])}</code>" if entry.get("first_stage") else ""
        baselines = "".join(f"; baseline {_e(b['system'])}: run <code>{_e(b['run'])}</code>, results "
                            + (f"<code>{_e(b['results'])}</code>" if b.get("results") else "none (not evaluated)")
                            for b in entry.get("baselines") or ())
        body.append(f"<li>{_e(entry['title'])}: run <code>{_e(entry['run'])}</code> (sidecar "
                    f"<code>{_e(entry['sidecar'])}</code>){first}; results <code>{_e(entry['results'])}</code>; "
                    f"system: {_e(entry['system'])}{baselines}</li>")
    body.append("</ul>")
    title = f"Negation report card: {model.get('name')}"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<meta name=\"generator\" content=\"{GENERATOR}\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">\n"
            f"<title>{_e(title)}</title>\n<style>\n{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body)
            + "\n</body>\n</html>\n")


def _html_num_ci(value, interval) -> str:
    half = _half_width(interval)
    if half is None or _finite(value) is None:
        return _num(value)
    return f"{_num(value)} <span class=\"ci\">± {half:.4f}</span>"


def _html_others(entry, source, spec) -> str:
    others = " · ".join(f"{_e(_paper_name(spec, m) + _arrow(m))} "
                        f"{_html_num_ci(source['overall'].get(m), _interval(source, m))}"
                        for m in _other_measures(entry))
    return others or "–"


def _html_paper_value(spec, r) -> str:
    if r is None:
        return "–"
    mark = f" <span class=\"unreproduced\">{UNREPRODUCED_LABEL}</span>" if _unreproduced(spec, r.system) else ""
    return r.printed + mark


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
        rows.append(f"<tr class=\"model\"><td>{_e(entry['title'])}</td><td><code>{_e(entry['dataset'])}</code>"
                    f"{_origin_mark(entry, _e)}</td>"
                    f"<td>{_e(model.get('name'))} <span class=\"label\">this model, {_e(_depth_text(entry))}</span>"
                    f"</td><td>{_e(_paper_name(spec, primary) + _arrow(primary))}</td>"
                    f"<td class=\"num value\">{_html_num_ci(entry['overall'].get(primary), _interval(entry, primary))}"
                    f"</td><td>{_html_others(entry, entry, spec)}</td></tr>")
        for baseline in entry.get("baselines") or ():
            versus = _vs_model_text(baseline)
            rows.append(f"<tr class=\"baseline\" data-baseline=\"{_e(baseline['name'])}\"><td></td><td></td>"
                        f"<td><code>{_e(baseline['name'])}</code> {_e(baseline['system'])} "
                        f"<span class=\"label\">{COMPUTED_LABEL}</span> "
                        f"{_e(_baseline_why(baseline, spec))}{'; ' + _e(versus) if versus else ''}</td><td></td>"
                        "<td class=\"num\">"
                        f"{_html_num_ci(baseline['overall'].get(primary), _interval(baseline, primary))}</td>"
                        f"<td>{_html_others(entry, baseline, spec)}</td></tr>")
        reported = _reported(spec, entry["dataset"])
        for system, why in notable_systems(spec, entry["dataset"], primary, model):
            values = reported[system]
            value = values.get(primary)
            rest = " · ".join(f"{_e(_paper_name(spec, m))} {_html_paper_value(spec, values[m])}"
                              for m in _other_measures(entry) if m in values)
            source = _source(value) if value is not None else _source(next(iter(values.values())))
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
    spec = _spec(entry)
    measures = entry["measures"]
    primary = entry["primary"]
    baselines = entry.get("baselines") or []
    body = []
    if entry["subsets"]:
        columns = _subset_columns(entry, model)
        body.append(f"<h2>{_e(entry['title'])} (<code>{_e(entry['dataset'])}</code>) per "
                    f"{_e(entry['breakdown_field'])}</h2>")
        if columns or baselines:
            body.append(f"<p class=\"note\">Columns in blue: the baselines {COMPUTED_LABEL}; in grey italics: the "
                        f"numbers {REPORTED_LABEL} per {_e(entry['breakdown_field'])} for the context systems above "
                        "(not computed here).</p>")
        head = ([f"<th>{_e(entry['breakdown_field'])}</th>", "<th class=\"num\">queries</th>"]
                + [f"<th class=\"num\">{_e(_paper_name(spec, m) + _arrow(m))}</th>" for m in measures]
                + [f"<th class=\"num baseline\" title=\"{_e(b['system'])}\">{_e(b['name'])}<br>({COMPUTED_LABEL}) "
                   f"{_e(primary)}</th>" for b in baselines]
                + [f"<th class=\"num reported\">{_e(system)}<br>(paper"
                   f"{', ' + UNREPRODUCED_LABEL if _unreproduced(spec, system) else ''}) {_e(primary)}</th>"
                   for system, _ in columns])
        rows = []
        for subset, values in entry["subsets"].items():
            cells = ([f"<td>{_e(subset)}</td>", f"<td class=\"num\">{_e(values.get('queries', '–'))}</td>"]
                     + [f"<td class=\"num\">{_html_num_ci(values.get(m), _interval(entry, m, subset=subset))}</td>"
                        for m in measures]
                     + ["<td class=\"num baseline\">" + _html_num_ci(b["subsets"].get(subset, {}).get(primary),
                                                                     _interval(b, primary, subset=subset)) + "</td>"
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
            f"<th class=\"num\">{_e(_paper_name(spec, m) + _arrow(m))}</th>" for m in measures) + "".join(
            f"<th class=\"num baseline\" title=\"{_e(b['system'])}\">{_e(b['name'])}<br>({COMPUTED_LABEL}) "
            f"{_e(primary)}</th>" for b in baselines)
        rows = []
        for group, values in split["groups"].items():
            cells = "".join(f"<td class=\"num\">{_html_num_ci(values.get(m), _interval(entry, m, group=group))}</td>"
                            for m in measures)
            cells += "".join("<td class=\"num baseline\">" + _html_num_ci(_group_value(b, group, primary),
                                                                          _interval(b, primary, group=group))
                             + "</td>" for b in baselines)
            rows.append(f"<tr><td>{_e(group)}</td><td class=\"num\">{_e(values.get('queries', '–'))}</td>"
                        f"{cells}</tr>")
        body.append("<table class=\"negation\">\n<thead><tr>" + head + "</tr></thead>\n<tbody>\n" + "\n".join(rows)
                    + "\n</tbody>\n</table>")
    return body
