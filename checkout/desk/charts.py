"""Bar charts drawn on the server as SVG (templates/checkout/desk/_chart.html): no chart library
and no script in the browser, nothing to load, and the same picture with or without JavaScript.

Only the geometry is worked out here; the template draws it (escaped as every page is) and puts
the numbers beside it as a table, for screen readers and for copying: the picture itself is
hidden from assistive technology, which reads the table.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Bar", "BarChart", "bar_chart"]

WIDTH = 320             # the drawing's own units; it scales to the page (at most 480 px wide)
ROW = 38                # a row: its label, then its bar
BAR = 16
LABEL_GAP = 14          # from a row's top to its label's baseline
VALUE_ROOM = 56         # right of the longest bar, for its number


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    y: float            # the row's top
    width: float        # the bar's length
    muted: bool = False

    @property
    def label_y(self) -> float:
        return self.y + LABEL_GAP

    @property
    def bar_y(self) -> float:
        return self.y + LABEL_GAP + 4

    @property
    def value_x(self) -> float:
        return self.width + 6

    @property
    def value_y(self) -> float:
        return self.bar_y + BAR - 3


@dataclass(frozen=True)
class BarChart:
    bars: list[Bar]
    width: int
    height: int
    bar_height: int = BAR


def bar_chart(values: Sequence[tuple[str, int]], muted: Sequence[bool] = ()) -> BarChart:
    """Horizontal bars, one a row, each as long as its value's share of the largest."""
    largest = max((value for _label, value in values), default=0)
    room = WIDTH - VALUE_ROOM
    bars = [Bar(label, value, index * ROW, room * value / largest if largest else 0.0,
                muted[index] if index < len(muted) else False)
            for index, (label, value) in enumerate(values)]
    return BarChart(bars, WIDTH, max(ROW * len(bars), ROW))
