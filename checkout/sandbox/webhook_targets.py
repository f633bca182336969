"""Where a webhook may be POSTed: scheme check, DNS resolution and the private-address guard.

Spec 6.4: "The service refuses to POST to a URL that resolves to a private or internal address."
:func:`resolve_target` returns the one address the sender must connect to, so the address that was
checked is the address that is used: a second DNS lookup inside the HTTP library could return a
different, internal address (DNS rebinding).
"""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

__all__ = ["IPAddress", "Target", "TargetRefused", "TargetUnresolvable", "Resolver", "resolve_target",
           "forbidden_reason"]

Resolver = Callable[..., list[tuple[Any, ...]]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")          # shared address space, RFC 6598
_NAT64 = ipaddress.ip_network("64:ff9b::/96")           # embeds an IPv4 address, RFC 6052
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")   # local-use NAT64, RFC 8215


class TargetRefused(Exception):
    """The URL must never be POSTed to (policy): recorded as the delivery result, not retried."""


class TargetUnresolvable(Exception):
    """DNS gave no answer this time: a failed attempt like any other, retried."""


@dataclass(frozen=True)
class Target:
    """A checked webhook destination: connect to one of ``addresses``, speak HTTP(S) to ``host``."""

    scheme: str                 # "http" or "https"
    host: str                   # the name from the URL (IDNA ASCII), for Host, SNI and the certificate
    port: int
    addresses: tuple[IPAddress, ...]    # every one checked; tried in DNS order, like a browser would
    path: str                   # path plus "?query", never empty
    auth: tuple[str, str] | None

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == default else f"{name}:{self.port}"

    def pinned_url(self, address: IPAddress) -> str:
        """The URL with the host replaced by ``address`` (one of :attr:`addresses`)."""
        ip = f"[{address.compressed}]" if address.version == 6 else str(address)
        return f"{self.scheme}://{ip}:{self.port}{self.path}"


def forbidden_reason(ip: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why ``ip`` is not a public unicast address (e.g. ``"private"``), or None if it may be used."""
    if ip.version == 6:
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            # The packet would really go to the IPv4 address, so that address decides.
            return forbidden_reason(embedded, allow_loopback=allow_loopback)
        if ip in _NAT64_LOCAL:
            return "private"
        if ip.is_site_local:        # deprecated fec0::/10, still routed inside some networks
            return "site-local"
    if ip.is_loopback:
        return None if allow_loopback else "loopback"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_link_local:            # 169.254/16 holds cloud metadata services
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.version == 4 and ip in _CGNAT:
        return "shared (CGNAT)"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:            # anything else IANA marks as not globally reachable
        return "non-global"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def resolve_target(url: str, *, resolver: Resolver = socket.getaddrinfo,
                   allow_loopback: bool = False) -> Target:
    """Check ``url`` and pick the address to connect to.

    Raises :class:`TargetRefused` for a URL the policy forbids, whatever DNS says later, and
    :class:`TargetUnresolvable` when the name does not resolve now.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise TargetRefused(f"refused: scheme {scheme or '(none)'!r} is not http or https")
    if not parts.hostname:
        raise TargetRefused("refused: the URL has no host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise TargetRefused("refused: the URL has an invalid port") from None
    host = _ascii_host(parts.hostname)
    addresses = _addresses(host, port, resolver)
    # Every answer must pass: a name with one public and one private record would otherwise let the
    # private one through whenever the records are reordered.
    for ip in addresses:
        reason = forbidden_reason(ip, allow_loopback=allow_loopback)
        if reason is not None:
            raise TargetRefused(f"refused: resolves to {reason} address {ip.compressed}")
    return Target(scheme=scheme, host=host, port=port, addresses=tuple(addresses),
                  path=_path(parts), auth=_auth(parts))


def _ascii_host(hostname: str) -> str:
    try:
        return ipaddress.ip_address(hostname).compressed
    except ValueError:
        pass
    try:
        return hostname.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise TargetRefused(f"refused: invalid host name {hostname!r}") from None


def _addresses(host: str, port: int, resolver: Resolver) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = resolver(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise TargetUnresolvable(f"DNS lookup of {host} failed: {exc}") from exc
    addresses: list[IPAddress] = []
    for info in infos:
        try:
            ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        except (IndexError, ValueError):
            continue
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise TargetUnresolvable(f"DNS lookup of {host} returned no address")
    return addresses


def _path(parts: SplitResult) -> str:
    path = parts.path or "/"
    return f"{path}?{parts.query}" if parts.query else path


def _auth(parts: SplitResult) -> tuple[str, str] | None:
    if parts.username is None:
        return None
    return unquote(parts.username), unquote(parts.password or "")
