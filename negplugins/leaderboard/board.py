"""What a leaderboard says, whatever the format: its typed record and the facts its pages write out
(best runs, differences from the baseline, the paper's numbers, provenance; docs/leaderboards.md)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields

from ir_datasets_ext.derived import DERIVED
from ir_datasets_ext.spec import benchmarks

from ..evaluation.significance import ALPHA
from ..io.sidecars import COMMIT_KEY
from ..measures import per_pair
from ..measures.ranking import STOCK, TIE_HANDLING
from ..rendering.text import best_marks

__all__ = ["Leaderboard", "RunEntry", "best_runs", "index_record", "reproduction_record"]

_OMITTED_WHEN_NONE = {"data_origin", "links", "runs_folder", "built_with"}


def _json(item) -> dict:
    return {f.name: getattr(item, f.name) for f in fields(item)
            if not (f.name in _OMITTED_WHEN_NONE and getattr(item, f.name) is None)}


@dataclass
class RunEntry:
    """One run on a leaderboard: what its sidecar says (shown escaped, never trusted) and its scores."""
    name: str
    path: str = ""
    sidecar: str = ""
    system: str = ""
    runner: str = ""
    tag: str = ""
    model: str | None = None
    language: str | None = None
    date: str = ""
    command: str = ""
    parameters: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    commit: str | None = None
    first_stage: dict | None = None
    index: str | None = None
    model_sha256: str | None = None
    run_sha256: str | None = None
    reproduces: str | None = None
    authors_pipeline: bool = False
    queries_without_results: int = 0
    overall: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    subsets: dict = field(default_factory=dict)
    negation: dict | None = None
    doc_field: dict | None = None
    vs_baseline: dict | None = None
    data_origin: list | None = None
    links: dict | None = None


@dataclass
class Leaderboard:
    """One dataset's leaderboard: its runs, sorted by the primary measure, and the paper's numbers on it."""
    dataset: str
    family: str = ""
    slug: str = ""
    measures: list = field(default_factory=list)
    primary: str = ""
    lower_is_better: list = field(default_factory=list)
    queries: int | None = None
    breakdown_field: str | None = None
    subsets: dict = field(default_factory=dict)
    baseline: str | None = None
    significance: str = ""
    ties: str | None = None
    notes: list = field(default_factory=list)
    negation_split: dict | None = None
    doc_field: dict | None = None
    runs: list[RunEntry] = field(default_factory=list)
    data_origin: list | None = None
    paper: dict | None = None
    data_url: str = ""
    reported: list = field(default_factory=list)
    reproductions: list = field(default_factory=list)
    runs_folder: str | None = None
    built_with: dict | None = None

    def to_json(self) -> dict:
        return {**_json(self), "runs": [_json(run) for run in self.runs]}


REPORTED_LABEL = "reported in the paper"


def best_runs(record, measure) -> set[str]:
    """The runs marked best on ``measure``: the rule of :func:`negplugins.rendering.text.best_marks`."""
    values = [run.overall.get(measure) for run in record.runs]
    flags = best_marks(values, measure in record.lower_is_better)
    return {run.name for run, flag in zip(record.runs, flags) if flag}


def differs_from_baseline(run, measure) -> bool:
    """The run differs from the baseline on ``measure`` (randomization test, Holm, p < :data:`ALPHA`): its † mark."""
    test = (run.vs_baseline or {}).get(measure)
    return bool(test and test["p_randomization_holm"] is not None and test["p_randomization_holm"] < ALPHA)


def measure_label(record, measure) -> str:
    """``measure`` as a column header: `` ↓`` after a lower-is-better measure."""
    return measure + (" ↓" if measure in record.lower_is_better else "")


# -- the paper's numbers ----------------------------------------------------------------------------


def reported_by_system(record, subset=None) -> dict:
    """``{system: {measure: reported entry}}`` of the record's dataset (one subset, or the whole dataset)."""
    systems: dict[str, dict] = {}
    for r in record.reported:
        if r["subset"] == subset:
            systems.setdefault(r["system"], {})[r["measure"]] = r
    return systems


def paper_only_measures(record, subset_level=False) -> list[str]:
    """Measures of the paper's numbers that the runs' table lacks (whole dataset, or any subset)."""
    measures = record.measures
    found = [r["measure"] for r in record.reported if (r["subset"] is not None) == subset_level]
    return [m for m in dict.fromkeys(found) if m not in measures]


