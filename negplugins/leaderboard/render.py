"""The files of ``negplugins leaderboard build``: per dataset ``<slug>.json``, ``.md`` and ``.html``, the index and
the reproduction page; each table built once here, written as Markdown and HTML by ``templates/``."""

from __future__ import annotations

from pathlib import Path

from ir_datasets_ext.derived import DERIVED

from ..evaluation.significance import ALPHA
from ..measures import per_pair
from ..rendering import text
from ..rendering.charts import PALETTE, grouped_bar_chart, stacked_bar
from ..rendering.page import Alt, Body, Cell, Label, Link, Marked, Name, Raw, Ref, Row, Strong, Table, html_document
from ..rendering.page import template_environment as _environment
from ..rendering.text import html_text as _e
from ..rendering.text import markdown_text as _md
from ..rendering.text import number, signed
from . import board
from .board import REPORTED_LABEL, best_runs, index_record, reproduction_record

__all__ = ["json_text", "markdown", "html_page", "best_runs", "index_record", "index_markdown", "index_html",
           "reproduction_record", "reproduction_markdown", "reproduction_html"]

_FOLDER = Path(__file__).parent
_TEMPLATES = _environment(_FOLDER)
#: Runs drawn in a chart (one colour each); the tables list them all.
MAX_CHART_RUNS = len(PALETTE)


def json_text(record) -> str:
    """A record as a leaderboard's JSON file: keys sorted, so that a rebuild from the same runs gives the same bytes."""
    return text.json_text(record, sort_keys=True)


def _number(value, **cell) -> Cell:
    """A sortable number cell."""
    return Cell(number(value), cls="num", value=value, **cell)


def _head(content, sort=None, numeric=False, cls=None, **cell) -> Cell:
    """A header cell of a sortable table (``sort``: its ``data-type``)."""
    return Cell(content, sort=sort, cls=("num" if numeric else "") if cls is None else cls, **cell)


def _reported_cell(entry) -> Cell:
    """A number reported in the paper, its source as the cell's title (not sortable)."""
    if entry is None:
        return Cell("–", cls="num")
    return Cell(Raw(entry["printed"]), cls="num", title=board.source_text(entry))


def _system(run) -> list | str:
    if not run.reproduces:
        return run.system
    return [run.system, Alt(f" (reproduces {_md(run.reproduces)})",
                            f" <span class=\"repro\">reproduces {_e(run.reproduces)}</span>")]


def _name_row(run, cells, **attrs) -> Row:
    return Row([Cell(Name(run.name)), *cells], attrs)


