"""Languages and money: locale selection, Babel formatting, a catalogue covering every text."""
from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest
import pytz
from babel import Locale, UnknownLocaleError
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from flask import Flask, render_template_string
from flask_babel import Babel, get_locale, gettext

from checkout import Checkout
from checkout.i18n import (
    SUPPORTED_LANGUAGES,
    TRANSLATIONS,
    format_crypto,
    format_datetime,
    format_money,
    local_zone,
)
from checkout.paths import TEMPLATES
from checkout.upstream_text import country_name

from .launch_support import claims, install_flow_stub, session_id_from, sign
from .support.portuguese import brazilian_forms

ROOT = Path(__file__).resolve().parent.parent
NBSP, NNBSP = "\u00a0", "\u202f"


class TestMoney:
    @pytest.mark.parametrize("amount, currency, locale, expected", [
        (Decimal("1500"), "KES", "sw_KE", f"Ksh{NBSP}1,500.00"),
        (Decimal("1500"), "XOF", "fr_SN", f"1{NNBSP}500{NBSP}F{NNBSP}CFA"),
        (Decimal("1500"), "NGN", "en_NG", "₦1,500.00"),
        (Decimal("2500.5"), "GHS", "en_GH", "GH₵2,500.50"),
        ("1234.567", "NGN", "en_NG", "₦1,234.57"),
        # A symbol written with letters stands a space from the figures, as CLDR says.
        (Decimal("15000"), "XOF", "en", f"F{NNBSP}CFA{NBSP}15,000"),
        (Decimal("15000"), "XOF", "fr_SN", f"15{NNBSP}000{NBSP}F{NNBSP}CFA"),
        (Decimal("15000"), "XAF", "en_CM", f"FCFA{NBSP}15,000"),
        (Decimal("1500"), "KES", "en_KE", f"Ksh{NBSP}1,500.00"),
        (Decimal("-3"), "UGX", "en_UG", f"-USh{NBSP}3"),
    ])
    def test_format_money(self, amount, currency, locale, expected):
        assert format_money(amount, currency, locale=locale) == expected

    @pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
    def test_no_currency_symbol_is_glued_to_its_figures(self, language):
        """Every country of the sandbox, in every language: "F CFA15,000" nowhere."""
        from checkout.sandbox.reference import COUNTRIES

        for country in COUNTRIES:
            try:
                locale = Locale.parse(f"{language}_{country.iso}")
            except (ValueError, UnknownLocaleError):
                locale = Locale.parse(language)
            written = format_money(Decimal("15000.5"), country.currency, locale=locale)
            assert not re.search(r"[^\W\d][0-9]|[0-9][^\W\d]", written), (str(locale), written)

    def test_format_money_never_goes_through_float(self):
        assert format_money(Decimal("0.125"), "USD", locale="en") == "$0.12"   # half-even
        assert format_money(0.1 + 0.2, "USD", locale="en") == "$0.30"

    @pytest.mark.parametrize("amount, locale, expected", [
        (Decimal("12.5"), "en", f"12.5{NBSP}USDC"),
        (Decimal("1234.1234567"), "en", f"1,234.123457{NBSP}USDC"),
        (Decimal("1234.5"), "fr", f"1{NNBSP}234,5{NBSP}USDC"),
        (Decimal("3"), "sw", f"3{NBSP}USDC"),
    ])
    def test_format_crypto(self, amount, locale, expected):
        assert format_crypto(amount, "USDC", locale=locale) == expected

    def test_format_datetime(self):
        when = datetime(2026, 11, 22, 9, 5, tzinfo=UTC)
        # No country known yet: UTC, and it says so.
        assert format_datetime(when, locale="en") == "Nov 22, 2026, 9:05\u202fAM (UTC)"
        assert format_datetime("2026-11-22T09:05:00Z", locale="fr") == "22 nov. 2026, 09:05 (UTC)"
        assert format_datetime(None) == ""

    @pytest.mark.parametrize(("country", "locale", "expected"), [
        ("KE", "en", "Nov 22, 2026, 12:05\u202fPM (Kenya Time)"),
        ("KE", "sw", "22 Nov 2026 12:05 (Saa za Kenya)"),
        # Portuguese as Portugal, Mozambique and Angola write it (CLDR's "pt" is Brazil's).
        ("NG", "pt", "22/11/2026, 10:05 (Hora de Nigéria)"),
        ("CI", "fr", "22 nov. 2026, 09:05 (heure : Côte d’Ivoire)"),
        ("ZA", "en", "Nov 22, 2026, 11:05\u202fAM (South Africa Time)"),
    ])
    def test_a_moment_is_shown_on_the_country_s_clock_saying_whose(self, country, locale,
                                                                    expected):
        shown = format_datetime("2026-11-22T09:05:00Z", locale=locale, zone=local_zone(country))
        assert shown == expected

    def test_every_country_the_sandbox_serves_has_one_clock(self):
        from checkout.sandbox.reference import COUNTRIES

        for country in COUNTRIES:
            assert len(pytz.country_timezones[country.iso]) == 1, country.iso


