"""The leaderboards in Markdown: one page per dataset (:func:`markdown`), the index and the reproduction page.

Every text that comes from a contribution or a spec is escaped with :func:`negplugins.rendering.text.markdown_text`
(``<``, ``>`` as entities; ``\\ ` * _ [ ] |`` and an entity's ``&`` backslash-escaped; whitespace runs as one
space), so a system name such as ``<script>`` or ``a|b`` is shown as itself. The paper's numbers are a table
of their own. What the pages say is decided in :mod:`negplugins.leaderboard.board`.
"""

from __future__ import annotations

from ir_datasets_ext.derived import DERIVED

from ..evaluation.significance import ALPHA
from ..rendering.text import markdown_href, number, signed
from ..rendering.text import markdown_text as _md
from . import board
from .board import REPORTED_LABEL

__all__ = ["markdown", "index_markdown", "reproduction_markdown"]


def _md_intro(record) -> list[str]:
    if not record["runs"]:
        return ["No contributed run yet (see `runs/README.md` to add one)."
                + (" The numbers below are the paper's, as the benchmark's spec records them."
                   if record.get("reported") else ""), ""]
    return [f"{record['queries']} judged queries. Sorted by {_md(record['primary'])}"
            f"{' (lower is better)' if record['primary'] in record['lower_is_better'] else ''}. "
            f"↓ = lower is better. **Bold** = best (every run tied for it; none where all runs tie). "
            f"† = differs from the baseline {_md(record['baseline'])} "
            f"(paired randomization test, Holm-corrected, p < {ALPHA}). {board.ties_sentence(record)}", ""]


def _md_reported_table(record) -> list[str]:
    systems = board.reported_by_system(record)
    if not systems:
        return []
    measures = [m for m in [*record["measures"], *board.paper_only_measures(record)]
                if any(m in values for values in systems.values())]
    lines = ["", f"### Reported in the paper ({_paper_link_md(record)})", "",
             "Not ranked and not tested against the runs: the paper's numbers, as the benchmark's spec records them.",
             "", "| System | " + " | ".join(_md(board.label_with_paper(record, m)) for m in measures) + " | Source |",
             "|---|" + "|".join(["---:"] * len(measures)) + "|---|"]
    for system, values in systems.items():
        sources = "; ".join(dict.fromkeys(board.source_text(values[m]) for m in measures if m in values))
        lines.append(f"| *{_md(system)}* | " + " | ".join(values[m]["printed"] if m in values else "–"
                                                          for m in measures) + f" | {_md(sources)} |")
    return lines


