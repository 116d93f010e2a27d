"""What the report card says, in every format: the context systems, where the model stands, its sentences and
labels, and the figure (docs/report-card.md).
"""

from __future__ import annotations

from .. import datasets
from ..measures import lower_is_better
from ..rendering.charts import IntervalRow, Point, interval_chart
from ..rendering.text import finite, number, p_value

__all__ = ["notable_systems", "standing", "figure_svg"]

#: Text near the start of every report file this command writes (how a file left by an interrupted run is known).
GENERATOR = "negplugins benchmark"
MODEL_COLOUR = "#cf222e"
BASELINE_COLOUR = "#0969da"
PAPER_COLOUR = "#6e7781"
REPORTED_LABEL = "reported in the paper"
COMPUTED_LABEL = "computed here"
UNREPRODUCED_LABEL = "not reproduced here"
MAX_CONTEXT = 4


# -- numbers with their intervals -------------------------------------------------------------------

def half_width(interval) -> float | None:
    """Half the width of a ``[low, high]`` interval; None unless both ends are finite."""
    if not interval or len(interval) != 2 or finite(interval[0]) is None or finite(interval[1]) is None:
        return None
    return (interval[1] - interval[0]) / 2


def with_interval(value, interval) -> str:
    """``0.5855 ± 0.0112``: the value and the half-width of its 95% t interval (symmetric); else the value alone."""
    half = half_width(interval)
    shown = number(value)
    return shown if half is None or finite(value) is None else f"{shown} ± {half:.4f}"


def interval_of(entry, measure, subset=None, group=None):
    """The 95% interval of one of ``entry``'s means (overall, a subset's or a negation group's), or None."""
    ci = entry.get("ci95") or {}
    if subset is not None:
        ci = (ci.get("subsets") or {}).get(subset) or {}
    elif group is not None:
        ci = (ci.get("negation_split") or {}).get(group) or {}
    else:
        ci = ci.get("overall") or {}
    return ci.get(measure)


# -- the papers' numbers ----------------------------------------------------------------------------

def spec_of(entry):
    """The benchmark spec of a summary entry's dataset (None for a dataset of no benchmark)."""
    return datasets.benchmark_of(entry["dataset"])


def reported_values(spec, dataset_id: str, subset=None) -> dict:
    """``{system: {measure: Reported}}`` in the spec's order."""
    systems: dict = {}
    if spec is None:
        return systems
    for r in spec.reported_for(dataset_id, subset):
        systems.setdefault(r.system, {})[r.measure] = r
    return systems


def unreproduced(spec, system) -> bool:
    """The spec says the suite could not reproduce ``system``'s numbers."""
    return spec is not None and not spec.is_reproduced(system)


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
    """The paper's systems shown as context rows (at most :data:`MAX_CONTEXT`): the same model, BM25, and the
    paper's best and weakest on ``measure``.
    """
    systems = reported_values(spec, dataset_id)
    why: dict[str, str] = {}
    for system in systems:
        if _same_model(system, model):
            why[system] = "the same model, in the paper"
        elif system.lower() == "bm25":
            why[system] = "BM25 in the paper"
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
    """Where the model stands on the primary measure: "better than" counts only the baselines computed here
    (``significantly_*``: Holm-corrected p below 0.05); the papers' numbers are context.
    """
    from ..evaluation.significance import ALPHA

    measure = entry["primary"]
    value = finite(entry["overall"].get(measure))
    spec = spec_of(entry)
    reported = [(system, values[measure], source_text(values[measure]))
                for system, values in reported_values(spec, entry["dataset"]).items() if measure in values]
    lower = lower_is_better(measure)
    computed = [b for b in entry.get("baselines") or () if finite(b["overall"].get(measure)) is not None]
    better = significantly_better = significantly_worse = None
    if value is not None:
        better = sum(1 for b in computed if (value < b["overall"][measure] if lower else value > b["overall"][measure]))
        significantly_better = significantly_worse = 0
        for b in computed:
            test = b.get("vs_model") or {}
            p, diff = finite(test.get("p_randomization_holm")), finite(test.get("mean_diff"))
            if p is None or diff is None or p >= ALPHA or diff == 0:
                continue
            if (diff < 0) == lower:
                significantly_better += 1
            else:
                significantly_worse += 1
    return {"measure": measure, "value": value, "interval": interval_of(entry, measure), "lower": lower,
            "computed": computed, "better_than": better, "significantly_better": significantly_better,
            "significantly_worse": significantly_worse, "reported": reported}


def source_text(r) -> str:
    """Where a reported number is in the paper, with its note."""
    return r.source + (f" ({r.note})" if r.note else "") if r.source else r.note


