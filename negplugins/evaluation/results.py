"""The records an evaluation returns, :class:`Evaluation` (one run) and :class:`Comparison`, as dicts and JSON."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..measures.ranking import STOCK
from ..rendering.text import json_text


def clean_float(value):
    """A float for JSON: NaN and infinities become None."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def clean_groups(groups: dict) -> dict:
    """``{group: {"queries": n, key: mean}}`` for JSON: each mean through :func:`clean_float`."""
    return {name: {k: (v if k == "queries" else clean_float(v)) for k, v in values.items()}
            for name, values in groups.items()}


@dataclass
class Evaluation:
    """Scores of one run on one dataset: means overall, per subset and per negation group, optionally per query.

    ``units`` maps, for a measure whose one value several queries share (PairedAcc), each query to its unit.
    """

    dataset: str
    run: str
    measures: list[str]
    queries: int
    overall: dict[str, float]
    breakdown_field: str | None = None
    subsets: dict[str, dict] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] | None = None
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    name: str | None = None
    query_groups: dict[str, str] = field(default_factory=dict, repr=False)
    negation_field: str | None = None
    negation: dict[str, dict] = field(default_factory=dict)
    data_origin: list[dict] = field(default_factory=list)
    negation_groups: dict[str, str] = field(default_factory=dict, repr=False)
    per_query_ids: list[str] | None = field(default=None, repr=False)
    units: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)
    ties: str = STOCK

    @property
    def label(self) -> str:
        return self.name or Path(self.run).name

    def to_dict(self, per_query: bool = True) -> dict:
        record = {
            "dataset": self.dataset, "run": self.run, "name": self.label, "measures": self.measures,
            "ties": self.ties, "queries": self.queries, "overall": {m: clean_float(v) for m, v in self.overall.items()},
            "counts": dict(self.counts), "breakdown_field": self.breakdown_field,
            "subsets": clean_groups(self.subsets),
            "notes": list(self.notes),
        }
        if self.data_origin:
            record["data_origin"] = [dict(origin) for origin in self.data_origin]
        if self.negation:
            record["negation_split"] = {"field": self.negation_field, "groups": clean_groups(self.negation)}
        if per_query and self.per_query is not None:
            record["per_query"] = {m: {q: clean_float(v) for q, v in values.items()} for m, values in self.per_query.items()}
        return record

    def to_json(self) -> str:
        return json_text(self.to_dict()).removesuffix("\n")

    def to_table(self, digits: int = 4) -> str:
        """A plain-text table: one row overall, then one row per subset."""
        from .reports import evaluation_table

        return evaluation_table(self, digits)


@dataclass
class Comparison:
    """Several runs on one dataset, each tested against the baseline."""

    dataset: str
    measures: list[str]
    evaluations: list[Evaluation]
    baseline: int
    tests: list[dict | None]
    notes: list[str] = field(default_factory=list)
    permutations: int = 0
    ties: str = STOCK

    @property
    def data_origin(self) -> list[dict]:
        """The derived copies the dataset was read from (see :class:`Evaluation`); the same for every run."""
        return self.evaluations[0].data_origin if self.evaluations else []

    def to_dict(self, per_query: bool = True) -> dict:
        origin = {"data_origin": [dict(o) for o in self.data_origin]} if self.data_origin else {}
        return {
            "dataset": self.dataset, **origin, "measures": self.measures, "ties": self.ties,
            "baseline": self.evaluations[self.baseline].label,
            "significance": {
                "tests": "two-sided paired t-test (scipy.stats.ttest_rel) and paired randomization test "
                         f"(sign flips, {self.permutations} permutations or exact, fixed seed)",
                "correction": "Holm across the runs compared with the baseline, per measure and test",
                "ci95": "t-based 95% confidence interval of the mean per-query difference (run - baseline)",
                "queries": "those with a value for the measure in both runs",
            },
            "runs": [
                {**ev.to_dict(per_query), "vs_baseline": None if test is None else
                 {m: {k: ([clean_float(x) for x in v] if isinstance(v, list) else (v if k == "n" else clean_float(v)))
                      for k, v in values.items()} for m, values in test.items()}}
                for ev, test in zip(self.evaluations, self.tests)],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        return json_text(self.to_dict()).removesuffix("\n")
