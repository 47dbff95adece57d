"""Read a response body under a byte cap counted on the wire and after decompression.

A gzip bomb stops at the cap: decompression output is bounded per chunk, never inflated whole.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass


class UnsupportedEncoding(Exception):
    pass


@dataclass
class Body:
    data: bytes
    over_cap: bool  # the wire or decoded size passed the cap; data is its first cap bytes


class _Decoder:
    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        if encoding == "gzip" or encoding == "x-gzip":
            self._zlib: zlib._Decompress | None = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS)
            self._first = True
        elif encoding in ("", "identity"):
            self._zlib = None
        else:
            raise UnsupportedEncoding(f"content-encoding {encoding!r}")

    def feed(self, chunk: bytes, room: int) -> tuple[bytes, bool]:
        """Decoded bytes (at most room + 1) and whether more output was pending past that."""
        if self._zlib is None:
            return chunk[: room + 1], len(chunk) > room + 1
        try:
            out = self._zlib.decompress(chunk, room + 1)
        except zlib.error:
            if self.encoding == "deflate" and getattr(self, "_first", False):
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
                self._first = False
                return self.feed(chunk, room)
            raise
        self._first = False
        return out, bool(self._zlib.unconsumed_tail)


async def read_capped(chunks: AsyncIterator[bytes], encoding: str, cap: int) -> Body:
    """Stop reading as soon as either the raw or the decoded size passes `cap`."""
    encodings = [e.strip().lower() for e in encoding.split(",") if e.strip()]
    if len(encodings) > 1:
        raise UnsupportedEncoding(f"content-encoding {encoding!r}")
    decoder = _Decoder(encodings[0] if encodings else "")
    raw_seen = 0
    out = bytearray()
    async for chunk in chunks:
        raw_seen += len(chunk)
        data, pending = decoder.feed(chunk, cap - len(out))
        out += data
        if raw_seen > cap or len(out) > cap or pending:
            del out[cap:]  # in place: a slice would be one more copy of a body the size of the cap
            return Body(bytes(out), True)
    return Body(bytes(out), False)
