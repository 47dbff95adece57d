"""Which IP addresses a public fetch may connect to.

`ipaddress.is_global` is the base, with the gaps it leaves closed: multicast counts as global in
Python 3.11, site-local IPv6 (fec0::/10) as global too, and IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4,
Teredo) are judged by the IPv4 address inside them.
"""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv6Address, IPv6Network

IPAddress = IPv4Address | IPv6Address

_NAT64 = (IPv6Network("64:ff9b::/96"), IPv6Network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = IPv6Network("::/96")


def embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, if it is one of the forms that carry one."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address; the server part is a relay
    if any(address in net for net in _NAT64) or address in _IPV4_COMPATIBLE:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: IPAddress) -> bool:
    if isinstance(address, IPv6Address):
        if address.scope_id or address.is_site_local:  # fec0::/10: deprecated, but routed inside some sites
            return False
        inner = embedded_ipv4(address)
        if inner is not None:  # checked first: NAT64's prefix sits in a block Python calls reserved
            return is_public(inner)
    if address.is_multicast or address.is_unspecified or address.is_reserved:
        return False
    return address.is_global


def parse_address(text: str) -> IPAddress | None:
    """An address written in canonical form (dotted quad, or IPv6 with optional brackets)."""
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None
