"""The totals chart: running totals per hand as an inline SVG, drawn here.

No chart library: a few lines, a grid, the goal lines, escaped labels.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from companion.core.match import MAGIC_NUMBERS, STANDARD_GOAL

WIDTH, HEIGHT = 360, 200
LEFT, RIGHT, TOP, BOTTOM = 40, 12, 12, 26


def _nice_step(span: float) -> int:
    """A round grid step giving about four lines over ``span``."""
    raw = max(span / 4, 1)
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * power:
            return max(1, int(m * power))
    return int(10 * power)


def totals_chart(series: list[dict[str, Any]], goal: str = "standard") -> str:
    """SVG markup of the running totals. ``series``: [{label, cls, values}] where
    ``values[0]`` is the start (0) and ``values[n]`` the total after hand n.

    >>> "<svg" in totals_chart([{"label": "Sun", "cls": "sun", "values": [0, 51]}])
    True
    """
    hands = max((len(s["values"]) - 1 for s in series), default=0)
    top_value = max((v for s in series for v in s["values"]), default=0)
    low_value = min((v for s in series for v in s["values"]), default=0)
    ymax = max(100, top_value * 1.08)
    goals = [STANDARD_GOAL] if goal != "magic" else [*MAGIC_NUMBERS, STANDARD_GOAL]
    shown_goals = [g for g in goals if g <= ymax * 1.25]
    if shown_goals:
        ymax = max(ymax, max(shown_goals) * 1.04)
    ymin = min(0, low_value)
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (plot_w * i / hands if hands else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - (v - ymin) / (ymax - ymin))

    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="Totals after each hand" xmlns="http://www.w3.org/2000/svg">'
    ]
    step = _nice_step(ymax - ymin)
    v = 0
    while v <= ymax:
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
                     f'y1="{y(v):.1f}" y2="{y(v):.1f}"/>')
        parts.append(f'<text class="ylab" x="{LEFT - 4}" y="{y(v) + 4:.1f}">{v}</text>')
        v += step
    for g in shown_goals:
        parts.append(f'<line class="goal" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
                     f'y1="{y(g):.1f}" y2="{y(g):.1f}"/>')
        parts.append(f'<text class="glab" x="{LEFT + 4}" y="{y(g) - 3:.1f}">goal {g}</text>')
    label_every = max(1, math.ceil(hands / 10))
    for i in range(0, hands + 1, label_every):
        parts.append(f'<text class="xlab" x="{x(i):.1f}" y="{HEIGHT - 8}">{i}</text>')
    for s in series:
        cls = escape(str(s["cls"]), quote=True)
        points = " ".join(f"{x(i):.1f},{y(val):.1f}" for i, val in enumerate(s["values"]))
        parts.append(f'<polyline class="line {cls}" points="{points}"/>')
        if s["values"]:
            last = len(s["values"]) - 1
            parts.append(f'<circle class="dot {cls}" cx="{x(last):.1f}" '
                         f'cy="{y(s["values"][-1]):.1f}" r="3.5"><title>'
                         f'{escape(str(s["label"]))}: {s["values"][-1]}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)
