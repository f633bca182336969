"""The upstream writes English: on a page in another language, what the checkout knows is said
in that language, and what it does not know is marked as English (checkout.upstream_text)."""
from __future__ import annotations

import re

from checkout.upstream_text import as_sent, detail_amount, field_label


def test_a_french_pay_page_says_the_transfer_details_in_french(flow):
    flow.start(locale="fr")
    html = flow.to_pay("manual").get_data(as_text=True)
    assert '<html lang="fr">' in html
    assert "Numéro de compte" in html and "Montant à envoyer" in html and "Libellé" in html
    # What to do, in French; the partner's own sentence kept beside it, marked as English.
    assert "Envoyez l’argent sur le compte ci-dessous" in html
    original = re.search(r'<details class="as-sent">.*?</details>', html, re.S).group(0)
    assert '<span lang="en">Send exactly' in original
    assert re.search(r'<strong>Important\u00a0:</strong> <span lang="en">', html)
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
