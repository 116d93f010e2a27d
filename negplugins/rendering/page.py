"""The suite's page model: tables of typed cells and inline text, written once as Markdown and once as HTML
(:class:`Markdown`, :class:`Html`); Jinja2 templates lay the pages out (:func:`template_environment`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from .text import finite, html_text, markdown_code, markdown_href, markdown_text, number

__all__ = ["Alt", "BREAK", "Body", "Cell", "Code", "Html", "Interval", "Label", "Link", "Markdown", "Marked", "Name",
           "Raw", "Ref", "Row", "Strong", "Table", "html_document", "template_environment"]


@dataclass
class Code:
    """Code in both formats (``<code>``)."""
    text: str


@dataclass
class Name:
    """A run's name: code in HTML, plain text in Markdown."""
    text: str


@dataclass
class Strong:
    content: object


@dataclass
class Marked:
    """Emphasis of Markdown only (``mark`` on both sides: a paper's number in italics); in HTML the row's class
    styles it."""
    content: object
    mark: str = "*"


@dataclass
class Label:
    """A small label: ``(text)`` in Markdown, a ``span`` of class ``cls`` in HTML."""
    text: str
    cls: str = "label"


@dataclass
class Interval:
    """A mean with the half-width of its 95% interval: ``0.5855 ± 0.0112`` (the ``±`` part is dimmed in HTML)."""
    value: object
    half: float | None


@dataclass
class Link:
    content: object
    href: str
    markdown_href: str | None = None


@dataclass
class Ref:
    """A numbered reference to a source listed below the table (HTML only)."""
    number: int


@dataclass
class Raw:
    """Text written as it is in both formats (a paper's printed number)."""
    text: str


@dataclass
class Alt:
    """Text already written for each format (not escaped again)."""
    markdown: str = ""
    html: str = ""


#: A line break in a header cell of HTML, a space in Markdown.
BREAK = Alt(" ", "<br>")


_NO_VALUE = object()


@dataclass
class Cell:
    """A table cell. ``value`` is the sort key of a sortable HTML table (``data-value``); ``best`` marks the best
    value (bold in Markdown, class ``best`` in HTML); class ``num`` right-aligns a column; ``only`` keeps the cell to
    one format."""
    content: object = ""
    cls: str = ""
    value: object = _NO_VALUE
    title: str | None = None
    best: bool = False
    sort: str | None = None
    order: str | None = None
    colspan: int | None = None
    scope: str | None = None
    header: bool = False
    only: str | None = None


@dataclass
class Row:
    cells: list[Cell]
    attrs: dict = field(default_factory=dict)
    only: str | None = None


@dataclass
class Body:
    rows: list[Row]
    attrs: dict = field(default_factory=dict)
    only: str | None = None


@dataclass
class Table:
    head: list[Cell]
    bodies: list[Body]
    attrs: dict = field(default_factory=dict)

    @classmethod
    def of(cls, head, rows, **attrs) -> Table:
        return cls(head, [Body(rows)], attrs)


def _attrs(pairs) -> str:
    return "".join(f" {name}=\"{html_text(value)}\"" for name, value in pairs if value is not None)


def _markdown_words(text: str) -> str:
    """:func:`markdown_text`, keeping one space at either end where ``text`` has one (text joined to other text)."""
    if not text.strip():
        return " " if text else ""
    return (" " if text[0].isspace() else "") + markdown_text(text) + (" " if text[-1].isspace() else "")


def _interval(interval: Interval, half) -> str:
    shown = number(interval.value)
    return shown if interval.half is None or finite(interval.value) is None else shown + half(interval.half)


class Writer:
    """What both writers share: the parts of the model shown in their format, and inline content written by
    ``forms`` (per type of content; :class:`Alt` and the like by the attribute named as the format)."""
    name = ""
    forms: dict = {}

    def shown(self, items) -> list:
        return [item for item in items if item.only in (None, self.name)]

    def inline(self, content) -> str:
        if isinstance(content, list | tuple):
            return "".join(self.inline(part) for part in content)
        form = self.forms.get(str if isinstance(content, str) else type(content))
        return form(self, content) if form else getattr(content, self.name)


