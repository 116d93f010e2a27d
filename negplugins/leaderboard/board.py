"""What a leaderboard page says, in Markdown and in HTML alike: the facts both formats write out.

A leaderboard's record (built by :mod:`negplugins.leaderboard.build`) holds the runs' numbers; this module
decides which run is best on a measure, which differs from the baseline, how the paper's numbers group under
their sources, what each run's provenance lines are, and the sentences both formats share. It also builds the
records of the index (:func:`index_record`) and of the reproduction page (:func:`reproduction_record`).
:mod:`~negplugins.leaderboard.markdown_pages` and :mod:`~negplugins.leaderboard.html_pages` write them out.
"""

from __future__ import annotations

import json
import re

from ir_datasets_ext.derived import DERIVED
from ir_datasets_ext.spec import benchmarks

from ..evaluation.significance import ALPHA
from ..io.sidecars import COMMIT_KEY
from ..measures import per_pair
from ..measures.ranking import STOCK, TIE_HANDLING
from ..rendering.text import best_marks

__all__ = ["best_runs", "index_record", "reproduction_record"]

REPORTED_LABEL = "reported in the paper"


def best_runs(record, measure) -> set[str]:
    """The runs whose overall ``measure`` is marked best (:func:`negplugins.rendering.text.best_marks`).

    The smallest value for a lower-is-better measure, else the largest, compared as shown (4 decimals): runs
    tied for best are all marked, and a column where every run shows the same value (or a single run) has
    no best. Markdown (bold), HTML (``td.best``) and ``negplugins evaluate -f latex`` (bold) follow this rule.
    """
    values = [run["overall"].get(measure) for run in record["runs"]]
    flags = best_marks(values, measure in record["lower_is_better"])
    return {run["name"] for run, flag in zip(record["runs"], flags) if flag}


def differs_from_baseline(run, measure) -> bool:
    """The run differs from the baseline on ``measure`` (randomization test, Holm, p < :data:`ALPHA`): its † mark."""
    test = (run.get("vs_baseline") or {}).get(measure)
    return bool(test and test["p_randomization_holm"] is not None and test["p_randomization_holm"] < ALPHA)


def measure_label(record, measure) -> str:
    """``measure`` as a column header: `` ↓`` after a lower-is-better measure."""
    return measure + (" ↓" if measure in record["lower_is_better"] else "")


# -- the paper's numbers ----------------------------------------------------------------------------


def reported_by_system(record, subset=None) -> dict:
    """``{system: {measure: reported entry}}`` of the record's dataset (one subset, or the whole dataset)."""
    systems: dict[str, dict] = {}
    for r in record.get("reported", ()):
        if r["subset"] == subset:
            systems.setdefault(r["system"], {})[r["measure"]] = r
    return systems


def paper_only_measures(record, subset_level=False) -> list[str]:
    """Measures of the paper's numbers that the runs' table lacks (whole dataset, or any subset)."""
    measures = record["measures"]
    found = [r["measure"] for r in record.get("reported", ()) if (r["subset"] is not None) == subset_level]
    return [m for m in dict.fromkeys(found) if m not in measures]


def source_text(entry) -> str:
    """Where a paper's number is in the paper, with its note: ``Table 3, row BM25 (note)``."""
    return entry["source"] + (f" ({entry['note']})" if entry["note"] else "") if entry["source"] else entry["note"]


_COLUMN = re.compile(r"^(?P<where>.*), column (?P<column>[^,]+)$")


def grouped_sources(entries) -> list[str]:
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
        texts.append(source_text({"source": text, "note": note}))
    return texts


def paper_ref(record) -> str:
    """The paper as the pages name it (its reference, else "the paper")."""
    paper = record.get("paper") or {}
    return paper.get("reference") or "the paper"


def subset_header(record, subset) -> str:
    """A subset's column header: its name and its number of queries."""
    count = record["subsets"].get(subset)
    return f"{subset} ({count})" if count is not None else str(subset)


