"""Any field descriptor the spec allows (2.2: offers' fields and KYC documents' fields) renders and
validates without error: unknown types, missing labels, enums without options, absurd, broken or
catastrophic patterns, hostile values. Patterns run on RE2, so none can hang a worker."""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask, render_template_string
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkout import Checkout
from checkout.forms import browser_pattern, clean_required_fields, field_inputs, field_kind
from checkout.upstream.types import RequiredField, required_fields_from_json

PATTERNS = st.one_of(
    st.sampled_from([
        "(a+)+$", "^(a|aa)+$", "(x+x+)+y", "^[0-9]{1,9}$", "^[a-zA-Z0-9 ]{9,29}$",
        "^[a-zA-Z]{3}([ -]{1})?[A-Z0-9]{6,12}$", "(?<=a)b", "(a)\\1", "[", "(", "*", "\\",
        "^GHA-[0-9]{9}-[0-9]$", "", "^.{0,100000}$", "\\p{L}+", "(?i)abc",
    ]),
    st.text(max_size=40),
)
TYPES = st.one_of(
    st.sampled_from(["string", "date", "email", "phone", "enum", "smile-identity-images",
                     "STRING", "Enum", "number", "boolean", "checkbox", "file", ""]),
    st.text(max_size=20),
)
OPTIONS = st.lists(st.fixed_dictionaries(
    {"value": st.text(min_size=1, max_size=12)},
    optional={"label": st.text(max_size=20)}), max_size=8)
DESCRIPTOR = st.fixed_dictionaries({}, optional={
    "type": TYPES, "label": st.text(max_size=60), "required": st.booleans(),
    "options": OPTIONS, "format": st.text(max_size=30), "regexp": PATTERNS,
    "regexpFlags": st.sampled_from(["", "i", "g", "gi", "u", "m", "s", "y", "iu", "x"]),
})
NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                min_size=1, max_size=20)
VALUES = st.one_of(st.text(max_size=300), st.sampled_from(
    ["", "a" * 5000 + "!", "2024-02-30", "1990-05-17", "+254712345678", "x@example.com",
     "<script>alert(1)</script>", "\x00\x1f", "０１２３"]))

RENDER = """{%- from "checkout/macros.html" import descriptor_field with context -%}
{%- for input in inputs %}{{ descriptor_field(input, value=values.get(input.name),
    error=errors.get(input.name)) }}{% endfor %}"""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    app = Flask("descriptors", instance_path=str(tmp_path_factory.mktemp("instance")))
    app.config.update(TESTING=True, CHECKOUT_DATABASE_URL="sqlite://")
    Checkout(app)
    yield app


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(descriptors=st.dictionaries(NAMES, DESCRIPTOR, max_size=6),
       form=st.dictionaries(NAMES, VALUES, max_size=8),
       country=st.sampled_from([None, "KE", "NG", "ZZ"]))
def test_any_descriptor_renders_and_validates(app: Flask, descriptors: dict[str, Any],
                                              form: dict[str, str], country: str | None) -> None:
    specs = required_fields_from_json(descriptors)
    with app.test_request_context():
        started = time.monotonic()
        result = clean_required_fields(specs, form, country=country)
        assert time.monotonic() - started < 2
        inputs = field_inputs(specs, country)
        html = render_template_string(RENDER, inputs=inputs, values=form, errors=result.errors)
    # Every descriptor but photos is asked; every message is about a field that exists.
    asked = {spec.name for spec in specs if field_kind(spec) != "smile-identity-images"}
    assert {i.name for i in inputs} == asked
    assert set(result.errors) <= asked
    for name in asked:
        assert f'id="field-{name}"' in html
    # What the user typed is escaped, never markup.
    assert "<script>alert(1)</script>" not in html


def test_a_catastrophic_pattern_on_a_long_value_returns_at_once(app: Flask) -> None:
    spec = RequiredField(name="id_number", regexp="(a+)+$")
    hostile = "a" * 100_000 + "!"
    with app.test_request_context():
        started = time.monotonic()
        clean_required_fields([spec], {"id_number": hostile[:200]}, country=None)
        result = clean_required_fields([RequiredField(name="x", regexp="^(a|aa)+$")],
                                       {"x": "a" * 250 + "!"}, country=None)
    assert time.monotonic() - started < 0.5
    assert "x" in result.errors


def test_unknown_types_are_plain_text_logged_once(app: Flask, caplog) -> None:
    specs = [RequiredField(name="a", type="hologram"), RequiredField(name="b", type="hologram")]
    with app.test_request_context(), caplog.at_level("WARNING", logger="checkout.forms"):
        inputs = field_inputs(specs, None)
        result = clean_required_fields(specs, {"a": "x", "b": "y"}, country=None)
    assert [i.type for i in inputs] == ["text", "text"]
    assert result.values == {"a": "x", "b": "y"}
    assert sum("hologram" in r.getMessage() for r in caplog.records) <= 1


@pytest.mark.parametrize("regexp, flags, mirrored", [
    ("^[0-9]{1,9}$", None, "[0-9]{1,9}"),
    ("^[A-Z0-9]{7,9}$", "", "[A-Z0-9]{7,9}"),
    # Case-insensitive: a browser's pattern cannot say so.
    ("^[A-Z][0-9]{7,9}$", "i", None),
    # [ -] is a syntax error under the v flag browsers compile patterns with.
    ("^[a-zA-Z]{3}([ -]{1})?[A-Z0-9]{6,12}$", None, None),
    # Unanchored: the server searches, the browser matches the whole value.
    ("[0-9]{4}", None, None),
    ("(a+)+$", None, None),
])
def test_the_browser_mirrors_a_pattern_only_where_it_means_the_same(regexp, flags, mirrored):
    assert browser_pattern(RequiredField(name="x", regexp=regexp, regexp_flags=flags)) == mirrored
