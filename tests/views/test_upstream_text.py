"""The upstream writes English: on a page in another language, what the checkout knows is said
in that language, and what it does not know is marked as English (checkout.upstream_text)."""
from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import pytest
from babel import Locale, UnknownLocaleError

from checkout.i18n import babel_locale, format_money
from checkout.upstream_text import (
    as_sent,
    detail_amount,
    field_label,
    in_page_language,
    instructions_text,
)

from .conftest import CORRIDORS, Flow


def money_locale_of(language: str, country: str) -> Locale:
    """As the pages choose it: the language in the country when Babel knows the pair, in the
    Portuguese of Portugal for "pt" (checkout.i18n.babel_locale)."""
    try:
        return babel_locale(Locale.parse(f"{language}_{country}"))
    except (ValueError, UnknownLocaleError):
        return babel_locale(language)


def test_a_french_pay_page_says_the_transfer_details_in_french(flow):
    flow.start(locale="fr")
    html = flow.to_pay("manual").get_data(as_text=True)
    assert '<html lang="fr">' in html
    assert "Numéro de compte" in html and "Montant à envoyer" in html and "Libellé" in html
    # What to do: the partner's sentence, known, said in French once, with nothing in English.
    with flow.app.test_request_context():
        written = format_money(Decimal(5000), "NGN", locale="fr")
    assert f"Envoyez exactement {written} sur le compte ci-dessous" in html.replace("&nbsp;", "\u00a0")
    assert '<details class="as-sent">' not in html and '<span lang="en">' not in html
    # The warning too: the narration, in French.
    assert re.search(r'<strong>Important\u00a0:</strong> Saisissez le libellé exactement', html)
    # The amount to send reads as money, as in the heading, and copies as a bare number.
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S).group(1)
    row = re.search(r'data-testid="detail-amountToSend">([^<]*)<', html).group(1)
    assert row and row in heading
    assert re.search(r'data-copy="5000(\.00)?"', html)
    # A copy button says what it copies to a screen reader.
    assert 'aria-label="Copier\u00a0: Numéro de compte"' in html


def test_an_english_page_shows_the_partners_words_as_they_are(flow):
    html = flow.to_pay("manual").get_data(as_text=True)
    assert 'lang="en">' not in html.split("<body", 1)[1]      # nothing to mark
    assert "Send exactly" in html and "as-sent" not in html
    assert 'aria-label="Copy: Account number"' in html


def test_kyc_documents_and_fields_in_swahili(flow):
    flow.start(locale="sw")
    flow.follow(flow.choose("stk_push", amount="5000"))
    flow.follow(flow.wallet())
    flow.follow(flow.details(phoneNumber="0712000555"))
    html = flow.get("/kyc").get_data(as_text=True)
    assert '<html lang="sw">' in html
    assert "kitambulisho cha taifa" in html.lower() and "Pasipoti" in html
    html = flow.get("/kyc?document=NATIONAL_ID").get_data(as_text=True)
    assert "Jina la kwanza" in html and "Tarehe ya kuzaliwa" in html


def test_unknown_words_are_marked_and_known_ones_translated(app):
    with app.test_request_context("/checkout/offramp?locale=pt"):
        app.preprocess_request()
        assert str(as_sent("Bank transfer to a Nigerian account")) == \
            '<span lang="en">Bank transfer to a Nigerian account</span>'
        assert str(as_sent("<b>")) == '<span lang="en">&lt;b&gt;</span>'
        assert str(field_label("bankAccountNumber", "Account number")) == "Número da conta"
        assert str(field_label("somethingNew", "Something new")) == \
            '<span lang="en">Something new</span>'
    with app.test_request_context("/checkout/offramp?locale=en"):
        app.preprocess_request()
        assert str(field_label("bankAccountNumber", "Account number (10 digits)")) == \
            "Account number (10 digits)"


def test_only_a_well_formed_amount_to_send_is_written_as_money(app):
    class Detail:
        def __init__(self, id_, value):
            self.id, self.value = id_, value

    with app.test_request_context("/checkout/offramp?locale=en"):
        app.preprocess_request()
        assert detail_amount(Detail("amountToSend", "5000 NGN")) == {"shown": "NGN5,000.00",
                                                                     "number": "5000"} \
            or detail_amount(Detail("amountToSend", "5000 NGN"))["number"] == "5000"
        assert detail_amount(Detail("amountToSend", "about 5000")) is None
        assert detail_amount(Detail("recipientBankName", "5000 NGN")) is None


@pytest.mark.parametrize("language", ["en", "fr", "sw", "pt"])
def test_the_same_amount_reads_the_same_on_every_page(flow, language):
    """Quote, review, pay (heading and the amount to send) and status: one way to write it."""
    flow.start(locale=language)
    with flow.app.test_request_context():
        written = format_money(Decimal(5000), "NGN",
                               locale=money_locale_of(language, "NG"))
    quote = flow.get("/quote", query_string={**CORRIDORS["manual"], "network": "CELO",
                                             "asset": "USDT", "currency": "local",
                                             "amount": "5000"},
                     headers={"HX-Request": "true"}).get_data(as_text=True)
    flow.follow(flow.choose())
    flow.follow(flow.wallet())
    review_page = flow.get("/review")
    review = review_page.get_data(as_text=True)
    create = flow.follow(flow.create(review_page))
    pay = create.get_data(as_text=True)
    status = flow.get("/status").get_data(as_text=True)
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", pay, re.S).group(1)
    to_send = re.search(r'data-testid="detail-amountToSend">([^<]*)<', pay).group(1)
    for name, html in (("quote", quote), ("review", review), ("pay heading", heading),
                       ("amount to send", to_send), ("status", status)):
        assert written in html.replace("&nbsp;", "\u00a0"), (name, written)


