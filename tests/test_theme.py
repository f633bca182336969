"""CHECKOUT_THEME: checked at start-up against WCAG 2.2 AA in each scheme it offers, refused with
the ratio and the nearest colour that passes; the checkout's own palettes pass too."""
from __future__ import annotations

import colorsys
import re

import pytest

from checkout.errors import ConfigurationError
from checkout.theme import (
    DARK,
    LIGHT,
    NON_TEXT,
    TEXT,
    Theme,
    backgrounds,
    contrast,
    stylesheet,
    theme_of,
)
from tests.conftest import make_app


def test_contrast_is_wcag_s_ratio():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast("#767676", "#ffffff") >= TEXT            # the lightest grey that passes


@pytest.mark.parametrize("palette", [LIGHT, DARK], ids=["light", "dark"])
def test_the_checkouts_own_colours_pass_in_both_schemes(palette):
    for text in ("ink", "muted", "error", "ok"):
        for ground in ("bg", "soft"):
            assert contrast(palette[text], palette[ground]) >= TEXT, (text, ground)
    for text, ground in (("ink", "error-bg"), ("error", "error-bg"), ("ink", "ok-bg"),
                         ("ok", "ok-bg")):
        assert contrast(palette[text], palette[ground]) >= TEXT, (text, ground)
    # The focus ring is two rings, the focus colour and the ink: one of them stands out on
    # every background a control sits on.
    for ground in ("bg", "soft", "ok-bg", "error-bg"):
        assert max(contrast(palette["focus"], palette[ground]),
                   contrast(palette["ink"], palette[ground])) >= NON_TEXT, ground


def test_the_default_theme_passes_light_and_dark():
    theme = theme_of({"scheme": "auto"})
    for ground in backgrounds(LIGHT, "").values():
        assert contrast(theme.accent, ground) >= TEXT
    assert theme.accent_dark is not None and theme.accent_text_dark is not None
    for ground in backgrounds(DARK, "dark ").values():
        assert contrast(theme.accent_dark, ground) >= TEXT
    assert contrast(theme.accent_text, theme.accent) >= TEXT
    assert contrast(theme.accent_text_dark, theme.accent_dark) >= TEXT


def rgb(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


def refusal(setting: dict) -> str:
    with pytest.raises(ConfigurationError) as caught:
        theme_of(setting)
    return str(caught.value)


def suggested(message: str) -> str:
    found = re.search(r"the nearest colour that passes is (#[0-9a-f]{6})", message)
    assert found, message
    return found.group(1)


def test_a_pale_accent_is_refused_with_its_ratio_and_the_nearest_colour_that_passes():
    message = refusal({"accent": "#7fb2e5"})
    assert "CHECKOUT_THEME['accent'] #7fb2e5 has a contrast of 2.23:1" in message
    assert "4.5:1 WCAG 2.2 AA" in message
    nearest = suggested(message)
    theme_of({"accent": nearest})                             # the suggestion passes
    # ... and it is the nearest: the same colour a little lighter (back towards the one asked
    # for) would not.
    hue, lightness, saturation = colorsys.rgb_to_hls(*rgb(nearest))
    lighter = colorsys.hls_to_rgb(hue, lightness + 0.01, saturation)
    lighter_hex = "#" + "".join(f"{round(c * 255):02x}" for c in lighter)
    assert min(contrast(lighter_hex, ground) for ground in backgrounds(LIGHT, "").values()) < TEXT


def test_text_that_cannot_be_read_on_the_accent_is_refused():
    message = refusal({"accent": "#0b5cad", "accent_text": "#3d6ea8"})
    assert "CHECKOUT_THEME['accent_text']" in message and "a button's label" in message
    theme_of({"accent": "#0b5cad", "accent_text": suggested(message)})


def test_a_dark_accent_is_checked_on_the_dark_backgrounds():
    message = refusal({"accent": "#0b5cad", "accent_dark": "#0b5cad", "scheme": "dark"})
    assert "CHECKOUT_THEME['accent_dark'] #0b5cad" in message and "dark page" in message
    theme_of({"accent": "#0b5cad", "accent_dark": suggested(message), "scheme": "dark"})
    # Light only: the dark colours are never shown, so never asked for.
    assert theme_of({"accent": "#0b5cad"}).accent_dark is None


@pytest.mark.parametrize("setting, named", [
    ({"accent": "blue"}, "accent"),
    ({"accent": "#12345"}, "accent"),
    ({"radius": 40}, "radius"),
    ({"radius": "8px"}, "radius"),
    ({"font": "Comic Sans"}, "font"),
    ({"scheme": "sepia"}, "scheme"),
    ({"logo": "http://cdn.example/logo.png"}, "logo"),
    ({"logo": "https://user:pw@shop.example/logo.png"}, "logo"),
    # What would end img-src and start a directive of its own in the pages' policy.
    ({"logo": "https://a.example;frame-ancestors *;x/logo.png"}, "logo"),
    ({"logo": "https://a.example/logo.png; script-src *"}, "logo"),
    ({"logo": "https://a.example:99999/logo.png"}, "logo"),
    ({"colour": "#000000"}, "unknown keys"),
    ("dark", "dict"),
])
def test_a_theme_that_is_not_one_is_refused_at_start_up_naming_what(config, setting, named):
    config["CHECKOUT_THEME"] = setting
    with pytest.raises(ConfigurationError, match="CHECKOUT_THEME") as caught:
        make_app(config)
    assert named in str(caught.value)


def test_the_stylesheet_says_only_what_the_theme_changes():
    assert stylesheet(Theme()) == ""                          # the default look costs nothing
    light = stylesheet(theme_of({"accent": "#6b3d12", "radius": 0, "font": "serif"}))
    assert "--accent:#6b3d12" in light and "--radius:0px" in light and "Georgia" in light
    assert "color-scheme:dark" not in light
    dark = stylesheet(theme_of({"scheme": "dark"}))
    assert ":root:not([data-scheme=light]){color-scheme:dark;" in dark
    auto = stylesheet(theme_of({"scheme": "auto"}))
    assert "@media (prefers-color-scheme:dark)" in auto and ":root[data-scheme=dark]" in auto


def test_the_logo_s_site_is_rebuilt_from_its_parts_for_the_policy():
    theme = theme_of({"logo": "https://Shop.Example:8443/brand/logo.svg?v=2"})
    assert theme.logo_origin == "https://shop.example:8443"
