"""Inline SVG QR codes: markup shape, the encoded modules, determinism, titles and escaping."""
from __future__ import annotations

import re

import pytest
import segno
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import Environment
from markupsafe import Markup

from checkout.qr import qr_svg

URI = ("ethereum:0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359@137/transfer"
       "?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&uint256=10500000")
PATH_STEP = re.compile(r"([Mmh])(-?\d+(?:\.\d+)?)(?: (-?\d+(?:\.\d+)?))?")


def dark_modules(svg: str) -> set[tuple[int, int]]:
    """The (row, column) of every dark module the SVG path draws, quiet zone included.

    segno draws each row as horizontal strokes one unit wide along the row's middle line:
    ``M x y`` moves, ``m dx dy`` moves by, ``hN`` draws N modules to the right.
    """
    path = re.search(r'class="qrline" stroke="#000" d="([^"]+)"', svg).group(1)
    x = y = 0.0
    dark = set()
    for op, a, b in PATH_STEP.findall(path):
        if op == "M":
            x, y = float(a), float(b)
        elif op == "m":
            x, y = x + float(a), y + float(b)
        else:
            dark.update((int(y), int(x) + i) for i in range(int(a)))
            x += int(a)
    return dark


def test_markup_shape():
    svg = qr_svg(URI)
    assert isinstance(svg, Markup)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" ')
    assert svg.endswith("</svg>")
    assert "<?xml" not in svg and "\n" not in svg
    assert 'class="segno"' in svg
    assert "<title>" not in svg          # the caller's aria-label names it


def test_the_svg_draws_the_code_segno_encodes_with_a_two_module_quiet_zone():
    svg = qr_svg(URI)
    code = segno.make_qr(URI, error="m")
    expected = {(r + 2, c + 2) for r, row in enumerate(code.matrix)
                for c, bit in enumerate(row) if bit}
    assert dark_modules(svg) == expected
    size = (code.symbol_size(border=2)[0]) * 3
    assert f'width="{size}" height="{size}"' in svg
    assert code.error in ("M", "Q", "H")     # at least M (segno may raise it for free)


def test_short_text_is_a_regular_qr_code_not_a_micro_one():
    svg = qr_svg("hi")
    assert 'width="75" height="75"' in svg      # version 1: (21 + 2 * 2) modules * 3


@given(st.text(min_size=1, max_size=200))
def test_the_same_text_gives_the_same_svg(text):
    assert qr_svg(text) == qr_svg(text)


def test_different_texts_give_different_codes():
    assert qr_svg(URI) != qr_svg(URI.replace("10500000", "10500001"))


def test_title_is_added_only_when_given_and_escaped():
    svg = qr_svg(URI, title='Pay <10.5 USDC> & "more"')
    assert "<title>Pay &lt;10.5 USDC&gt; &amp; \"more\"</title>" in svg
    assert "<10.5" not in svg


def test_the_text_never_appears_as_markup():
    assert "<script>" not in qr_svg("<script>alert(1)</script>")


def test_a_template_puts_it_in_as_it_is():
    env = Environment(autoescape=True)
    page = env.from_string('<div role="img" aria-label="{{ label }}">{{ svg }}</div>').render(
        svg=qr_svg(URI), label="QR code <payment>")
    assert '<div role="img" aria-label="QR code &lt;payment&gt;"><svg ' in page


def test_empty_text_is_refused():
    with pytest.raises(ValueError):
        qr_svg("")


def test_the_code_is_drawn_on_white_whatever_the_page_behind_it():
    """A dark theme's page behind a transparent code leaves a camera nothing to read: the code
    and its quiet zone sit on white of their own."""
    svg = qr_svg(URI)
    size = segno.make_qr(URI, error="m").symbol_size(border=2)[0]
    assert f'<path fill="#fff" d="M0 0h{size}v{size}h-{size}z"/>' in svg
