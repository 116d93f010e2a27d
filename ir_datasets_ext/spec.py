"""The one declaration of each benchmark: its spec.

A dataset family (``comlq``, ``excluir``, ...) declares one :class:`Benchmark` next to its ir_datasets
wiring, as ir_datasets keeps ``NAME`` and ``QREL_DEFS`` beside each family, and registers it with
:func:`register_benchmark`. The numbers its paper reports are data, not code: ``etc/reported/<name>.csv``,
read by :func:`read_reported`. Everything else reads the spec: the default measures and subsets of
``negplugins evaluate``, the leaderboard pages and their index, the command line's help and the README's
benchmark table and default measures (rendered by ``negplugins.doc_blocks``). Adding a benchmark touches its
dataset module, its docs YAML, its files in ``etc/`` and its tests, nothing else; the README's generated blocks are then refreshed with
``python -m negplugins.doc_blocks --write README.md`` (a test fails until they are).

The citation is not repeated here: it is the ``bibtex`` of the family's docs YAML (what ir_datasets shows),
read by :meth:`Benchmark.citation`.
"""

from __future__ import annotations

import csv
import io
import math
import pkgutil
import re
from dataclasses import dataclass, field, fields, replace
from typing import Callable, Mapping

__all__ = ["Benchmark", "Baseline", "Reported", "register_benchmark", "benchmarks", "benchmark_of", "GENERIC_MEASURES",
           "GENERIC_MAIN_MEASURE", "PROTOCOLS", "PYSERINI_BM25", "format_reported", "read_reported", "main_measure"]

#: Measures for a dataset no spec covers (a plain ir_datasets dataset scored by ``negplugins evaluate``).
GENERIC_MEASURES = ("nDCG@10", "RR@10", "R@100")
#: The main measure of such a dataset (its leaderboard's primary column).
GENERIC_MAIN_MEASURE = GENERIC_MEASURES[0]

#: How a benchmark's paper evaluates a system (:attr:`Benchmark.protocol`): ``retrieval`` ranks the whole corpus
#: for each query (a dense model directly, or BM25 then a reranker) and keeps the top :attr:`Benchmark.depth`;
#: ``pairs`` scores each query's own candidate documents (the dataset's scoreddocs: NevIR's two documents).
PROTOCOLS = ("retrieval", "pairs")

_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*(/[a-z0-9_.-]+)*")


@dataclass(frozen=True)
class Reported:
    """One number a benchmark's paper reports, with where it stands in the paper.

    Parameters
    ----------
    system : str
        The system as the paper names it (``"BM25"``, ``"Contriever"``).
    measure : str
        The suite's measure name for what the paper reports (``"nDCG@10"``; BoolQuestions' MRR@10 is
        ``"PosRR@10"``).
    value : float
        The value as a fraction (a paper's 50.5 % is 0.505).
    dataset : str
        The registered dataset id the number is on.
    subset : str, optional
        The subset (value of the benchmark's ``subset_field``) the number is for; None for the dataset.
    source : str
        Provenance in the paper: table (or figure) and row, e.g. ``"Table 3, row BM25"``.
    note : str
        Anything a reader must know to compare (a different protocol, a rounded value).
    decimals : int, optional
        Decimals of the fraction as the paper prints the number (its 34.0 % is ``0.340``: 3); None takes the
        spec's :attr:`Benchmark.reported_decimals`. The number is shown with them (:attr:`printed`).
    """

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
        """The value as the paper prints it, as a fraction (``0.340``, not ``0.34``): :func:`format_reported`."""
        return format_reported(self.value, self.decimals)


#: The folder of the papers' numbers in this package: one CSV per benchmark, ``<name>.csv``, one row per number,
#: the columns named as the fields of :class:`Reported` (an empty ``subset`` or ``decimals`` cell is None).
REPORTED_FOLDER = "etc/reported"


def read_reported(name: str) -> tuple[Reported, ...]:
    """The numbers benchmark ``name``'s paper reports, from ``etc/reported/<name>.csv`` in this package.

    The file is package data (found in a wheel and in an editable install alike). Each row is checked as the
    keyword arguments of a literal ``Reported(...)`` were: the header names every field of :class:`Reported`
    once; ``system``, ``measure``, ``value``, ``dataset`` and ``source`` are filled; ``value`` is a fraction
    (-1 to 1), ``decimals`` empty or a non-negative integer; no number is recorded twice (system, measure,
    dataset, subset). ``tests/test_reported_numbers.py`` then finds each number in its paper's text.

    Raises
    ------
    ValueError
        One line naming the file, the line, the column and what was expected.
    """
    path = f"{REPORTED_FOLDER}/{name}.csv"
    try:
        data = pkgutil.get_data("ir_datasets_ext", path)
    except FileNotFoundError:
        raise ValueError(f"ir_datasets_ext/{path}: not found (the papers' numbers of benchmark {name!r})") from None
    return parse_reported(data.decode("utf-8"), f"ir_datasets_ext/{path}")


