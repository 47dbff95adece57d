from __future__ import annotations

import pytest

from evidencekit.server.evidence.fetch.addresses import is_public, parse_address
from evidencekit.server.evidence.fetch.policy import (
    EgressPolicy,
    UnsafeUrl,
    check_url,
    parse_allowlist,
)


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "240.0.0.1", "255.255.255.255", "192.0.2.1", "::1", "::", "fc00::1", "fd12::1",
    "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1",
    "64:ff9b::a00:1", "2002:7f00:1::", "2002:a00:1::", "::127.0.0.1", "2001:db8::1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo whose client is 127.0.0.1
    "fec0::1", "feff:ffff::1",  # site-local (fec0::/10): deprecated, still routed inside some sites
])
def test_non_public_addresses(address: str) -> None:
    parsed = parse_address(address)
    assert parsed is not None and not is_public(parsed)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8",
                                     "64:ff9b::808:808", "2002:808:808::"])
def test_public_addresses(address: str) -> None:
    parsed = parse_address(address)
    assert parsed is not None and is_public(parsed)


def test_allowlist_parsing() -> None:
    assert parse_allowlist(" localhost:8443 , 127.0.0.1:* ,[::1]:80") == parse_allowlist(
        "localhost:8443,127.0.0.1:*,::1:80")
    policy = EgressPolicy(parse_allowlist("localhost:8443,127.0.0.1:*"))
    assert policy.allows_private("LOCALHOST.", 8443) and not policy.allows_private("localhost", 8444)
    assert policy.allows_private("127.0.0.1", 1)
    for bad in ("localhost", "localhost:0", "localhost:http", ":80"):
        with pytest.raises(ValueError, match="EVIDENCEKIT_ALLOW_PRIVATE_HOSTS"):
            parse_allowlist(bad)


def test_allowlisted_hosts_may_use_plain_http() -> None:
    policy = EgressPolicy(parse_allowlist("127.0.0.1:8080"))
    assert check_url("http://127.0.0.1:8080/x", policy).private_allowed
    with pytest.raises(UnsafeUrl, match="plain http"):
        check_url("http://127.0.0.1:8081/x", policy)
    with pytest.raises(UnsafeUrl, match="plain http"):
        check_url("http://example.com/", policy)


def test_public_https_passes() -> None:
    target = check_url("https://Example.COM/a?b=1#c", EgressPolicy())
    assert (target.host, target.port, target.private_allowed) == ("example.com", 443, False)


@pytest.mark.parametrize("url", ["https://xn--localhost-/", "https://XN--LOCALHOST-.com/", "https://xn--a/",
                                 "https://xn--zz-/path?q=1"])
def test_a_host_that_cannot_be_encoded_is_an_unsafe_url(url: str) -> None:
    """An A-label idna refuses is judged here (unsafe_url), never an exception for the worker."""
    with pytest.raises(UnsafeUrl, match="cannot be encoded"):
        check_url(url, EgressPolicy())


@pytest.mark.parametrize("host", ["localhost", "localhost.", "LocalHost", "foo.localhost", "foo.localhost.",
                                  "a.b.LOCALHOST", "xn--caf-dma.localhost"])
def test_the_localhost_tree_is_refused_before_any_lookup(host: str) -> None:
    """RFC 6761 reserves every name under .localhost for loopback: no DNS answer can make one public."""
    with pytest.raises(UnsafeUrl, match="reserved for loopback"):
        check_url(f"https://{host}/x", EgressPolicy())
    if not host.startswith("xn--"):  # an operator's door still opens
        allowed = EgressPolicy(parse_allowlist(f"{host.rstrip('.').lower()}:443"))
        assert check_url(f"https://{host}/x", allowed).private_allowed


@pytest.mark.parametrize("host", ["localhost.example.com", "notlocalhost", "localhostx.com"])
def test_names_that_only_look_like_localhost_are_looked_up(host: str) -> None:
    assert check_url(f"https://{host}/", EgressPolicy()).host == host


def test_the_cause_of_unsafe_url_for_a_url_whose_own_form_is_fine_names_resolution_and_redirects() -> None:
    """A public https URL refused only at connect (its host resolved to a private address) or after a
    redirect: the cause says what the fetch saw and how an operator opens the door."""
    from evidencekit.server.evidence.fetch.policy import unsafe_cause

    said = unsafe_cause("https://intranet.example.com/wiki?token=abc", EgressPolicy())
    assert said.startswith("Why unsafe_url: the URL is a public https URL, but its host resolved to a private")
    assert "redirected" in said and "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS=host:port" in said and "abc" not in said
    loopback = unsafe_cause("https://localhost:8443/", EgressPolicy())
    assert "reserved for loopback" in loopback and "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS" in loopback


def test_a_plain_http_host_reached_over_https_is_explained_with_what_to_do() -> None:
    """egress_unavailable from a host that answered plain HTTP: retrieve its http:// URL where this
    server lets that host through, else the https address or the operator's setting."""
    from evidencekit.server.evidence.fetch.fetcher import PLAIN_HTTP_HOST
    from evidencekit.server.evidence.fetch.policy import egress_cause

    failure = f"{PLAIN_HTTP_HOST} ([SSL: WRONG_VERSION_NUMBER] wrong version number)"
    closed = egress_cause("https://example.com:8080/a", failure, EgressPolicy(parse_allowlist("")))
    assert closed is not None and "the host answered plain HTTP, not HTTPS" in closed
    assert "http://example.com:8080/a settles blocked/unsafe_url" in closed
    assert "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS=host:port" in closed
    allowed = egress_cause("https://10.0.0.7:8080/a", failure, EgressPolicy(parse_allowlist("10.0.0.7:8080")))
    assert allowed is not None and allowed.endswith("retrieve http://10.0.0.7:8080/a instead.")
    assert egress_cause("https://example.com/", "ConnectError: [Errno 111] Connection refused",
                        EgressPolicy(parse_allowlist(""))) is None
    assert egress_cause("https://example.com/", None, EgressPolicy(parse_allowlist(""))) is None