def source_text(entry) -> str:
    """Where a paper's number is in the paper, with its note: ``Table 3, row BM25 (note)``."""
    return entry["source"] + (f" ({entry['note']})" if entry["note"] else "") if entry["source"] else entry["note"]


_COLUMN = re.compile(r"^(?P<where>.*), column (?P<column>[^,]+)$")


def grouped_sources(entries) -> list[str]:
    """The sources of one system's per-subset numbers, one per table row and note: ``Table 3, row BM25, columns 1p,
    2p, ..., pni (note)``."""
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
        texts.append(source_text({"source": text, "note": note}))
    return texts


def subset_header(record, subset) -> str:
    """A subset's column header: its name and its number of queries."""
    count = record.subsets.get(subset)
    return f"{subset} ({count})" if count is not None else str(subset)


def ties_sentence(record) -> str:
    """How the page's numbers order tied documents (the evaluation's ``ties``, docs/measures.md)."""
    ties = record.ties or STOCK
    return f"Ties: {ties}, {TIE_HANDLING[ties]} (docs/measures.md)."


def label_with_paper(record, measure) -> str:
    """A measure's header with the paper's name for it, where that differs (``RR@10 (paper: MRR@10)``)."""
    reported = [r for r in record.reported if r["measure"] == measure]
    paper_name = reported[0]["paper_measure"] if reported else measure
    label = measure_label(record, measure)
    return label if paper_name == measure else f"{label} (paper: {paper_name})"


def built_with(record) -> str:
    """The closing sentence of a page: which version of the suite built it, from what."""
    version = (record.built_with or {}).get("negplugins", "")
    return (f"Built with negplugins {version} by negplugins leaderboard build from the runs and their sidecars (the "
            "same bytes on every rebuild from the same runs); each run's provenance names the suite version and, "
            "when its sidecar records one, the git commit it was made with.")


def provenance(run) -> list[tuple[str, str]]:
    """``(label, text)`` lines of what made a run: parameters, first stage, index, versions, date."""
    items = []
    parameters = run.parameters or {}
    if parameters:
        compact = {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False)
                   for k, v in parameters.items()}
        items.append(("parameters", ", ".join(f"{k}={v}" for k, v in sorted(compact.items()))))
    first = run.first_stage
    if first and first.get("run"):
        items.append(("first stage", first["run"]))
    if run.index:
        items.append(("index", run.index))
    if run.model_sha256:
        items.append(("model weights SHA-256", run.model_sha256))
    if run.data_origin:
        items.append(("data", "; ".join(run.data_origin)))
    versions = dict(run.versions or {})
    versions.pop(COMMIT_KEY, None)
    suite = versions.pop("negplugins", None)
    made = f"negplugins {suite or 'unknown'}" + (f" (commit {run.commit})" if run.commit
                                                  else " (no git commit recorded)")
    items.append(("made with", ", ".join([made, *(f"{k} {v}" for k, v in sorted(versions.items()))])))
    if run.date:
        items.append(("date", run.date))
    return items


def pair_units_sentence(record) -> str:
    """`` PairedAcc counts each NevIR pair once.`` for the measures tested per pair; empty without one."""
    paired = [m for m in record.measures if per_pair(m)]
    return f" {', '.join(paired)} counts each NevIR pair once (its two queries share one value)." if paired else ""


def wins_losses_text(test) -> str:
    """``wins / losses / ties`` of a run against the baseline on one measure, ``–`` without a test."""
    return "–" if test is None or "wins" not in test else f"{test['wins']} / {test['losses']} / {test['ties']}"


def subset_measures(record) -> list[str]:
    """The measures of the per-subset tables: the runs', then those only the paper reports per subset."""
    measures = list(record.measures) if record.runs else []
    return measures + [m for m in dict.fromkeys(r["measure"] for r in record.reported if r["subset"])
                       if m not in measures]


def reported_per_subset(record, measure) -> dict:
    """``{system: {subset: entry}}`` of the paper's per-subset numbers for ``measure``."""
    systems: dict[str, dict] = {}
    for r in record.reported:
        if r["subset"] is not None and r["measure"] == measure:
            systems.setdefault(r["system"], {})[r["subset"]] = r
    return systems