@pytest.fixture
def app(app):
    install_flow_stub(app)
    return app


def open_session(app, **extra) -> str:
    client = app.test_client()
    location = client.get("/checkout/launch",
                          query_string={"token": sign(app, claims(**extra))}).headers["Location"]
    return session_id_from(location)


class TestLocaleSelection:
    def page_lang(self, client, url, **headers) -> str:
        body = client.get(url, headers=headers, follow_redirects=True).get_data(as_text=True)
        return re.search(r'<html lang="([^"]+)"', body).group(1)

    def test_session_claim_wins(self, app):
        sid = open_session(app, locale="sw")
        client = app.test_client()
        assert self.page_lang(client, f"/checkout/s/{sid}/?locale=fr",
                              **{"Accept-Language": "pt"}) == "sw"

    def test_query_then_accept_language_then_english(self, app):
        client = app.test_client()
        assert self.page_lang(client, "/checkout/offramp?locale=fr",
                              **{"Accept-Language": "pt"}) == "fr"
        assert self.page_lang(client, "/checkout/offramp",
                              **{"Accept-Language": "de, pt;q=0.8, en;q=0.5"}) == "pt"
        assert self.page_lang(client, "/checkout/offramp", **{"Accept-Language": "de"}) == "en"
        assert self.page_lang(client, "/checkout/offramp?locale=de") == "en"

    def test_money_uses_the_sessions_country(self, app):
        sid = open_session(app, locale="en", countryIsoCode="NG")
        with app.test_request_context(f"/checkout/s/{sid}/"):
            from checkout.views.context import load_session

            load_session(sid)
            assert render_template_string("{{ 1500|money('NGN') }}") == "₦1,500.00"
            assert str(get_locale()) == "en"

    def test_host_babel_is_reused_and_keeps_its_own_selector(self, tmp_path):
        host = Flask("host_site", instance_path=str(tmp_path / "i"))
        host.config.update(CHECKOUT_DATABASE_URL=f"sqlite:///{tmp_path}/c.sqlite3")
        babel = Babel(host, locale_selector=lambda: "de")
        Checkout(host)
        assert host.extensions["babel"].instance is babel
        host.add_url_rule("/", endpoint="home", view_func=lambda: str(get_locale()))
        client = host.test_client()
        assert client.get("/").get_data(as_text=True) == "de"
        page = client.get("/checkout/offramp", headers={"Accept-Language": "fr"},
                          follow_redirects=True)
        assert '<html lang="fr">' in page.get_data(as_text=True)

    def test_host_babel_without_jinja_set_up_still_renders_our_pages(self, tmp_path):
        host = Flask("host_site", instance_path=str(tmp_path / "i"))
        host.config.update(CHECKOUT_DATABASE_URL=f"sqlite:///{tmp_path}/c.sqlite3")
        Babel(host, configure_jinja=False)
        Checkout(host)
        page = host.test_client().get("/checkout/offramp", follow_redirects=True)
        assert page.status_code == 200
        assert "Sell crypto" in page.get_data(as_text=True)

    def test_checkout_catalogue_is_used_inside_the_checkout_only(self, app):
        with app.test_request_context("/checkout/offramp"):
            app.preprocess_request()
            from flask_babel import get_domain

            assert get_domain().translation_directories == [str(TRANSLATIONS)]
            assert gettext("Try again") == "Try again"


