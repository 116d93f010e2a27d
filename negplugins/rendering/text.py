"""Numbers, escaped text and JSON as the suite writes them, in every format: a name such as ``<script>`` or
``a|b`` is shown as itself, never run and never read as markup.
"""

from __future__ import annotations

import html
import json
import math
import numbers
import re

__all__ = ["finite", "number", "signed", "p_value", "best_marks", "html_text", "markdown_text", "markdown_code",
           "markdown_href", "latex_text", "json_text"]

#: What a table shows where a number is missing (no value, or NaN: no query eligible).
MISSING = "–"


# -- numbers ----------------------------------------------------------------------------------------

def finite(value):
    """``value`` when it is a finite real number (``int``, ``float``, a NumPy scalar), else None."""
    return value if isinstance(value, numbers.Real) and math.isfinite(value) else None


def number(value, digits: int = 4, missing: str = MISSING) -> str:
    """``0.5855``: a value at ``digits`` decimals; ``missing`` for None, NaN, an infinity or a non-number."""
    return missing if finite(value) is None else f"{value:.{digits}f}"


def signed(value, digits: int = 4, missing: str = MISSING) -> str:
    """``+0.0350`` / ``-0.0702``: a difference with its sign; ``missing`` as :func:`number`."""
    return missing if finite(value) is None else f"{value:+.{digits}f}"


def p_value(value, missing: str = MISSING, below: str = "< 0.0001") -> str:
    """A p-value at 4 decimals, ``below`` when under 0.0001 (the plain-text table writes it ``<0.0001``)."""
    if finite(value) is None:
        return missing
    return below if value < 1e-4 else f"{value:.4f}"


def best_marks(values, lower_is_better: bool = False, digits: int = 4) -> list[bool]:
    """Which values of one column are marked best: those that show, at ``digits`` decimals, as the best value
    (smallest or largest); none when all values show the same. ``None`` and NaN never are.
    """
    shown = [None if v is None or math.isnan(v) else f"{v:.{digits}f}" for v in values]
    present = [v for v, text in zip(values, shown) if text is not None]
    if len({text for text in shown if text is not None}) < 2:
        return [False] * len(values)
    best = f"{(min(present) if lower_is_better else max(present)):.{digits}f}"
    return [text == best for text in shown]


# -- escaping ---------------------------------------------------------------------------------------

def html_text(text) -> str:
    """Any value as HTML text or a quoted attribute value: ``& < > " '`` escaped (``html.escape``)."""
    return html.escape(str(text), quote=True)


#: An ``&`` that a Markdown renderer would read as the start of an entity (``&amp;``, ``&#39;``).
_ENTITY_START = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_MARKDOWN = {"<": "&lt;", ">": "&gt;", **{c: "\\" + c for c in "\\`*_[]|"}}


def markdown_text(text) -> str:
    """Any text as one line of Markdown that renders as the text itself: whitespace runs as one space, ``< >`` as
    entities, Markdown's markup characters and an entity's ``&`` backslash-escaped.
    """
    text = _ENTITY_START.sub("\x00", " ".join(str(text).split()))
    return "".join(_MARKDOWN.get(c, c) for c in text).replace("\x00", "\\&")


def markdown_code(text) -> str:
    """Text as ``<code>`` in a Markdown table cell (``|`` as ``&#124;``, whitespace runs as one space)."""
    return "<code>" + html.escape(" ".join(str(text).split()), quote=False).replace("|", "&#124;") + "</code>"


def markdown_href(href: str) -> str:
    """A relative link of the suite's own making, for a Markdown link target (spaces and parentheses escaped)."""
    return href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_text(text) -> str:
    """Any text as LaTeX that typesets as itself (its ten special characters escaped)."""
    return "".join(_LATEX.get(c, c) for c in str(text))


# -- JSON -------------------------------------------------------------------------------------------

def json_text(record, *, indent: int = 2, sort_keys: bool = False) -> str:
    """``record`` as the suite writes JSON: indented, UTF-8 as is, one final newline; NaN refused."""
    return json.dumps(record, indent=indent, ensure_ascii=False, sort_keys=sort_keys, allow_nan=False) + "\n"
