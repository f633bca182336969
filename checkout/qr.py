"""QR codes rendered on the server as inline SVG (the resume link, the deposit page).

Inline SVG needs no image request, no data: URL (the pages allow none) and no JavaScript, and
scales sharply on any screen. The markup carries no text of its own unless a title is given: the
caller wraps it in an element with ``role="img"`` and an ``aria-label`` that says what the code
holds, so a screen reader announces it once, in the page's language.
"""
from __future__ import annotations

import io

import segno
from markupsafe import Markup

__all__ = ["qr_svg"]


def qr_svg(text: str, *, title: str | None = None) -> Markup:
    """``text`` as an inline ``<svg>`` QR code, safe to put in a template as it is.

    Error correction level M survives a scuffed or glare-struck screen; a scale of 3 and a
    2-module quiet zone keep the code small inside the checkout's frame yet readable by phone
    cameras. Always a regular QR code, never a Micro QR (which ``segno.make`` picks for short
    texts and many phone scanners cannot read). ``title`` is escaped by segno.
    """
    if not text:
        raise ValueError("a QR code needs some text")
    buffer = io.BytesIO()
    # light: dark modules on white, with the quiet zone, whatever the page's scheme (a theme's
    # dark background behind a transparent code leaves nothing for a camera to read).
    segno.make_qr(text, error="m").save(buffer, kind="svg", scale=3, border=2, xmldecl=False,
                                        svgns=True, title=title, nl=False, light="#fff")
    return Markup(buffer.getvalue().decode("utf-8"))
