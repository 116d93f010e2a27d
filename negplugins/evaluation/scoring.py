"""Score TREC runs on a registered dataset, overall, per subset and per query; compare runs.

Every run is validated first (:mod:`negplugins.evaluation.validation`); an invalid run is not scored.

Subsets are the values of the dataset's breakdown field (ComLQ ``structure``, BoolQuestions
``question_type``, demo ``kind``; see :func:`negplugins.datasets.breakdown_field`). Queries judged in
the qrels but absent from the run count as zero for standard measures, as in trec_eval and
ir_measures. The negation measures have a value only for the queries they are defined on (see
docs/measures.md); every mean, overall and per subset, is over the queries that have a value, so
BoolQuestions' NegRecall over all questions is pooled over the questions with negatives, not a mean
of the per-type scores.

Default measures follow each benchmark's paper, as its spec declares them (:func:`default_measures`).

Ties (``ties``, ``negplugins evaluate --ties``): by default (:data:`~negplugins.measures.ranking.STOCK`) every
standard measure is exactly what stock ir_measures gives for the run, each provider ordering tied documents its own
way; :data:`~negplugins.measures.ranking.ONE_RANKING` scores every measure in the suite's one ranking instead (see
:mod:`negplugins.measures.ranking`). The suite's own measures use the one ranking either way.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import ir_measures

from ir_datasets_ext.spec import GENERIC_MEASURES

from .. import datasets
from ..errors import UserError
from ..io.run_columns import RunColumns
from ..measures import lower_is_better  # noqa: F401  (re-exported: earlier releases had it here)
from ..measures.declarations import NegationMeasure
from ..measures.parsing import parse_measures  # the one parser of measure names (re-exported here)
from ..measures.ranking import STOCK, TIE_HANDLING, canonical_run
from ..options import MAX_PERMUTATIONS, check_distinct, check_int
from .results import Comparison, Evaluation

__all__ = ["DEFAULT_MEASURES", "Evaluation", "Comparison", "evaluate", "evaluate_runs",
           "default_measures", "parse_measures", "load_judged", "resolve_measures", "compare_loaded",
           "score_run", "read_valid_run", "check_ties", "EvaluationInputs", "read_inputs", "judged_qrels",
           "check_comparison"]

#: Measures reported for a dataset outside the suite's benchmarks.
DEFAULT_MEASURES = GENERIC_MEASURES


def default_measures(dataset_id: str, qrels: dict | None = None) -> tuple[list[str], list[str]]:
    """``(measures, notes)``: the measures of the benchmark that owns ``dataset_id``, from its spec.

    Each benchmark declares its paper's measures in its spec (:class:`ir_datasets_ext.spec.Benchmark`);
    a benchmark whose choice depends on the data decides through its spec's hook (ComLQ adds LSNC@100
    where ``qrels`` hold explicit negatives, see :func:`ir_datasets_ext.datasets.comlq.default_measures`).
    A dataset outside the suite gets :data:`DEFAULT_MEASURES`.
    """
    spec = datasets.benchmark_of(dataset_id)
    if spec is None:
        return list(DEFAULT_MEASURES), []
    return spec.default_measures(dataset_id, qrels)


def _aggregate(measures, per_query: dict[str, dict[str, float]], query_ids) -> tuple[dict[str, float], dict[str, int]]:
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


def check_ties(ties: str) -> str:
    """Return ``ties`` when it names a tie handling (:data:`TIE_HANDLING`); a UserError otherwise."""
    if ties not in TIE_HANDLING:
        raise UserError(f"unknown tie handling {ties!r}; choose from {', '.join(TIE_HANDLING)}")
    return ties


#: Stock measures whose value, with a cutoff ``k``, depends only on the qrels and each query's top ``k`` in the
#: order of the provider that computes them (trec_eval's: ``ndcg_cut``, ``recall``, ``P``, ``map_cut``,
#: ``success``; MS MARCO's ``RR@k``; ``Judged@k``), so they are given :meth:`RunColumns.top` of the run.
_TOP_K_MEASURES = {"nDCG", "RR", "R", "P", "AP", "Success", "Judged"}
_TOP_K_PROVIDERS = {"pytrec_eval", "msmarco", "judged"}


def _top_k_cutoff(measure) -> int | None:
    """The cutoff of a stock measure that only sees each query's top ``k`` (None for any other measure)."""
    if isinstance(measure, NegationMeasure) or measure.NAME not in _TOP_K_MEASURES:
        return None
    params = measure.params
    cutoff = params.get("cutoff")
    if not isinstance(cutoff, int) or isinstance(cutoff, bool) or cutoff < 1 or params.get("judged_only"):
        return None
    provider = next((p for p in ir_measures.DefaultPipeline.providers if p.supports(measure)), None)
    return cutoff if provider is not None and provider.NAME in _TOP_K_PROVIDERS else None


