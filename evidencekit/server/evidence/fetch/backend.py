"""An httpcore network backend that connects only to addresses the egress policy allows.

The URL's host is resolved once per connection, every resolved address is checked, and the
socket is opened to a checked address; TLS still runs against the hostname (SNI and certificate
verification are httpcore's, on the original host), so DNS rebinding between check and connect
cannot redirect the connection.

Its streams read a TLS connection's received records together (fetch/wide_reads.py).

The sockets themselves are httpcore's public AnyIOBackend (what httpcore's own default picks on
asyncio; its AutoBackend is private): tests/server/fetch/test_fetcher.py holds it to connecting to
the literal address it is given and to raising httpcore.ConnectError on a refused one, on the
lowest and highest httpcore the pin allows (1.0.9 both, tested; with anyio 4.10.0 and 4.16.0).
"""

from __future__ import annotations

import asyncio
import socket
import typing
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

import httpcore
from httpcore import AnyIOBackend, AsyncNetworkBackend, AsyncNetworkStream

from evidencekit.server.evidence.fetch.addresses import IPAddress, is_public, parse_address
from evidencekit.server.evidence.fetch.policy import EgressPolicy
from evidencekit.server.evidence.fetch.wide_reads import WideReadStream

Resolver = Callable[[str, int], Awaitable[list[str]]]
RECENT_CONNECTIONS = 100  # how many connections `connected` remembers


class BlockedAddress(Exception):
    """The host resolved to an address a public fetch may not reach."""

    def __init__(self, host: str, address: IPAddress) -> None:
        super().__init__(f"{host} resolves to non-public address {address}")
        self.host, self.address = host, address


class ResolutionFailed(Exception):
    pass


async def system_resolver(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ResolutionFailed(f"cannot resolve {host}: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedBackend(AsyncNetworkBackend):
    def __init__(self, policy: EgressPolicy, resolver: Resolver = system_resolver,
                 inner: AsyncNetworkBackend | None = None) -> None:
        self.policy = policy
        self.resolver = resolver
        self.inner = inner or AnyIOBackend()
        # (host, port, address) of the most recent connections: where a fetch really went
        self.connected: deque[tuple[str, int, str]] = deque(maxlen=RECENT_CONNECTIONS)

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        literal = parse_address(host)
        if literal is not None:
            return [literal]
        names = await self.resolver(host, port)
        addresses = [a for a in (parse_address(name.split("%")[0]) for name in names) if a is not None]
        if not addresses:
            raise ResolutionFailed(f"{host} has no address")
        return addresses

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[typing.Any] | None = None) -> AsyncNetworkStream:
        addresses = await self.resolve(host, port)
        if not self.policy.allows_private(host, port):
            for address in addresses:
                if not is_public(address):
                    raise BlockedAddress(host, address)
        last: Exception | None = None
        for address in addresses:
            try:
                stream = await self.inner.connect_tcp(str(address), port, timeout=timeout,
                                                      local_address=local_address,
                                                      socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
                continue
            self.connected.append((host, port, str(address)))
            return WideReadStream(stream)
        assert last is not None
        raise last

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[typing.Any] | None = None) -> AsyncNetworkStream:
        raise httpcore.ConnectError("public fetches never use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
