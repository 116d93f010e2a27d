"""Score TREC runs on a registered dataset, overall, per subset and per query, and compare them.

How means, subsets, negation splits and ties work: docs/evaluation.md and docs/measures.md.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import ir_measures

from ir_datasets_ext.spec import GENERIC_MEASURES

from .. import datasets
from ..errors import UserError
from ..io.run_columns import RunColumns
from ..measures import per_pair
from ..measures.declarations import NegationMeasure
from ..measures.pairs import find_pairs
from ..measures.parsing import parse_measures
from ..measures.ranking import STOCK, TIE_HANDLING, canonical_run
from ..options import MAX_PERMUTATIONS, check_distinct, check_int
from .results import Comparison, Evaluation

#: Measures reported for a dataset outside the suite's benchmarks.
DEFAULT_MEASURES = GENERIC_MEASURES
#: Stock measures that, with a cutoff ``k``, see only each query's top ``k``: they are given :meth:`RunColumns.top`.
_TOP_K_MEASURES = {"nDCG", "RR", "R", "P", "AP", "Success", "Judged"}


def default_measures(dataset_id: str, qrels: dict | None = None) -> tuple[list[str], list[str]]:
    """``(measures, notes)``: the paper's measures from the spec of the benchmark owning ``dataset_id``."""
    spec = datasets.benchmark_of(dataset_id)
    if spec is None:
        return list(DEFAULT_MEASURES), []
    return spec.default_measures(dataset_id, qrels)


def shared_units(measures, qrels) -> dict[str, dict[str, str]]:
    """``{measure: {query_id: unit}}`` for the measures whose one value is given to both queries of a NevIR pair."""
    paired = [str(m) for m in measures if per_pair(m)]
    if not paired:
        return {}
    units = {member.query_id: pair[0].query_id for pair in find_pairs(qrels).pairs for member in pair}
    return {name: units for name in paired}


def _run_parts(parsed, run):
    """``[(measures, run)]``: a run read into columns gives cutoff measures only the documents they can see."""
    if not isinstance(run, RunColumns):
        return [(parsed, run)]
    cutoffs = {m: m.params.get("cutoff") for m in parsed
               if m.NAME in _TOP_K_MEASURES and not m.params.get("judged_only")}
    cut = [m for m in parsed if cutoffs.get(m)]
    rest = [m for m in parsed if not cutoffs.get(m)]
    parts = []
    if cut:
        parts.append((cut, run.top(max(cutoffs[m] for m in cut))))
    if rest:
        parts.append((rest, run.as_dict()))
    return parts


def _metrics(parsed, qrels, run, ties):
    """ir_measures' per-query values of ``run``: stock, or every measure in the one ranking (``ties``)."""
    metrics = []
    for measures, part in _run_parts(parsed, run):
        if ties == STOCK:
            metrics.append(ir_measures.iter_calc(measures, qrels, part))
            continue
        own = [m for m in measures if isinstance(m, NegationMeasure)]  # they rank the run themselves
        standard = [m for m in measures if not isinstance(m, NegationMeasure)]
        if standard:
            metrics.append(ir_measures.iter_calc(standard, qrels, canonical_run(part)))
        if own:  # given the scores themselves: PairedAcc compares them
            metrics.append(ir_measures.iter_calc(own, qrels, part))
    return (metric for part in metrics for metric in part)


def _aggregate(measures, per_query, query_ids) -> tuple[dict[str, float], dict[str, int]]:
    """``(mean, queries averaged)`` of each measure over the ``query_ids`` that have a value."""
    values, counts = {}, {}
    for measure in measures:
        name = str(measure)
        aggregator = measure.aggregator()
        count = 0
        column = per_query.get(name, {})
        for query_id in query_ids:
            value = column.get(query_id)
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                aggregator.add(value)
                count += 1
        result = aggregator.result() if count else math.nan
        values[name] = math.nan if result is None else float(result)
        counts[name] = count
    return values, counts


def _read_qrels(dataset_id: str, dataset) -> dict:
    from ir_datasets_ext.download import DownloadError

    try:
        return datasets.qrels_dict(dataset)
    except DownloadError:  # names the file and the fix already
        raise
    except OSError as error:  # a data file missing or unreadable
        raise UserError(f"dataset {dataset_id}: its data is not available ({type(error).__name__}: {error}); "
                        "is IR_DATASETS_EXT_MIRROR set to a folder holding it?") from None