def markdown(record) -> str:
    measures = record["measures"]
    lines = [f"# Leaderboard: {_md(record['dataset'])}", "", _md_sources_line(record), "", *_md_intro(record)]
    for note in record["notes"]:
        lines += [f"> Note: {_md(note)}", ""]
    if record["runs"]:
        header = ["#", "System", "Run", "Runner", *(_md(board.measure_label(record, m)) for m in measures), "Date"]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(["---:", "---", "---", "---", *(["---:"] * len(measures)), "---"]) + "|")
        best = {m: board.best_runs(record, m) for m in measures}
        for position, run in enumerate(record["runs"], start=1):
            cells = []
            for m in measures:
                value = run["overall"][m]
                text = number(value) + ("†" if board.differs_from_baseline(run, m) else "")
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
            files = (f"[run file]({markdown_href(links['run'])}) · [sidecar]({markdown_href(links['sidecar'])})"
                     if links else f"`{_md(run['path'])}`")
            lines.append(f"- **{_md(run['name'])}** ({files}): {_md(run['system'])}; tag {_md(run['tag'])}"
                         + (f"; model {_md(run['model'])}" if run["model"] else "")
                         + (f"; reproduces {_md(run['reproduces'])}" + (" (the authors' pipeline)"
                                                                         if run.get("authors_pipeline") else "")
                            if run.get("reproduces") else "")
                         + (f"; {run['queries_without_results']} queries without results"
                            if run["queries_without_results"] else ""))
            for label, text in board.provenance(run):
                lines.append(f"  - {label}: " + (_md_first_stage(run) if label == "first stage" else _md(text)))
            if run["command"]:
                lines.append(f"  - command: {_md(run['command'])}")
        lines += ["", f"Significance: {_md(record['significance'])}.", ""]
    lines += ["", _md(board.built_with(record)), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _md_sources_line(record) -> str:
    paper = record.get("paper") or {}
    parts = [f"Paper: {_paper_link_md(record)}" + (f" ({_md(paper['title'])})" if paper.get("title") else "")]
    if record.get("data_url"):
        parts.append(f"Data: [{_md(record['data_url'])}]({record['data_url']})")
    parts.append("[All leaderboards](README.md) · [Reproduction of the papers](reproduction.md)")
    return " · ".join(parts)


def _paper_link_md(record) -> str:
    paper = record.get("paper") or {}
    ref = _md(board.paper_ref(record))
    return f"[{ref}]({paper['url']})" if paper.get("url") else ref


def _md_first_stage(run) -> str:
    first = run.get("first_stage") or {}
    href = (run.get("links") or {}).get("first_stage")
    text = _md(first.get("run") or "")
    return f"[{text}]({markdown_href(href)})" if href else text


def _md_per_query(record) -> list[str]:
    rows = board.tested_runs(record)
    if not rows:
        return []
    measures = record["measures"]
    lines = ["", f"## Per query against the baseline {_md(record['baseline'])}", "",
             "Wins / losses / ties: the queries on which the run is better than the baseline, worse, or equal "
             "(lower is better for ↓), among those where the measure has a value in both."
             + board.pair_units_sentence(record), "",
             "| Run | " + " | ".join(_md(board.measure_label(record, m)) for m in measures) + " |",
             "|---|" + "|".join(["---:"] * len(measures)) + "|"]
    for run, tests in rows:
        lines.append(f"| {_md(run['name'])} | " + " | ".join(board.wins_losses_text(tests.get(m)) for m in measures) + " |")
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
                     f"{_md(r['subset'] or 'all')} | {r['paper_printed']} | {number(r['value'])}{board.on_copy(r)} | "
                     f"{signed(r['gap'])} | {_md(r['source'])} |")
    return lines


def _md_subsets(record) -> list[str]:
    if not record["subsets"]:
        return []
    field = record["breakdown_field"] or "subset"
    lines = ["", f"## Per {_md(field)}", ""]
    subsets = list(record["subsets"])
    for m in board.subset_measures(record):
        lines += [f"### {_md(board.measure_label(record, m))}", ""]
        lines.append("| Run | " + " | ".join(_md(board.subset_header(record, s)) for s in subsets) + " |")
        lines.append("|---|" + "|".join(["---:"] * len(subsets)) + "|")
        for run in record["runs"]:
            lines.append(f"| {_md(run['name'])} | " + " | ".join(number(run["subsets"].get(s, {}).get(m))
                                                                for s in subsets) + " |")
        reported = board.reported_per_subset(record, m)
        for system, values in reported.items():
            lines.append(f"| *{_md(system)}* ({REPORTED_LABEL}) | " + " | ".join(
                values[s]["printed"] if s in values else "–" for s in subsets) + " |")
        if reported:
            lines += ["", "Sources: " + "; ".join(
                f"*{_md(system)}*: " + "; ".join(_md(text) for text in board.grouped_sources(values.values()))
                for system, values in reported.items()) + "."]
        lines.append("")
    return lines


