"""Each benchmark's spec: one typed record per benchmark, declared in its dataset module and checked by its types
(how: docs/architecture.md, "Adding a benchmark")."""

from __future__ import annotations

import collections.abc
import csv
import io
import math
import pkgutil
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Literal

__all__ = ["Benchmark", "Paper", "Measures", "Data", "Breakdown", "Protocol", "Baseline", "Reported",
           "register_benchmark", "benchmarks", "benchmark_of", "GENERIC_MEASURES", "GENERIC_MAIN_MEASURE",
           "PYSERINI_BM25", "format_reported", "read_reported", "main_measure"]

#: Measures for a dataset no spec covers (a plain ir_datasets dataset scored by ``negplugins evaluate``).
GENERIC_MEASURES = ("nDCG@10", "RR@10", "R@100")
GENERIC_MAIN_MEASURE = GENERIC_MEASURES[0]

_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*(/[a-z0-9_.-]+)*")


def _check_types(record, who: str, path: str = "") -> None:
    """Check each field of a spec record against its type hint, nested records included; a tuple of names holds
    distinct, non-empty ones. A ValueError names ``who`` and the field."""
    for name, hint in typing.get_type_hints(type(record)).items():
        value = getattr(record, name)
        where = f"{path}{name}"
        if not _matches(value, hint):
            raise ValueError(f"{who}: {where} is {value!r}, expected {_hint_text(hint)}")
        if hint == tuple[str, ...]:
            if not all(value):
                raise ValueError(f"{who}: {where} holds an empty name")
            if len(set(value)) != len(value):
                raise ValueError(f"{who}: {where} names one twice ({', '.join(value)})")
        if is_dataclass(value):
            _check_types(value, who, f"{where}.")


def _matches(value, hint) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in args)
    if origin is Literal:
        return value in args
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(item, args[0]) for item in value)
        return len(value) == len(args) and all(map(_matches, value, args))
    if origin is collections.abc.Mapping:
        return isinstance(value, Mapping) and all(_matches(k, args[0]) and _matches(v, args[1])
                                                  for k, v in value.items())
    if origin is collections.abc.Callable:
        return callable(value)
    if hint in (int, float):  # a float field takes an int too, neither a bool
        return isinstance(value, (int, hint)) and not isinstance(value, bool)
    return isinstance(value, origin or hint)


def _hint_text(hint) -> str:
    text = hint.__name__ if isinstance(hint, type) else str(hint)
    return re.sub(r"\b(typing|collections\.abc|ir_datasets_ext\.spec)\.", "", text)


@dataclass(frozen=True)
class Reported:
    """One number a benchmark's paper reports (a fraction: 50.5 % is 0.505), with where it stands in the paper;
    ``decimals``: those of the fraction as the paper prints it (its 34.0 % is ``0.340``: 3)."""

    system: str
    measure: str
    value: float
    dataset: str
    subset: str | None = None
    source: str = ""
    note: str = ""
    decimals: int | None = None

    @property
    def printed(self) -> str:
        return format_reported(self.value, self.decimals)


#: The papers' numbers: one CSV per benchmark, ``<name>.csv``, its columns the fields of :class:`Reported`.
REPORTED_FOLDER = "etc/reported"


def read_reported(name: str) -> tuple[Reported, ...]:
    """The numbers benchmark ``name``'s paper reports, from ``etc/reported/<name>.csv`` (package data)."""
    path = f"{REPORTED_FOLDER}/{name}.csv"
    try:
        data = pkgutil.get_data("ir_datasets_ext", path)
    except FileNotFoundError:
        raise ValueError(f"ir_datasets_ext/{path}: not found (the papers' numbers of benchmark {name!r})") from None
    return parse_reported(data.decode("utf-8"), f"ir_datasets_ext/{path}")