def measure_name(spec, measure: str) -> str:
    """``measure``, with the paper's name for it in parentheses where that differs."""
    name = spec.paper_name(measure) if spec is not None else measure
    return measure if name == measure else f"{measure} ({name})"


def arrow(measure: str) -> str:
    """`` ↓`` after a lower-is-better measure, else nothing."""
    return " ↓" if lower_is_better(measure) else ""


# -- shared text ------------------------------------------------------------------------------------


def model_line(summary) -> str:
    """The model: id, use, size, weights SHA-256, revision and source."""
    model = summary["model"]
    parameters = model.get("parameters")
    size = f"{parameters:,} parameters" if isinstance(parameters, int) else "size unknown"
    return (f"{model.get('id')} ({model.get('used_as')}), {size}, weights SHA-256 {model.get('sha256')}"
            + (f", revision {model['revision']}" if model.get("revision") else "")
            + (f"; {model['source']}" if model.get("source") else ""))


def encoding_lines(summary) -> list[str]:
    """How the model was run, when not by sentence-transformers with the defaults (none, or one line)."""
    from .encoding import describe_record

    record = summary["model"].get("encoding")
    return [describe_record(record)] if record else []


def versions_line(summary) -> str:
    """The versions of the tools the runs were made with, by name."""
    return ", ".join(f"{name} {version}" for name, version in sorted((summary.get("versions") or {}).items()))


def protocol_lines(summary) -> list[str]:
    """How the model was run: on the full-corpus benchmarks, and on NevIR's pairs."""
    protocol = summary.get("protocol") or {}
    return [f"full-corpus benchmarks: {protocol.get('retrieval')}, to each benchmark's depth",
            f"NevIR: {protocol.get('pairs')}"]


def method_lines(summary) -> list[tuple[str, str]]:
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


def short_reason(entry) -> str:
    """A skipped dataset's reason in a few words (the whole reason is in the report's Skipped section)."""
    reason = entry.get("reason") or "no reason recorded"
    head = reason.split(":")[0]
    return f"{head} (see Skipped below)" if len(reason) > 80 else reason


def done_entries(summary):
    """The summary's entries that ran (the skipped ones aside)."""
    return [e for e in summary["benchmarks"] if e["status"] == "done"]


def origin_mark(entry) -> str:
    """`` (derived copy, see Notes)`` after a dataset read from a derived copy (its note names file, SHA-256, source)."""
    kinds = list(dict.fromkeys(str(o.get("kind", "")) for o in entry.get("data_origin") or ()))
    return f" ({', '.join(kinds)}, see Notes)" if kinds else ""


def other_measures(entry) -> list[str]:
    """An entry's measures other than its primary one."""
    return [m for m in entry["measures"] if m != entry["primary"]]


def depth_text(entry) -> str:
    """How deep the model's run goes: ``top 100``, or a pair protocol's candidates."""
    if entry["protocol"] == "pairs":
        return f"each query's {entry['depth']} candidates"
    return f"top {entry['depth']}"


def vs_model_text(baseline) -> str:
    """``the model − it: −0.0702 ± 0.0090, p < 0.0001 (2909 queries)``; why it has no result; or ''."""
    test = baseline.get("vs_model")
    if not test or finite(test.get("mean_diff")) is None:
        return f"no result: {baseline['reason']}" if baseline.get("reason") else ""
    half = half_width(test.get("ci95"))
    diff = f"{test['mean_diff']:+.4f}" + (f" ± {half:.4f}" if half is not None else "")
    return f"the model − it: {diff}, p {p_value(test.get('p_randomization_holm'))} ({test.get('n')} queries)"


def baseline_why(baseline, spec) -> str:
    """What a baseline is: computed here the same way, and the paper's system it reproduces."""
    why = COMPUTED_LABEL + ", the same data and protocol"
    if baseline.get("reproduces"):
        why += f"; the paper's {baseline['reproduces']}" + (" as the authors' own code runs it"
                                                            if baseline.get("authors_pipeline") else "")
    return why


def computed_text(info) -> str:
    """Where the model stands among the baselines, from :func:`standing`: "better than N of M ..."."""
    n = len(info["computed"])
    if not n:
        return "no baseline computed here"
    values = ", ".join(f"{b['system']} {number(b['overall'][info['measure']])}" for b in info["computed"])
    if info["better_than"] is None:
        return f"{n} computed here: {values}"
    text = f"better than {info['better_than']} of {n} computed here ({values})"
    significant = []
    if info["significantly_better"]:
        significant.append(f"significantly better than {info['significantly_better']}")
    if info["significantly_worse"]:
        significant.append(f"significantly worse than {info['significantly_worse']}")
    return text + ("; " + ", ".join(significant) if significant else "; no difference significant at 0.05")


