"""What the pages call networks, coins and payment channels (the upstream's codes are not words)."""
from __future__ import annotations

from flask_babel import lazy_gettext as _l

NETWORK_NAMES = {
    "ETHEREUM": "Ethereum", "POLYGON": "Polygon", "CELO": "Celo", "BASE": "Base",
    "AVALANCHE": "Avalanche", "OPTIMISM": "Optimism", "ARBITRUM": "Arbitrum", "BNB": "BNB Chain",
    "LISK": "Lisk", "SOLANA": "Solana", "STELLAR": "Stellar", "TON": "TON", "ALGORAND": "Algorand",
    "NEAR": "NEAR", "TRON": "TRON",
}
ASSET_NAMES = {"USDC_E": "USDC.e", "CUSD": "cUSD", "CKES": "cKES", "CGHS": "cGHS",
               "USDGLO": "USDGLO"}
CHANNEL_NAMES = {"bank": _l("Bank transfer"), "mobile_money": _l("Mobile money"),
                 "airtime": _l("Airtime"), "paybill": _l("Paybill")}
# Off-ramp: where the money arrives, not how it is paid.
PAYOUT_NAMES = {"bank": _l("Bank account"), "mobile_money": _l("Mobile money"),
                "airtime": _l("Airtime top-up"), "paybill": _l("Paybill (M-PESA)")}


def network_name(code: str | None) -> str:
    return NETWORK_NAMES.get(code or "", (code or "").title())


def asset_name(code: str | None) -> str:
    return ASSET_NAMES.get(code or "", code or "")


def channel_name(code: str | None) -> str:
    return str(CHANNEL_NAMES.get(code or "", code or ""))


def payout_name(code: str | None) -> str:
    return str(PAYOUT_NAMES.get(code or "", code or ""))
