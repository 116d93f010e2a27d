"""Inline SVG charts, the same bytes for the same input: grouped bars, a stacked share bar and values with their
intervals on one axis. Colours: :data:`PALETTE` (Paul Tol's colour-blind-safe set).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .text import finite, html_text, number

__all__ = ["PALETTE", "grouped_bar_chart", "stacked_bar", "IntervalRow", "Point", "interval_chart"]

PALETTE = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#332288", "#117733",
           "#882255")

#: Width of a character of an 11-pixel axis label, rounded up (system-ui, digits and lowercase letters).
_CHAR_WIDTH = 7


def grouped_bar_chart(title: str, groups: list[str], series: list[tuple[str, list]]) -> str:
    """For each of ``groups``, one bar per ``(name, values)`` of ``series`` (None: no bar; at most
    ``len(PALETTE)`` series, at least one value).
    """
    present = [v for _, values in series for v in values if v is not None]
    low = min(0.0, min(present))
    high = max(1.0, max(present))
    width_bar, gap, height, top, bottom, left = 10, 14, 160, 10, 40, 44
    group = width_bar * len(series) + gap
    width = left + group * len(groups) + 10
    # a label wider than its group would run into the next: all labels are then turned 45 degrees
    label_width = max(len(str(g)) for g in groups) * _CHAR_WIDTH
    turned = label_width > group - 4
    if turned:
        bottom = int(label_width * 0.71) + 24
        width += int(label_width * 0.71)  # the first label reaches left of its group
        left += int(label_width * 0.71)

    def y(value):
        return top + (high - value) / (high - low) * height

    parts = [f"<svg class=\"chart\" role=\"img\" width=\"{width}\" height=\"{top + height + bottom}\" "
             f"viewBox=\"0 0 {width} {top + height + bottom}\" xmlns=\"http://www.w3.org/2000/svg\">",
             f"<title>{html_text(title)}</title>"]
    for tick in sorted({low, 0.0, (low + high) / 2, high}):
        parts.append(f"<line x1=\"{left - 4}\" x2=\"{width - 10}\" y1=\"{y(tick):.1f}\" y2=\"{y(tick):.1f}\" "
                     f"stroke=\"#d0d7de\" stroke-width=\"1\"/>")
        parts.append(f"<text x=\"{left - 6}\" y=\"{y(tick) + 4:.1f}\" font-size=\"10\" text-anchor=\"end\">"
                     f"{tick:.2f}</text>")
    for g, name in enumerate(groups):
        x0 = left + g * group + gap / 2
        for r, (label, values) in enumerate(series):
            value = values[g]
            if value is None:
                continue
            y_value, y_zero = y(value), y(0.0)
            parts.append(f"<rect x=\"{x0 + r * width_bar:.1f}\" y=\"{min(y_value, y_zero):.1f}\" "
                         f"width=\"{width_bar - 1}\" height=\"{max(abs(y_zero - y_value), 0.5):.1f}\" "
                         f"fill=\"{PALETTE[r]}\"><title>{html_text(label)}, {html_text(name)}: {value:.4f}</title>"
                         "</rect>")
        x_label = x0 + width_bar * len(series) / 2
        if turned:
            parts.append(f"<text x=\"{x_label:.1f}\" y=\"{top + height + 14}\" font-size=\"11\" text-anchor=\"end\" "
                         f"transform=\"rotate(-45 {x_label:.1f} {top + height + 14})\">{html_text(name)}</text>")
        else:
            parts.append(f"<text x=\"{x_label:.1f}\" y=\"{top + height + 16}\" font-size=\"11\" "
                         f"text-anchor=\"middle\">{html_text(name)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def stacked_bar(shares: dict, values: list[str], label: str) -> str:
    """Shares of a whole as one 160 x 12 bar."""
    width, height = 160, 12
    parts = [f"<svg class=\"stack\" role=\"img\" width=\"{width}\" height=\"{height}\" "
             f"viewBox=\"0 0 {width} {height}\" "
             f"xmlns=\"http://www.w3.org/2000/svg\"><title>{html_text(label)}: "
             + html_text(", ".join(f"{v} {number(shares.get(v))}" for v in values)) + "</title>"]
    x = 0.0
    for i, value in enumerate(values):
        share = shares.get(value) or 0.0
        if share <= 0:
            continue
        parts.append(f"<rect x=\"{x:.2f}\" y=\"0\" width=\"{share * width:.2f}\" height=\"{height}\" "
                     f"fill=\"{PALETTE[i % len(PALETTE)]}\"/>")
        x += share * width
    parts.append("</svg>")
    return "".join(parts)


# -- values with their intervals on one axis --------------------------------------------------------

_LEFT, _PLOT_LEFT, _PLOT_RIGHT, _WIDTH = 10, 300, 700, 960
_TOP, _ROW = 58, 56


@dataclass
class Point:
    """One value of an :class:`IntervalRow`: ``tooltip`` is text (escaped when drawn); ``interval`` its
    ``(low, high)`` (drawn as a whisker, when both ends are finite); ``hollow`` a context value drawn open."""

    value: float
    tooltip: str
    interval: tuple | list | None = None
    hollow: bool = False


@dataclass
class IntervalRow:
    """One row of :func:`interval_chart`: ``skipped`` (why nothing is drawn), or an axis with the ``main`` value,
    the ``computed`` values and the ``context`` values; ``reversed_axis`` puts lower values to the right.
    """

    key: str
    label: str
    skipped: str | None = None
    axis: str = ""
    reversed_axis: bool = False
    main: Point | None = None
    computed: list[Point] = field(default_factory=list)
    context: list[Point] = field(default_factory=list)
    summary: str = ""


def _whole(interval) -> bool:
    """Both ends of ``interval`` are finite numbers (else no whisker is drawn)."""
    return bool(interval) and len(interval) == 2 and all(finite(end) is not None for end in interval)


def interval_chart(rows: list[IntervalRow], *, chart_id: str, title: str, description: str, heading: str,
                   legend: tuple[str, str, str], colours: tuple[str, str, str], standalone: bool = True) -> str:
    """Per row, a main value and computed values with their intervals among context values, on one axis each
    (``legend`` and ``colours``: of the main, computed and context marks; ``standalone``: a final newline)."""
    main_colour, computed_colour, context_colour = colours
    height = _TOP + _ROW * len(rows) + 16
    parts = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{html_text(chart_id)}\" class=\"figure\" role=\"img\" "
             f"width=\"{_WIDTH}\" height=\"{height}\" viewBox=\"0 0 {_WIDTH} {height}\" "
             f"font-family=\"system-ui, sans-serif\" aria-labelledby=\"{html_text(chart_id)}-title\">",
             f"<title id=\"{html_text(chart_id)}-title\">{html_text(title)}</title>",
             f"<desc>{html_text(description)}</desc>",
             f"<rect x=\"0\" y=\"0\" width=\"{_WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>",
             f"<text x=\"{_LEFT}\" y=\"20\" font-size=\"15\" font-weight=\"600\">{html_text(heading)}</text>",
             f"<path d=\"M {_PLOT_LEFT} 38 l 6 -6 l 6 6 l -6 6 z\" fill=\"{main_colour}\"/>",
             f"<text x=\"{_PLOT_LEFT + 18}\" y=\"42\" font-size=\"12\">{html_text(legend[0])}</text>",
             f"<rect x=\"{_PLOT_LEFT + 92}\" y=\"33\" width=\"9\" height=\"9\" fill=\"{computed_colour}\"/>",
             f"<text x=\"{_PLOT_LEFT + 106}\" y=\"42\" font-size=\"12\">{html_text(legend[1])}</text>",
             f"<circle cx=\"{_PLOT_LEFT + 250}\" cy=\"38\" r=\"4.5\" fill=\"{context_colour}\" fill-opacity=\"0.55\"/>",
             f"<text x=\"{_PLOT_LEFT + 260}\" y=\"42\" font-size=\"12\">{html_text(legend[2])}</text>"]
    for i, row in enumerate(rows):
        parts.append(_interval_row(row, _TOP + i * _ROW, colours))
    parts.append("</svg>")
    return "\n".join(parts) + ("\n" if standalone else "")


def _interval_row(row: IntervalRow, top: int, colours) -> str:
    main_colour, computed_colour, context_colour = colours
    middle = top + 22
    parts = [f"<g class=\"row\" data-dataset=\"{html_text(row.key)}\">",
             f"<text x=\"{_LEFT}\" y=\"{middle - 3}\" font-size=\"13\" font-weight=\"600\">{html_text(row.label)}</text>"]
    if row.skipped is not None:
        parts.append(f"<text x=\"{_LEFT}\" y=\"{middle + 13}\" font-size=\"11\" fill=\"{context_colour}\">"
                     f"{html_text(row.skipped)}</text>")
        parts.append(f"<line x1=\"{_PLOT_LEFT}\" x2=\"{_PLOT_RIGHT}\" y1=\"{middle}\" y2=\"{middle}\" "
                     "stroke=\"#d0d7de\" stroke-dasharray=\"4 4\"/></g>")
        return "\n".join(parts)
    parts.append(f"<text x=\"{_LEFT}\" y=\"{middle + 13}\" font-size=\"11\" fill=\"#57606a\">{html_text(row.axis)}</text>")
    values = [p.value for p in row.context] + [p.value for p in row.computed]
    values += [row.main.value] if row.main is not None else []
    for point in [*([row.main] if row.main is not None else []), *row.computed]:
        if _whole(point.interval):
            values += list(point.interval)
    low, high = min([0.0, *values]), max([1.0, *values])

    def x(value):
        share = (value - low) / (high - low)
        return _PLOT_LEFT + (1 - share if row.reversed_axis else share) * (_PLOT_RIGHT - _PLOT_LEFT)

    def whisker(interval, y, colour):
        if not _whole(interval):
            return []
        return [f"<line class=\"interval\" x1=\"{x(interval[0]):.1f}\" x2=\"{x(interval[1]):.1f}\" y1=\"{y}\" "
                f"y2=\"{y}\" stroke=\"{colour}\" stroke-width=\"2\"/>"]

    parts.append(f"<line x1=\"{_PLOT_LEFT}\" x2=\"{_PLOT_RIGHT}\" y1=\"{middle}\" y2=\"{middle}\" stroke=\"#afb8c1\"/>")
    for k in range(5):
        tick = low + (high - low) * k / 4
        parts.append(f"<line x1=\"{x(tick):.1f}\" x2=\"{x(tick):.1f}\" y1=\"{middle - 3}\" y2=\"{middle + 3}\" "
                     "stroke=\"#afb8c1\"/>")
        parts.append(f"<text x=\"{x(tick):.1f}\" y=\"{middle + 16}\" font-size=\"9\" text-anchor=\"middle\" "
                     f"fill=\"#57606a\">{tick:.2f}</text>")
    for j, point in enumerate(row.context):
        dy = (-5, 0, 5)[j % 3]
        fill = (f"fill=\"#ffffff\" stroke=\"{context_colour}\"" if point.hollow
                else f"fill=\"{context_colour}\" fill-opacity=\"0.55\"")
        parts.append(f"<circle class=\"reported\" cx=\"{x(point.value):.1f}\" cy=\"{middle + dy - 2}\" r=\"4.5\" "
                     f"{fill}><title>{html_text(point.tooltip)}</title></circle>")
    for point in row.computed:
        parts += whisker(point.interval, middle + 6, computed_colour)
        parts.append(f"<rect class=\"baseline\" x=\"{x(point.value) - 4.5:.1f}\" y=\"{middle + 1.5}\" width=\"9\" "
                     f"height=\"9\" fill=\"{computed_colour}\"><title>{html_text(point.tooltip)}</title></rect>")
    if row.main is not None:
        cx = x(row.main.value)
        parts += whisker(row.main.interval, middle - 2, main_colour)
        parts.append(f"<path class=\"model\" d=\"M {cx:.1f} {middle - 9} l 7 7 l -7 7 l -7 -7 z\" "
                     f"fill=\"{main_colour}\" stroke=\"#ffffff\" stroke-width=\"1\"><title>"
                     f"{html_text(row.main.tooltip)}</title></path>")
        parts.append(f"<text x=\"{cx:.1f}\" y=\"{middle - 12}\" font-size=\"11\" font-weight=\"600\" "
                     f"text-anchor=\"middle\" fill=\"{main_colour}\">{number(row.main.value)}</text>")
    parts.append(f"<text x=\"{_PLOT_RIGHT + 16}\" y=\"{middle + 4}\" font-size=\"12\">{html_text(row.summary)}</text>")
    parts.append("</g>")
    return "\n".join(parts)