@dataclass
class Evaluator:
    """A dataset, its qrels, the measures and the tie handling of an evaluation, resolved once for every run."""

    dataset_id: str
    dataset: object
    qrels: dict
    measures: list
    notes: list[str] = field(default_factory=list)
    ties: str = STOCK
    run_notes: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, dataset_id: str, measures=None, *, ties: str = STOCK, dataset=None, qrels=None) -> Evaluator:
        """Check ``ties`` and ``measures`` (before any data is read), then load what is not given."""
        if ties not in TIE_HANDLING:
            raise UserError(f"unknown tie handling {ties!r}; choose from {', '.join(TIE_HANDLING)}")
        if measures is not None:
            measures = check_distinct(parse_measures(measures), "--measures", "measure", key=str)
        dataset = dataset if dataset is not None else datasets.load(dataset_id)
        qrels = qrels if qrels is not None else _read_qrels(dataset_id, dataset)
        notes = []
        if measures is None:
            names, notes = default_measures(dataset_id, qrels)
            measures = parse_measures(names)
        return cls(dataset_id, dataset, qrels, measures, notes, ties)

    def on_qrels(self, qrels) -> Evaluator:
        """The same evaluation on other qrels (documents removed), without its notes."""
        return replace(self, qrels=qrels, notes=[], run_notes=[])

    @cached_property
    def origins(self) -> list[dict]:
        return datasets.data_origins(self.dataset)

    @cached_property
    def groups(self) -> dict[str, str]:
        return datasets.query_groups(self.dataset)

    @cached_property
    def negation_groups(self) -> dict[str, str]:
        return datasets.negation_groups(self.dataset)

    @cached_property
    def subsets(self) -> list[str]:
        """The dataset's subsets that hold a judged query, in the benchmark's order."""
        groups = self.groups
        return datasets.ordered_subsets(self.dataset, (groups[q] for q in self.qrels if q in groups))

    @cached_property
    def units(self) -> dict[str, dict[str, str]]:
        return shared_units(self.measures, self.qrels)

    def _unjudged(self, path, run) -> UserError:
        example = next(iter(run), None)
        return UserError(f"{path}: no query of the run is judged in {self.dataset_id} (run query ids such as "
                         f"{example!r}; is the run for another dataset?); not scored")

    def validated(self, path):
        """``(report, run)``: a run file read and validated against the dataset (IO's reader)."""
        from .validation import validate_run

        report, run = validate_run(self.dataset_id, path, dataset=self.dataset, return_run=True)
        if report.valid and not self.qrels.keys() & run.keys():
            raise self._unjudged(path, run)
        return report, run

    def read_run(self, path, validate: bool = True):
        """A run file read for this evaluation: validated, without the queries outside the subset (noted)."""
        if not validate:
            from ..io.trec import read_run

            run = read_run(path)
            if not self.qrels.keys() & run.keys():
                raise self._unjudged(path, run)
            return run
        report, run = self.validated(path)
        if not report.valid:
            if report.queries and report.counts.get("unknown-query") == report.queries:
                raise self._unjudged(path, run)
            raise UserError(report.error_message())
        if report.outside_subset:
            run = run.without_queries(report.outside_subset)
            self.run_notes.append(f"{path}: {len(report.outside_subset)} of the run's {report.queries} queries "
                                  f"are queries of {report.whole_dataset} outside {self.dataset_id}; scored on the "
                                  f"{report.queries - len(report.outside_subset)} queries of {self.dataset_id} only")
        return run

    def read_runs(self, paths, names=None, validate: bool = True) -> list[tuple[str, str, object]]:
        """``[(label, path, run)]`` of the run files, labelled ``names`` (default: their file names)."""
        paths = [str(p) for p in paths]
        labels = list(names) if names is not None else _labels(paths)
        return [(label, path, self.read_run(path, validate)) for path, label in zip(paths, labels)]

    def score(self, run, path, name: str | None = None, *, per_query: bool = False) -> Evaluation:
        """One run's means overall, per subset and per negation group (and per query when asked)."""
        names = [str(m) for m in self.measures]
        values: dict[str, dict[str, float]] = {name: {} for name in names}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no negatives / no pairs: reported as notes below
            for metric in _metrics(self.measures, self.qrels, run, self.ties):
                value = float(metric.value)
                if not math.isnan(value):
                    values[str(metric.measure)][metric.query_id] = value
        qrels = self.qrels
        overall, counts = _aggregate(self.measures, values, qrels.keys())
        notes = self._notes()
        notes += [f"{m}: no query is eligible on {self.dataset_id} (no explicit negative or complete pair in the "
                  "qrels), so it has no value" for m in names if counts[m] == 0]
        groups, negation_groups = self.groups, self.negation_groups
        subsets = {}
        for group in self.subsets:
            ids = [q for q in qrels if groups.get(q) == group]
            subsets[group] = {"queries": len(ids), **_aggregate(self.measures, values, ids)[0]}
        negation = {}
        for group in (datasets.NEGATION, datasets.NO_NEGATION):
            ids = [q for q in qrels if negation_groups.get(q) == group]
            if ids:
                negation[group] = {"queries": len(ids), **_aggregate(self.measures, values, ids)[0]}
        if len(negation) < 2:  # one kind only: the split is the whole dataset
            negation = {}
        return Evaluation(
            dataset=self.dataset_id, run=str(path), measures=names, queries=len(qrels), overall=overall,
            breakdown_field=datasets.breakdown_field(self.dataset) if subsets else None, subsets=subsets,
            per_query=values if per_query else None, counts=counts, notes=notes, name=name,
            query_groups={q: groups[q] for q in qrels if q in groups},
            negation_field=datasets.negation_field(self.dataset) if negation else None, negation=negation,
            negation_groups={q: negation_groups[q] for q in qrels if q in negation_groups} if negation else {},
            per_query_ids=list(qrels), units=self.units, ties=self.ties, data_origin=self.origins)

    def compare(self, runs, baseline: int = 0, *, per_query: bool = False, permutations: int | None = None,
                progress: bool = False) -> Comparison:
        """Score runs ``[(label, path, run)]`` and test each against ``runs[baseline]``."""
        from . import significance

        evaluations = [self.score(run, path, label, per_query=True) for label, path, run in runs]
        permutations = significance.PERMUTATIONS if permutations is None else permutations
        names = [str(m) for m in self.measures]
        tests = significance.compare([ev.per_query for ev in evaluations], names, baseline,
                                     permutations=permutations, progress=progress, units=self.units)
        if not per_query:
            for evaluation in evaluations:
                evaluation.per_query = None
        return Comparison(dataset=self.dataset_id, measures=names, evaluations=evaluations, baseline=baseline,
                          tests=tests, notes=self._notes(), permutations=permutations, ties=self.ties)

    def _notes(self) -> list[str]:
        """The notes of every result: the derived copies the data was read from, then those of the inputs."""
        lines = datasets.data_origin_notes(self.origins)
        return [*lines, *(note for note in [*self.notes, *self.run_notes] if note not in lines)]


