"""The merchant's look (``CHECKOUT_THEME``), never at the cost of accessibility.

``CHECKOUT_THEME`` may set:

- ``accent``: the colour of buttons and links (``#0b5cad`` by default), and ``accent_text``, the
  colour of text on it (``#ffffff``);
- ``accent_dark``, ``accent_text_dark``: the same in the dark scheme (by default the nearest
  colours to the light ones that pass there);
- ``radius``: corner radius in pixels, 0 to 24 (8);
- ``font``: one of :data:`FONTS`, each the fonts a phone already has (nothing is downloaded);
- ``logo``: the address of an image on the merchant's site, shown in the header (its origin is
  added to the pages' ``img-src``);
- ``scheme``: ``light`` (the default), ``dark``, or ``auto`` (the device's). With ``dark`` or
  ``auto``, a launch token's ``colorScheme`` (``light`` or ``dark``) chooses: the merchant's page
  knows its own mode, which an iframe cannot read.

Every colour is checked when the app starts against WCAG 2.2 AA: text at least 4.5:1 (a link, a
secondary button, the label on a button), controls and the focus ring at least 3:1, in each
scheme the theme offers. A colour that fails is refused with its ratio and the nearest colour
that passes (the same hue and saturation, lighter or darker).

The theme reaches the pages as CSS custom properties appended to ``checkout.css`` at start-up
(:func:`stylesheet`): no inline style, the CSP stays strict, and no extra request. Without a
theme, nothing is appended.
"""
from __future__ import annotations

import colorsys
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask import Flask

from .config import is_loopback_host
from .errors import ConfigurationError
from .launch import normalize_origin

__all__ = ["Theme", "FONTS", "SCHEMES", "LIGHT", "DARK", "contrast", "nearest_passing",
           "theme_of", "check_config", "stylesheet"]

TEXT = 4.5          # WCAG 2.2 1.4.3, text (AA)
NON_TEXT = 3.0      # WCAG 2.2 1.4.11, controls and focus indicators

FONTS = {
    "system": 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif',
    "humanist": 'Seravek, "Gill Sans Nova", Ubuntu, Calibri, "DejaVu Sans", source-sans-pro, '
                'sans-serif',
    "rounded": 'ui-rounded, "Hiragino Maru Gothic ProN", Quicksand, Comfortaa, Manjari, '
               '"Arial Rounded MT", Calibri, source-sans-pro, sans-serif',
    "serif": 'Charter, "Bitstream Charter", "Sitka Text", Cambria, Georgia, serif',
}
SCHEMES = ("light", "dark", "auto")
KEYS = frozenset({"accent", "accent_text", "accent_dark", "accent_text_dark", "radius", "font",
                  "logo", "scheme"})
MAX_RADIUS = 24

# The page's own colours in each scheme (checkout.css holds the light ones). Backgrounds text
# sits on: the page and the soft panels (notices, the quote).
LIGHT = {"ink": "#1b1f24", "muted": "#4a5561", "line": "#c4ccd4", "bg": "#ffffff",
         "soft": "#f3f5f7", "error": "#b3261e", "error-bg": "#fdecea", "ok": "#1e6b32",
         "ok-bg": "#e7f4ea", "focus": "#ffbf47"}
DARK = {"ink": "#e8eaed", "muted": "#b4bcc6", "line": "#4d5560", "bg": "#121417",
        "soft": "#1e2227", "error": "#ff8f85", "error-bg": "#3a1a17", "ok": "#7fd992",
        "ok-bg": "#16301e", "focus": "#ffbf47"}
DEFAULT_ACCENT, DEFAULT_ACCENT_TEXT = "#0b5cad", "#ffffff"
_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}){1,2}$")

Rgb = tuple[float, float, float]


def _rgb(value: str) -> Rgb:
    digits = value[1:]
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return (int(digits[0:2], 16) / 255, int(digits[2:4], 16) / 255, int(digits[4:6], 16) / 255)


def _hex(rgb: Rgb) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)