def parse_reported(text: str, where: str) -> tuple[Reported, ...]:
    """The :class:`Reported` rows of a CSV text in the layout of :func:`read_reported` (``where`` names it in
    errors), checked as :func:`read_reported` says."""
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
    """A paper's number with the paper's digits: ``decimals`` of them, else as few as it needs (``0.505``).

    The one formatter of the papers' numbers (report cards, leaderboards, reproduction page); ``–`` for None.
    """
    if value is None:
        return "–"
    if decimals is not None:
        return f"{value:.{decimals}f}"
    return f"{round(value, 6):.6f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Baseline:
    """A system the suite computes itself, with no model, beside every model on the report card.

    ``negplugins benchmark`` runs each baseline of a benchmark (:meth:`Benchmark.computed_baselines`) with the
    suite's own runner, on the same data and to the same depth as the model, evaluates it with the same
    measures and counts it in "better than N of M"; the papers' numbers stay context.

    Parameters
    ----------
    name : str
        File-name-safe name of its run (``bm25`` -> ``bm25.trec.gz``).
    runner : {"bm25", "bm25s"}
        ``bm25``: Lucene BM25 through Pyserini (``negplugins search bm25``) at ``parameters``; ``bm25s``: the
        bm25s package (``negplugins search bm25s``) with ``preset``.
    system : str
        How the report card names it.
    parameters : mapping
        The runner's parameters (``bm25``: ``k1``, ``b``).
    preset : str, optional
        The bm25s preset (``comlq-authors``).
    reproduces : str, optional
        The system of the paper this configuration is (as :attr:`Reported.system`).
    authors_pipeline : bool
        It follows the authors' own code or configuration (with ``reproduces``).
    """

    name: str
    runner: str
    system: str
    parameters: Mapping = field(default_factory=dict)
    preset: str | None = None
    reproduces: str | None = None
    authors_pipeline: bool = False

    def __post_init__(self):
        if self.runner not in ("bm25", "bm25s"):
            raise ValueError(f"baseline {self.name!r}: runner {self.runner!r} is not bm25 or bm25s")
        if self.authors_pipeline and not self.reproduces:
            raise ValueError(f"baseline {self.name!r}: authors_pipeline without reproduces (which system?)")


#: Stock Pyserini BM25 at its defaults (``negplugins search bm25``): every full-corpus benchmark's first baseline.
PYSERINI_BM25 = Baseline(name="bm25", runner="bm25", system="BM25 (Pyserini defaults: Lucene, k1 0.9, b 0.4)",
                         parameters={"k1": 0.9, "b": 0.4})


#: ``(dataset_id, qrels or None) -> (measure names, notes)``: a benchmark's own choice of measures where
#: it depends on the data (ComLQ adds LSNC@100 only where the qrels hold explicit negatives).
MeasuresHook = Callable[[str, "Mapping | None"], "tuple[list[str], list[str]]"]