def _run_parts(parsed, run):
    """``[(measures, run)]``: a run read into columns gives cutoff measures only the documents they can see."""
    if not isinstance(run, RunColumns):
        return [(parsed, run)]
    cutoffs = {m: _top_k_cutoff(m) for m in parsed}
    cut = [m for m in parsed if cutoffs[m] is not None]
    rest = [m for m in parsed if cutoffs[m] is None]
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


def load_judged(dataset_id: str):
    """Load a dataset and its qrels; a dataset whose files cannot be read is a UserError naming it.

    Download and format errors (which name the file) pass through as they are; any other exception is a
    bug of the loader and propagates with its traceback.
    """
    dataset = datasets.load(dataset_id)
    return dataset, judged_qrels(dataset_id, dataset)


def judged_qrels(dataset_id: str, dataset) -> dict:
    """The qrels of a loaded dataset (:func:`load_judged`'s errors)."""
    from ir_datasets_ext.download import DownloadError

    try:
        qrels = datasets.qrels_dict(dataset)
    except DownloadError:  # names the file and the fix already
        raise
    except OSError as error:  # a data file missing or unreadable
        raise UserError(f"dataset {dataset_id}: its data is not available ({type(error).__name__}: {error}); "
                        "is IR_DATASETS_EXT_MIRROR set to a folder holding it?") from None
    return qrels


def shared_units(measures, qrels) -> dict[str, dict[str, str]]:
    """``{measure: {query_id: unit}}`` for the measures (or names) whose value is one per several queries:
    PairedAcc gives both queries of a NevIR pair the pair's value, so the pair is the unit (its first query id)."""
    from ..measures import per_pair
    from ..measures.pairs import find_pairs

    paired = [str(m) for m in measures if per_pair(m)]
    if not paired:
        return {}
    units = {member.query_id: pair[0].query_id for pair in find_pairs(qrels).pairs for member in pair}
    return {name: units for name in paired}


