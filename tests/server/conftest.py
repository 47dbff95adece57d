from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidencekit.server.evidence.fetch.backend import ResolutionFailed, system_resolver
from tests.origin import LocalCA, Origin, make_ca, serve_origin

# Names the tests resolve without DNS (there is none here): each maps to non-public addresses only,
# so a failure of the guard could never reach beyond this machine.
FAKE_DNS = {
    "metadata.test": ["169.254.169.254"],
    "intranet.test": ["10.0.0.7"],
    "loopback.test": ["127.0.0.1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "mixed.test": ["198.51.100.7", "127.0.0.1"],  # one documentation address, one loopback
}


async def fake_resolver(host: str, port: int) -> list[str]:
    host = host.rstrip(".").lower()
    if host in FAKE_DNS:
        return FAKE_DNS[host]
    if host == "localhost":
        return await system_resolver(host, port)
    raise ResolutionFailed(f"cannot resolve {host} (tests have no DNS)")


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> LocalCA:
    return make_ca(Path(tmp_path_factory.mktemp("tls")))


@pytest.fixture(scope="session")
def origin(tls: LocalCA) -> Iterator[Origin]:
    with serve_origin(tls) as server:
        yield server


@pytest.fixture(scope="session")
def plain_origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server