class BoardPage:
    """A dataset's leaderboard page: its tables, built once from the record."""

    def __init__(self, record):
        self.record = record
        paper = record.paper or {}
        reference = paper.get("reference") or "the paper"
        self.paper_link = Link(reference, paper["url"]) if paper.get("url") else reference
        self.sources: list[tuple[int, list]] = []
        self.runs = self._runs_table()
        self.reported = self._reported_table()
        self.per_query = self._per_query_table()
        self.reproductions = self._reproductions_table()
        self.subsets = self._subset_sections()
        self.doc_field = self._doc_field_table()
        self.negation = self._negation_table()

    def _source(self, content) -> Ref:
        self.sources.append((len(self.sources) + 1, content))
        return Ref(len(self.sources))

    def _run_columns(self) -> list[tuple[Cell, object]]:
        """The leaderboard's columns, left to right: ``(header, cell of (position, run))``. A column is one entry."""
        record = self.record
        measures, extra = record.measures, board.paper_only_measures(record)
        best = {m: best_runs(record, m) for m in measures}
        order = {m: "asc" if m in record.lower_is_better else "desc" for m in [*measures, *extra]}
        columns = [(_head("#", "number", True, order="asc"), lambda i, run: Cell(str(i), cls="num", value=i)),
                   (_head("System", "text"), lambda i, run: Cell(_system(run))),
                   (_head("Run", "text"), lambda i, run: Cell([Name(run.name), " (baseline)"
                                                               if run.name == record.baseline else ""])),
                   (_head("Runner", "text"), lambda i, run: Cell(run.runner))]
        columns += [(_head(Alt(_md(board.measure_label(record, m)), _e(board.label_with_paper(record, m))), "number",
                           True, order=order[m]),
                     lambda i, run, m=m: Cell(number(run.overall[m]) + ("†" if board.differs_from_baseline(run, m)
                                                                         else ""), cls="num", value=run.overall[m],
                                              best=run.name in best[m], title=self._test_title(run, m)))
                    for m in measures]
        columns += [(_head(board.label_with_paper(record, m), "number", True, cls="num paper-only", only="html",
                           order=order[m]),
                     lambda i, run: Cell("–", cls="num", value=None, title="not computed for the runs", only="html"))
                    for m in extra]
        columns.append((_head("Date", "text", cls="date"), lambda i, run: Cell(run.date, cls="date")))
        return columns

    def _runs_table(self) -> Table:
        record = self.record
        columns = self._run_columns()
        head = [header for header, _ in columns]
        rows = [Row([cell(i, run) for _, cell in columns], {"data-run": run.name})
                for i, run in enumerate(record.runs, start=1)]
        if not rows:
            rows.append(Row([Cell("No contributed run yet.", colspan=len(head))], {"class": "empty"}, only="html"))
        measures, extra = record.measures, board.paper_only_measures(record)
        bodies = [Body(rows)]
        systems = board.reported_by_system(record)
        if systems:
            reported = [Row([Cell(["Reported in the paper (", self.paper_link, "): not ranked, not tested against "
                                   "the runs"], header=True, colspan=len(head), scope="rowgroup")],
                            {"class": "reported-head"})]
            for system, values in systems.items():
                ref = self._source([Strong(system), ": " + "; ".join(
                    f"{values[m]['paper_measure']} {values[m]['printed']}: {board.source_text(values[m])}"
                    for m in [*measures, *extra] if m in values)])
                reported.append(Row([Cell(None, cls="num rank"), Cell([system, ref]), Cell(Label(REPORTED_LABEL)),
                                     Cell(self.paper_link), *(_reported_cell(values.get(m)) for m in [*measures, *extra]),
                                     Cell(None)], {"class": "reported", "data-system": system}))
            bodies.append(Body(reported, {"class": "reported"}, only="html"))
        return Table(head, bodies, {"id": "leaderboard", "class": "sortable"})

    def _test_title(self, run, measure) -> str | None:
        test = (run.vs_baseline or {}).get(measure)
        if not test or test["mean_diff"] is None:
            return None
        ci = test["ci95"]
        return (f"vs {self.record.baseline}: diff {signed(test['mean_diff'])}, 95% CI [{number(ci[0])}, "
                f"{number(ci[1])}], p (randomization, Holm) {number(test['p_randomization_holm'])}, n={test['n']}")

    def _reported_table(self) -> Table | None:
        """The paper's numbers as the Markdown page's own table (the HTML page has them in the leaderboard)."""
        record = self.record
        systems = board.reported_by_system(record)
        if not systems:
            return None
        measures = [m for m in [*record.measures, *board.paper_only_measures(record)]
                    if any(m in values for values in systems.values())]
        rows = [Row([Cell(Marked(system)), *(Cell(Raw(values[m]["printed"]) if m in values else "–") for m in measures),
                     Cell("; ".join(dict.fromkeys(board.source_text(values[m]) for m in measures if m in values)))])
                for system, values in systems.items()]
        head = [Cell("System"), *(Cell(board.label_with_paper(record, m), cls="num") for m in measures),
                Cell("Source")]
        return Table.of(head, rows)

    def _per_query_table(self) -> Table | None:
        record = self.record
        tested = [(run, run.vs_baseline) for run in record.runs if run.vs_baseline]
        if not tested:
            return None
        head = [Cell("Run"), *(Cell(board.measure_label(record, m), cls="num") for m in record.measures)]
        rows = [_name_row(run, [Cell(board.wins_losses_text(tests.get(m)), cls="num wlt",
                                     title=self._wins_title(tests.get(m), m)) for m in record.measures],
                          **{"data-run": run.name}) for run, tests in tested]
        return Table.of(head, rows, id="per-query")

    def _wins_title(self, test, measure) -> str | None:
        if not test or "wins" not in test:
            return None
        units = "pairs" if per_pair(measure) else "queries"
        return (f"{test['wins']} {units} better than {self.record.baseline}, {test['losses']} worse, "
                f"{test['ties']} equal, of {test['n']}")

    def _reproductions_table(self) -> Table | None:
        rows = self.record.reproductions or []
        if not rows:
            return None
        head = [Cell("Run"), Cell("Reproduces"), Cell("Measure"), Cell("Subset"),
                *(Cell(name, cls="num") for name in ("Paper", "Run", "Gap")), Cell("Source")]
        return Table.of(head, [Row([
            Cell(Name(r["run"])), Cell([r["system"], " (authors’ pipeline)" if r["authors_pipeline"] else ""]),
            Cell(r["measure"]), Cell(r["subset"] or "all"), Cell(Raw(r["paper_printed"]), cls="num paper"),
            Cell([number(r["value"]), board.on_copy(r)], cls="num"), Cell(signed(r["gap"]), cls="num gap"),
            Cell(r["source"])]) for r in rows], id="reproductions")

    def _subset_sections(self) -> list[dict]:
        record = self.record
        if not record.subsets:
            return []
        field = record.breakdown_field or "subset"
        subsets = list(record.subsets)
        sections = []
        for m in board.subset_measures(record):
            rows = [_name_row(run, [_number(run.subsets.get(s, {}).get(m)) for s in subsets])
                    for run in record.runs]
            if not rows:
                rows.append(Row([Cell("No contributed run yet.", colspan=len(subsets) + 1)], {"class": "empty"},
                                only="html"))
            bodies = [Body(rows)]
            reported = board.reported_per_subset(record, m)
            if reported:
                bodies.append(Body([Row([Cell([Marked(system), self._source(
                    [Strong(system), f", {m} per {field}: " + "; ".join(board.grouped_sources(values.values()))]),
                    " ", Label(REPORTED_LABEL)]), *(_reported_cell(values.get(s)) for s in subsets)],
                    {"class": "reported", "data-system": system}) for system, values in reported.items()],
                    {"class": "reported"}))
            head = [_head("Run", "text"), *(_head(board.subset_header(record, s), "number", True) for s in subsets)]
            sections.append({"label": board.measure_label(record, m), "reported": reported,
                             "chart": self._bar_chart(m) if record.runs and m in record.measures else "",
                             "table": Table(head, bodies, {"class": "sortable subsets"})})
        return sections

    def _bar_chart(self, measure) -> str:
        """The runs' ``measure`` per subset (the first :data:`MAX_CHART_RUNS` runs by rank)."""
        record = self.record
        subsets = list(record.subsets)
        series = [(run.name, [run.subsets.get(s, {}).get(measure) for s in subsets])
                  for run in record.runs[:MAX_CHART_RUNS]]
        if not any(v is not None for _, values in series for v in values):
            return f"<p class=\"note\">{_e(measure)}: no value in any subset.</p>"
        return grouped_bar_chart(f"{measure} per {record.breakdown_field or 'subset'}", subsets, series)

    def _doc_field_table(self) -> Table | None:
        record, info = self.record, self.record.doc_field
        if not info:
            return None
        primary, values = record.primary, info["values"]
        head = [_head("Run", "text"), *(_head(v, "number", True) for v in values),
                _head(f"Top {info['k']}", "text", only="html"), *([_head(primary, "number", True)] if info["without"] else []),
                *(_head(f"{primary} without {v}", "number", True) for v in info["without"])]
        rows = []
        for run in record.runs:
            d = run.doc_field
            cells = [*(_number(d["shares"].get(v)) for v in values),
                     Cell(Alt(html=stacked_bar(d["shares"], values, run.name)), only="html"),
                     *([_number(run.overall.get(primary))] if info["without"] else []),
                     *(_number(d["without"][v]["overall"].get(primary)) for v in info["without"])]
            rows.append(_name_row(run, cells, **{"data-run": run.name}))
        return Table.of(head, rows, id="doc-field", **{"class": "sortable"})

    def _negation_table(self) -> Table | None:
        split = self.record.negation_split
        if not split:
            return None
        groups, measures = list(split["queries"]), self.record.measures
        head = [_head("Run", "text"), *(_head(Alt(f"{_md(m)} {_md(g)}", f"{_e(m)} {_e(g)} ({split['queries'][g]})"),
                                               "number", True) for m in measures for g in groups)]
        rows = [_name_row(run, [_number((run.negation or {}).get(g, {}).get(m)) for m in measures
                                for g in groups], **{"data-run": run.name}) for run in self.record.runs]
        return Table.of(head, rows, id="negation", **{"class": "sortable"})