def parse_reported(text: str, where: str) -> tuple[Reported, ...]:
    """The :class:`Reported` rows of a CSV text; a ValueError names ``where``, the line and the column."""
    rows = csv.reader(io.StringIO(text, newline=""))
    columns = [f.name for f in fields(Reported)]
    header = next(rows, [])
    if header != columns:
        raise ValueError(f"{where}:1: the header is {','.join(header)!r}, expected {','.join(columns)!r}")
    numbers, seen = [], {}
    for line, cells in enumerate(rows, start=2):
        if len(cells) != len(columns):
            raise ValueError(f"{where}:{line}: {len(cells)} cells, expected {len(columns)} ({', '.join(columns)})")
        row = dict(zip(columns, cells))
        for column in ("system", "measure", "value", "dataset", "source"):
            if not row[column].strip():
                raise ValueError(f"{where}:{line}: column {column} is empty")
        reported = Reported(system=row["system"], measure=row["measure"], dataset=row["dataset"],
                            value=_cell_number(row["value"], float, where, line, "value"),
                            subset=row["subset"] or None, source=row["source"], note=row["note"],
                            decimals=_cell_number(row["decimals"], int, where, line, "decimals")
                            if row["decimals"] else None)
        if not -1 <= reported.value <= 1:
            raise ValueError(f"{where}:{line}: value {row['value']} is not a fraction (-1 to 1; 50.5 % is 0.505)")
        if reported.decimals is not None and reported.decimals < 0:
            raise ValueError(f"{where}:{line}: decimals {row['decimals']} is negative")
        key = (reported.system, reported.measure, reported.dataset, reported.subset)
        if key in seen:
            raise ValueError(f"{where}:{line}: {reported.system} {reported.measure} on {reported.dataset}"
                             f"{' ' + reported.subset if reported.subset else ''} is recorded on line {seen[key]} "
                             "already")
        seen[key] = line
        numbers.append(reported)
    return tuple(numbers)


def _cell_number(text: str, kind: type, where: str, line: int, column: str):
    try:
        number = kind(text)
    except ValueError:
        number = None
    if number is None or (kind is float and not math.isfinite(number)):
        raise ValueError(f"{where}:{line}: column {column} holds {text!r}, expected "
                         f"{'a number' if kind is float else 'an integer'}")
    return number


def format_reported(value: float | None, decimals: int | None = None) -> str:
    """A paper's number with the paper's digits: ``decimals`` of them, else as few as it needs; ``–`` for None."""
    if value is None:
        return "–"
    if decimals is not None:
        return f"{value:.{decimals}f}"
    return f"{round(value, 6):.6f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Baseline:
    """A system without a model that the report card runs beside every model; ``reproduces`` names the paper's
    system it is (as :attr:`Reported.system`), ``authors_pipeline``: it follows the authors' own code."""

    name: str
    runner: Literal["bm25", "bm25s"]
    system: str
    parameters: Mapping[str, float] = field(default_factory=dict)
    preset: str | None = None
    reproduces: str | None = None
    authors_pipeline: bool = False

    def __post_init__(self):
        _check_types(self, f"baseline {self.name!r}")
        if self.authors_pipeline and not self.reproduces:
            raise ValueError(f"baseline {self.name!r}: authors_pipeline without reproduces (which system?)")


#: Stock Pyserini BM25 at its defaults (``negplugins search bm25``): every full-corpus benchmark's first baseline.
PYSERINI_BM25 = Baseline(name="bm25", runner="bm25", system="BM25 (Pyserini defaults: Lucene, k1 0.9, b 0.4)",
                         parameters={"k1": 0.9, "b": 0.4})

#: ``(dataset_id, qrels or None) -> (measure names, notes)``: a benchmark's measures where they depend on the data.
MeasuresHook = Callable[[str, "Mapping | None"], "tuple[list[str], list[str]]"]


@dataclass(frozen=True)
class Paper:
    """The paper: its short reference (``"Xu et al., AAAI 2026"``), its link, the numbers it reports and, per system
    of the paper, why the suite's number differs (``not_reproduced``: those it could not reproduce)."""

    reference: str
    url: str = ""
    reported: tuple[Reported, ...] = ()
    decimals: int | None = None  # of the reported fractions without their own, as the paper prints them
    reproduction_notes: Mapping[str, str] = field(default_factory=dict)
    not_reproduced: tuple[str, ...] = ()

    def __post_init__(self):
        if self.decimals is not None:
            object.__setattr__(self, "reported", tuple(
                r if r.decimals is not None else replace(r, decimals=self.decimals) for r in self.reported))


@dataclass(frozen=True)
class Measures:
    """The default measures in the paper's order, the headline one (as MTEB's ``main_score``), the paper's names
    where they differ; ``hook`` replaces ``names`` where the choice depends on the data, ``note`` says what it adds."""

    names: tuple[str, ...]
    main: str
    paper_names: Mapping[str, str] = field(default_factory=dict)
    hook: MeasuresHook | None = field(default=None, repr=False, compare=False)
    note: str = ""


