"""Languages and money: Flask-Babel set-up, the locale of a request, and formatting filters.

The checkout's catalogue is its own Flask-Babel :class:`~flask_babel.Domain`
(``checkout/translations``, domain ``messages``), made the default domain only for requests to the
checkout blueprint, so the host site's own catalogues and domain are never touched. A host that
already set up Flask-Babel keeps its ``Babel`` and its locale selector for its own pages; ours
decides only inside the checkout.

Locale of a checkout request: the session's ``locale`` claim, else ``?locale=``, else the best
``Accept-Language`` match among :data:`SUPPORTED_LANGUAGES`, else English. Money is formatted in
that language with the session's country when Babel knows the pair (``sw`` + ``KE``: ``sw_KE``).
Babel writes Portuguese as Portugal, Mozambique and Angola do, as the catalogue is written
(:func:`babel_locale`): CLDR's plain "pt" is Brazil's.
Times are shown on the session's country's clock, saying which ("Kenya Time"): a deadline read on
UTC by a user in Nairobi would look three hours later than it is; they are written in the page's
locale alone, one clock style per language.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import flask_babel
import pytz
from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_time, get_timezone_location
from babel.numbers import format_currency, format_decimal, get_currency_symbol
from flask import Flask, g, has_request_context, request
from flask_babel import Babel, Domain, get_babel, get_locale, refresh

__all__ = [
    "SUPPORTED_LANGUAGES", "DEFAULT_LANGUAGE", "TRANSLATIONS", "domain", "init_babel",
    "select_locale", "babel_locale", "money_locale", "format_money", "format_crypto",
    "format_datetime", "use_checkout_domain", "refresh", "by_name",
]

SUPPORTED_LANGUAGES = ("en", "fr", "sw", "pt")
DEFAULT_LANGUAGE = "en"
TRANSLATIONS = Path(__file__).resolve().parent / "translations"
BLUEPRINT = "checkout"

domain = Domain(translation_directories=[str(TRANSLATIONS)], domain="messages")


def _in_checkout() -> bool:
    # The checkout's blueprint, or one nested in it (the merchant's desk, "checkout.desk").
    return has_request_context() and BLUEPRINT in request.blueprints


def _supported(tag: str | None) -> str | None:
    """``tag`` as a Babel locale identifier if its language is one we support, else None."""
    if not tag or len(tag) > 35:
        return None
    try:
        locale = Locale.parse(tag.replace("-", "_"))
    except (ValueError, TypeError, UnknownLocaleError):
        return None
    return str(locale) if locale.language in SUPPORTED_LANGUAGES else None


def select_locale() -> str:
    """The locale of the current checkout request (see the module docstring)."""
    session = g.get("checkout_session")
    # A page without a session may know the language it was made in (a receipt's link).
    for candidate in (session.locale if session is not None else None,
                      request.args.get("locale"), g.get("checkout_page_locale")):
        chosen = _supported(candidate)
        if chosen:
            return chosen
    best = request.accept_languages.best_match(SUPPORTED_LANGUAGES)
    return best or DEFAULT_LANGUAGE


def init_babel(app: Flask) -> None:
    """Set up Flask-Babel for the checkout, reusing the host's ``Babel`` when it has one."""
    if "babel" in app.extensions:
        config = get_babel(app)
        host_selector: Callable[[], Any] | None = config.locale_selector

        def locale_selector() -> Any:
            if _in_checkout():
                return select_locale()
            return host_selector() if host_selector else None

        config.locale_selector = locale_selector
    else:
        Babel(app, locale_selector=lambda: select_locale() if _in_checkout() else None)
    if "_" not in app.jinja_env.globals:
        # The host's Babel was made with configure_jinja=False: our templates still need _().
        # The i18n extension adds install_gettext_callables to the environment when it is added.
        app.jinja_env.add_extension("jinja2.ext.i18n")
        app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]
            gettext=flask_babel.gettext, ngettext=flask_babel.ngettext, newstyle=True)


def use_checkout_domain() -> None:
    """Make our catalogue the request's default domain (a blueprint ``before_request``)."""
    domain.as_default()


def set_session_locale() -> None:
    """Re-select the locale now that ``g.checkout_session`` is known."""
    refresh()


def _session_country() -> str | None:
    session = g.get("checkout_session") if has_request_context() else None
    country = session.value("countryIsoCode") if session is not None else None
    return country.upper() if isinstance(country, str) else None


# CLDR's "pt" is the Portuguese of Brazil ("Quênia", "Horário Nigéria"); the checkout's catalogue
# is in that of Portugal, which Mozambique and Angola write (CLDR's pt_MZ and pt_AO are Portugal's
# with their own money). Babel is asked in pt_PT where the page is in plain "pt", so that the
# names, dates and money it writes are in the same Portuguese as the words around them; the
# page's public code stays "pt".
WRITTEN_AS = {"pt": "pt_PT", "pt_BR": "pt_PT"}


def babel_locale(locale: str | Locale | None = None) -> Locale:
    """The locale Babel writes names, money and dates in for ``locale`` (by default the page's,
    English outside a request): itself, but for Portuguese (:data:`WRITTEN_AS`)."""
    if locale is None and has_request_context():
        locale = get_locale()
    parsed = Locale.parse(locale or DEFAULT_LANGUAGE)
    return Locale.parse(WRITTEN_AS.get(str(parsed), parsed))