@dataclass(frozen=True)
class Benchmark:
    """Everything the suite knows about one benchmark, declared once.

    Parameters
    ----------
    name : str
        The family: the first component of its dataset ids (``"comlq"`` for ``comlq/2in``).
    title : str
        Display name (``"ComLQ"``).
    summary : str
        What it tests, in a few words (the leaderboard index and the README table).
    paper : str
        Short reference (``"Xu et al., AAAI 2026"``).
    paper_url : str
        Link to the paper.
    data_url : str
        Where the benchmark's data is published (its repository or dataset page); the leaderboards link it.
    datasets : tuple of str
        The registered ids worth listing, whole benchmark first (the README table and docs).
    measures : tuple of str
        Default measures in the paper's order (ir_measures syntax, as the suite's evaluation names them).
    main_measure : str
        The benchmark's headline measure, one of :attr:`measures` (as MTEB's ``TaskMetadata.main_score``): the
        leaderboards' primary column and sort key, the report card's number, MTEB's ``main_score``.
    paper_names : mapping
        The paper's name for a measure where it differs from the suite's (``{"RR@10": "MRR@10"}``).
    subset_field : str, optional
        The query field whose values split the benchmark into subsets (``"structure"``).
    subsets : tuple of str
        Those values in the paper's order (others follow, sorted).
    negatives : str
        What an explicit negative (relevance -1) means in this benchmark, or ``"none"``.
    language : str
        ISO 639-1 code of its queries and documents.
    docs : str
        The docs YAML, relative to this package, whose ``_`` entry holds the citation.
    reported : tuple of Reported
        The numbers its paper reports, for reference rows beside the leaderboards (``read_reported(name)``).
    reproduction_notes : mapping
        Why the suite's number for a system of the paper differs from the paper's, system (as in
        :attr:`Reported.system`) -> one paragraph of facts (the reproduction page shows it beside the gap).
    doc_field : str, optional
        A categorical field of its documents (ComLQ ``origin``): the leaderboards break each run's top 10
        down by its values (``negplugins evaluate --by-doc-field`` does it for any such field).
    doc_field_without : tuple of str
        Values of :attr:`doc_field` whose documents the leaderboards also remove before scoring again
        (ComLQ ``generated``: the LLM-written passages).
    negation_split : tuple, optional
        ``(query field, values)``: the queries whose field has one of the values are the negation queries,
        the others the queries without negation (ComLQ ``("has_negation", (True,))``); evaluations and
        leaderboards give both aggregates.
    measures_hook : callable, optional
        Replaces :attr:`measures` where the benchmark's choice depends on the dataset id or its qrels.
    measures_note : str
        What :attr:`measures_hook` adds to :attr:`measures`, in a few words for the help and the README
        (measure names in backticks); empty without a hook.
    protocol : {"retrieval", "pairs"}
        How the paper evaluates a system (:data:`PROTOCOLS`); ``negplugins benchmark`` runs it.
    depth : int
        Documents kept per query: the retrieval depth of the paper's protocol (the run's hits, and the
        top k a reranker rescores), or the candidates per query of the ``pairs`` protocol.
    protocol_datasets : tuple of str
        The registered ids ``negplugins benchmark`` runs the protocol on, the ones the paper reports on
        (BoolQuestions: both corpora); empty: the first id of :attr:`datasets`.
    license : str
        The data's licence as its source states it, a lowercase SPDX-style id (``"mit"``, ``"cc-by-sa-3.0"``);
        empty when the source states none. MTEB's task metadata reads it (:mod:`negplugins.mteb`).
    data_revision : str
        The revision of :attr:`data_url` the loaders read (a commit, or the branch where no commit is pinned);
        empty when the source has no revisions (a file on a web server or a drive).
    baselines : tuple of Baseline
        Systems without a model the report card computes beside the model, after :data:`PYSERINI_BM25` (which
        every ``retrieval`` benchmark gets): the authors' own pipeline where the suite has it as a preset
        (ComLQ's ``bm25s`` ``comlq-authors``). See :meth:`computed_baselines`.
    not_reproduced : tuple of str
        Systems of the paper (as :attr:`Reported.system`) whose reported numbers the suite could not reproduce
        on the released data; :attr:`reproduction_notes` says what was tried. The report card marks their
        numbers "not reproduced here".
    reported_decimals : int, optional
        Decimals of the fractions as the paper prints its numbers (ComLQ's 50.5 %: 3), for the
        :attr:`reported` numbers without their own :attr:`Reported.decimals`.
    """

    name: str
    title: str
    summary: str
    paper: str
    paper_url: str
    datasets: tuple[str, ...]
    measures: tuple[str, ...]
    main_measure: str = ""
    paper_names: Mapping[str, str] = field(default_factory=dict)
    subset_field: str | None = None
    subsets: tuple[str, ...] = ()
    negatives: str = "none"
    data_url: str = ""
    language: str = "en"
    docs: str | None = None
    reported: tuple[Reported, ...] = ()
    reproduction_notes: Mapping[str, str] = field(default_factory=dict)
    doc_field: str | None = None
    doc_field_without: tuple[str, ...] = ()
    negation_split: tuple[str, tuple] | None = None
    measures_hook: MeasuresHook | None = field(default=None, repr=False, compare=False)
    measures_note: str = ""
    protocol: str = "retrieval"
    depth: int = 100
    protocol_datasets: tuple[str, ...] = ()
    license: str = ""
    data_revision: str = ""
    baselines: tuple[Baseline, ...] = ()
    not_reproduced: tuple[str, ...] = ()
    reported_decimals: int | None = None

    def __post_init__(self):
        self._check_fields()
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"benchmark {self.name!r}: protocol {self.protocol!r} is not one of {', '.join(PROTOCOLS)}")
        if not (isinstance(self.depth, int) and self.depth >= 1):
            raise ValueError(f"benchmark {self.name!r}: depth {self.depth!r} is not a positive integer")
        unexplained = [system for system in self.not_reproduced if system not in self.reproduction_notes]
        if unexplained:
            raise ValueError(f"benchmark {self.name!r}: {unexplained[0]!r} is not reproduced but has no "
                             "reproduction_notes entry saying what was tried")
        names = [baseline.name for baseline in self.computed_baselines()]
        if len(set(names)) != len(names):
            raise ValueError(f"benchmark {self.name!r}: two baselines named alike ({', '.join(names)})")
        if self.reported_decimals is not None:  # each number printed with the paper's digits
            object.__setattr__(self, "reported", tuple(
                r if r.decimals is not None else replace(r, decimals=self.reported_decimals) for r in self.reported))

    def _check_fields(self) -> None:
        """Each field holds what its description says; a ValueError names the spec and the field otherwise."""
        if not (isinstance(self.name, str) and _NAME.fullmatch(self.name)):
            raise ValueError(f"benchmark {self.name!r}: name is not a dataset id family (lowercase, digits, -_./)")
        for name in ("title", "summary", "paper", "paper_url", "data_url", "negatives", "language", "measures_note",
                     "license", "data_revision"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"benchmark {self.name!r}: {name} is {getattr(self, name)!r}, expected text")
        if not self.title.strip():
            raise ValueError(f"benchmark {self.name!r}: title is empty")
        for name in ("datasets", "measures", "subsets", "doc_field_without", "protocol_datasets", "not_reproduced"):
            value = getattr(self, name)
            if not (isinstance(value, tuple) and all(isinstance(item, str) and item for item in value)):
                raise ValueError(f"benchmark {self.name!r}: {name} is {value!r}, expected a tuple of names")
            if len(set(value)) != len(value):
                raise ValueError(f"benchmark {self.name!r}: {name} names one twice ({', '.join(value)})")
        if not self.measures:
            raise ValueError(f"benchmark {self.name!r}: measures is empty (the paper's measures, main one included)")
        if not self.main_measure:
            raise ValueError(f"benchmark {self.name!r}: main_measure is not given (its headline measure, one of "
                             f"{', '.join(self.measures)})")
        if self.main_measure not in self.measures:
            raise ValueError(f"benchmark {self.name!r}: main_measure {self.main_measure!r} is not one of its measures "
                             f"({', '.join(self.measures)})")
        unknown = [m for m in self.paper_names if m not in self.measures]
        if unknown:
            raise ValueError(f"benchmark {self.name!r}: paper_names names {unknown[0]!r}, not one of its measures")
        foreign = [d for d in self.datasets + self.protocol_datasets if not self.owns(d)]
        if foreign:
            raise ValueError(f"benchmark {self.name!r}: datasets or protocol_datasets name {foreign[0]!r}, which is "
                             f"not {self.name} nor below it")
        if self.subsets and not self.subset_field:
            raise ValueError(f"benchmark {self.name!r}: subsets without a subset_field (which query field?)")
        if self.doc_field_without and not self.doc_field:
            raise ValueError(f"benchmark {self.name!r}: doc_field_without without a doc_field")
        if self.negation_split is not None and not (
                isinstance(self.negation_split, tuple) and len(self.negation_split) == 2
                and isinstance(self.negation_split[0], str) and isinstance(self.negation_split[1], tuple)):
            raise ValueError(f"benchmark {self.name!r}: negation_split is {self.negation_split!r}, expected "
                             "(query field, tuple of values)")
        if bool(self.measures_note) and self.measures_hook is None:
            raise ValueError(f"benchmark {self.name!r}: measures_note without a measures_hook (what adds it?)")
        for reported in self.reported:
            if not isinstance(reported, Reported):
                raise ValueError(f"benchmark {self.name!r}: reported holds {reported!r}, expected Reported numbers")
            if not self.owns(reported.dataset) or (reported.subset is not None and reported.subset not in self.subsets):
                raise ValueError(f"benchmark {self.name!r}: reported number {reported.system} {reported.measure} "
                                 f"({reported.source}) is on {reported.dataset} {reported.subset or ''}, not on a "
                                 "dataset or subset of the benchmark")

    def computed_baselines(self) -> tuple[Baseline, ...]:
        """The baselines the report card computes: :data:`PYSERINI_BM25` for a ``retrieval`` benchmark, then
        :attr:`baselines` (a ``pairs`` benchmark gets only its own: BM25 ranks a corpus, not a query's pair)."""
        return ((PYSERINI_BM25,) if self.protocol == "retrieval" else ()) + tuple(self.baselines)

    def is_reproduced(self, system: str) -> bool:
        """False for a system of the paper whose numbers the suite could not reproduce (:attr:`not_reproduced`)."""
        return system not in self.not_reproduced

    def benchmark_datasets(self) -> tuple[str, ...]:
        """The dataset ids the benchmark's protocol runs on (:attr:`protocol_datasets`, else the first listed id)."""
        return self.protocol_datasets or self.datasets[:1]

    def owns(self, dataset_id: str) -> bool:
        """Whether ``dataset_id`` belongs to this benchmark (``comlq`` owns ``comlq`` and ``comlq/2in``)."""
        return dataset_id == self.name or dataset_id.startswith(self.name + "/")

    def default_measures(self, dataset_id: str, qrels: Mapping | None = None) -> tuple[list[str], list[str]]:
        """``(measure names, notes)`` for ``dataset_id``: :attr:`measures`, or what the hook chooses."""
        if self.measures_hook is not None:
            return self.measures_hook(dataset_id, qrels)
        return list(self.measures), []

    def ordered_subsets(self, names) -> list[str]:
        """Subset names in the paper's order (:attr:`subsets`); others after them, sorted."""
        rank = {name: i for i, name in enumerate(self.subsets)}
        return sorted(set(names), key=lambda name: (rank.get(name, len(rank)), name))

    def paper_name(self, measure: str) -> str:
        """The paper's name for ``measure`` (the suite's name where the paper uses the same)."""
        return self.paper_names.get(measure, measure)

    def citation(self) -> str | None:
        """The BibTeX entry of the benchmark's paper, from its docs YAML (None without one)."""
        if self.docs is None:
            return None
        import yaml

        data = yaml.safe_load(pkgutil.get_data("ir_datasets_ext", self.docs)) or {}
        bibtex = (data.get("_") or {}).get("bibtex")
        return bibtex.strip() if bibtex else None

    def reported_for(self, dataset_id: str, subset: str | None = None) -> list[Reported]:
        """The paper's numbers on ``dataset_id`` (for one subset, or the whole dataset when None)."""
        return [r for r in self.reported if r.dataset == dataset_id and r.subset == subset]

    def reported_systems(self, dataset_id: str | None = None) -> list[str]:
        """The systems the paper reports numbers for (on ``dataset_id`` only, when given), in the spec's order."""
        systems = [r.system for r in self.reported if dataset_id is None or r.dataset == dataset_id]
        return list(dict.fromkeys(systems))

    def is_negation(self, value) -> bool | None:
        """Whether a query whose :attr:`negation_split` field has ``value`` is a negation query (None: no split)."""
        if self.negation_split is None:
            return None
        return value in self.negation_split[1]


