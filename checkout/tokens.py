"""Token contracts of the stablecoins the checkout takes on EVM networks, and payment URIs.

The deposit page of an off-ramp order asks the user to send an exact amount of one token to the
order's ``toAddress``. A QR code carrying an EIP-681 payment request lets a phone wallet fill in
token, chain, recipient and amount by itself, but only if the request names the right token
contract: a token sent through the wrong contract, or the chain's native coin sent instead of the
token, is lost. So this module is the one table of contracts, each copied from its issuer's
public list (the source is written beside every entry), and :func:`payment_uri` builds a request
only when every part of it is known; otherwise it returns ``None`` and the page shows the plain
address and amount alone.

Testnet entries exist only where the issuer publishes a testnet contract; nothing is guessed.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .addresses import EVM_NETWORKS, AddressError, validate_address

__all__ = ["Token", "chain_id", "payment_uri", "token", "tokens"]


@dataclass(frozen=True)
class Token:
    """One ERC-20 stablecoin contract on one chain."""

    network: str        # the upstream's network name (POLYGON, CELO, ...)
    asset: str          # the upstream's asset name (USDC, USDT, CUSD, ...)
    chain_id: int       # EIP-155 chain id
    contract: str       # EIP-55 checksummed contract address
    decimals: int       # the contract's decimals(): base units per token are 10**decimals


# EIP-155 chain ids. Testnets: Ethereum Sepolia, Polygon Amoy, Celo Sepolia (Celo's testnet since
# Alfajores was retired in September 2025), Avalanche Fuji, Base Sepolia.
_CHAIN_IDS: dict[str, int] = {
    "ETHEREUM": 1, "POLYGON": 137, "CELO": 42220, "AVALANCHE": 43114, "BASE": 8453,
}
_TESTNET_CHAIN_IDS: dict[str, int] = {
    "ETHEREUM": 11155111, "POLYGON": 80002, "CELO": 11142220, "AVALANCHE": 43113,
    "BASE": 84532,
}

# (network, asset) -> (contract, decimals). Where the issuer's page could be read here only
# through a public transcription of it, the transcription is named too; every address is also
# EIP-55 checksummed, so a mistyped character would not pass tests/test_tokens.py.
_MAINNET: dict[tuple[str, str], tuple[str, int]] = {
    # USDC: Circle, "USDC Contract Addresses" (developers.circle.com/stablecoins/
    # usdc-contract-addresses), via its transcription in github.com/tristeroresearch/chainconfig
    # (usdc.mjs). Native USDC only: on Polygon 0x3c49...3359, not the bridged USDC.e
    # (0x2791...4174, the upstream's USDC_E).
    ("ETHEREUM", "USDC"): ("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6),
    ("POLYGON", "USDC"): ("0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", 6),
    ("AVALANCHE", "USDC"): ("0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", 6),
    ("BASE", "USDC"): ("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 6),
    # Also in Celo's "Stablecoin Contracts" page (issuer: Circle) and Mento's SDK token list.
    ("CELO", "USDC"): ("0xcebA9300f2b948710d2653dD7B07f33A8B32118C", 6),
    # USDT: Tether, "Supported Protocols" (tether.to/en/supported-protocols), native USD₮ on
    # Ethereum, Avalanche and Celo, via its transcription in tristeroresearch/chainconfig
    # (tether.mjs). The Celo contract is also in Celo's "Stablecoin Contracts" page (issuer:
    # Tether) and in Mento's SDK token list, with 6 decimals.
    ("ETHEREUM", "USDT"): ("0xdAC17F958D2ee523a2206206994597C13D831ec7", 6),
    ("AVALANCHE", "USDT"): ("0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7", 6),
    ("CELO", "USDT"): ("0x48065fbBE25f71C9282ddf5e1cD6D6A887483D5e", 6),
    # Tether's current page lists no native Polygon deployment: USDT on Polygon PoS is USDT0,
    # Tether's omnichain USDT, which took over the long-standing PoS USDT contract in 2025.
    # Source: USDT0's deployments list (docs.usdt0.to/technical-documentation/deployments), via
    # the same transcription (tether.mjs).
    ("POLYGON", "USDT"): ("0xc2132D05D31c914a87C6611C10748AEb04B58e8F", 6),
    # Mento stablecoins cUSD, cKES, cGHS (since renamed USDm, KESm, GHSm; same contracts):
    # Mento's own SDK token list for chain 42220 (github.com/mento-protocol/mento-sdk,
    # src/cache/tokens.42220.ts) and Celo's "Stablecoin Contracts" page
    # (docs.celo.org/tooling/contracts/stablecoin-contracts).
    ("CELO", "CUSD"): ("0x765DE816845861e75A25fCA122bb6898B8B1282a", 18),
    ("CELO", "CKES"): ("0x456a3D042C0DbD3db53D5489e98dFb038553B0d0", 18),
    ("CELO", "CGHS"): ("0xfAeA5F3404bbA20D3cc2f8C4B0A888F55a3c7313", 18),
}

_TESTNET: dict[tuple[str, str], tuple[str, int]] = {
    # USDC on testnets: Circle's testnet table, as Circle repeats it in its own
    # github.com/circlefin/skills (plugins/circle/skills/test-and-faucet/SKILL.md).
    ("ETHEREUM", "USDC"): ("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", 6),    # Sepolia
    ("POLYGON", "USDC"): ("0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582", 6),     # Amoy
    ("AVALANCHE", "USDC"): ("0x5425890298aed601595a70AB815c96711a31Bc65", 6),   # Fuji
    ("BASE", "USDC"): ("0x036CbD53842c5426634e7929541eC2318f3dCF7e", 6),        # Base Sepolia
    # Celo Sepolia USDC: Celo's "Stablecoin Contracts" page (issuer: Circle) and Mento's SDK
    # token list for chain 11142220 (src/cache/tokens.11142220.ts). (Circle's older Alfajores
    # contract, 0x2F25...602B, went with that network.)
    ("CELO", "USDC"): ("0x01C5C0122039549AD1493B8220cABEdD739BC44E", 6),
    # Mento on Celo Sepolia: Mento's SDK token list for chain 11142220 and Celo's "Stablecoin
    # Contracts" page.
    ("CELO", "CUSD"): ("0xdE9e4C3ce781b4bA68120d6261cbad65ce0aB00b", 18),
    ("CELO", "CKES"): ("0xC7e4635651E3e3Af82b61d3E23c159438daE3BbF", 18),
    ("CELO", "CGHS"): ("0x5e94B8C872bD47BC4255E60ECBF44D5E66e7401C", 18),
    # No USDT: Tether publishes no testnet contract.
}

# uint256 is the largest amount a transfer can carry.
_UINT256_MAX = 2**256 - 1


def _table(testnet: bool) -> dict[tuple[str, str], tuple[str, int]]:
    return _TESTNET if testnet else _MAINNET


def chain_id(network: str, *, testnet: bool = False) -> int | None:
    """The EIP-155 chain id of ``network`` (or of its testnet), ``None`` if not in the table."""
    return (_TESTNET_CHAIN_IDS if testnet else _CHAIN_IDS).get(network)


def token(network: str, asset: str, *, testnet: bool = False) -> Token | None:
    """The contract of ``asset`` on ``network``, or ``None`` when it is not in the table."""
    entry = _table(testnet).get((network, asset))
    chain = chain_id(network, testnet=testnet)
    if entry is None or chain is None:
        return None
    contract, decimals = entry
    return Token(network=network, asset=asset, chain_id=chain, contract=contract,
                 decimals=decimals)


def tokens(*, testnet: bool = False) -> tuple[Token, ...]:
    """Every token in the mainnet (or testnet) table."""
    found = (token(network, asset, testnet=testnet) for network, asset in _table(testnet))
    return tuple(t for t in found if t is not None)


def _base_units(amount: Decimal, decimals: int) -> int | None:
    """``amount`` in base units, exactly, or ``None`` when that is not a positive integer.

    Integer arithmetic on the decimal digits: ``Decimal`` operations round to the context's
    precision (28 digits), which 18-decimal tokens exceed for amounts above ten billion.
    """
    if not isinstance(amount, Decimal) or not amount.is_finite() or amount <= 0:
        return None
    _sign, digits, exponent = amount.as_tuple()
    if not isinstance(exponent, int):       # NaN and infinities, already refused above
        return None
    shift = exponent + decimals
    if shift > 78:                          # 10**78 > 2**256 already
        return None
    coefficient = int("".join(map(str, digits)))
    if shift >= 0:
        units = coefficient * 10**shift
    else:
        if -shift > len(digits):            # a non-zero coefficient cannot be divisible
            return None
        units, rest = divmod(coefficient, 10**-shift)
        if rest:
            return None                     # finer than the token's smallest unit
    return units if 0 < units <= _UINT256_MAX else None


def payment_uri(network: str, asset: str, to_address: str, amount: Decimal, *,
                testnet: bool = False) -> str | None:
    """An EIP-681 request to transfer ``amount`` of ``asset`` to ``to_address``, or ``None``.

    ``ethereum:<token contract>@<chain id>/transfer?address=<recipient>&uint256=<base units>``:
    the token's ``transfer`` function on the named chain, the amount as a plain integer of base
    units (wallets differ on scientific notation, so none is used). ``None`` when the token is
    not in the table (non-EVM networks included), the amount is not positive or is finer than
    the token's decimals, or the recipient is not a valid address on the network. A request
    without the token contract (``ethereum:<recipient>?value=``) would ask for the native coin,
    so it is never built.
    """
    found = token(network, asset, testnet=testnet)
    if found is None or network not in EVM_NETWORKS:
        return None
    units = _base_units(amount, found.decimals)
    if units is None:
        return None
    try:
        recipient = validate_address(network, to_address)
    except AddressError:
        return None
    if recipient.lower() == found.contract.lower():
        return None     # tokens sent to their own contract are lost
    return (f"ethereum:{found.contract}@{found.chain_id}/transfer"
            f"?address={recipient}&uint256={units}")