def money_locale(country: str | None = None) -> Locale:
    """The request's language with ``country`` (by default the session's) when Babel knows that
    combination: ``en`` + ``NG`` writes ₦, not NGN. A page that is choosing the country passes
    it, since the session's own country is not saved until the step is."""
    locale = get_locale() if has_request_context() else None
    language = locale.language if locale else DEFAULT_LANGUAGE
    country = country.upper() if country else _session_country()
    if locale is not None and locale.territory:
        return babel_locale(locale)
    if country:
        try:
            return babel_locale(Locale.parse(f"{language}_{country}"))
        except (ValueError, UnknownLocaleError):
            pass
    return babel_locale(locale or DEFAULT_LANGUAGE)


def name_key(name: str) -> tuple[str, str]:
    """How a reader looks a name up in a list: by its letters, case and accents aside ("Égypte"
    among the E, "Sénégal" after "Rwanda"), accents breaking only ties. Not a full collation
    (no ICU here), but right for the names the checkout lists in its four languages."""
    folded = unicodedata.normalize("NFKD", name.casefold())
    bare = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return bare, folded


Choice = TypeVar("Choice")


def by_name(choices: Iterable[Choice], name: Callable[[Choice], str]) -> list[Choice]:
    """``choices`` in the order of their ``name`` as the page shows it: a list sorted by the
    upstream's English names puts "Afrique du Sud" after "Sénégal" on a French page."""
    return sorted(choices, key=lambda choice: name_key(name(choice)))


def _decimal(amount: Any) -> Decimal:
    # str() first: Decimal(0.1) would carry the float's binary error into the page.
    return amount if isinstance(amount, Decimal) else Decimal(str(amount))


# A symbol's edge that is not itself a symbol or a space ("F CFA", "Ksh"), as CLDR's
# currencySpacing matches it ([[:^S:]&[:^Z:]]), touching a digit of the pattern.
_LETTER_EDGE = ("S", "Z")
_SYMBOL_BEFORE_DIGIT = re.compile("¤(?=[#0-9@])")
_SYMBOL_AFTER_DIGIT = re.compile("(?<=[#0-9@])¤")


def _currency_pattern(currency: str, locale: Locale) -> str:
    """The locale's currency pattern with CLDR's currency spacing, which Babel does not apply:
    a symbol that begins or ends with a letter is kept a no-break space from the digits it would
    touch ("F\u00a0CFA\u00a015,000", "Ksh\u00a01,500.00", as browsers write them), while "₦" or
    "$" still touch them ("₦5,000.00")."""
    pattern: str = locale.currency_formats["standard"].pattern
    symbol = get_currency_symbol(currency, locale=locale)
    if symbol and not unicodedata.category(symbol[-1]).startswith(_LETTER_EDGE):
        pattern = _SYMBOL_BEFORE_DIGIT.sub("¤\u00a0", pattern)
    if symbol and not unicodedata.category(symbol[0]).startswith(_LETTER_EDGE):
        pattern = _SYMBOL_AFTER_DIGIT.sub("\u00a0¤", pattern)
    return pattern


def format_money(amount: Any, currency: str, locale: str | Locale | None = None) -> str:
    """``amount`` of ``currency`` (ISO 4217) as the user reads money, e.g. ``Ksh 1,500.00``:
    the locale's pattern, its symbol, the currency's decimals (none for XOF)."""
    locale = babel_locale(locale or money_locale())
    return format_currency(_decimal(amount), currency, format=_currency_pattern(currency, locale),
                           locale=locale)


def format_crypto(amount: Any, asset: str, locale: str | Locale | None = None,
                  max_decimals: int = 6) -> str:
    """A crypto amount with its asset code and no currency symbol, e.g. ``12.5 USDC``.

    Up to ``max_decimals`` places (stablecoins rarely need more for display), never fewer than
    the value needs to be exact at that precision, and no trailing zeros.
    """
    value = _decimal(amount).quantize(Decimal(1).scaleb(-max_decimals)).normalize()
    number = format_decimal(value, format="#,##0." + "#" * max_decimals,
                            locale=babel_locale(locale or money_locale()))
    return f"{number}\u00a0{asset}"


def local_zone(country: str | None = None) -> tzinfo:
    """The clock of ``country`` (else the session's): its first zone in the tz database, which is
    its only one for every country the checkout serves. UTC when no country is known yet."""
    zones = pytz.country_timezones.get(country or _session_country() or "", [])
    return pytz.timezone(zones[0]) if zones else UTC


def format_datetime(value: datetime | str | None, locale: str | Locale | None = None,
                    zone: tzinfo | None = None) -> str:
    """A moment as the user reads a clock: the date (medium), the time to the minute, and whose
    clock, e.g. ``Nov 22, 2026, 12:05 PM (Kenya Time)``. The upstream's timestamps are ISO 8601.

    Written in the page's locale, not in the language-and-country one money uses: CLDR's English
    of Ghana writes a 12-hour clock and its English of Nigeria a 24-hour one, and an English page
    keeps one clock whatever the order's country. The country gives only the time zone."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    locale = babel_locale(locale)
    zone = zone or local_zone()
    local = value.astimezone(zone)
    # How the locale joins a date and a time ("{1}, {0}" in English, "{1} {0}" in Swahili).
    joined = str(locale.datetime_formats["medium"]).format(
        format_time(local, "short", locale=locale), format_date(local, "medium", locale=locale))
    clock = get_timezone_location(zone, locale=locale) if zone is not UTC else "UTC"
    return f"{joined} ({clock})"
