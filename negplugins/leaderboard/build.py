"""Collect the contributed runs, validate and evaluate them, and publish the leaderboards (docs/leaderboards.md);
the same runs, sidecars, data and specs give the same bytes."""

from __future__ import annotations

import filecmp
import json
import math
import os
import re
import tempfile
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ir_datasets_ext.spec import main_measure

from .. import datasets
from ..errors import UserError
from ..io.files import write_marker
from ..io.sidecars import COMMIT_KEY, metadata_path
from ..options import tqdm_disable
from .board import Leaderboard, RunEntry, index_record, reproduction_record
from .contributions import Contribution, ContributionError, discover

#: Depth of the document-field shares on the leaderboards.
DOC_FIELD_K = 10

def _round(value, digits=6):
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return round(value, digits) + 0.0  # +0.0: no "-0.0"


def _evaluate_dataset(dataset_id: str, contributions: list[Contribution], bar) -> Leaderboard:
    """Validate and evaluate the runs of one dataset (``bar`` moves one step per run and stage)."""
    from ir_datasets_ext.download import DownloadError
    from ir_datasets_ext.util import FormatError

    from ..evaluation.scoring import Evaluator
    from ..evaluation.significance import wins_losses_ties
    from ..measures import lower_is_better, per_pair

    try:
        evaluator = Evaluator.load(dataset_id)
        reports = []
        loaded = []
        for c in contributions:
            bar.set_description(f"{dataset_id}: validating {c.name}")
            report, run = evaluator.validated(c.path)
            bar.update(1)
            report.run = c.relative
            reports.append(report)
            loaded.append((c.name, c.relative, run))
    except (DownloadError, FormatError) as error:
        from ir_datasets_ext.download import MIRROR_ENV

        # a failed download already says to set the mirror: the hint is given once
        hint = "" if MIRROR_ENV in str(error) else f"; set {MIRROR_ENV} to a folder holding it"
        raise UserError(f"dataset {dataset_id}: its data is not available ({error}){hint}") from None
    invalid = [r for r in reports if not r.valid]
    if len(invalid) == 1:
        raise ContributionError(f"invalid run: {invalid[0].error_message()}")
    if invalid:
        raise ContributionError("invalid run(s):\n" + "\n".join(
            "  " + line for r in invalid for line in [r.summary(), *("  " + p for p in r.problem_lines(10))]))
    names = [c.name for c in contributions]
    baseline = names.index("bm25") if "bm25" in names else 0
    bar.set_description(f"{dataset_id}: scoring {len(loaded)} run(s)")
    comparison = evaluator.compare(loaded, baseline, per_query=True)
    bar.update(len(loaded))
    measures = comparison.measures
    primary = main_measure(dataset_id, measures)
    doc_field, diagnostics = _doc_field_diagnostics(evaluator, loaded, bar)
    base_per_query = comparison.evaluations[baseline].per_query
    runs = []
    for i, (c, ev, test, report) in enumerate(zip(contributions, comparison.evaluations, comparison.tests, reports)):
        meta = c.meta
        model = meta.get("model") if isinstance(meta.get("model"), dict) else None
        per_query = {m: wins_losses_ties(base_per_query.get(m, {}), ev.per_query.get(m, {}), lower_is_better(m),
                                         comparison.evaluations[baseline].units.get(m))
                     for m in measures} if test is not None else None
        runs.append(RunEntry(
            name=c.name,
            path=c.relative,
            sidecar=c.relative[: -len(c.path.name)] + metadata_path(c.path).name,
            system=_text(meta.get("system")),
            runner=_text(meta.get("runner")),
            tag=_text(meta.get("tag")),
            model=_text(portable_text(model.get("id"))) if model else None,  # an id may be a folder
            language=_text(meta.get("language")) if meta.get("language") is not None else None,
            date=_text(meta.get("created"))[:10],
            command=_text(portable_text(meta.get("command"))),
            parameters=portable_text(meta.get("parameters")) or {},
            versions=portable_text(meta.get("versions")) or {},
            commit=_text(meta["versions"].get(COMMIT_KEY)) or None if isinstance(meta.get("versions"), dict)
            else None,
            first_stage=_first_stage(meta.get("first_stage")),
            index=_text(portable_text(meta["index"].get("path"))) or None if isinstance(meta.get("index"), dict)
            else None,
            model_sha256=_text(model.get("sha256")) or None if model else None,
            run_sha256=_text(meta.get("run_sha256")) if meta.get("run_sha256") else None,
            reproduces=_text(meta["reproduces"]) if isinstance(meta.get("reproduces"), str) else None,
            authors_pipeline=meta.get("authors_pipeline") is True,
            data_origin=_origin_lines(meta["data_origin"]) if meta.get("data_origin") else None,
            queries_without_results=len(report.missing_queries),
            overall={m: _round(ev.overall.get(m)) for m in measures},
            counts={m: ev.counts.get(m, 0) for m in measures},
            subsets={s: {m: _round(v.get(m)) for m in measures} for s, v in ev.subsets.items()},
            negation={g: {m: _round(v.get(m)) for m in measures} for g, v in ev.negation.items()} or None,
            doc_field=diagnostics[i] if diagnostics else None,
            vs_baseline=None if test is None else {
                m: {"n": t["n"], "mean_diff": _round(t["mean_diff"]), "ci95": [_round(x) for x in t["ci95"]],
                    "p_t_holm": _round(t["p_t_holm"]), "p_randomization_holm": _round(t["p_randomization_holm"]),
                    "wins": per_query[m]["wins"], "losses": per_query[m]["losses"], "ties": per_query[m]["ties"]}
                for m, t in test.items()},
        ))

    def sort_key(run):
        value = run.overall[primary]
        if value is None:
            return (1, 0.0, run.name)
        return (0, value if lower_is_better(primary) else -value, run.name)

    runs.sort(key=sort_key)
    base = comparison.evaluations[baseline]
    spec = datasets.benchmark_of(dataset_id)
    return Leaderboard(
        dataset=dataset_id,
        data_origin=comparison.data_origin or None,
        family=spec.name if spec is not None else dataset_id.split("/")[0],
        slug=datasets.slug(dataset_id),
        measures=measures,
        primary=primary,
        lower_is_better=[m for m in measures if lower_is_better(m)],
        queries=base.queries,
        breakdown_field=base.breakdown_field,
        subsets={s: v["queries"] for s, v in base.subsets.items()},
        baseline=names[baseline],
        significance="paired randomization test (10000 sign flips or exact, fixed seed) and paired t-test "
                     "against the baseline on queries with a value in both runs, Holm-corrected across runs "
                     "per measure; 95% CI: t-based, of the mean per-query difference"
                     + "".join(f"; {m}: per NevIR pair, each pair once" for m in measures if per_pair(m)),
        ties=comparison.ties,
        notes=list(comparison.notes),
        negation_split=None if not base.negation else {
            "field": base.negation_field, "negation_values": [str(v) for v in spec.breakdown.negation_split[1]],
            "queries": {g: v["queries"] for g, v in base.negation.items()}},
        doc_field=doc_field,
        runs=runs,
    )