def paper_range_text(info, spec) -> str:
    """The paper's numbers on the primary measure as context: how many, their range, which are not reproduced."""
    n = len(info["reported"])
    if not n:
        return "no number of the paper on this dataset"
    lowest = min(info["reported"], key=lambda item: item[1].value)[1]
    highest = max(info["reported"], key=lambda item: item[1].value)[1]
    text = f"{n} system{'s' if n > 1 else ''} reported, {lowest.printed} to {highest.printed} (context, not counted)"
    not_reproduced = [f"{system} {r.printed}" for system, r, _ in info["reported"] if unreproduced(spec, system)]
    return text + (f"; {UNREPRODUCED_LABEL}: {', '.join(not_reproduced)}" if not_reproduced else "")


def unreproduced_shown(entry, model) -> list[str]:
    """The paper's systems on the card for ``entry`` that the suite could not reproduce (their notes are given)."""
    spec = spec_of(entry)
    if spec is None:
        return []
    shown = {system for system, _ in notable_systems(spec, entry["dataset"], entry["primary"], model)}
    return [system for system in spec.reported_systems(entry["dataset"])
            if system in shown and unreproduced(spec, system) and system in spec.paper.reproduction_notes]


def subset_columns(entry, model):
    """The context systems with per-subset numbers on the primary measure: ``[(system, {subset: Reported})]``."""
    spec = spec_of(entry)
    columns = []
    for system, _ in notable_systems(spec, entry["dataset"], entry["primary"], model):
        values = {subset: reported_values(spec, entry["dataset"], subset).get(system, {}).get(entry["primary"])
                  for subset in entry["subsets"]}
        if any(v is not None for v in values.values()):
            columns.append((system, values))
    return columns


def group_value(baseline, group, measure):
    """A baseline's mean of ``measure`` over one group of the negation split (None without it)."""
    return ((baseline.get("negation_split") or {}).get("groups") or {}).get(group, {}).get(measure)


def _figure_summary_text(info) -> str:
    if not info["computed"]:
        return "no baseline computed"
    if info["better_than"] is None:
        return f"{len(info['computed'])} computed here"
    return f"better than {info['better_than']} of {len(info['computed'])} computed here"




def figure_svg(summary: dict, standalone: bool = True) -> str:
    """The figure: per dataset the model's and the baselines' values with their intervals among the paper's."""
    model = summary["model"]
    return interval_chart(
        [_figure_row(entry, model) for entry in summary["benchmarks"]], chart_id="standing",
        title="Where the model stands: its primary measure on each benchmark (red diamond) beside the baselines "
              f"{COMPUTED_LABEL} (blue squares), each with its 95% interval, among the numbers {REPORTED_LABEL} "
              f"(grey dots; hollow: {UNREPRODUCED_LABEL})",
        description=f"{GENERATOR} figure of {model.get('name')}",
        heading=f"Where {model.get('name')} stands (better to the right)",
        legend=("this model", f"a baseline {COMPUTED_LABEL}", f"a system {REPORTED_LABEL} (hover for its name)"),
        colours=(MODEL_COLOUR, BASELINE_COLOUR, PAPER_COLOUR), standalone=standalone)


def _figure_row(entry, model) -> IntervalRow:
    row = IntervalRow(key=entry["dataset"], label=f"{entry['title']} ({entry['dataset']})")
    if entry["status"] != "done":
        row.skipped = "skipped: data not available"
        return row
    info = standing(entry)
    measure = info["measure"]
    spec = spec_of(entry)
    row.axis = measure_name(spec, measure) + (" (lower is better: axis reversed)" if info["lower"] else "")
    row.reversed_axis = info["lower"]
    for system, r, source in info["reported"]:
        hollow = unreproduced(spec, system)
        mark = f", {UNREPRODUCED_LABEL}" if hollow else ""
        row.context.append(Point(r.value, f"{system}: {r.printed} ({REPORTED_LABEL}{mark}: {source})", hollow=hollow))
    for b in info["computed"]:
        value, interval = b["overall"][measure], interval_of(b, measure)
        row.computed.append(Point(value, f"{b['system']}: {with_interval(value, interval)} ({COMPUTED_LABEL})",
                                  interval))
    if info["value"] is not None:
        row.main = Point(info["value"], f"{model.get('name')}: {with_interval(info['value'], info['interval'])}",
                         info["interval"])
    row.summary = _figure_summary_text(info)
    return row