def _page(title: str, body: str) -> str:
    assets = _FOLDER / "assets"
    return html_document(title, body, css=(assets / "leaderboard.css").read_text(encoding="utf-8"),
                         script=(assets / "leaderboard.js").read_text(encoding="utf-8"))


def _render(name: str, **context) -> str:
    return _TEMPLATES.get_template(name).render(board=board, ALPHA=ALPHA, REPORTED=REPORTED_LABEL, DERIVED=DERIVED,
                                                PALETTE=PALETTE, MAX_CHART_RUNS=MAX_CHART_RUNS, number=number,
                                                **context)


def markdown(record) -> str:
    return _render("board.md.j2", record=record, page=BoardPage(record)).rstrip("\n") + "\n"


def html_page(record) -> str:
    body = _render("board.html.j2", record=record, page=BoardPage(record))
    return _page(f"Leaderboard: {record.dataset}", body.rstrip("\n"))


def _index_table(records) -> Table:
    head = [_head("Benchmark", "text"), _head("Dataset", "text"), _head("Runs", "number", True),
            _head(Raw("Paper's numbers"), "number", True), _head("Best system", "text"), _head("Measure", "text", only="html"),
            _head("Score", "number", True, only="html"), Cell("Score", cls="num", only="markdown")]
    rows = []
    for family in index_record(records)["benchmarks"]:
        name = Cell(family["title"], title=family["description"])
        if not family["leaderboards"]:
            rows.append(Row([name, Cell("–"), Cell("0", cls="num", value=0), Cell("0", cls="num", value=0),
                             Cell("no runs yet"), Cell(None, only="html"), _number(None, only="html"),
                             Cell("–", only="markdown")]))
        for page in family["leaderboards"]:
            top = page["top"]
            value = top["value"] if top else None
            rows.append(Row([name, Cell(Link(page["dataset"], f"{page['slug']}.html", f"{page['slug']}.md")),
                             Cell(str(page["runs"]), cls="num", value=page["runs"]),
                             Cell(str(page["reported"]), cls="num", value=page["reported"]),
                             Cell(top["system"] if top else "no runs yet"), Cell(page["primary"], only="html"),
                             _number(value, only="html"), Cell(f"{page['primary']} {number(value)}", only="markdown")]))
    return Table.of(head, rows, id="index", **{"class": "sortable"})


