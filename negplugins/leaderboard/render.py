"""The files of ``negplugins leaderboard build``, by format: JSON, Markdown and self-contained HTML.

Each dataset's record gives ``<slug>.json`` (:func:`json_text`), ``<slug>.md`` (:func:`markdown`) and
``<slug>.html`` (:func:`html_page`); all records together the index (``index.json``, ``README.md``,
``index.html``) and the reproduction page (``reproduction.json``, ``.md``, ``.html``). What the pages say is
decided in :mod:`~negplugins.leaderboard.board`; :mod:`~negplugins.leaderboard.markdown_pages` and
:mod:`~negplugins.leaderboard.html_pages` write it, through :mod:`negplugins.rendering`.
"""

from __future__ import annotations

from ..rendering import text
from .board import best_runs, index_record, reproduction_record
from .html_pages import html_page, index_html, reproduction_html
from .markdown_pages import index_markdown, markdown, reproduction_markdown

__all__ = ["json_text", "markdown", "html_page", "best_runs", "index_record", "index_markdown", "index_html",
           "reproduction_record", "reproduction_markdown", "reproduction_html"]


def json_text(record) -> str:
    """A record as a leaderboard's JSON file: keys sorted, so that a rebuild from the same runs gives the same bytes."""
    return text.json_text(record, sort_keys=True)