def _doc_field_diagnostics(evaluator, loaded, bar):
    """``(record part, [per-run part])`` of the spec's ``doc_field``, or ``(None, None)`` without one."""
    from ..evaluation.diagnostics import doc_field_values, doc_fields, share_breakdown, without_docs

    dataset_id, dataset, qrels = evaluator.dataset_id, evaluator.dataset, evaluator.qrels
    spec = datasets.benchmark_of(dataset_id)
    name = spec.breakdown.doc_field if spec is not None else None
    if name is None or name not in doc_fields(dataset):
        bar.update(len(loaded))
        return None, None
    values = doc_field_values(dataset, [name], dataset_id)[name]
    present = sorted(set(values.values()))
    removed = [v for v in spec.breakdown.doc_field_without if v in present]
    per_run = []
    for run_name, _, run in loaded:
        bar.set_description(f"{dataset_id}: {name} diagnostics of {run_name}")
        shares = share_breakdown(run, values, DOC_FIELD_K, qrels, evaluator.groups, evaluator.subsets, values=present)
        without = {}
        for value in removed:
            kept_run, kept_qrels, _, _ = without_docs(run, qrels, values, value)
            ev = evaluator.on_qrels(kept_qrels).score(kept_run, value, value)
            without[value] = {"overall": {m: _round(ev.overall.get(m)) for m in ev.measures},
                              "subsets": {s: {m: _round(v.get(m)) for m in ev.measures} for s, v in ev.subsets.items()}}
        per_run.append({"queries": shares.queries, "shares": {v: _round(x) for v, x in shares.overall.items()},
                        "subsets": {s: {v: _round(x) for v, x in d.items() if v != "queries"}
                                    for s, d in shares.subsets.items()},
                        "without": without})
        bar.update(1)
    record = {"field": name, "k": DOC_FIELD_K, "values": present, "without": removed,
              "documents": {v: sum(1 for x in values.values() if x == v) for v in present}}
    return record, per_run