def evaluate(dataset_id: str, run_path: str | os.PathLike, measures=None, *, per_query: bool = False,
             validate: bool = True, name: str | None = None, ties: str = STOCK) -> Evaluation:
    """Evaluate a TREC run file on a registered dataset (measures: the dataset's paper's by default)."""
    evaluator = Evaluator.load(dataset_id, measures, ties=ties)
    run = evaluator.read_run(str(run_path), validate)
    return evaluator.score(run, str(run_path), name, per_query=per_query)


def evaluate_runs(dataset_id: str, run_paths, measures=None, *, baseline: int | str = 0, per_query: bool = False,
                  validate: bool = True, names=None, permutations: int | None = None, progress: bool = False,
                  ties: str = STOCK) -> Comparison:
    """Evaluate several runs on one dataset and test each against the baseline (an index, path or name)."""
    run_paths = [str(p) for p in run_paths]
    names = list(names) if names is not None else _labels(run_paths)
    base_index = check_comparison(run_paths, baseline, permutations, names)
    evaluator = Evaluator.load(dataset_id, measures, ties=ties)
    runs = evaluator.read_runs(run_paths, names, validate)
    return evaluator.compare(runs, base_index, per_query=per_query, permutations=permutations, progress=progress)


def check_comparison(run_paths, baseline: int | str = 0, permutations: int | None = None, names=None) -> int:
    """The index of the baseline among ``run_paths``, checked with ``permutations`` before any data is read."""
    if permutations is not None:
        check_int(permutations, "--permutations", 1, MAX_PERMUTATIONS)
    run_paths = check_distinct((str(p) for p in run_paths), None, "run", key=os.path.realpath)
    if not run_paths:
        raise UserError("no run to evaluate")
    names = list(names) if names is not None else _labels(run_paths)
    if isinstance(baseline, int):
        if not 0 <= baseline < len(run_paths):
            raise UserError(f"baseline index {baseline} out of range")
        return baseline
    for i, (path, name) in enumerate(zip(run_paths, names)):
        if baseline in (path, name, Path(path).name) or os.path.abspath(baseline) == os.path.abspath(path):
            return i
    raise UserError(f"baseline {baseline!r} is not one of the runs: {', '.join(names)}")


def _labels(run_paths) -> list[str]:
    names = [Path(p).name for p in run_paths]
    return names if len(set(names)) == len(names) else list(run_paths)