def _luminance(value: str) -> float:
    """Relative luminance (WCAG 2.2's definition, sRGB)."""
    channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
                for c in _rgb(value)]
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def contrast(a: str, b: str) -> float:
    """The contrast ratio of two colours, 1 to 21."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def nearest_passing(colour: str, against: tuple[str, ...], minimum: float) -> str | None:
    """The colour nearest ``colour`` (same hue and saturation, the least change of lightness)
    whose contrast with each of ``against`` is at least ``minimum``; None if none is."""
    hue, lightness, saturation = colorsys.rgb_to_hls(*_rgb(colour))
    best: tuple[float, str] | None = None
    for step in range(1, 1001):
        for candidate_lightness in (lightness - step / 1000, lightness + step / 1000):
            if not 0 <= candidate_lightness <= 1:
                continue
            candidate = _hex(colorsys.hls_to_rgb(hue, candidate_lightness, saturation))
            if all(contrast(candidate, other) >= minimum for other in against):
                distance = abs(candidate_lightness - lightness)
                if best is None or distance < best[0]:
                    best = (distance, candidate)
        if best is not None:
            return best[1]
    return None


@dataclass(frozen=True)
class Theme:
    accent: str = DEFAULT_ACCENT
    accent_text: str = DEFAULT_ACCENT_TEXT
    accent_dark: str | None = None
    accent_text_dark: str | None = None
    radius: int = 8
    font: str = "system"
    logo: str | None = None
    scheme: str = "light"

    @property
    def offers_dark(self) -> bool:
        return self.scheme in ("dark", "auto")

    # The logo's site, as the pages' CSP names it: the canonical origin start-up made of it
    # (launch.normalize_origin), never text copied from the setting.
    logo_origin: str | None = None


def _colour(theme: Mapping[str, Any], key: str, default: str | None) -> str | None:
    value = theme.get(key, default)
    if value is None:
        return None
    if not isinstance(value, str) or not _HEX.match(value):
        raise ConfigurationError(
            f"CHECKOUT_THEME[{key!r}] must be a colour written #rrggbb, not {value!r}")
    return _hex(_rgb(value))


def _require(key: str, colour: str, against: Mapping[str, str], minimum: float,
             what: str) -> None:
    """Refuse ``colour`` unless it has ``minimum`` contrast with each of ``against``."""
    for name, other in against.items():
        ratio = contrast(colour, other)
        if ratio < minimum:
            nearest = nearest_passing(colour, tuple(against.values()), minimum)
            hint = f": the nearest colour that passes is {nearest}" if nearest else ""
            raise ConfigurationError(
                f"CHECKOUT_THEME[{key!r}] {colour} has a contrast of {ratio:.2f}:1 with "
                f"{name} ({other}), below the {minimum:g}:1 WCAG 2.2 AA asks of {what}{hint}")


def backgrounds(palette: Mapping[str, str], scheme: str) -> dict[str, str]:
    """What a link (the accent) can sit on: the page, a panel, a success or an error notice."""
    return {f"the {scheme}page": palette["bg"], f"a {scheme}panel": palette["soft"],
            f"a {scheme}success notice": palette["ok-bg"],
            f"an {scheme}error notice": palette["error-bg"]}


def _text_on(accent: str, preferred: str) -> str:
    """``preferred`` if it can be read on ``accent``, else black or white, the more legible."""
    if contrast(preferred, accent) >= TEXT:
        return preferred
    return max(("#000000", "#ffffff"), key=lambda ink: contrast(ink, accent))


def theme_of(setting: Any) -> Theme:
    """The theme ``CHECKOUT_THEME`` describes, checked; ConfigurationError otherwise."""
    if setting is None:
        return Theme()
    if not isinstance(setting, Mapping):
        raise ConfigurationError("CHECKOUT_THEME must be a dict (see the README's Themes)")
    unknown = set(setting) - KEYS
    if unknown:
        raise ConfigurationError(f"CHECKOUT_THEME has unknown keys {sorted(unknown)}: it takes "
                                 f"{', '.join(sorted(KEYS))}")
    scheme = setting.get("scheme", "light")
    if scheme not in SCHEMES:
        raise ConfigurationError(f"CHECKOUT_THEME['scheme'] must be one of {', '.join(SCHEMES)}")
    font = setting.get("font", "system")
    if font not in FONTS:
        raise ConfigurationError(f"CHECKOUT_THEME['font'] must be one of {', '.join(FONTS)}")
    radius = setting.get("radius", 8)
    if isinstance(radius, bool) or not isinstance(radius, int) or not 0 <= radius <= MAX_RADIUS:
        raise ConfigurationError(
            f"CHECKOUT_THEME['radius'] must be a whole number of pixels from 0 to {MAX_RADIUS}")
    accent = _colour(setting, "accent", DEFAULT_ACCENT)
    accent_text = _colour(setting, "accent_text", DEFAULT_ACCENT_TEXT)
    assert accent is not None and accent_text is not None
    # A token may ask for light whatever the scheme: the light colours are always checked.
    _require("accent", accent, backgrounds(LIGHT, ""), TEXT, "a link's text")
    _require("accent_text", accent_text, {"the accent": accent}, TEXT, "a button's label")
    accent_dark = _colour(setting, "accent_dark", None)
    accent_text_dark = _colour(setting, "accent_text_dark", None)
    if scheme != "light":
        dark_backgrounds = backgrounds(DARK, "dark ")
        if accent_dark is None:
            accent_dark = nearest_passing(accent, tuple(dark_backgrounds.values()), TEXT)
            assert accent_dark is not None      # white passes on these backgrounds
        _require("accent_dark", accent_dark, dark_backgrounds, TEXT, "a link's text")
        if accent_text_dark is None:
            accent_text_dark = _text_on(accent_dark, accent_text)
        _require("accent_text_dark", accent_text_dark, {"the dark accent": accent_dark}, TEXT,
                 "a button's label")
    logo = setting.get("logo")
    return Theme(accent, accent_text, accent_dark, accent_text_dark, radius, font, logo,
                 scheme, _logo_origin(logo) if logo is not None else None)


def _logo_origin(logo: Any) -> str:
    """The origin of an https address (http on this machine) with a plain host name: it goes
    into the pages' Content Security Policy, where only such a name is harmless."""
    origin = normalize_origin(logo, allow_path=True) if isinstance(logo, str) else None
    if origin is None or not (origin.startswith("https://") or is_loopback_host(
            urlsplit(origin).hostname)):
        raise ConfigurationError(
            "CHECKOUT_THEME['logo'] must be the https:// address of an image on your site "
            "(a host name in ASCII: an international one in its xn-- form)")
    return origin


