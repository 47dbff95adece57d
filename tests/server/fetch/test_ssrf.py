"""A table of SSRF bypass attempts: every one is refused as unsafe_url, and none reaches the canary."""

from __future__ import annotations

import pytest

from evidencekit.server.evidence.fetch.fetcher import Fetcher, FetchError
from evidencekit.server.evidence.fetch.policy import EgressPolicy, parse_allowlist
from tests.origin import Canary, LocalCA, Origin, Reply
from tests.server.conftest import fake_resolver

DIRECT = [
    "http://127.0.0.1:{p}/",
    "https://127.0.0.1:{p}/",
    "https://localhost:{p}/",
    "https://LOCALHOST:{p}/",
    "https://localhost.:{p}/",
    "https://[::1]:{p}/",
    "https://2130706433:{p}/",
    "https://0x7f000001:{p}/",
    "https://0177.0.0.1:{p}/",
    "https://127.1:{p}/",
    "https://127.000.000.001:{p}/",
    "https://0x7f.0x0.0x0.0x1:{p}/",
    "https://0:{p}/",
    "https://0.0.0.0:{p}/",
    "https://[::ffff:127.0.0.1]:{p}/",
    "https://[::ffff:7f00:1]:{p}/",
    "https://[64:ff9b::7f00:1]:{p}/",
    "https://[2002:7f00:1::]:{p}/",
    "https://[::]:{p}/",
    "https://[::127.0.0.1]:{p}/",
    "https://user:pass@localhost:{p}/",
    "https://user@127.0.0.1:{p}/",
    "gopher://127.0.0.1:{p}/",
    "ftp://127.0.0.1:{p}/",
    "file:///etc/passwd",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::ffff:a9fe:a9fe]/latest/meta-data/",
    "https://10.0.0.1/",
    "https://172.16.0.1/",
    "https://192.168.1.1/",
    "https://100.64.0.1/",
    "https://[fc00::1]/",
    "https://[fe80::1]/",
    "https://224.0.0.1/",
    "https://metadata.test/",
    "https://intranet.test/",
    "https://loopback.test:{p}/",
    "https://mapped.test:{p}/",
    "https://mixed.test:{p}/",
]


@pytest.mark.anyio
@pytest.mark.parametrize("template", DIRECT)
async def test_direct_bypass_is_refused_without_a_connection(template: str, canary: Canary) -> None:
    fetcher = Fetcher(EgressPolicy(), resolver=fake_resolver)
    try:
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(template.format(p=canary.port), "*/*")
    finally:
        await fetcher.aclose()
    assert caught.value.reason == "unsafe_url", caught.value.detail
    assert canary.connections == 0
    assert not fetcher.backend.connected


REDIRECTED = [
    "https://127.0.0.1:{p}/",
    "http://localhost:{p}/",
    "https://2130706433:{p}/",
    "https://[::ffff:127.0.0.1]:{p}/",
    "https://loopback.test:{p}/",
    "https://user:secret@localhost:{p}/",
    "//127.0.0.1:{p}/",  # scheme-relative
]


@pytest.mark.anyio
@pytest.mark.parametrize("template", REDIRECTED)
async def test_redirect_to_a_bypass_is_refused(template: str, canary: Canary, origin: Origin, tls: LocalCA) -> None:
    port = int(origin.url.rsplit(":", 1)[1])
    path = f"/hop-{abs(hash(template))}"
    url = origin.reply(path, Reply(status=302, headers={"location": template.format(p=canary.port)}))
    fetcher = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{port}")), ssl_context=tls.client_context(),
                      resolver=fake_resolver)
    try:
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(url, "*/*")
    finally:
        await fetcher.aclose()
    assert caught.value.reason == "unsafe_url"
    assert "after a redirect" in caught.value.detail or "resolves to" in caught.value.detail
    assert canary.connections == 0
    assert [c[2] for c in fetcher.backend.connected] == ["127.0.0.1"]  # the origin only



@pytest.mark.anyio
async def test_the_canary_does_count_connections(canary: Canary) -> None:
    """Control: once the operator allows it, the same address is reached and counted."""
    fetcher = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{canary.port}")), resolver=fake_resolver)
    try:
        with pytest.raises(FetchError):
            await fetcher.fetch(f"http://127.0.0.1:{canary.port}/", "*/*")
    finally:
        await fetcher.aclose()
    assert canary.connections >= 1
