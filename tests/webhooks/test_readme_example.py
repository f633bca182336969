"""The README's ``fulfil`` receiver, run as written against orders of both flows of the embedded
sandbox: a bought crypto delivered and a sale paid out are fulfilled; an order that does not
match its basket raises an alert instead."""
from __future__ import annotations

import json
import re
import subprocess
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

from checkout import signals
from checkout.sandbox.credentials import WEBHOOK_SECRET as SANDBOX_WEBHOOK_SECRET
from checkout.signature import sign

from ..conftest import make_app
from ..support.sandbox_clock import as_time_passes
from .helpers import Delivery, order_payload

README = Path(__file__).resolve().parents[2] / "README.md"
SHOP_WALLET = "0x52908400098527886E0F7030069857D2E4169EE7"
TX_HASH = "0x" + "ab" * 32
NG_BANK = {"bankCode": "011:02", "bankAccountNumber": "0123456789"}


def readme_python(containing: str) -> str:
    """The README's Python example that has ``containing`` in it."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    found = [block for block in blocks if containing in block]
    assert len(found) == 1, f"{len(found)} README examples contain {containing!r}"
    return found[0]


@dataclass
class Basket:
    wallet: str
    asset: str
    network: str
    crypto_amount: Decimal
    paid: list[str] = field(default_factory=list)

    def mark_paid(self, order_id: str) -> None:
        self.paid.append(order_id)


def test_the_readme_fulfils_orders_of_both_flows_and_alerts_on_a_mismatch(config, tmp_path):
    config.update(CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2, CHECKOUT_STATUS_MAX_AGE=3600)
    app = make_app(dict(config))
    state = app.extensions["checkout"]
    db = create_engine(f"sqlite:///{tmp_path / 'shop.db'}")
    with db.begin() as conn:
        conn.execute(text("CREATE TABLE fulfilments (order_id TEXT PRIMARY KEY)"))
    alerts: list[tuple[str, str]] = []
    lock = threading.Lock()

    def alert_operations(order_id: str, order_params: str) -> None:
        with lock:
            alerts.append((order_id, order_params))

    upstream = state.upstream
    # A shop paid in crypto to its own wallet (on-ramp), and a shop's payout funded from its
    # wallet (off-ramp), plus a sale whose basket expected more crypto than the order took.
    bought = upstream.onramp_best_offer(network="CELO", asset="USDC", currency="local",
                                        amount=5000, country_iso_code="NG", payment_channel="bank")
    onramp = upstream.onramp_create_order(
        quote_id=bought.quote_id, network="CELO", asset="USDC", amount=5000, currency="local",
        email="ada@example.com", user_ip="203.0.113.7", address=SHOP_WALLET,
        order_params="basket-bought")
    sales = []
    for reference in ("basket-sold", "basket-short"):
        offer = upstream.offramp_typed_best_offer(amount=Decimal(20), currency="usd",
                                                  country="NG", type="bank", network="POLYGON",
                                                  asset="USDC")
        sales.append(upstream.offramp_create_order(
            offer_id=offer.offer_id, payment_type="CRYPTO_WALLET", network="POLYGON",
            asset="USDC", address=SHOP_WALLET.lower(), currency="usd", amount=Decimal(20),
            order_params=reference, required_fields=NG_BANK))
    sold, short = sales
    sold_crypto = Decimal(str(sold.raw["cashout"]["cryptoAmount"]))
    baskets = {
        "basket-bought": Basket(SHOP_WALLET, "USDC", "CELO",
                                Decimal(str(onramp.raw["amountCrypto"]))),
        # The shop keeps its wallet in its checksummed form; the order has it in lower case.
        "basket-sold": Basket(SHOP_WALLET, "USDC", "POLYGON", sold_crypto),
        "basket-short": Basket(SHOP_WALLET, "USDC", "POLYGON", sold_crypto + 1),
    }
    example: dict[str, Any] = {"app": app, "baskets": baskets, "db": db,
                               "alert_operations": alert_operations}
    exec(compile(readme_python("def fulfil("), str(README), "exec"), example)
    try:
        upstream.onramp_confirm_order(order_id=onramp.id)
        for sale in sales:
            upstream.offramp_confirm_order(order_id=sale.id, hash=TX_HASH)

        def fulfilled() -> set[str]:
            with db.connect() as conn:
                return {row.order_id for row in conn.execute(text("SELECT order_id FROM "
                                                                  "fulfilments"))}

        as_time_passes(app, lambda: len(fulfilled()) == 2 and alerts, timeout=30)
        assert fulfilled() == {onramp.id, sold.id}
        assert baskets["basket-bought"].paid == [onramp.id]
        assert baskets["basket-sold"].paid == [sold.id]
        assert alerts == [(short.id, "basket-short")] and baskets["basket-short"].paid == []
    finally:
        signals.order_status_changed.disconnect(example["fulfil"])
        state.dispatcher.stop()
        db.dispose()


# -- the payload and the signature, as the README tells a merchant writing a test sender -----------

def test_the_readmes_signature_recipes_sign_what_the_receiver_accepts(receiver, recorder):
    example: dict[str, Any] = {}
    exec(compile(readme_python("def webhook_signature("), str(README), "exec"), example)
    shell = re.search(r"`(printf '%s%s' \"\$BODY\" .*?sha256sum)`",
                      README.read_text(encoding="utf-8"), re.S)
    assert shell is not None
    secret = SANDBOX_WEBHOOK_SECRET
    assert f"`{secret}`" in README.read_text(encoding="utf-8")
    body = json.dumps(order_payload("ord_readme", "payout_successful", order_type="off_ramp"),
                      separators=(",", ":")).encode()
    by_python = example["webhook_signature"](body, secret)
    by_shell = subprocess.run(
        ["bash", "-c", shell.group(1).replace("\n", " ")], capture_output=True, text=True,
        env={"BODY": body.decode(), "SECRET": secret, "PATH": "/usr/bin:/bin"},
        check=True).stdout.split()[0]
    assert by_python == by_shell == sign(body, secret)
    answer = receiver.post(Delivery(body, {"Content-Type": "application/json",
                                           "x-signature": by_shell.upper()}))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    forged = receiver.post(Delivery(body.replace(b"ord_readme", b"ord_forged"),
                                    {"Content-Type": "application/json",
                                     "x-signature": by_python}))
    assert forged.status_code == 401 and receiver.count_events() == 1
    receiver.process()
    assert recorder.statuses() == [("ord_readme", "payout_successful")]