def doc_field_intro(record) -> str:
    """The sentence above the top-k-by-document-field table."""
    info = record.doc_field
    counts = ", ".join(f"{v} {n}" for v, n in info["documents"].items())
    text = (f"Share of each run's top {info['k']} from each value of the documents' {info['field']} "
            f"(mean over the judged queries; the corpus: {counts}).")
    if info["without"]:
        text += (f" \"{record.primary} without V\": scored again with the documents of {info['field']} V removed "
                 "from the runs (those below move up) and the qrels.")
    return text


def negation_intro(record) -> str:
    """The sentence above the negation split: which queries are the negation queries, how many."""
    split = record.negation_split
    return (f"The negation queries: query field {split['field']} is {' or '.join(split['negation_values'])} "
            f"({split['queries'].get('negation', 0)} queries); the others: {split['queries'].get('no negation', 0)}.")


def on_copy(entry) -> str:
    """`` on a derived copy`` after a reproduction made on one (the family's Data line names it)."""
    return f" on a {DERIVED}" if entry.get("data_origin") else ""


# -- the index ------------------------------------------------------------------------------------------


def index_record(records) -> dict:
    """The index across benchmarks, in the specs' order, each with its leaderboards."""
    families = []
    for spec in benchmarks():
        boards = []
        for record in records:
            if record.family != spec.name:
                continue
            top = record.runs[0] if record.runs else None
            boards.append({"dataset": record.dataset, "slug": record.slug, "runs": len(record.runs),
                           "primary": record.primary, "reported": len(record.reported),
                           "top": None if top is None else {"name": top.name, "system": top.system,
                                                            "value": top.overall[record.primary]}})
        description = f"{spec.summary} ({', '.join(spec.paper_name(m) for m in spec.measures.names)})"
        families.append({"family": spec.name, "title": spec.title, "description": description, "leaderboards": boards})
    return {"benchmarks": families, "reproduction": "reproduction.html"}


# -- the reproduction page ------------------------------------------------------------------------------


def reproduction_record(records) -> dict:
    """Per benchmark: each number of its paper beside the runs that reproduce the system, without and with
    ``authors_pipeline`` (gap = run minus paper), the spec's notes on why they differ, and the other runs.
    """
    families = []
    for spec in benchmarks():
        own = [record for record in records if record.family == spec.name]
        paper = own[0].paper if own else None
        rows, reproduced = [], set()
        for record in own:
            for run in record.runs:
                if run.reproduces:
                    reproduced.add((record.dataset, run.reproduces))
        for record in own:
            reported = record.reported
            for r in [*(r for r in reported if r["subset"] is None), *(r for r in reported if r["subset"] is not None)]:
                if r["subset"] is not None and (record.dataset, r["system"]) not in reproduced:
                    continue
                row = {"dataset": record.dataset, "slug": record.slug, "system": r["system"],
                       "measure": r["measure"], "paper_measure": r["paper_measure"], "subset": r["subset"],
                       "paper": r["value"], "paper_printed": r["printed"], "source": r["source"], "note": r["note"], "suite": [], "authors": []}
                for run in record.runs:
                    if run.reproduces != r["system"]:
                        continue
                    values = run.overall if r["subset"] is None else run.subsets.get(r["subset"], {})
                    value = values.get(r["measure"])
                    gap = None if value is None or r["value"] is None else round(value - r["value"], 6) + 0.0
                    row["authors" if run.authors_pipeline else "suite"].append(
                        {"run": run.name, "system": run.system, "value": value, "gap": gap,
                         **({"data_origin": run.data_origin} if run.data_origin else {})})
                rows.append(row)
        other = [{"dataset": record.dataset, "slug": record.slug, "run": run.name, "system": run.system,
                  "measure": record.primary, "value": run.overall.get(record.primary)}
                 for record in own for run in record.runs if not run.reproduces]
        data = [line for row in rows for entry in (*row["suite"], *row["authors"]) for line in entry.get("data_origin", ())]
        families.append({"family": spec.name, "title": spec.title,
                         "paper": (paper or {}).get("reference", spec.paper.reference), "paper_url": (paper or {}).get("url", ""),
                         "rows": rows, **({"data_origin": list(dict.fromkeys(data))} if data else {}),
                         "notes": {k: spec.paper.reproduction_notes[k] for k in sorted(spec.paper.reproduction_notes)},
                         "other_runs": other})
    return {"benchmarks": families,
            "explanation": "Each number a benchmark's paper reports (as its spec records it, with its place in the "
                           "paper) beside this suite's runs that reproduce the system (sidecar field reproduces) and "
                           "the runs that follow the authors' own pipeline (authors_pipeline); gap = run minus paper."}