class _VisibleText(HTMLParser):
    """Text a user would read that is not inside a Jinja expression (so not translated)."""

    ATTRIBUTES = {"title", "alt", "placeholder", "aria-label", "label"}

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_data(self, data):
        if re.search(r"[A-Za-z]{2,}", data):
            self.found.append(data.strip())

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in self.ATTRIBUTES and value and re.search(r"[A-Za-z]{2,}", value):
                self.found.append(f"{name}={value}")


JINJA = re.compile(r"\{#.*?#\}|\{%.*?%\}|\{\{.*?\}\}", re.S)


def checkout_templates():
    # The sandbox's console pages are a developer tool in English, not the checkout's UI.
    return sorted(p for p in (TEMPLATES / "checkout").rglob("*.html")
                  if "sandbox" not in p.relative_to(TEMPLATES).parts)


@pytest.mark.parametrize("template", checkout_templates(),
                         ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_every_visible_text_in_templates_goes_through_gettext(template):
    parser = _VisibleText()
    parser.feed(JINJA.sub("q0", template.read_text()))
    assert parser.found == []


def test_the_committed_catalogue_covers_every_template_string(tmp_path):
    """``scripts/i18n extract`` was run after the last template change (else: run it)."""
    pot = tmp_path / "fresh.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    subprocess.run([str(pybabel), "-q", "extract", "-F", "babel.cfg", "-k", "lazy_gettext",
                    "-o", str(pot), "."], cwd=ROOT, check=True)
    with pot.open("rb") as f:
        extracted = {m.id for m in read_po(f)
                     if m.id and any(path.startswith("templates/") for path, _ in m.locations)}
    with (TRANSLATIONS / "messages.pot").open("rb") as f:
        committed = {m.id for m in read_po(f) if m.id}
    assert extracted, "extraction found no template strings"
    assert "Try again" in extracted
    missing = sorted(extracted - committed)
    assert not missing, f"run scripts/i18n all and commit checkout/translations: {missing[:10]}"


def test_english_catalogue_is_compiled():
    assert (TRANSLATIONS / "en" / "LC_MESSAGES" / "messages.mo").is_file()
    assert (TRANSLATIONS / "en" / "LC_MESSAGES" / "messages.po").is_file()


PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|\{(\w+)\}")


def _placeholders(text: str) -> list[str]:
    return sorted(m.group(0) for m in PLACEHOLDER.finditer(text))


@pytest.mark.parametrize("language", [lang for lang in SUPPORTED_LANGUAGES if lang != "en"])
def test_every_language_translates_every_message_with_the_same_placeholders(language):
    """Complete, not fuzzy, not obsolete, and %(name)s placeholders exactly as in English."""
    with (TRANSLATIONS / language / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalogue = read_po(f)
    with (TRANSLATIONS / "messages.pot").open("rb") as f:
        template = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(f) if m.id}
    problems = []
    if catalogue.obsolete:
        problems.append(f"obsolete entries: {list(catalogue.obsolete)[:3]}")
    seen = set()
    for message in catalogue:
        if not message.id:
            continue
        ids = (message.id,) if isinstance(message.id, str) else tuple(message.id)
        seen.add(ids[0])
        strings = (message.string,) if isinstance(message.string, str) else message.string
        if message.fuzzy:
            problems.append(f"fuzzy: {ids[0]!r}")
        for string in strings:
            if not string:
                problems.append(f"untranslated: {ids[0]!r}")
            elif _placeholders(string) != _placeholders(ids[-1]) \
                    and _placeholders(string) != _placeholders(ids[0]):
                problems.append(f"placeholders differ: {ids[0]!r} -> {string!r}")
    if template - seen:
        problems.append(f"missing (run scripts/i18n update): {sorted(template - seen)[:3]}")
    assert not problems, "\n".join(problems[:20])


