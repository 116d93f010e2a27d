"""Score a TREC run on a registered dataset, overall and per subset.

Subsets are the values of the dataset's breakdown field (ComLQ ``structure``, BoolQuestions
``question_type``; see :func:`negplugins.datasets.breakdown_field`). Queries judged in the qrels but
absent from the run count as zero, as in trec_eval and ir_measures; run queries without judgements
are ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import ir_measures

from . import datasets
from .errors import UserError
from .trec import read_run

__all__ = ["DEFAULT_MEASURES", "Evaluation", "evaluate", "parse_measures"]

#: Measures reported when none are asked for.
DEFAULT_MEASURES = ("nDCG@10", "RR@10", "R@100")


def parse_measures(names) -> list:
    """Parse measure names (a list, or one space-separated string) with ir_measures."""
    if isinstance(names, str):
        names = names.split()
    measures = []
    for name in names:
        try:
            measures.append(ir_measures.parse_measure(name))
        except (ValueError, NameError, SyntaxError, TypeError, KeyError) as error:
            raise UserError(f"unknown measure {name!r} ({error})") from None
    return measures


@dataclass
class Evaluation:
    """Scores of one run on one dataset."""

    dataset: str
    run: str
    measures: list[str]
    queries: int
    overall: dict[str, float]
    breakdown_field: str | None = None
    subsets: dict[str, dict] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(
            {"dataset": self.dataset, "run": self.run, "measures": self.measures, "queries": self.queries,
             "overall": self.overall, "breakdown_field": self.breakdown_field, "subsets": self.subsets},
            indent=2)

    def to_table(self, digits: int = 4) -> str:
        """A plain-text table: one row overall, then one row per subset."""
        header = [self.breakdown_field or "subset", "queries", *self.measures]
        rows = [["all", str(self.queries), *(_fmt(self.overall.get(m), digits) for m in self.measures)]]
        for name, values in self.subsets.items():
            rows.append([name, str(values["queries"]), *(_fmt(values.get(m), digits) for m in self.measures)])
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
                 for row in [header, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


def _fmt(value, digits):
    return "n/a" if value is None else f"{value:.{digits}f}"


def _aggregate(measures, qrels, run) -> dict[str, float]:
    flat_qrels = [ir_measures.Qrel(q, d, rel) for q, docs in qrels.items() for d, rel in docs.items()]
    values = ir_measures.calc_aggregate(measures, flat_qrels, run)
    return {str(measure): float(value) for measure, value in values.items()}


def evaluate(dataset_id: str, run_path: str | os.PathLike, measures=None) -> Evaluation:
    """Evaluate a TREC run file on a registered dataset.

    Parameters
    ----------
    dataset_id : str
        A registered dataset id.
    run_path : path
        A 6-column TREC run (optionally gzipped).
    measures : list or str, optional
        ir_measures names; :data:`DEFAULT_MEASURES` when not given.

    Raises
    ------
    UserError
        Unknown dataset or measure, unreadable or malformed run, or a run with no query in common
        with the dataset's qrels (probably a run for another dataset).
    """
    parsed = parse_measures(measures if measures is not None else DEFAULT_MEASURES)
    dataset = datasets.load(dataset_id)
    run = read_run(run_path)
    qrels = datasets.qrels_dict(dataset)
    common = qrels.keys() & run.keys()
    if not common:
        example = next(iter(run))
        raise UserError(f"{run_path}: no query of the run is judged in {dataset_id} (run query ids such as "
                        f"{example!r}; is the run for another dataset?)")
    names = [str(m) for m in parsed]
    overall = _aggregate(parsed, qrels, run)
    groups = datasets.query_groups(dataset)
    subsets: dict[str, dict] = {}
    for group in dict.fromkeys(groups[q] for q in qrels if q in groups):
        ids = {q for q in qrels if groups.get(q) == group}
        values = _aggregate(parsed, {q: qrels[q] for q in ids}, {q: run[q] for q in ids if q in run})
        subsets[group] = {"queries": len(ids), **values}
    return Evaluation(dataset=dataset_id, run=str(run_path), measures=names, queries=len(qrels), overall=overall,
                      breakdown_field=datasets.breakdown_field(dataset) if subsets else None, subsets=subsets)