def _display_path(path: str) -> str:
    """An absolute path as the pages show it: from ``site-packages`` or a project folder on, else ``.../<name>``."""
    parts = PurePosixPath(path).parts[1:]
    if "site-packages" in parts:
        rest = parts[len(parts) - 1 - parts[::-1].index("site-packages") + 1:]
        return "/".join(("<site-packages>", *rest))
    for i, part in enumerate(parts):
        if part in _PROJECT_FOLDERS:
            return "/".join(parts[i:])
    return ".../" + parts[-1] if parts else path


_PROJECT_FOLDERS = ("runs", "indexes", "work", "topics")
_ABSOLUTE = re.compile(r"(?<![^\s='\"])/(?!/)[^\s'\"]+")


def portable_text(value):
    """``value`` (sidecar metadata) with every absolute path shown as :func:`_display_path`."""
    if isinstance(value, dict):
        return {str(key): portable_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [portable_text(item) for item in value]
    if isinstance(value, str) and "/" in value:
        return _ABSOLUTE.sub(lambda match: _display_path(match.group(0)), value)
    return value


def _origin_lines(origins) -> list[str]:
    """A sidecar's ``data_origin`` records (untrusted) as one line each: kind, file, SHA-256 and source."""
    if not isinstance(origins, list):
        return []
    return [_text(f"{_text(o.get('kind'))} {_text(o.get('file'))} (sha256 {_text(o.get('sha256'))}; "
                  f"from {_text(o.get('source'))})") for o in origins if isinstance(o, dict)]


def _first_stage(first_stage) -> dict | None:
    """The first stage a run reranked: ``{"run": portable path, "sha256"}``, or None."""
    if not isinstance(first_stage, dict):
        return None
    return {"run": _text(portable_text(first_stage.get("run"))) or None,
            "sha256": _text(first_stage.get("sha256")) or None}


def _text(value) -> str:
    """Metadata as one line of text (never trusted: escaped when rendered)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return " ".join(text.split())[:500]


# -- build and check -------------------------------------------------------------------------------

def collect(runs_root, progress: bool | None = False) -> list[Leaderboard]:
    """Discover, validate and evaluate every contribution: one :class:`Leaderboard` per dataset, sorted by id."""
    contributions, problems = discover(runs_root)
    if len(problems) == 1:
        raise ContributionError(f"invalid contribution: {problems[0]}")
    if problems:
        raise ContributionError("invalid contribution(s):\n" + "\n".join(f"  {p}" for p in problems))
    by_dataset: dict[str, list[Contribution]] = {}
    for c in contributions:
        by_dataset.setdefault(c.dataset, []).append(c)
    from tqdm.auto import tqdm

    with tqdm(total=3 * len(contributions), desc="leaderboards", unit=" steps", disable=tqdm_disable(progress),
              leave=False) as bar:
        records = {d: _evaluate_dataset(d, cs, bar) for d, cs in sorted(by_dataset.items())}
    for dataset_id in _paper_datasets(records):
        records[dataset_id] = _paper_only_record(dataset_id)
    for record in records.values():
        _add_paper(record)
    return [records[d] for d in sorted(records)]


def _paper_datasets(records) -> list[str]:
    """Datasets that get a page without a run: those the papers report on, and one per benchmark left without."""
    wanted = []
    for spec in datasets.benchmarks():
        reported = [r.dataset for r in spec.paper.reported]
        for dataset_id in dict.fromkeys(reported):
            try:
                datasets.load(dataset_id)
            except UserError as error:
                raise UserError(f"the spec of {spec.name} records a number of its paper on {dataset_id!r}, which is "
                                f"not a registered dataset id ({error})") from None
        owned = [d for d in records if spec.owns(d) and datasets.benchmark_of(d) is spec]
        if not reported and not owned:  # a test split where the spec lists one (papers report on it), else the first
            listed = [d for d in spec.datasets if "<" not in d]
            reported = ([d for d in listed if d.endswith("/test")] or listed)[:1]
        wanted.extend(d for d in dict.fromkeys(reported) if d not in records)
    return wanted


def _measure_name(name: str) -> str:
    """A measure as the evaluation names it (``ir_measures``' canonical text); unparseable names as given."""
    from ..measures.parsing import parse_measures

    try:
        return str(parse_measures([name])[0])
    except UserError:
        return name


def _paper_only_record(dataset_id: str) -> Leaderboard:
    """The page of a dataset without contributed runs: the paper's numbers only (no data is read)."""
    from ..measures import lower_is_better

    spec = datasets.benchmark_of(dataset_id)
    measures = [_measure_name(m) for m in spec.measures.names]
    return Leaderboard(dataset_id, spec.name, datasets.slug(dataset_id), measures, main_measure(dataset_id, measures),
                       [m for m in measures if lower_is_better(m)])


def _safe_url(url: str) -> str:
    """``url`` when it is an http(s) address, else empty (a page links nothing else)."""
    return url if isinstance(url, str) and re.match(r"https?://[^\s\"'<>]+\Z", url) else ""


def _add_paper(record: Leaderboard) -> None:
    """Add the paper's numbers on the record's dataset and the runs' reproductions of them."""
    spec = datasets.benchmark_of(record.dataset)
    record.paper = None if spec is None else {"reference": spec.paper.reference, "url": _safe_url(spec.paper.url),
                                              "title": spec.title}
    record.data_url = _safe_url(spec.data.url) if spec is not None else ""
    reported = []
    for r in (spec.paper.reported if spec is not None else ()):
        if r.dataset != record.dataset:
            continue
        measure = _measure_name(r.measure)
        reported.append({"system": r.system, "measure": measure, "paper_measure": spec.paper_name(r.measure),
                         "value": _round(r.value), "printed": r.printed, "subset": r.subset, "source": r.source,
                         "note": r.note})
    record.reported = reported
    subsets = [r["subset"] for r in reported if r["subset"] is not None]
    if subsets:
        if record.breakdown_field is None:
            record.breakdown_field = spec.breakdown.subset_field
        present = dict(record.subsets)
        record.subsets = {s: present.get(s) for s in spec.ordered_subsets([*present, *subsets])}
    reproductions = []
    for run in record.runs:
        if run.reproduces is None:
            continue
        for r in reported:
            if r["system"] != run.reproduces:
                continue
            values = run.overall if r["subset"] is None else run.subsets.get(r["subset"], {})
            value = values.get(r["measure"])
            reproductions.append({
                "run": run.name, "system": r["system"], "authors_pipeline": run.authors_pipeline,
                "measure": r["measure"], "paper_measure": r["paper_measure"], "subset": r["subset"],
                "paper": r["value"], "paper_printed": r["printed"], "value": value,
                "gap": None if value is None or r["value"] is None else _round(value - r["value"]),
                "source": r["source"], **({"data_origin": run.data_origin} if run.data_origin else {})})
    record.reproductions = reproductions


def runs_link(runs_root, output) -> str:
    """The runs folder as a relative link from the leaderboards folder (``../runs`` for the defaults)."""
    return Path(os.path.relpath(Path(runs_root).resolve(), Path(output).resolve())).as_posix()


def _publishable(records: list[Leaderboard], runs_href: str) -> list[Leaderboard]:
    """The records as published: the suite's version, and each run's ``links`` relative to the pages."""
    from importlib import metadata
    from urllib.parse import quote

    version = metadata.version("negplugins")

    def href(relative):
        return f"{runs_href}/{quote(relative)}"

    contributed = {run.path for record in records for run in record.runs}
    out = []
    for record in records:
        runs = []
        for run in record.runs:
            links = {"run": href(run.path), "sidecar": href(run.sidecar)}
            first = (run.first_stage or {}).get("run") or ""
            if first.startswith("runs/") and first[len("runs/"):] in contributed:
                links["first_stage"] = href(first[len("runs/"):])
            runs.append(replace(run, links=links))
        out.append(replace(record, runs=runs, runs_folder=runs_href, built_with={"negplugins": version}))
    return out


def write_outputs(records: list[Leaderboard], folder: Path, runs_href: str = "../runs") -> list[Path]:
    """Write every page of ``records`` into ``folder``; runs and sidecars are linked through ``runs_href``."""
    from . import render

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    files = {}
    records = _publishable(records, runs_href)
    for record in records:
        slug = record.slug
        files[f"{slug}.json"] = render.json_text(record.to_json())
        files[f"{slug}.md"] = render.markdown(record)
        files[f"{slug}.html"] = render.html_page(record)
    files["index.json"] = render.json_text(index_record(records))
    files["README.md"] = render.index_markdown(records)
    files["index.html"] = render.index_html(records)
    files["reproduction.json"] = render.json_text(reproduction_record(records))
    files["reproduction.md"] = render.reproduction_markdown(records)
    files["reproduction.html"] = render.reproduction_html(records)
    for name, text in sorted(files.items()):
        path = folder / name
        path.write_bytes(text.encode("utf-8"))
        written.append(path)
    written.append(write_marker(folder))  # lists the files above: the folder is recognisably the suite's
    return written


def build(runs_root="runs", output="leaderboards", progress: bool | None = False) -> list[Path]:
    """Rebuild ``output`` from ``runs_root`` (replaced atomically, and only when it is the suite's own output)."""
    from ..io.files import atomic_directory, check_folder_output

    output = Path(output)
    check_folder_output(output, inputs=[runs_root])  # before the (long) evaluation
    records = collect(runs_root, progress)
    with atomic_directory(output, inputs=[runs_root]) as tmp:
        written = write_outputs(records, Path(tmp), runs_link(runs_root, output))
        names = [p.name for p in written]
    return [output / n for n in names]


def check(runs_root="runs", output="leaderboards", progress: bool | None = False) -> list[str]:
    """Rebuild into a temporary folder and compare with ``output``; returns the differences (empty: up to date)."""
    records = collect(runs_root, progress)
    output = Path(output)
    with tempfile.TemporaryDirectory(prefix="negplugins-leaderboard-") as tmp:
        fresh = Path(tmp)
        write_outputs(records, fresh, runs_link(runs_root, output))
        expected = sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
        present = sorted(p.relative_to(output).as_posix() for p in output.rglob("*") if p.is_file()) \
            if output.is_dir() else []
        differences = []
        for name in expected:
            if name not in present:
                differences.append(f"{output / name}: missing (run 'negplugins leaderboard build')")
            elif not filecmp.cmp(fresh / name, output / name, shallow=False):
                differences.append(f"{output / name}: stale, differs from a rebuild (run 'negplugins leaderboard build')")
        for name in present:
            if name not in expected:
                differences.append(f"{output / name}: not produced by a build (remove it or rebuild)")
    return differences
