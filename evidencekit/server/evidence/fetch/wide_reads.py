"""A network stream whose TLS reads return every record already received, not one a call.

httpcore asks its stream for up to 64 KiB at a time; anyio's TLS stream hands back one TLS record
(at most 16 KiB) a call, though the socket read behind it brought up to 64 KiB into the SSL
object's buffer. A 200 KB page then came up through httpx, httpcore, h11 and anyio (a cancel scope
a read) in 13 pieces: 40 % of the server's event-loop time during a drain (scripts/bench_drain.py).
Here a read takes the first record the usual way, then whatever records the SSL object can already
decrypt (ssl.SSLObject.read until it wants more input), up to the size asked: 4 pieces.

The SSL object is the stream's public `ssl_object` extra (httpcore's get_extra_info). Reading it
directly is what anyio's TLS stream does itself between socket reads; anything but "wants more
input" ends the extra reads, and the next read meets it through anyio as before (an end of stream,
a broken connection). A TLS 1.3 key update asked by the server is answered on the next read or write
(anyio sends what the SSL object queued then), not at once.
"""

from __future__ import annotations

import ssl
import typing

from httpcore import AsyncNetworkStream


class WideReadStream(AsyncNetworkStream):
    def __init__(self, inner: AsyncNetworkStream, ssl_object: ssl.SSLObject | None = None) -> None:
        self._inner = inner
        self._ssl_object = ssl_object

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = await self._inner.read(max_bytes, timeout)
        ssl_object = self._ssl_object
        if ssl_object is None or not data or len(data) >= max_bytes:
            return data
        pieces, size = [data], len(data)
        while size < max_bytes:
            try:
                more = ssl_object.read(max_bytes - size)
            except ssl.SSLError:  # SSLWantReadError: nothing more received yet; anything else: see above
                break
            if not more:
                break
            pieces.append(more)
            size += len(more)
        return data if len(pieces) == 1 else b"".join(pieces)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> AsyncNetworkStream:
        secured = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        ssl_object = secured.get_extra_info("ssl_object")
        return WideReadStream(secured, ssl_object if isinstance(ssl_object, ssl.SSLObject) else None)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)
