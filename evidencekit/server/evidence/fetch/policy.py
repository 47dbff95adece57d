"""Which URLs a retrieval may fetch: public HTTPS only, unless an operator opened a door.

`EVIDENCEKIT_ALLOW_PRIVATE_HOSTS` (comma-separated `host:port`, `*` as port for any) lets the
named hosts be reached at non-public addresses and over plain http. It exists for tests and
intranet deployments and is DANGEROUS: every host named there can be reached by anyone who may
call retrieve. Nothing else relaxes these rules.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from ipaddress import IPv4Address

import httpx

from evidencekit.server.evidence.fetch.addresses import is_public, parse_address

ALLOW_ENV = "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS"
MAX_URL_LENGTH = 2048
# A host made only of number-like labels: 2130706433, 0x7f000001, 0177.0.0.1, 127.1, 1.2.3.4.
_NUMERIC_HOST = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+))*\.?$", re.IGNORECASE)


class UnsafeUrl(Exception):
    """The URL may not be fetched (reason `unsafe_url`); the message says why, for logs."""


@dataclass(frozen=True)
class AllowedHost:
    host: str
    port: int | None  # None: any port

    def matches(self, host: str, port: int) -> bool:
        return self.host == host and (self.port is None or self.port == port)


def parse_allowlist(value: str) -> tuple[AllowedHost, ...]:
    entries = []
    for raw in filter(None, (part.strip() for part in value.split(","))):
        host, sep, port = raw.rpartition(":")
        if not sep or not host or not (port == "*" or (port.isdigit() and 0 < int(port) < 65536)):
            raise ValueError(f"{ALLOW_ENV}: {raw!r} is not host:port (port a number or *)")
        entries.append(AllowedHost(normalize_host(host), None if port == "*" else int(port)))
    return tuple(entries)


def normalize_host(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


@dataclass(frozen=True)
class EgressPolicy:
    allowed: tuple[AllowedHost, ...] = ()

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> EgressPolicy:
        env = os.environ if environ is None else environ
        return cls(parse_allowlist(env.get(ALLOW_ENV, "")))

    def allows_private(self, host: str, port: int) -> bool:
        host = normalize_host(host)
        return any(entry.matches(host, port) for entry in self.allowed)


@dataclass(frozen=True)
class Target:
    url: httpx.URL
    host: str
    port: int
    private_allowed: bool


def check_url(url: str | httpx.URL, policy: EgressPolicy) -> Target:
    """Refuse, before any connection, what may never be fetched. Addresses are checked again at connect."""
    text = str(url)
    if len(text) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"URL longer than {MAX_URL_LENGTH} characters")
    try:
        parsed = httpx.URL(text)
    except (httpx.InvalidURL, ValueError) as exc:
        raise UnsafeUrl(f"not a fetchable URL: {exc}") from None
    if parsed.scheme not in ("https", "http"):
        raise UnsafeUrl(f"scheme {parsed.scheme!r} is not https")
    if parsed.userinfo:
        raise UnsafeUrl("credentials in the URL")
    try:
        host = normalize_host(parsed.host)  # decodes IDNA labels: may refuse an A-label (xn--localhost-)
    except ValueError as exc:  # idna.IDNAError and UnicodeError are ValueErrors
        raise UnsafeUrl(f"host cannot be encoded: {exc}") from None
    if not host:
        raise UnsafeUrl("no host")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    private_allowed = policy.allows_private(host, port)
    if parsed.scheme != "https" and not private_allowed:
        raise UnsafeUrl("plain http")
    if (host == "localhost" or host.endswith(".localhost")) and not private_allowed:
        raise UnsafeUrl(f"host {host!r} is reserved for loopback (RFC 6761), before any lookup")
    literal = parse_address(host)
    if literal is None and _NUMERIC_HOST.match(host):
        raise UnsafeUrl(f"non-canonical numeric host {host!r}")
    if isinstance(literal, IPv4Address) and str(literal) != host:
        raise UnsafeUrl(f"non-canonical address {host!r}")
    if literal is not None and not is_public(literal) and not private_allowed:
        raise UnsafeUrl(f"address {literal} is not public")
    return Target(parsed, host, port, private_allowed)


_PRIVATE_CAUSES = ("plain http", "is not public", "reserved for loopback", "numeric host", "non-canonical address")


def unsafe_cause(url: str, policy: EgressPolicy) -> str:
    """Why a retrieval of `url` settled blocked/unsafe_url, for the caller (its result has no field
    for it): the URL's own fault when it has one, else what only the fetch could see (the host's
    addresses, a redirect); and how an operator opens the door when one can be opened."""
    door = (f"An operator can let a named host be reached at a private address and over plain http with "
            f"{ALLOW_ENV}=host:port (dangerous: anyone who may call retrieve can then reach it).")
    try:
        check_url(url, policy)
    except UnsafeUrl as refused:
        cause = str(refused)
        if cause == "plain http":
            return f"Why unsafe_url: plain http; only https URLs are fetched. {door}"
        if any(part in cause for part in _PRIVATE_CAUSES):
            return (f"Why unsafe_url: {cause}; a private, loopback, link-local or other non-public address "
                    f"is not fetched. {door}")
        return f"Why unsafe_url: {cause}; only public https URLs without credentials are fetched."
    return ("Why unsafe_url: the URL is a public https URL, but its host resolved to a private, loopback, "
            "link-local or other non-public address, or it redirected to a URL that is not public https "
            f"(plain http, credentials in the URL, such an address). {door}")


def egress_cause(url: str, failure: str | None, policy: EgressPolicy) -> str | None:
    """Why a retrieval of `url` settled unavailable/egress_unavailable, for the caller, when the fetch
    knew more than the reason says (`failure`, stored with the receipt); None otherwise. So far: an
    https URL whose host answered plain HTTP (its TLS handshake failed), and what to do about it."""
    from evidencekit.server.evidence.fetch.fetcher import PLAIN_HTTP_HOST

    if not failure or not failure.startswith(PLAIN_HTTP_HOST):
        return None
    plain = "http://" + url.split("://", 1)[1] if "://" in url else url
    why = (f"Why egress_unavailable: {url} could not be read: the TLS handshake failed because the host answered "
           "plain HTTP, not HTTPS.")
    try:
        check_url(plain, policy)
    except UnsafeUrl:
        return (f"{why} Use the site's https address if it has one (another host or port). Only https is fetched, "
                f"so {plain} settles blocked/unsafe_url unless an operator lets that host through with "
                f"{ALLOW_ENV}=host:port (dangerous: anyone who may call retrieve can then reach it).")
    return f"{why} This host is let through over plain http here ({ALLOW_ENV}): retrieve {plain} instead."