def check_config(app: Flask) -> None:
    """At start-up: the theme is valid and legible (the message says what to change)."""
    theme_of(app.config.get("CHECKOUT_THEME"))


def _properties(values: Mapping[str, str]) -> str:
    return ";".join(f"--{name}:{value}" for name, value in values.items())


def stylesheet(theme: Theme) -> str:
    """What ``checkout.css`` is followed by for ``theme``: nothing for the default one."""
    if theme == Theme():
        return ""
    rules = [":root{" + _properties({
        "accent": theme.accent, "accent-ink": theme.accent_text,
        "radius": f"{theme.radius}px"}) + "}"]
    # What the default look does not need is not in checkout.css: its first page is counted.
    if theme.font != "system":
        rules.append("body{font-family:" + FONTS[theme.font] + "}")
    if theme.logo:
        rules.append(".checkout-logo{display:block;height:32px;width:auto;max-width:60vw}")
    if theme.offers_dark:
        assert theme.accent_dark is not None and theme.accent_text_dark is not None
        dark = "color-scheme:dark;" + _properties(
            {**DARK, "accent": theme.accent_dark, "accent-ink": theme.accent_text_dark})
        if theme.scheme == "dark":
            rules.append(":root:not([data-scheme=light]){" + dark + "}")
        else:
            rules.append("@media (prefers-color-scheme:dark){:root:not([data-scheme=light]){"
                         + dark + "}}")
            rules.append(":root[data-scheme=dark]{" + dark + "}")
    return "\n/* CHECKOUT_THEME */\n" + "\n".join(rules) + "\n"