def index_markdown(records) -> str:
    return _render("index.md.j2", table=_index_table(records))


def index_html(records) -> str:
    return _page("negplugins leaderboards", _render("index.html.j2", table=_index_table(records)).rstrip("\n"))


def _runs_cell(entries) -> Cell:
    if not entries:
        return Cell("–")
    return Cell(Alt("<br>".join(f"{_md(e['run'])} {number(e['value'])} ({signed(e['gap'])}{board.on_copy(e)})"
                                for e in entries),
                    "<br>".join(f"<code>{_e(e['run'])}</code> <span class=\"num\">{number(e['value'])}</span> "
                                f"<span class=\"gap\">({signed(e['gap'])}{_e(board.on_copy(e))})</span>"
                                for e in entries)))


def _reproduction_table(family) -> Table:
    head = [Cell("Dataset"), Cell("System"), Cell("Measure"), Cell("Subset"),
            Cell(Alt("Paper", f"Paper ({REPORTED_LABEL})"), cls="num"), Cell("This suite (gap)"),
            Cell(Raw("Authors' pipeline (gap)")), Cell("Source")]
    rows = [Row([Cell(Link(row["dataset"], f"{row['slug']}.html", f"{row['slug']}.md")),
                 Cell(row["system"], cls="reported"), Cell(row["paper_measure"]), Cell(row["subset"] or "all"),
                 Cell(Raw(row["paper_printed"]), cls="num reported", title=board.source_text(row)),
                 _runs_cell(row["suite"]), _runs_cell(row["authors"]), Cell(board.source_text(row), cls="source")],
                {"class": "reproduction", "data-system": row["system"]}) for row in family["rows"]]
    return Table.of(head, rows, **{"class": "reproduction", "id": f"reproduction-{family['family']}"})


def _reproduction_context(records) -> dict:
    data = reproduction_record(records)
    families = [{**family, "link": Link(family["paper"], family["paper_url"]) if family["paper_url"]
                 else family["paper"], "table": _reproduction_table(family) if family["rows"] else None}
                for family in data["benchmarks"]]
    return {"data": data, "families": families}


def reproduction_markdown(records) -> str:
    return _render("reproduction.md.j2", **_reproduction_context(records)).rstrip("\n") + "\n"


def reproduction_html(records) -> str:
    return _page("Reproducing the papers", _render("reproduction.html.j2", **_reproduction_context(records)).rstrip("\n"))
