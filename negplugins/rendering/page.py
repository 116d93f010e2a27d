"""The shell of the suite's HTML pages: one self-contained file, its CSS (and script, if any) inline.

The Content-Security-Policy lets the page load nothing (``default-src 'none'``): inline styles, images
from ``data:`` addresses and, only on a page that has a script, that inline script.
"""

from __future__ import annotations

from .text import html_text

__all__ = ["html_document"]


def html_document(title: str, body: str, *, css: str, script: str | None = None, generator: str | None = None) -> str:
    """A whole HTML page: ``body`` (HTML, already escaped) under ``title`` (text, escaped here).

    Parameters
    ----------
    title : str
        The page's title, as text.
    body : str
        The content of ``<body>``.
    css : str
        The page's style sheet, ending with a newline.
    script : str, optional
        The page's script, ending with a newline, placed at the end of ``<body>``; None: a page without one,
        whose policy allows no script.
    generator : str, optional
        The program named in ``<meta name="generator">`` (none when not given).
    """
    script_policy = " script-src 'unsafe-inline';" if script is not None else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            + (f"<meta name=\"generator\" content=\"{html_text(generator)}\">\n" if generator is not None else "")
            + "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            f"style-src 'unsafe-inline';{script_policy} img-src data:\">\n"
            f"<title>{html_text(title)}</title>\n<style>\n{css}</style>\n</head>\n<body>\n{body}\n"
            + (f"<script>\n{script}</script>\n" if script is not None else "") + "</body>\n</html>\n")