def test_countries_are_named_in_the_pages_language_and_channel_descriptions_translated(flow):
    flow.start(locale="pt")
    html = flow.get("/choose", query_string={"countryIsoCode": "NG"},
                    headers={"HX-Request": "true"}).get_data(as_text=True)
    assert '<option value="NG" selected>Nigéria</option>' in html      # CLDR's Portuguese name
    assert ('<p class="field-help" id="field-paymentChannel-bank-help">Transferência bancária '
            'para uma conta nigeriana</p>') in html


# Every country of the sandbox, as a reader of each language looks for it in a list.
COUNTRIES_IN_ORDER = {
    "en": ["Benin", "Cameroon", "Côte d’Ivoire", "Ghana", "Kenya", "Nigeria", "Senegal",
           "South Africa", "Tanzania", "Uganda", "Zambia"],
    "fr": ["Afrique du Sud", "Bénin", "Cameroun", "Côte d’Ivoire", "Ghana", "Kenya", "Nigeria",
           "Ouganda", "Sénégal", "Tanzanie", "Zambie"],
    "sw": ["Afrika Kusini", "Benini", "Cote d’Ivoire", "Ghana", "Kameruni", "Kenya", "Nigeria",
           "Senegali", "Tanzania", "Uganda", "Zambia"],
    "pt": ["África do Sul", "Benim", "Camarões", "Côte d’Ivoire (Costa do Marfim)", "Gana",
           "Nigéria", "Quénia", "Senegal", "Tanzânia", "Uganda", "Zâmbia"],
}


def countries_listed(html: str) -> list[str]:
    select = re.search(r'<select[^>]*name="countryIsoCode".*?</select>', html, re.S).group(0)
    return [unescape(name) for name in re.findall(r'<option value="[A-Z]{2}"[^>]*>([^<]*)<',
                                                  select)]


@pytest.mark.parametrize("language", sorted(COUNTRIES_IN_ORDER))
def test_countries_are_listed_in_the_order_of_the_names_shown(app, client, language):
    """"Afrique du Sud" first on a French page, not after "Sénégal" where the English "South
    Africa" would put it: without JavaScript (the whole page, either flow) and with it (the
    form as htmx asks for it again)."""
    from .test_offramp import Sale

    for walker in (Flow(app, client), Sale(app, client)):
        page = walker.start(locale=language).get_data(as_text=True)
        assert countries_listed(page) == COUNTRIES_IN_ORDER[language], walker.name
    refreshed = walker.get("/choose", query_string={"countryIsoCode": "KE"},
                           headers={"HX-Request": "true"}).get_data(as_text=True)
    assert countries_listed(refreshed) == COUNTRIES_IN_ORDER[language]


def test_a_partners_text_never_seen_before_is_shown_as_sent_marked_as_english(app):
    with app.test_request_context("/checkout/offramp?locale=fr"):
        app.preprocess_request()
        assert str(in_page_language("Pay at any agent")) == '<span lang="en">Pay at any agent</span>'
        assert str(in_page_language("Mobile wallet")) == "Portefeuille mobile"
        # Instructions: ours for the type, the partner's own sentence kept beside, marked.
        said, beside = instructions_text("manual", "Send 5000 NGN to agent 12")
        assert str(said).startswith("Envoyez l’argent sur le compte ci-dessous")
        assert str(beside) == '<span lang="en">Send 5000 NGN to agent 12</span>'
        said, beside = instructions_text("stk_push", "Approve the payment request on your phone.")
        assert str(said) == "Validez la demande de paiement sur votre téléphone." and not beside
        # A page that lays out what to do (a USSD code) does not say it above too: a sentence
        # the checkout does not know is kept beside, as sent (it may say more).
        said, beside = instructions_text("ussd", "Dial *123# then wait", page_says=True)
        assert not said and str(beside) == '<span lang="en">Dial *123# then wait</span>'
    with app.test_request_context("/checkout/offramp?locale=en"):
        app.preprocess_request()
        said, beside = instructions_text("ussd", "Dial *123# then wait", page_says=True)
        assert str(said) == "Dial *123# then wait" and not beside


@pytest.mark.parametrize(("language", "sentence"), [
    ("en", "Send exactly {amount} to the account below"),
    ("fr", "Envoyez exactement {amount} sur le compte ci-dessous"),
    ("sw", "Tuma {amount} kamili kwenye akaunti"),
])
def test_an_amount_in_the_partners_sentence_reads_as_the_page_writes_money(flow, language,
                                                                          sentence):
    """Not "Send exactly 5000 NGN" above "₦5,000.00": the amount as every other on the page."""
    flow.start(locale=language)
    html = flow.to_pay("manual").get_data(as_text=True).replace("&nbsp;", "\u00a0")
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S).group(1)
    with flow.app.test_request_context():
        written = format_money(Decimal(5000), "NGN", locale=money_locale_of(language, "NG"))
    assert written in heading
    assert sentence.format(amount=written) in html and "5000 NGN" not in html


def test_the_whole_units_of_a_ussd_payment_are_written_as_money(flow):
    flow.start(locale="en")
    html = flow.to_pay("ussd", amount="5000.50").get_data(as_text=True)
    assert "USSD payments are in whole NGN: ₦5,001.00 will be debited for this ₦5,000.50 order." \
        in html


def test_what_the_account_check_found_is_said_in_the_pages_language(app):
    with app.test_request_context("/checkout/offramp?locale=sw"):
        app.preprocess_request()
        from checkout.upstream_text import payee_label

        assert str(payee_label("Account name")) == "Jina la akaunti"
        assert str(payee_label("Something else")) == '<span lang="en">Something else</span>'
