"""Under the default limits, people never meet them: whole orders at a person's pace, typing and
all, then a long wait on pages that poll (and reload themselves without JavaScript), never get a
429. The limiter's clock is moved instead of waited for (``limiter_clock``)."""
from __future__ import annotations

from typing import Any

import pytest

from ..views.conftest import CORRIDORS, PHONES, Flow
from ..views.test_offramp import Sale

HTMX = {"HX-Request": "true"}


class Person(Flow):
    """A shopper at a person's pace: every request records its answer; the clock moves between
    them as it would for someone reading, typing and waiting."""

    def __init__(self, app, client, clock, name: str = "onramp", *, pace: float = 1) -> None:
        super().__init__(app, client, name)
        self.clock = clock
        self.pace = pace            # 0: everything at once (many people at the same time)

    def _keep(self, response: Any) -> Any:
        assert response.status_code != 429, (response.request.path,
                                             response.get_data(as_text=True)[-600:])
        return super()._keep(response)

    def think(self, seconds: float) -> None:
        self.clock.advance(seconds * self.pace)

    def types_amount(self, transfer: str, amount: str) -> None:
        """One live price per pause in typing (the field waits 400 ms after each key), and the
        selects that come before it, each redrawing the form (which asks a price on load)."""
        corridor = {**CORRIDORS[transfer], "network": "CELO", "asset": "USDT",
                    "currency": "local"}
        for name in corridor:
            self.get("/choose", query_string={k: corridor[k] for k in corridor
                                              if k <= name}, headers=HTMX)
            self.think(2)
        for end in range(1, len(amount) + 1):
            self.get("/quote", query_string={**corridor, "amount": amount[:end]}, headers=HTMX)
            self.think(0.5)
        # Changes their mind twice, typing it again.
        for typed in (amount[:-1], amount, amount + "0", amount):
            self.get("/quote", query_string={**corridor, "amount": typed}, headers=HTMX)
            self.think(0.5)


@pytest.fixture
def person(app, client, limiter_clock) -> Person:
    return Person(app, client, limiter_clock)


def wait_on(person: Person, minutes: int, *, poll: str, every: float, page: str) -> None:
    """``minutes`` on a page that polls ``poll`` every ``every`` seconds and, like a page without
    JavaScript, is reloaded every 10 seconds: both at once, the worst a waiting person does."""
    elapsed, next_reload = 0.0, 0.0
    while elapsed < minutes * 60:
        person.get(poll, headers=HTMX)
        if elapsed >= next_reload:
            person.get(page)
            next_reload += 10
        person.think(every)
        elapsed += every


def test_a_purchase_with_a_one_time_code_and_half_an_hour_of_waiting(person):
    person.start()
    person.think(5)
    person.types_amount("otp_stk_push", "100")
    person.follow(person.choose("otp_stk_push", amount="100"))
    person.think(20)
    person.follow(person.wallet())
    person.think(15)
    person.follow(person.details(phoneNumber=PHONES["GH"]))
    person.think(10)
    person.get("/")                                 # reloads the review
    pay = person.follow(person.create(person.get("/review")))
    assert pay.request.path.endswith("/pay")
    # Two wrong codes, then the right one; a new push, twice.
    for code in ("000000", "111111", "123456"):
        person.think(8)
        person.follow(person.post("/pay/otp", {"otp": code}))
    for _ in range(2):
        person.think(30)
        person.follow(person.post("/pay/retry"))
    wait_on(person, 30, poll="/status/live?from=pay", every=3, page="/pay")


def test_switching_languages_and_an_hour_on_the_status_page(person):
    person.start()
    person.types_amount("manual", "25000")
    person.to_pay("manual")
    for language in ("fr", "sw", "pt", "en"):
        person.think(4)
        person.follow(person.post("/language", {"language": language, "next": "/"}))
    person.follow(person.post("/pay/confirm"))
    wait_on(person, 60, poll="/status/live", every=3, page="/status")


def test_an_identity_check_under_review_for_half_an_hour(app, client, limiter_clock):
    person = Person(app, client, limiter_clock)
    person.start()
    person.types_amount("stk_push", "5000")
    person.follow(person.choose("stk_push", amount="5000"))
    person.follow(person.wallet())
    kyc = person.follow(person.details(phoneNumber=PHONES["KE"]))
    assert kyc.request.path.endswith("/kyc")
    person.think(30)
    person.follow(person.post("/kyc", {"document": "NATIONAL_ID", "first_name": "Wanjiru",
                                       "last_name": "Pending", "dob": "1990-05-17",
                                       "email": "wanjiru@example.com", "id_number": "40718293"}))
    wait_on(person, 30, poll="/kyc/check?shown=pending", every=5, page="/kyc")


def test_a_sale_to_the_transaction_hash(app, client, limiter_clock):
    sale = Sale(app, client)
    sale.to_deposit()                       # at a machine's pace, and still under the limits
    assert all(r.status_code != 429 for r in sale.responses)
    person = Person(app, client, limiter_clock, "offramp")
    person.session_id, person.csrf = sale.session_id, sale.csrf
    for _ in range(3):
        person.think(10)
        person.get("/deposit")
    person.follow(person.post("/deposit/sent", {"tx_hash": "0x" + "ab" * 32}))
    wait_on(person, 10, poll="/status/live", every=3, page="/status")


def test_many_shoppers_behind_one_carrier_address(app, limiter_clock):
    """A mobile carrier's NAT: forty shoppers open the checkout, choose and price their amounts
    within one minute, all from one address."""
    for n in range(40):
        shopper = Person(app, app.test_client(), limiter_clock, pace=0)
        shopper.start()
        shopper.types_amount("manual", str(1000 + n * 37))
        limiter_clock.advance(1.5)
