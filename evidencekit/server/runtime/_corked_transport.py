"""A transport that sends what one turn of the event loop writes as one write.

uvicorn writes a response's head and its body with a write each, and uvloop sends each at once: two
system calls and two TCP segments per response. On loopback a write also runs the receiver's side of
TCP, so the two writes were ~20% of the server's CPU on a status read (perf, scripts/bench.py
status). Held until the response is complete (`flush`) or the turn ends (`call_soon`), the head and
body go out together. Nothing waits longer than the current turn, so a streamed body (MCP's event
stream) still goes out chunk by chunk; and nothing past HOLD_BYTES is held at all, so a large body
reaches the real transport at once and its flow control (pause_writing) works as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

HOLD_BYTES = 64 * 1024  # past this, held writes go out at once


class CorkedTransport(asyncio.Transport):
    """`transport`, with writes gathered until `flush` or the end of the loop's current turn."""

    __slots__ = ("_transport", "_loop", "_held", "_held_bytes", "_turn_end")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: list[bytes | bytearray | memoryview] = []
        self._held_bytes = 0
        self._turn_end: asyncio.Handle | None = None  # the flush at the end of this turn

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._held:
            self._turn_end = self._loop.call_soon(self._at_turn_end)
        self._held.append(data)
        self._held_bytes += len(data)
        if self._held_bytes >= HOLD_BYTES:
            self.flush()

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def _at_turn_end(self) -> None:
        self._turn_end = None
        self.flush()

    def flush(self) -> None:
        """Send what is held, in one write (nothing, once the connection is closing)."""
        if not self._held:
            return
        if self._turn_end is not None:  # flushed before the turn ended (a whole response): the
            self._turn_end.cancel()  # loop skips a cancelled call without running Python
            self._turn_end = None
        held, self._held, self._held_bytes = self._held, [], 0
        if not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held, self._held_bytes = [], 0
        if self._turn_end is not None:
            self._turn_end.cancel()
            self._turn_end = None
        self._transport.abort()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._held_bytes

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.flush()
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)