def _score(dataset_id, dataset, qrels, run, run_label, parsed, notes, keep_per_query, ties=STOCK) -> Evaluation:
    names = [str(m) for m in parsed]
    per_query: dict[str, dict[str, float]] = {name: {} for name in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no negatives / no pairs: reported as notes below
        for metric in _metrics(parsed, qrels, run, ties):
            value = float(metric.value)
            if not math.isnan(value):
                per_query[str(metric.measure)][metric.query_id] = value
    overall, counts = _aggregate(parsed, per_query, qrels.keys())
    origins = datasets.data_origins(dataset)
    notes = _with_origin_notes(origins, notes)
    for name in names:
        if counts[name] == 0:
            notes.append(f"{name}: no query is eligible on {dataset_id} (no explicit negative or complete pair "
                         "in the qrels), so it has no value")
    groups = datasets.query_groups(dataset)
    subsets: dict[str, dict] = {}
    for group in datasets.ordered_subsets(dataset, (groups[q] for q in qrels if q in groups)):
        ids = [q for q in qrels if groups.get(q) == group]
        values, _ = _aggregate(parsed, per_query, ids)
        subsets[group] = {"queries": len(ids), **values}
    negation_groups = datasets.negation_groups(dataset)
    negation: dict[str, dict] = {}
    for group in (datasets.NEGATION, datasets.NO_NEGATION):
        ids = [q for q in qrels if negation_groups.get(q) == group]
        if ids:
            values, _ = _aggregate(parsed, per_query, ids)
            negation[group] = {"queries": len(ids), **values}
    if len(negation) < 2:  # one kind only: the split is the whole dataset
        negation = {}
    return Evaluation(dataset=dataset_id, run=run_label, measures=names, queries=len(qrels), overall=overall,
                      breakdown_field=datasets.breakdown_field(dataset) if subsets else None, subsets=subsets,
                      per_query=per_query if keep_per_query else None, counts=counts, notes=notes,
                      query_groups={q: groups[q] for q in qrels if q in groups},
                      negation_field=datasets.negation_field(dataset) if negation else None, negation=negation,
                      negation_groups={q: negation_groups[q] for q in qrels if q in negation_groups} if negation else {},
                      per_query_ids=list(qrels), units=shared_units(parsed, qrels), ties=ties, data_origin=origins)


def _with_origin_notes(origins, notes) -> list[str]:
    """``notes`` after one line per derived copy the data was read from (each once)."""
    lines = datasets.data_origin_notes(origins)
    return [*lines, *(note for note in notes if note not in lines)]


def score_run(dataset_id: str, dataset, qrels, run, label: str, measures, notes=(), *,
              per_query: bool = False, ties: str = STOCK) -> Evaluation:
    """Score one run already read (and validated) against ``qrels``; no file is read.

    Parameters
    ----------
    dataset_id : str
        The dataset's id (for notes).
    dataset
        The loaded dataset (its queries give the subsets and the negation split).
    qrels : dict
        ``{query_id: {doc_id: relevance}}``; the queries averaged over.
    run : dict
        ``{query_id: {doc_id: score}}``.
    label : str
        The run's name in the result.
    measures : list
        Parsed measures (:func:`parse_measures`).
    notes : iterable of str
        Notes carried into the result.
    per_query : bool
        Keep the per-query values.
    ties : str
        ``"stock"`` (default) or ``"one-ranking"``: see the module docstring.
    """
    evaluation = _score(dataset_id, dataset, qrels, run, label, measures, list(notes), per_query, check_ties(ties))
    evaluation.name = label
    return evaluation


def read_valid_run(dataset_id, dataset, run_path, notes=None):
    """Read and validate a run; the queries of the whole benchmark outside a subset are left out.

    ``notes`` (a list), when given, receives one note saying how many run queries were left out.
    """
    from .validation import validate_run

    report, run = validate_run(dataset_id, run_path, dataset=dataset, return_run=True)
    if not report.valid:
        if report.queries and report.counts.get("unknown-query") == report.queries:
            example = next(iter(run))
            raise UserError(f"{run_path}: no query of the run is judged in {dataset_id} (run query ids such as "
                            f"{example!r}; is the run for another dataset?); not scored")
        raise UserError(report.error_message())
    if report.outside_subset:
        if isinstance(run, RunColumns):
            run = run.without_queries(report.outside_subset)
        else:
            for query_id in report.outside_subset:
                del run[query_id]
        if notes is not None:
            notes.append(f"{run_path}: {len(report.outside_subset)} of the run's {report.queries} queries are "
                         f"queries of {report.whole_dataset} outside {dataset_id}; scored on the "
                         f"{report.queries - len(report.outside_subset)} queries of {dataset_id} only")
    return run


def resolve_measures(dataset_id, qrels, measures=None):
    """``(parsed measures, notes)``: those given (already parsed or names), else the dataset's defaults.

    Measures already parsed are not parsed again. A measure given twice (``nDCG@10,nDCG@10``, or two spellings of
    one, ``NegRecall_10 NegRecall@10``) is a UserError: each is one column of the results.
    """
    if measures is None:
        names, notes = default_measures(dataset_id, qrels)
        return parse_measures(names), notes
    if isinstance(measures, str) or any(isinstance(m, str) for m in measures):
        measures = parse_measures(measures)
    return check_distinct(measures, "--measures", "measure", key=str), []


@dataclass
class EvaluationInputs:
    """What an evaluation reads, each once: the dataset, its qrels, the measures and the runs.

    ``runs`` are ``(label, path, run)``; ``notes`` those of the measures (:func:`resolve_measures`) and
    ``run_notes`` those of reading the runs (queries outside a subset left out).
    """

    dataset_id: str
    dataset: object
    qrels: dict
    measures: list
    notes: list[str]
    runs: list[tuple[str, str, object]] = field(default_factory=list)
    run_notes: list[str] = field(default_factory=list)


def read_inputs(dataset_id: str, run_paths, measures=None, *, names=None, validate: bool = True, dataset=None,
                qrels=None) -> EvaluationInputs:
    """Load the dataset and its qrels, parse the measures and read (and validate) each run, each once.

    ``dataset`` and ``qrels``, when given, are used instead of loading them; ``measures`` (names or parsed) are
    parsed before any data is read; ``names`` label the runs (default: their file names).

    Raises
    ------
    UserError
        As :func:`evaluate`.
    """
    from ..io.trec import read_run

    run_paths = [str(p) for p in run_paths]
    if measures is not None:  # a bad measure is reported before any data is read
        measures = resolve_measures(dataset_id, None, measures)[0]
    if dataset is None:
        dataset = datasets.load(dataset_id)
    if qrels is None:
        qrels = judged_qrels(dataset_id, dataset)
    parsed, notes = resolve_measures(dataset_id, qrels, measures)
    inputs = EvaluationInputs(dataset_id, dataset, qrels, parsed, notes)
    labels = list(names) if names is not None else _labels(run_paths)
    for path, label in zip(run_paths, labels):
        run = read_valid_run(dataset_id, dataset, path, inputs.run_notes) if validate else read_run(path)
        inputs.runs.append((label, path, run))
    return inputs


def evaluate(dataset_id: str, run_path: str | os.PathLike, measures=None, *, per_query: bool = False,
             validate: bool = True, name: str | None = None, ties: str = STOCK, dataset=None, qrels=None,
             inputs: EvaluationInputs | None = None) -> Evaluation:
    """Evaluate a TREC run file on a registered dataset.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    run_path : path
        A 6-column TREC run (optionally gzipped).
    measures : list or str, optional
        ir_measures names; the dataset family's defaults (:func:`default_measures`) when not given.
    per_query : bool
        Keep the per-query values in ``Evaluation.per_query``.
    validate : bool
        Validate the run first (default); ``False`` only parses it.
    ties : str
        ``"stock"`` (default): standard measures exactly as stock ir_measures computes them; ``"one-ranking"``:
        every measure in the suite's one ranking (see the module docstring).
    dataset, qrels : optional
        The dataset and its qrels, already loaded (read here otherwise).
    inputs : EvaluationInputs, optional
        Everything already read by :func:`read_inputs` (its one run is scored; nothing is read here).

    Raises
    ------
    UserError
        Unknown dataset, measure or tie handling, unreadable, malformed or invalid run (the message lists the
        problems), or a run with no query in common with the dataset's qrels.
    """
    check_ties(ties)
    if inputs is None:
        inputs = read_inputs(dataset_id, [run_path], measures, validate=validate, dataset=dataset, qrels=qrels)
    _, run_path, run = inputs.runs[0]
    if not inputs.qrels.keys() & run.keys():
        example = next(iter(run))
        raise UserError(f"{run_path}: no query of the run is judged in {dataset_id} (run query ids such as "
                        f"{example!r}; is the run for another dataset?)")
    evaluation = _score(dataset_id, inputs.dataset, inputs.qrels, run, str(run_path), inputs.measures,
                        [*inputs.notes, *inputs.run_notes], per_query, ties)
    evaluation.name = name
    return evaluation


def evaluate_runs(dataset_id: str, run_paths, measures=None, *, baseline: int | str = 0, per_query: bool = False,
                  validate: bool = True, names=None, permutations: int | None = None,
                  progress: bool = False, ties: str = STOCK, inputs: EvaluationInputs | None = None) -> Comparison:
    """Evaluate several runs on one dataset and test each against the baseline.

    ``baseline`` is an index into ``run_paths`` or a path / file name / name among them (default: the
    first run). Significance: see :mod:`negplugins.evaluation.significance`; ``permutations`` of the randomization
    test is 1 to :data:`~negplugins.options.MAX_PERMUTATIONS` (default 10,000); ``progress`` shows a
    progress bar on standard error for long randomization tests; ``ties`` as in :func:`evaluate`; ``inputs``
    everything already read by :func:`read_inputs` (nothing is read here then).

    Raises
    ------
    UserError
        As :func:`evaluate`, and for a ``permutations`` or ``baseline`` out of range.
    """
    check_ties(ties)
    run_paths = [str(p) for p in run_paths]
    names = list(names) if names is not None else _labels(run_paths)
    base_index = check_comparison(run_paths, baseline, permutations, names)
    if inputs is None:
        inputs = read_inputs(dataset_id, run_paths, measures, names=names, validate=validate)
    return compare_loaded(dataset_id, inputs.dataset, inputs.qrels, inputs.runs, inputs.measures,
                          [*inputs.notes, *inputs.run_notes], base_index, per_query=per_query,
                          permutations=permutations, progress=progress, ties=ties)


def check_comparison(run_paths, baseline: int | str = 0, permutations: int | None = None, names=None) -> int:
    """The index of the baseline among ``run_paths`` (labelled ``names``), checked with ``permutations``
    before any data is read (:func:`evaluate_runs`' errors)."""
    if permutations is not None:
        check_int(permutations, "--permutations", 1, MAX_PERMUTATIONS)
    run_paths = check_distinct((str(p) for p in run_paths), None, "run", key=os.path.realpath)
    if not run_paths:
        raise UserError("no run to evaluate")
    return _baseline_index(baseline, run_paths, list(names) if names is not None else _labels(run_paths))


def compare_loaded(dataset_id, dataset, qrels, loaded, parsed, notes, base_index=0, *, per_query=False,
                   permutations=None, progress=False, ties=STOCK) -> Comparison:
    """Score already read (and validated) runs ``[(label, path, run), ...]`` and test them against one.

    ``ties`` as in :func:`evaluate`; the significance tests compare the per-query values it gives.
    """
    from . import significance

    check_ties(ties)
    evaluations = []
    for label, path, run in loaded:
        if not qrels.keys() & run.keys():
            raise UserError(f"{path}: no query of the run is judged in {dataset_id} (is the run for another dataset?)")
        evaluation = _score(dataset_id, dataset, qrels, run, str(path), parsed, notes, True, ties)
        evaluation.name = label
        evaluations.append(evaluation)
    permutations = significance.PERMUTATIONS if permutations is None else permutations
    measure_names = [str(m) for m in parsed]
    tests = significance.compare([ev.per_query for ev in evaluations], measure_names, base_index,
                                 permutations=permutations, progress=progress, units=evaluations[0].units)
    if not per_query:
        for evaluation in evaluations:
            evaluation.per_query = None
    notes = _with_origin_notes(evaluations[0].data_origin if evaluations else [], notes)
    return Comparison(dataset=dataset_id, measures=measure_names, evaluations=evaluations, baseline=base_index,
                      tests=tests, notes=notes, permutations=permutations, ties=ties)


def _labels(run_paths) -> list[str]:
    names = [Path(p).name for p in run_paths]
    if len(set(names)) == len(names):
        return names
    return list(run_paths)


def _baseline_index(baseline, run_paths, names) -> int:
    if isinstance(baseline, int):
        if not 0 <= baseline < len(run_paths):
            raise UserError(f"baseline index {baseline} out of range")
        return baseline
    for i, (path, name) in enumerate(zip(run_paths, names)):
        if baseline in (path, name, Path(path).name) or os.path.abspath(baseline) == os.path.abspath(path):
            return i
    raise UserError(f"baseline {baseline!r} is not one of the runs: {', '.join(names)}")