_BENCHMARKS: dict[str, Benchmark] = {}


def main_measure(dataset_id: str, measures=None) -> str:
    """The main measure of ``dataset_id``: its benchmark's :attr:`Benchmark.main_measure`, else
    :data:`GENERIC_MAIN_MEASURE`; given the ``measures`` an evaluation computed, the first of them where they
    leave that one out (a user's own choice of measures)."""
    spec = benchmark_of(dataset_id)
    main = spec.main_measure if spec is not None else GENERIC_MAIN_MEASURE
    return measures[0] if measures and main not in measures else main


def register_benchmark(spec: Benchmark) -> Benchmark:
    """Add a benchmark's spec to the registry (once per name); returns it, for ``BENCHMARK = register_...``."""
    if spec.name in _BENCHMARKS and _BENCHMARKS[spec.name] is not spec:
        raise ValueError(f"a benchmark named {spec.name!r} is already registered")
    _BENCHMARKS[spec.name] = spec
    return spec


def unregister_benchmark(name: str) -> None:
    """Remove a spec (for tests that register a toy benchmark)."""
    _BENCHMARKS.pop(name, None)


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark, in registration order (the suite's own five first, then the demo)."""
    return list(_BENCHMARKS.values())


def benchmark_of(dataset_id: str) -> Benchmark | None:
    """The benchmark that owns ``dataset_id`` (the longest matching name), or None."""
    owners = [spec for spec in _BENCHMARKS.values() if spec.owns(dataset_id)]
    return max(owners, key=lambda spec: len(spec.name)) if owners else None
