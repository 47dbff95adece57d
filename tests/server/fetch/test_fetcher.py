"""The fetcher against real servers on loopback: HTTPS with a test CA, plain HTTP through the allowlist."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from evidencekit.server.evidence.fetch.backend import RECENT_CONNECTIONS, GuardedBackend
from evidencekit.server.evidence.fetch.body import read_capped
from evidencekit.server.evidence.fetch.fetcher import (
    Fetcher,
    FetchError,
    FetchLimits,
    parse_retry_after,
)
from evidencekit.server.evidence.fetch.policy import EgressPolicy, parse_allowlist
from tests.origin import LocalCA, Origin, Reply, gzip_bomb
from tests.server.conftest import fake_resolver

pytestmark = pytest.mark.anyio


def port_of(origin: Origin) -> int:
    return int(origin.url.rsplit(":", 1)[1])


@pytest.fixture
async def fetcher(origin: Origin, plain_origin: Origin, tls: LocalCA) -> AsyncIterator[Fetcher]:
    allow = parse_allowlist(f"127.0.0.1:{port_of(origin)},localhost:{port_of(origin)},127.0.0.1:{port_of(plain_origin)}")
    limits = FetchLimits(max_bytes=64 * 1024, connect_timeout=2, read_timeout=1, deadline=3)
    client = Fetcher(EgressPolicy(allow), limits, ssl_context=tls.client_context(), resolver=fake_resolver)
    yield client
    await client.aclose()


async def test_https_page_is_fetched_from_the_checked_address(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.reply("/page", Reply(b"<html><p>hello</p></html>", headers={"content-language": "de, en"}))
    url = url.replace("127.0.0.1", "localhost")
    response = await fetcher.fetch(url, "text/html")
    assert (response.status, response.media_type, response.charset) == (200, "text/html", "utf-8")
    assert response.body == b"<html><p>hello</p></html>"
    assert response.content_language == "de"
    assert fetcher.backend.connected[-1][0] == "localhost"
    assert fetcher.backend.connected[-1][2] in ("127.0.0.1", "::1")


async def test_plain_http_only_through_the_allowlist(fetcher: Fetcher, plain_origin: Origin) -> None:
    url = plain_origin.reply("/plain", Reply(b"ok", content_type="text/plain"))
    assert (await fetcher.fetch(url, "*/*")).body == b"ok"


async def test_redirects_are_followed_and_counted(fetcher: Fetcher, origin: Origin) -> None:
    final = origin.reply("/final", Reply(b"done", content_type="text/plain"))
    origin.reply("/r2", Reply(status=307, headers={"location": "/final"}))
    first = origin.reply("/r1", Reply(status=301, headers={"location": origin.url + "/r2"}))
    response = await fetcher.fetch(first, "*/*")
    assert (response.url, response.body) == (final, b"done")
    assert response.redirects == [origin.url + "/r2", final]


async def test_more_than_five_redirects_stop(fetcher: Fetcher, origin: Origin) -> None:
    for hop in range(7):
        origin.reply(f"/loop{hop}", Reply(status=302, headers={"location": f"/loop{hop + 1}"}))
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch(origin.url + "/loop0", "*/*")
    assert caught.value.reason == "unavailable" and "redirects" in caught.value.detail


async def test_a_gzip_bomb_stops_at_the_cap(fetcher: Fetcher, origin: Origin) -> None:
    bomb = gzip_bomb(200 * 1024 * 1024)
    assert len(bomb) < 300 * 1024
    url = origin.reply("/bomb", Reply(bomb, headers={"content-encoding": "gzip"}, chunks=64))
    response = await fetcher.fetch(url, "*/*")
    assert response.over_cap and len(response.body) == 64 * 1024


async def test_a_gzip_bomb_is_inflated_only_up_to_the_cap() -> None:
    """Bounded work, not just a bounded result: reading stops at the first piece that passes the cap."""
    bomb = gzip_bomb(200 * 1024 * 1024)
    pieces = [bomb[start:start + 4096] for start in range(0, len(bomb), 4096)]
    consumed = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal consumed
        for piece in pieces:
            consumed += 1
            yield piece

    body = await read_capped(chunks(), "gzip", 64 * 1024)
    assert body.over_cap and len(body.data) == 64 * 1024
    assert consumed == 1 < len(pieces)


async def test_a_large_body_is_cut_at_the_cap(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.reply("/large", Reply(b"a" * 500_000, content_type="text/plain", chunks=20))
    response = await fetcher.fetch(url, "*/*")
    assert response.over_cap and response.body == b"a" * (64 * 1024)


async def test_a_body_cut_at_the_cap_leaves_nothing_for_the_garbage_collector(fetcher: Fetcher,
                                                                            origin: Origin) -> None:
    """The unread rest of the body sits in the connection's buffers: they must go with the fetch,
    not whenever the collector next runs (serve runs it rarely: server/heap.py)."""
    import gc

    import httpx

    url = origin.reply("/large-for-gc", Reply(b"a" * 2_000_000, content_type="text/plain", chunks=40))
    await fetcher.fetch(url, "*/*")  # a first connection: the pool's own objects live on
    gc.collect()
    gc.disable()
    try:
        response = await fetcher.fetch(url, "*/*")
        assert response.over_cap
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, httpx.Response | httpx.Request)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


async def test_a_body_cut_short_keeps_what_arrived(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.reply("/short", Reply(b"x" * 1000, content_type="text/plain", declared_length=5000, chunks=4))
    response = await fetcher.fetch(url, "*/*")
    assert response.cut_short and response.body == b"x" * 1000


async def test_slow_origin_times_out(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.reply("/slow", Reply(b"late", delay=5))
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch(url, "*/*")
    assert caught.value.reason == "timeout"


async def test_error_statuses_come_back_with_retry_after(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.reply("/busy", Reply(b"slow down", 429, "text/plain", headers={"retry-after": "120"}))
    response = await fetcher.fetch(url, "*/*")
    assert (response.status, response.retry_after) == (429, 120)


async def test_unread_media_is_not_downloaded(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.reply("/img", Reply(b"\x89PNG" + b"\0" * 100_000, content_type="image/png"))
    response = await fetcher.fetch(url, "*/*", wants_body=lambda media: media != "image/png")
    assert (response.media_type, response.body, response.body_read) == ("image/png", b"", False)


async def test_an_untrusted_certificate_is_refused(origin: Origin) -> None:
    fetcher = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{port_of(origin)}")), resolver=fake_resolver)
    try:
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(origin.url + "/page", "*/*")
    finally:
        await fetcher.aclose()
    assert caught.value.reason == "egress_unavailable" and "CERTIFICATE" in caught.value.detail.upper()


async def test_https_to_a_plain_http_host_is_told_apart_from_other_tls_failures(fetcher: Fetcher,
                                                                               plain_origin: Origin,
                                                                               origin: Origin) -> None:
    """A TLS handshake with a server that answers plain HTTP fails as 'wrong version number' (or
    'record layer failure'): egress_unavailable as any TLS failure, its detail saying what happened;
    an untrusted certificate or a closed port says no such thing."""
    from evidencekit.server.evidence.fetch.fetcher import PLAIN_HTTP_HOST

    https = plain_origin.reply("/plain-over-tls", Reply(b"ok", content_type="text/plain")).replace("http://", "https://")
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch(https, "*/*")
    assert caught.value.reason == "egress_unavailable" and caught.value.detail.startswith(PLAIN_HTTP_HOST)
    untrusting = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{port_of(origin)},127.0.0.1:9")),
                         resolver=fake_resolver)
    try:
        for url in (origin.url + "/page", "https://127.0.0.1:9/"):
            with pytest.raises(FetchError) as caught:
                await untrusting.fetch(url, "*/*")
            assert caught.value.reason == "egress_unavailable" and PLAIN_HTTP_HOST not in caught.value.detail
    finally:
        await untrusting.aclose()


async def test_dns_and_connect_failures_are_egress_unavailable(fetcher: Fetcher, origin: Origin) -> None:
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch("https://no-such-host.invalid/", "*/*")
    assert caught.value.reason == "egress_unavailable"
    closed = Fetcher(EgressPolicy(parse_allowlist("127.0.0.1:9")), resolver=fake_resolver)
    try:
        with pytest.raises(FetchError) as caught:
            await closed.fetch("http://127.0.0.1:9/", "*/*")
    finally:
        await closed.aclose()
    assert caught.value.reason == "egress_unavailable"


async def test_unknown_content_encoding_is_unsupported(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.reply("/br", Reply(b"\x1b\x00", headers={"content-encoding": "br"}))
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch(url, "*/*")
    assert caught.value.reason == "unsupported_content"


def test_retry_after_forms() -> None:
    assert parse_retry_after("30") == 30
    assert parse_retry_after("0") == 1
    assert parse_retry_after("999999") == 86400
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412420.0) == 60
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


async def test_the_backend_remembers_only_its_recent_connections(origin: Origin) -> None:
    """A long-running worker connects millions of times; the record of where it connected is bounded."""
    port = int(origin.url.rsplit(":", 1)[1])
    backend = GuardedBackend(EgressPolicy(parse_allowlist(f"127.0.0.1:{port}")))
    for _ in range(RECENT_CONNECTIONS + 20):
        stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
        await stream.aclose()
    assert len(backend.connected) == RECENT_CONNECTIONS
    assert backend.connected[-1] == ("127.0.0.1", port, "127.0.0.1")


async def test_the_backend_connects_to_the_checked_address_and_moves_past_a_refusing_one(origin: Origin) -> None:
    """What GuardedBackend relies on from httpcore's network backend: given a literal address it
    connects there (the name is resolved once, by the guard, so a rebinding DNS answer cannot move the
    socket), and an address that refuses raises httpcore.ConnectError, so the next checked one is tried."""
    port = port_of(origin)
    asked: list[str] = []

    async def resolver(host: str, _: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.2", "127.0.0.1"]  # nothing listens on 127.0.0.2: refused at once

    backend = GuardedBackend(EgressPolicy(parse_allowlist(f"pinned.test:{port}")), resolver)
    stream = await backend.connect_tcp("pinned.test", port, timeout=5)
    try:
        assert stream.get_extra_info("server_addr")[:2] == ("127.0.0.1", port)
    finally:
        await stream.aclose()
    assert asked == ["pinned.test"]
    assert backend.connected[-1] == ("pinned.test", port, "127.0.0.1")


def test_a_ca_bundle_adds_to_the_system_roots(tls: LocalCA, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An intranet CA must not cost every public site its verification."""
    from evidencekit.server.evidence.fetch.fetcher import default_ssl_context
    from evidencekit.server.evidence.settings import EvidenceSettings

    system = default_ssl_context().cert_store_stats()["x509_ca"]
    bundle = tmp_path / "intranet.pem"
    tls.ca.cert_pem.write_to_path(str(bundle))
    assert default_ssl_context(str(bundle)).cert_store_stats()["x509_ca"] == system + 1
    read = EvidenceSettings.from_env({"EVIDENCEKIT_CA_BUNDLE": str(bundle)}).ca_bundle  # the setting it comes from
    assert default_ssl_context(read).cert_store_stats()["x509_ca"] == system + 1


