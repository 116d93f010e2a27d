"""How the suite writes what it computed: one renderer for the evaluation reports, the leaderboards and the report card.

* :mod:`~negplugins.rendering.text`: numbers as text (4 decimals, ``–`` where there is none, p-values, the
  "best" marks), escaping for Markdown, HTML and LaTeX, and JSON text;
* :mod:`~negplugins.rendering.page`: the shell of a self-contained HTML page (inline CSS, optional inline
  script, a Content-Security-Policy that allows nothing else);
* :mod:`~negplugins.rendering.charts`: inline SVG charts (grouped bars, stacked shares, values with their
  intervals on one axis).

It decides nothing about what a page says: the evaluation reports (:mod:`negplugins.evaluation.reports`),
the leaderboards (:mod:`negplugins.leaderboard`) and the report card (:mod:`negplugins.reportcard`) do, and
all of them write numbers, escape text and draw through it. It imports nothing else of the suite.
"""