class Markdown(Writer):
    """Writes the page model as Markdown (GitHub's flavour)."""
    name = "markdown"
    forms = {
        str: lambda self, text: _markdown_words(text),
        Raw: lambda self, raw: raw.text,
        Code: lambda self, code: markdown_code(code.text),
        Name: lambda self, name: markdown_text(name.text),
        Strong: lambda self, strong: f"**{self.inline(strong.content)}**",
        Marked: lambda self, marked: f"{marked.mark}{self.inline(marked.content)}{marked.mark}",
        Label: lambda self, label: f"({markdown_text(label.text)})",
        Interval: lambda self, interval: _interval(interval, lambda half: f" ± {half:.4f}"),
        Link: lambda self, link: f"[{self.inline(link.content)}]({link.markdown_href or link.href})",
        Ref: lambda self, ref: "",
    }

    def cell(self, cell: Cell) -> str:
        if cell.content is None:
            return " "
        text = self.inline(cell.content)
        return f" **{text}** " if cell.best else f" {text} "

    def table(self, table: Table) -> str:
        head = self.shown(table.head)
        lines = ["|" + "|".join(self.cell(c) for c in head) + "|",
                 "|" + "|".join("---:" if "num" in c.cls.split() else "---" for c in head) + "|"]
        lines += ["|" + "|".join(self.cell(c) for c in self.shown(row.cells)) + "|"
                  for body in self.shown(table.bodies) for row in self.shown(body.rows)]
        return "\n".join(lines)


class Html(Writer):
    """Writes the page model as HTML."""
    name = "html"
    forms = {
        str: lambda self, text: html_text(text),
        Raw: lambda self, raw: raw.text,
        Code: lambda self, code: f"<code>{html_text(code.text)}</code>",
        Name: lambda self, name: f"<code>{html_text(name.text)}</code>",
        Strong: lambda self, strong: f"<b>{self.inline(strong.content)}</b>",
        Marked: lambda self, marked: self.inline(marked.content),
        Label: lambda self, label: f"<span class=\"{label.cls}\">{html_text(label.text)}</span>",
        Interval: lambda self, interval: _interval(interval, lambda half: f" <span class=\"ci\">± {half:.4f}</span>"),
        Link: lambda self, link: f"<a href=\"{html_text(link.href)}\">{self.inline(link.content)}</a>",
        Ref: lambda self, ref: f"<sup class=\"source-ref\"><a href=\"#source-{ref.number}\">{ref.number}</a></sup>",
    }

    def cell(self, cell: Cell, tag: str) -> str:
        cls = (cell.cls + " best") if cell.best else cell.cls
        value = None if cell.value is _NO_VALUE else "" if cell.value is None else cell.value
        if isinstance(value, float):
            value = f"{value:.6f}"
        attrs = _attrs([("data-type", cell.sort), ("data-order", cell.order), ("class", cls or None),
                        ("data-value", value), ("title", cell.title), ("colspan", cell.colspan), ("scope", cell.scope)])
        tag = "th" if cell.header else tag
        return f"<{tag}{attrs}>{self.inline(cell.content or '')}</{tag}>"

    def row(self, row: Row) -> str:
        return f"<tr{_attrs(row.attrs.items())}>" + "".join(self.cell(c, "td") for c in self.shown(row.cells)) + "</tr>"

    def table(self, table: Table) -> str:
        head = "".join(self.cell(c, "th") for c in self.shown(table.head))
        bodies = "".join(f"<tbody{_attrs(body.attrs.items())}>\n" + "\n".join(self.row(r) for r in self.shown(body.rows))
                         + "\n</tbody>\n" for body in self.shown(table.bodies))
        return f"<table{_attrs(table.attrs.items())}>\n<thead><tr>{head}</tr></thead>\n{bodies}</table>"


def template_environment(package_folder: Path) -> jinja2.Environment:
    """Jinja2 templates of ``package_folder/templates``; templates escape with the ``md`` and ``e`` filters."""
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(package_folder / "templates"),
                                     trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                                     autoescape=False)
    markdown, html = Markdown(), Html()
    environment.filters.update(md=lambda x: markdown_text(x) if isinstance(x, str) else markdown.inline(x),
                               e=html.inline, href=markdown_href, code=markdown_code, md_table=markdown.table,
                               html_table=html.table)
    return environment


def html_document(title: str, body: str, *, css: str, script: str | None = None, generator: str | None = None) -> str:
    """A whole self-contained HTML page: its CSS and script inline, a Content-Security-Policy that loads nothing else."""
    script_policy = " script-src 'unsafe-inline';" if script is not None else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            + (f"<meta name=\"generator\" content=\"{html_text(generator)}\">\n" if generator is not None else "")
            + "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            f"style-src 'unsafe-inline';{script_policy} img-src data:\">\n"
            f"<title>{html_text(title)}</title>\n<style>\n{css}</style>\n</head>\n<body>\n{body}\n"
            + (f"<script>\n{script}</script>\n" if script is not None else "") + "</body>\n</html>\n")