def ties_sentence(record) -> str:
    """How the page's numbers order tied documents (the evaluation's ``ties``, docs/measures.md)."""
    ties = record.get("ties") or STOCK
    return f"Ties: {ties}, {TIE_HANDLING[ties]} (docs/measures.md)."


def label_with_paper(record, measure) -> str:
    """A measure's header with the paper's name for it, where that differs (``RR@10 (paper: MRR@10)``)."""
    reported = [r for r in record.get("reported", ()) if r["measure"] == measure]
    paper_name = reported[0]["paper_measure"] if reported else measure
    label = measure_label(record, measure)
    return label if paper_name == measure else f"{label} (paper: {paper_name})"


def built_with(record) -> str:
    """The closing sentence of a page: which version of the suite built it, from what."""
    version = (record.get("built_with") or {}).get("negplugins", "")
    return (f"Built with negplugins {version} by negplugins leaderboard build from the runs and their sidecars (the "
            "same bytes on every rebuild from the same runs); each run's provenance names the suite version and, "
            "when its sidecar records one, the git commit it was made with.")


def provenance(run) -> list[tuple[str, str]]:
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


def tested_runs(record) -> list[tuple[dict, dict]]:
    """``(run, {measure: {"wins", "losses", "ties", "n"}})`` of each run tested against the baseline."""
    return [(run, run["vs_baseline"]) for run in record["runs"] if run.get("vs_baseline")]


def pair_units_sentence(record) -> str:
    """`` PairedAcc counts each NevIR pair once.`` for the measures tested per pair; empty without one."""
    paired = [m for m in record["measures"] if per_pair(m)]
    return f" {', '.join(paired)} counts each NevIR pair once (its two queries share one value)." if paired else ""


def wins_losses_text(test) -> str:
    """``wins / losses / ties`` of a run against the baseline on one measure, ``–`` without a test."""
    return "–" if test is None or "wins" not in test else f"{test['wins']} / {test['losses']} / {test['ties']}"


def subset_measures(record) -> list[str]:
    """The measures of the per-subset tables: the runs', then those only the paper reports per subset."""
    measures = list(record["measures"]) if record["runs"] else []
    return measures + [m for m in dict.fromkeys(r["measure"] for r in record.get("reported", ()) if r["subset"])
                       if m not in measures]


def reported_per_subset(record, measure) -> dict:
    """``{system: {subset: entry}}`` of the paper's per-subset numbers for ``measure``."""
    systems: dict[str, dict] = {}
    for r in record.get("reported", ()):
        if r["subset"] is not None and r["measure"] == measure:
            systems.setdefault(r["system"], {})[r["subset"]] = r
    return systems


def doc_field_intro(record) -> str:
    """The sentence above the top-k-by-document-field table."""
    info = record["doc_field"]
    counts = ", ".join(f"{v} {n}" for v, n in info["documents"].items())
    text = (f"Share of each run's top {info['k']} from each value of the documents' {info['field']} "
            f"(mean over the judged queries; the corpus: {counts}).")
    if info["without"]:
        text += (f" \"{record['primary']} without V\": scored again with the documents of {info['field']} V removed "
                 "from the runs (those below move up) and the qrels.")
    return text


def negation_intro(record) -> str:
    """The sentence above the negation split: which queries are the negation queries, how many."""
    split = record["negation_split"]
    return (f"The negation queries: query field {split['field']} is {' or '.join(split['negation_values'])} "
            f"({split['queries'].get('negation', 0)} queries); the others: {split['queries'].get('no negation', 0)}.")


def on_copy(entry) -> str:
    """`` on a derived copy`` after a reproduction made on one (the family's Data line names it)."""
    return f" on a {DERIVED}" if entry.get("data_origin") else ""


# -- the index ------------------------------------------------------------------------------------------


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


# -- the reproduction page ------------------------------------------------------------------------------


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