def test_the_portuguese_catalogue_is_portugals_mozambiques_and_angolas():
    with (TRANSLATIONS / "pt" / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalogue = read_po(f)
    found = [(message.id, brazilian_forms(string)) for message in catalogue if message.id
             for string in ((message.string,) if isinstance(message.string, str)
                            else message.string)
             if brazilian_forms(string)]
    assert not found, found


def test_babel_writes_portuguese_as_the_catalogue_does(app):
    """Country names, dates and money in the Portuguese of the words around them."""
    with app.test_request_context("/checkout/offramp?locale=pt"):
        app.preprocess_request()
        assert str(get_locale()) == "pt"            # the page's public code is unchanged
        assert country_name("KE", "Kenya") == "Quénia"
        assert country_name("BJ", "Benin") == "Benim"
        assert format_money(Decimal(5000), "NGN") == f"5{NBSP}000,00{NBSP}NGN"
        assert format_datetime("2026-11-22T09:05:00Z", zone=local_zone("KE")) \
            == "22/11/2026, 12:05 (Hora de Quénia)"


@pytest.mark.parametrize("language", [lang for lang in SUPPORTED_LANGUAGES if lang != "en"])
def test_every_language_is_compiled_from_its_catalogue(language):
    """The shipped .mo says what the .po says (else: scripts/i18n compile)."""
    folder = TRANSLATIONS / language / "LC_MESSAGES"
    def table(catalogue):
        return {m.id if isinstance(m.id, str) else tuple(m.id):
                m.string if isinstance(m.string, str) else tuple(m.string)
                for m in catalogue if m.id}

    with (folder / "messages.po").open("rb") as f:
        source = table(read_po(f))
    with (folder / "messages.mo").open("rb") as f:
        compiled = table(read_mo(f))
    assert compiled == source


class TestLanguageMenu:
    def test_a_user_changes_language_on_any_page_and_stays_on_their_step(self, app):
        sid = open_session(app, locale="en")
        client = app.test_client()
        page = client.get(f"/checkout/s/{sid}/", follow_redirects=True)
        html = page.get_data(as_text=True)
        here = page.request.path
        assert 'name="language"' in html and '<option value="sw" lang="sw">Kiswahili' in html
        token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
        moved = client.post(f"/checkout/s/{sid}/language",
                            data={"language": "sw", "next": here, "csrf_token": token})
        assert moved.status_code == 303 and moved.headers["Location"].endswith(here)
        again = client.get(here).get_data(as_text=True)
        # The user's choice wins over the token's locale, ?locale= and the browser's languages.
        assert '<html lang="sw">' in again
        assert '<html lang="sw">' in client.get(f"{here}?locale=fr", headers={
            "Accept-Language": "pt"}).get_data(as_text=True)
        assert 'value="sw" lang="sw" selected' in again

    def test_the_way_back_is_one_of_the_sessions_own_pages(self, app):
        sid = open_session(app)
        client = app.test_client()
        html = client.get(f"/checkout/s/{sid}/", follow_redirects=True).get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
        for elsewhere in ("https://evil.example/", "//evil.example/x", "/checkout/s/other/",
                          f"/checkout/s/{sid}/..//evil"):
            moved = client.post(f"/checkout/s/{sid}/language",
                                data={"language": "fr", "next": elsewhere, "csrf_token": token})
            assert moved.headers["Location"].endswith(f"/checkout/s/{sid}/"), elsewhere

    @pytest.mark.parametrize("hostile", [
        "/checkout/s/{sid}/../../../account/settings",
        "/checkout/s/{sid}/kyc/../../{other}/",
        "/checkout/s/{sid}/%2e%2e/%2e%2e/%2e%2e/account/settings",
        "/checkout/s/{sid}/%2E%2E/%2e./.%2e/account",
        "/checkout/s/{sid}/..%2f..%2f..%2faccount",
        "/checkout/s/{sid}/..%5c..%5caccount",
        "/checkout/s/{sid}/\\..\\..\\account",
        "/checkout/s/{sid}\\..\\evil",
        "\\\\evil.example/checkout/s/{sid}/",
        "//evil.example/checkout/s/{sid}/",
        "https://evil.example/checkout/s/{sid}/",
        "/checkout/s/{other}/",
        "/checkout/s/{other}/review",
        "/checkout/s/{sid}-other/",
        "/checkout/s/{sid}",
        "/checkout/s/{sid}/..",
        "/checkout/s/{sid}/\tkyc",
    ])
    def test_a_way_back_that_a_browser_would_resolve_elsewhere_goes_to_the_session(
            self, app, hostile):
        """``next`` is compared as the browser will read it, not as it is written."""
        sid, other = open_session(app), open_session(app)
        client = app.test_client()
        html = client.get(f"/checkout/s/{sid}/", follow_redirects=True).get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
        moved = client.post(f"/checkout/s/{sid}/language", data={
            "language": "fr", "next": hostile.format(sid=sid, other=other),
            "csrf_token": token})
        assert moved.status_code == 303
        assert moved.headers["Location"] == f"/checkout/s/{sid}/"

    @pytest.mark.parametrize("sent, resolved", [
        ("/checkout/s/{sid}/kyc?document=PASSPORT", "/checkout/s/{sid}/kyc?document=PASSPORT"),
        ("/checkout/s/{sid}/kyc/../review", "/checkout/s/{sid}/review"),
        ("/checkout/s/{sid}/./%2e/status", "/checkout/s/{sid}/status"),
    ])
    def test_a_way_back_within_the_session_is_sent_as_resolved(self, app, sent, resolved):
        sid = open_session(app)
        client = app.test_client()
        html = client.get(f"/checkout/s/{sid}/", follow_redirects=True).get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
        moved = client.post(f"/checkout/s/{sid}/language", data={
            "language": "fr", "next": sent.format(sid=sid), "csrf_token": token})
        assert moved.headers["Location"] == resolved.format(sid=sid)

    def test_a_language_we_do_not_have_changes_nothing_and_a_forged_form_is_refused(self, app):
        sid = open_session(app, locale="pt")
        client = app.test_client()
        html = client.get(f"/checkout/s/{sid}/", follow_redirects=True).get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
        client.post(f"/checkout/s/{sid}/language", data={"language": "de", "csrf_token": token})
        page = client.get(f"/checkout/s/{sid}/", follow_redirects=True).get_data(as_text=True)
        assert '<html lang="pt">' in page
        forged = client.post(f"/checkout/s/{sid}/language", data={"language": "fr"})
        assert forged.status_code in (400, 403)


def test_a_refused_form_comes_back_on_a_page_whose_language_menu_returns_to_it(app):
    sid = open_session(app, countryIsoCode="NG")
    client = app.test_client()
    html = client.get(f"/checkout/s/{sid}/", follow_redirects=True).get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    refused = client.post(f"/checkout/s/{sid}/choose", data={"csrf_token": token, "amount": "x"})
    assert refused.status_code == 303
    page = client.get(refused.headers["Location"]).get_data(as_text=True)
    assert 'id="field-amount-error"' in page
    assert f'name="next" value="/checkout/s/{sid}/choose"' in page