async def test_no_log_shows_a_fetched_query_string(fetcher: Fetcher, origin: Origin,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """httpx logs every request it sends at INFO, with its URL; a query string may carry a secret."""
    caplog.set_level(logging.DEBUG)
    final = origin.reply("/landing", Reply(b"ok", content_type="text/plain"))
    first = origin.reply("/start", Reply(status=302, headers={"location": "/landing?session=hop-secret-2",
                                                             "set-cookie": "sid=cookie-secret-3"}))
    response = await fetcher.fetch(first + "?token=first-secret-1#frag", "*/*")
    assert response.body == b"ok" and response.url == final + "?session=hop-secret-2"
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert f"HTTP Request: GET {first} " in logged and f"HTTP Request: GET {final} " in logged  # it does log
    assert "secret" not in logged and "frag" not in logged


async def test_a_large_https_body_comes_up_in_pieces_of_what_arrived_not_a_tls_record_each(
        origin: Origin, tls: LocalCA) -> None:
    """A 200 KB page came up through httpx, httpcore, h11 and anyio in 13 pieces, one a 16 KiB TLS
    record, though each socket read brought 64 KiB: 40 % of the server's event-loop time in a drain.
    The backend's streams return what the TLS connection already holds, up to what is asked."""
    page = bytes(range(256)) * 800  # 204,800 bytes, every byte value
    url = origin.reply("/whole", Reply(page, content_type="application/octet-stream"))
    port = port_of(origin)
    backend = GuardedBackend(EgressPolicy(parse_allowlist(f"127.0.0.1:{port}")))
    stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
    stream = await stream.start_tls(tls.client_context(), "127.0.0.1", timeout=5)
    try:
        await stream.write(b"GET /whole HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", timeout=5)
        pieces = []
        while piece := await stream.read(64 * 1024, timeout=5):
            assert len(piece) <= 64 * 1024
            pieces.append(piece)
    finally:
        await stream.aclose()
    answer = b"".join(pieces)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(page) and url.endswith("/whole")
    assert len(pieces) < 10, [len(piece) for piece in pieces]