@dataclass(frozen=True)
class Data:
    """Where the data is published, the revision the loaders read and its licence (a lowercase SPDX-style id);
    empty where the source states none."""

    url: str = ""
    revision: str = ""
    license: str = ""


@dataclass(frozen=True)
class Breakdown:
    """How results are broken down: queries by the values of ``subset_field`` (``subsets``: the paper's order) and
    into negation queries or not (``negation_split``: a field and its negation values); the top documents by
    ``doc_field``, the leaderboards also scoring without the documents of ``doc_field_without``."""

    subset_field: str | None = None
    subsets: tuple[str, ...] = ()
    negation_split: tuple[str, tuple] | None = None
    doc_field: str | None = None
    doc_field_without: tuple[str, ...] = ()


@dataclass(frozen=True)
class Protocol:
    """How the paper evaluates a system (``negplugins benchmark``): ``retrieval`` ranks the whole corpus, ``pairs``
    scores each query's own candidates; ``depth`` documents per query, on ``datasets`` (empty: the first listed)."""

    kind: Literal["retrieval", "pairs"] = "retrieval"
    depth: int = 100
    datasets: tuple[str, ...] = ()
    baselines: tuple[Baseline, ...] = ()


@dataclass(frozen=True)
class Benchmark:
    """Everything the suite knows about one benchmark, declared once (docs/architecture.md): ``name`` is the first
    component of its dataset ids, ``datasets`` the ids worth listing, whole benchmark first."""

    name: str
    title: str
    summary: str
    datasets: tuple[str, ...]
    paper: Paper
    measures: Measures
    negatives: str = "none"
    language: str = "en"
    order: int = 100
    docs: str = ""
    data: Data = field(default_factory=Data)
    breakdown: Breakdown = field(default_factory=Breakdown)
    protocol: Protocol = field(default_factory=Protocol)

    def __post_init__(self):
        if not (isinstance(self.name, str) and _NAME.fullmatch(self.name)):
            raise ValueError(f"benchmark {self.name!r}: name is not a dataset id family (lowercase, digits, -_./)")
        _check_types(self, f"benchmark {self.name!r}")
        if not self.docs:
            object.__setattr__(self, "docs", f"docs/{self.name}.yaml")
        problem = next(self._problems(), None)
        if problem:
            raise ValueError(f"benchmark {self.name!r}: {problem}")

    def _problems(self):
        """What the types cannot say: how the fields agree with each other."""
        measures, paper, breakdown, protocol = self.measures, self.paper, self.breakdown, self.protocol
        if not self.title.strip():
            yield "title is empty"
        if not measures.names:
            yield "measures.names is empty (the paper's measures, main one included)"
        if measures.main not in measures.names:
            yield f"measures.main {measures.main!r} is not one of its measures ({', '.join(measures.names)})"
        yield from (f"measures.paper_names names {m!r}, not one of its measures"
                    for m in measures.paper_names if m not in measures.names)
        if measures.note and measures.hook is None:
            yield "measures.note without a measures.hook (what adds it?)"
        yield from (f"datasets or protocol.datasets name {d!r}, which is not {self.name} nor below it"
                    for d in self.datasets + protocol.datasets if not self.owns(d))
        if breakdown.subsets and not breakdown.subset_field:
            yield "breakdown.subsets without a breakdown.subset_field (which query field?)"
        if breakdown.doc_field_without and not breakdown.doc_field:
            yield "breakdown.doc_field_without without a breakdown.doc_field"
        if protocol.depth < 1:
            yield f"protocol.depth {protocol.depth} is not a positive integer"
        yield from (f"{system!r} is not reproduced but has no paper.reproduction_notes entry saying what was tried"
                    for system in paper.not_reproduced if system not in paper.reproduction_notes)
        names = [baseline.name for baseline in self.computed_baselines()]
        if len(set(names)) != len(names):
            yield f"two baselines named alike ({', '.join(names)})"
        yield from (f"reported number {r.system} {r.measure} ({r.source}) is on {r.dataset} {r.subset or ''}, "
                    "not on a dataset or subset of the benchmark" for r in paper.reported
                    if not self.owns(r.dataset) or (r.subset is not None and r.subset not in breakdown.subsets))

    def computed_baselines(self) -> tuple[Baseline, ...]:
        """:data:`PYSERINI_BM25` for a ``retrieval`` benchmark (BM25 ranks a corpus, not a query's pair), then its own."""
        return ((PYSERINI_BM25,) if self.protocol.kind == "retrieval" else ()) + self.protocol.baselines

    def is_reproduced(self, system: str) -> bool:
        return system not in self.paper.not_reproduced

    def benchmark_datasets(self) -> tuple[str, ...]:
        """The dataset ids the benchmark's protocol runs on."""
        return self.protocol.datasets or self.datasets[:1]

    def owns(self, dataset_id: str) -> bool:
        """Whether ``dataset_id`` belongs to this benchmark (``comlq`` owns ``comlq`` and ``comlq/2in``)."""
        return dataset_id == self.name or dataset_id.startswith(self.name + "/")

    def default_measures(self, dataset_id: str, qrels: Mapping | None = None) -> tuple[list[str], list[str]]:
        """``(measure names, notes)`` for ``dataset_id``: the measures, or what the hook chooses."""
        if self.measures.hook is not None:
            return self.measures.hook(dataset_id, qrels)
        return list(self.measures.names), []

    def ordered_subsets(self, names) -> list[str]:
        """Subset names in the paper's order; others after them, sorted."""
        rank = {name: i for i, name in enumerate(self.breakdown.subsets)}
        return sorted(set(names), key=lambda name: (rank.get(name, len(rank)), name))

    def paper_name(self, measure: str) -> str:
        return self.measures.paper_names.get(measure, measure)

    def citation(self) -> str | None:
        """The BibTeX entry of the benchmark's paper, from its docs YAML (None without one)."""
        import yaml

        try:
            data = yaml.safe_load(pkgutil.get_data("ir_datasets_ext", self.docs)) or {}
        except FileNotFoundError:
            return None
        bibtex = (data.get("_") or {}).get("bibtex")
        return bibtex.strip() if bibtex else None

    def reported_for(self, dataset_id: str, subset: str | None = None) -> list[Reported]:
        """The paper's numbers on ``dataset_id`` (for one subset, or the whole dataset when None)."""
        return [r for r in self.paper.reported if r.dataset == dataset_id and r.subset == subset]

    def reported_systems(self, dataset_id: str | None = None) -> list[str]:
        """The systems the paper reports numbers for (on ``dataset_id`` only, when given), in the spec's order."""
        systems = [r.system for r in self.paper.reported if dataset_id is None or r.dataset == dataset_id]
        return list(dict.fromkeys(systems))

    def is_negation(self, value) -> bool | None:
        """Whether a query whose negation-split field has ``value`` is a negation query (None: no split)."""
        split = self.breakdown.negation_split
        return None if split is None else value in split[1]