def _md_doc_field(record) -> list[str]:
    info = record.get("doc_field")
    if not info:
        return []
    primary = record["primary"]
    header = ["Run", *(_md(v) for v in info["values"]), *([_md(primary)] if info["without"] else []),
              *(f"{_md(primary)} without {_md(v)}" for v in info["without"])]
    lines = ["", f"## Top {info['k']} by document {_md(info['field'])}", "", _md(board.doc_field_intro(record)), "",
             "| " + " | ".join(header) + " |", "|---|" + "|".join(["---:"] * (len(header) - 1)) + "|"]
    for run in record["runs"]:
        d = run["doc_field"]
        cells = [number(d["shares"].get(v)) for v in info["values"]]
        cells += [number(run["overall"].get(primary))] if info["without"] else []
        cells += [number(d["without"][v]["overall"].get(primary)) for v in info["without"]]
        lines.append(f"| {_md(run['name'])} | " + " | ".join(cells) + " |")
    return lines


def _md_negation(record) -> list[str]:
    split = record.get("negation_split")
    if not split:
        return []
    groups = list(split["queries"])
    measures = record["measures"]
    lines = ["", "## Negation vs no negation", "", _md(board.negation_intro(record)), "",
             "| Run | " + " | ".join(f"{_md(m)} {_md(g)}" for m in measures for g in groups) + " |",
             "|---|" + "|".join(["---:"] * (len(measures) * len(groups))) + "|"]
    for run in record["runs"]:
        neg = run.get("negation") or {}
        lines.append(f"| {_md(run['name'])} | " + " | ".join(number(neg.get(g, {}).get(m)) for m in measures
                                                            for g in groups) + " |")
    return lines


def index_markdown(records) -> str:
    index = board.index_record(records)
    lines = ["# negplugins leaderboards", "",
             "Built by `negplugins leaderboard build` from the runs in `runs/` (see `runs/README.md`); "
             "checked in CI by `negplugins leaderboard check`. Do not edit by hand. Every page also lists the "
             "numbers reported in the benchmark's paper; [reproduction.md](reproduction.md) sets them beside "
             "this suite's runs.", "",
             "| Benchmark | Dataset | Runs | Paper's numbers | Best system | Score |", "|---|---|---:|---:|---|---:|"]
    for family in index["benchmarks"]:
        if not family["leaderboards"]:
            lines.append(f"| {_md(family['title'])} | – | 0 | 0 | no runs yet | – |")
        for page in family["leaderboards"]:
            top = page["top"]
            lines.append(f"| {_md(family['title'])} | [{_md(page['dataset'])}]({page['slug']}.md) | "
                         f"{page['runs']} | {page['reported']} | {_md(top['system']) if top else 'no runs yet'} | "
                         f"{_md(page['primary'])} {number(top['value']) if top else '–'} |")
    return "\n".join(lines) + "\n"


def _runs_cell_md(entries) -> str:
    return "<br>".join(f"{_md(e['run'])} {number(e['value'])} ({signed(e['gap'])}{board.on_copy(e)})" for e in entries) or "–"


def reproduction_markdown(records) -> str:
    data = board.reproduction_record(records)
    lines = ["# Reproducing the papers", "", "Built by `negplugins leaderboard build`; do not edit by hand. "
             + _md(data["explanation"]), "", "[All leaderboards](README.md)", ""]
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
                             f"{_md(board.source_text(row))} |")
            lines.append("")
        if family.get("data_origin"):
            lines += [f"Data of the runs marked \"on a {DERIVED}\": " + "; ".join(
                _md(line) for line in family["data_origin"]) + ".", ""]
        if family["notes"]:
            lines += ["Why the numbers differ:", ""]
            lines += [f"- **{_md(system)}**: {_md(text)}" for system, text in family["notes"].items()]
            lines.append("")
        if family["other_runs"]:
            lines.append("This suite's other runs (reproducing no system of the paper): " + ", ".join(
                f"{_md(r['run'])} on {_md(r['dataset'])} ({_md(r['measure'])} {number(r['value'])})"
                for r in family["other_runs"]) + ".")
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
