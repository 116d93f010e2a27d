"""The one renderer (negplugins.rendering) and the one error line (negplugins.errors.error_line).

Markdown escaping is checked against a real CommonMark renderer (markdown-it-py, with GitHub's tables): the
escaped text must come out as the text itself, in a table cell, whatever its characters.
"""

from __future__ import annotations

import html
import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from negplugins.errors import error_line
from negplugins.rendering import text as rendered
from negplugins.rendering.charts import IntervalRow, Point, grouped_bar_chart, interval_chart, stacked_bar
from negplugins.rendering.page import html_document
from negplugins.rendering.text import best_marks, html_text, json_text, markdown_code, markdown_text, number

HOSTILE = ["<script>alert(1)</script>", "a|b", "*bold* _it_ `code`", "[x](javascript:y)", "back\\slash",
           "&amp; &#39; &x; & plain", "line one\nline  two", "ComLQ (pni) — é ≠ ∅", "#1 heading?", "'q' \"dq\""]


def test_numbers_missing_and_digits():
    assert number(0.58549) == "0.5855" and number(1, 2) == "1.00" and number(np.float32(0.25)) == "0.2500"
    for missing in (None, float("nan"), float("inf"), "0.5"):
        assert number(missing) == "–" and rendered.signed(missing) == "–" and rendered.p_value(missing) == "–"
    assert number(None, missing="n/a") == "n/a"
    assert rendered.signed(0.035) == "+0.0350" and rendered.signed(-0.07024) == "-0.0702"
    assert rendered.p_value(0.00009) == "< 0.0001" and rendered.p_value(0.00009, below="<0.0001") == "<0.0001"
    assert rendered.p_value(0.0001) == "0.0001" and rendered.p_value(0.2) == "0.2000"


def test_best_marks_compare_as_shown():
    assert best_marks([0.50001, 0.50004, 0.4]) == [True, True, False]  # tied at 4 decimals: both best
    assert best_marks([0.3, 0.2], lower_is_better=True) == [False, True]
    assert best_marks([0.5, 0.5]) == [False, False] and best_marks([0.5, None, math.nan]) == [False] * 3


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.cells, self.depth, self.tags = [], 0, []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "td":
            self.cells.append("")
            self.depth += 1

    def handle_endtag(self, tag):
        if tag == "td":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.cells[-1] += data


def _cells(markdown_row: str) -> tuple[list[str], list[str]]:
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(
        "| a | b |\n|---|---|\n" + markdown_row + "\n")
    parser = _Text()
    parser.feed(rendered)
    return parser.cells, parser.tags


def test_markdown_text_renders_as_the_text_itself():
    for text in HOSTILE:
        cells, tags = _cells(f"| {markdown_text(text)} | x |")
        assert cells == [" ".join(text.split()), "x"], text  # one cell, the text itself (whitespace runs as one)
        assert not {"script", "a", "em", "strong", "code", "h1"} & set(tags), text


def test_markdown_code_stays_in_its_cell():
    for text in HOSTILE:
        cells, tags = _cells(f"| {markdown_code(text)} | x |")
        assert len(cells) == 2 and cells[1] == "x" and "script" not in tags, text
    assert rendered.markdown_href("runs/a b (1).trec") == "runs/a%20b%20%281%29.trec"


def test_html_and_latex_escaping():
    assert html_text("<b a=\"1\">'&'</b>") == "&lt;b a=&quot;1&quot;&gt;&#x27;&amp;&#x27;&lt;/b&gt;"
    assert html.unescape(html_text(HOSTILE[0])) == HOSTILE[0]
    assert rendered.latex_text("a_b&c%$#{}~^\\") == r"a\_b\&c\%\$\#\{\}\textasciitilde{}\textasciicircum{}\textbackslash{}"


def test_json_text():
    assert json_text({"b": 1, "a": "é"}) == '{\n  "b": 1,\n  "a": "é"\n}\n'
    assert json_text({"b": 1, "a": 2}, sort_keys=True, indent=4).startswith('{\n    "a": 2')
    with pytest.raises(ValueError):
        json_text({"x": float("nan")})  # NaN is not JSON; the suite's records hold null
    assert json.loads(json_text({"x": None})) == {"x": None}


def test_html_document_allows_a_script_only_where_it_has_one():
    policy = re.compile(r'http-equiv="Content-Security-Policy" content="([^"]+)"')
    with_script = html_document("a <b>", "<p>x</p>", css="p {}\n", script="1;\n")
    assert policy.search(with_script)[1] == ("default-src 'none'; style-src 'unsafe-inline'; "
                                             "script-src 'unsafe-inline'; img-src data:")
    assert "<title>a &lt;b&gt;</title>" in with_script and with_script.endswith("<script>\n1;\n</script>\n</body>\n"
                                                                                 "</html>\n")
    without = html_document("t", "<p>x</p>", css="p {}\n", generator="negplugins benchmark")
    assert policy.search(without)[1] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    assert "<script" not in without and '<meta name="generator" content="negplugins benchmark">' in without


def test_charts_escape_their_labels():
    svg = grouped_bar_chart("m per <kind>", ["<a>", "b"], [("<run>", [0.5, None])])
    assert "<a>" not in svg and "&lt;a&gt;" in svg and "&lt;run&gt;, &lt;a&gt;: 0.5000" in svg
    assert svg.count("<rect") == 1  # None draws no bar
    bar = stacked_bar({"x": 0.25, "<y>": 0.75}, ["x", "<y>"], "<run>")
    assert "&lt;run&gt;: x 0.2500, &lt;y&gt; 0.7500" in bar and 'width="40.00"' in bar and 'width="120.00"' in bar


def _x(svg, cls):
    match = re.search(rf'<(?:rect|path) class="{cls}" (?:x="([\d.]+)"|d="M ([\d.]+))', svg)
    return float(match[1] or match[2])


def test_interval_chart_puts_better_to_the_right():
    def chart(reversed_axis):
        row = IntervalRow(key="d", label="D", axis="m", reversed_axis=reversed_axis, summary="s",
                          main=Point(0.2, "model <m>", (0.1, 0.3)), computed=[Point(0.6, "bm25", [0.5, 0.7])],
                          context=[Point(0.4, "paper", hollow=True)])
        return interval_chart([row, IntervalRow(key="e", label="E", skipped="skipped")], chart_id="c", title="t",
                              description="d", heading="h", legend=("a", "b", "c"), colours=("#1", "#2", "#3"))

    higher_better, lower_better = chart(False), chart(True)
    assert _x(higher_better, "model") < _x(higher_better, "baseline")  # 0.2 below 0.6: to the left
    assert _x(lower_better, "model") > _x(lower_better, "baseline")  # lower is better: the axis is reversed
    assert higher_better.count('class="interval"') == 2 and "model &lt;m&gt;" in higher_better
    assert 'fill="#ffffff" stroke="#3"' in higher_better  # the hollow context dot
    assert 'stroke-dasharray="4 4"' in higher_better and higher_better.endswith("</svg>\n")


def test_error_line():
    assert error_line(OSError("We couldn't connect.\nCheckout your internet connection")) == "We couldn't connect."
    assert error_line(RuntimeError("\n  \x1b[31mraylet died\x1b[0m  \nTraceback ...")) == "raylet died"
    assert error_line(ValueError("not found\nset IR_DATASETS_EXT_MIRROR"), whole=True) == \
        "not found set IR_DATASETS_EXT_MIRROR"
    assert error_line(KeyError()) == "KeyError" and error_line(ValueError(" \n "), whole=True) == "ValueError"