_BENCHMARKS: dict[str, Benchmark] = {}


def main_measure(dataset_id: str, measures=None) -> str:
    """The main measure of ``dataset_id`` (:data:`GENERIC_MAIN_MEASURE` without a spec); of the ``measures`` an
    evaluation computed, the first where they leave that one out."""
    spec = benchmark_of(dataset_id)
    main = spec.measures.main if spec is not None else GENERIC_MAIN_MEASURE
    return measures[0] if measures and main not in measures else main


def register_benchmark(spec: Benchmark) -> Benchmark:
    """Add a benchmark's spec to the registry (once per name); returns it, for ``SPEC = register_benchmark(...)``."""
    if spec.name in _BENCHMARKS and _BENCHMARKS[spec.name] is not spec:
        raise ValueError(f"a benchmark named {spec.name!r} is already registered")
    _BENCHMARKS[spec.name] = spec
    return spec


def unregister_benchmark(name: str) -> None:
    _BENCHMARKS.pop(name, None)


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark, by :attr:`Benchmark.order`, then in registration order."""
    return sorted(_BENCHMARKS.values(), key=lambda spec: spec.order)


def benchmark_of(dataset_id: str) -> Benchmark | None:
    """The benchmark that owns ``dataset_id`` (the longest matching name), or None."""
    owners = [spec for spec in _BENCHMARKS.values() if spec.owns(dataset_id)]
    return max(owners, key=lambda spec: len(spec.name)) if owners else None
