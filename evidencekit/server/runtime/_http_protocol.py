"""uvicorn's httptools protocol, hardened against slow and greedy clients before any
authentication runs.

- The request head (request line and headers) is bounded: uvicorn bounds it only with h11
  (h11_max_incomplete_event_size); with httptools the parser keeps every byte of an unfinished
  header. Past MAX_HEAD_BYTES the request gets a JSON 431 and the connection is closed. The bytes
  are counted before the parser sees them, up to the blank line that ends the head, so a head sent
  in one write is held to the same byte as one sent in many (a 70 KB head in one write passed a
  64 KiB bound when whole writes were counted after parsing). One case is bounded by a read rather
  than to the byte: a pipelined head starting in the same read as the previous request's end.
- A request must arrive whole (head and body) within `read_seconds` of its first byte, and a new
  connection must start one within that time: a client that trickles bytes (slowloris) or opens
  connections and sends nothing gets a JSON 408 and loses the connection.
- Both that deadline and uvicorn's keep-alive timeout (an idle connection closed) are kept by one
  sweep per event loop over its connections, every quarter of the shorter of the two (at most every
  second), so a connection is cut up to that much after its time. uvicorn arms and cancels a timer
  per response for the keep-alive, and a deadline timer per request came on top: each pair (uvloop's
  call_later, then its cancel) cost ~5-9 us of the ~55 us a status read spends in the protocol and
  the app (measured through this protocol with raw requests and no sockets).
- A closed connection whose client does not take its last bytes is dropped with them after
  `close_linger` seconds (60), and at once when it is displaced (the budget no longer counts it).
- Connections are admitted by a ConnectionBudget (_connection_budget.py): `max_connections` in all,
  `per_client` per address (behind a proxy every client has the proxy's address: raise it there),
  a connection not in a request displaced when the budget is full, and `reserve` more for the
  `reserved_paths` (a health check) while every connection is in a request. Refusals are JSON 503s.
  uvicorn's own `limit_concurrency` must stay off beside it: it counts every open connection,
  partial heads included, and answered even the health check 503 once they filled it.

Responses also go out in one write each, head and body together (corked_transport).

It is built on uvicorn's httptools protocol through uvicorn_adapter.HttpToolsAdapter, which holds
every use of uvicorn's internals: this module overrides asyncio.Protocol's methods and the adapter's
hooks, and touches nothing else of uvicorn's.
"""

from __future__ import annotations

import asyncio
from http import HTTPStatus
from typing import Any, ClassVar
from weakref import WeakKeyDictionary

from evidencekit.server.runtime._connection_budget import Admission, ConnectionBudget
from evidencekit.server.runtime._corked_transport import CorkedTransport
from evidencekit.server.runtime._errors import (
    ApiError,
    HeadTooLarge,
    RequestTimeout,
    ServiceUnavailable,
)
from evidencekit.server.runtime._http_errors import error_answer
from evidencekit.server.runtime._uvicorn_adapter import HttpToolsAdapter

MAX_HEAD_BYTES = 64 * 1024
HEAD_END = b"\r\n\r\n"
BUSY = "the server holds as many connections as it takes; try again shortly"


def _refusal(error: ApiError) -> bytes:
    """A whole response, written to the socket before any app runs: `error` answered as every error
    is (http_errors.error_answer; no request id exists yet), the connection closed after it."""
    answer = error_answer(error)
    head = "".join(f"{name.decode('latin-1')}: {value.decode('latin-1')}\r\n" for name, value in answer.raw_headers)
    status = answer.status_code
    return f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n{head}connection: close\r\n\r\n".encode() + answer.body


_BUSY = ServiceUnavailable(BUSY + " (only the health check is answered now)", code="server_busy", retry_after=1)


async def _busy(scope: Any, receive: Any, send: Any) -> None:
    """What a reserved connection gets for anything but a reserved path."""
    await error_answer(_BUSY, scope, headers=[(b"connection", b"close")])(scope, receive, send)


_TOO_LARGE = _refusal(HeadTooLarge(f"the request line and headers are larger than {MAX_HEAD_BYTES} bytes"))


class _Sweep:
    """One event loop's open connections of one protocol class, its sweep's next call and how often
    it runs."""

    __slots__ = ("connections", "handle", "every")

    def __init__(self, every: float) -> None:
        self.connections: set[BoundedHeadHttpTools] = set()
        self.handle: asyncio.TimerHandle | None = None
        self.every = every


class BoundedHeadHttpTools(HttpToolsAdapter):
    read_seconds: ClassVar[float] = 10.0
    # how long a closed connection may wait for its client to take its last bytes (a large answer
    # to a slow reader) before it is dropped with them
    close_linger: ClassVar[float] = 60.0
    per_client: ClassVar[int] = 256
    reserved_paths: ClassVar[frozenset[str]] = frozenset({"/healthz"})
    # open connections by client address, per protocol class (bounded_protocol makes one per server)
    _budget: ClassVar[ConnectionBudget[BoundedHeadHttpTools]] = ConnectionBudget(2048, 256, 32)
    _sweeps: ClassVar[WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweep]] = WeakKeyDictionary()  # per protocol class
    _corked: CorkedTransport  # the transport uvicorn writes to (this connection's), from connection_made on

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading_head = True
        self._head_bytes = 0
        self._head_tail = b""  # the head's last bytes so far: its blank line may straddle two reads
        self._head_started = False  # a byte other than CR or LF of this head has come
        self._in_request = False  # from a request's head until its response is complete
        self._reserved = False  # admitted past the budget: reserved paths only
        self._reading_since: float | None = None  # loop time a request (or the connection) started
        self._idle_since: float | None = None  # loop time a keep-alive connection was left waiting
        self._counted: str | None = None
        self._closing_since: float | None = None  # loop time the sweep first saw it closing

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._corked = CorkedTransport(transport, self.event_loop)
        super().connection_made(self._corked)
        host = self.client_host
        if host is not None:
            verdict, displaced = self._budget.admit(host, self, _not_in_a_request)
            if displaced is not None:
                displaced._displace()
            if verdict in (Admission.CLIENT_FULL, Admission.FULL):
                message = (f"this address holds {self.per_client} connections already"
                           if verdict is Admission.CLIENT_FULL else BUSY)
                transport.write(_refusal(ServiceUnavailable(message, code="too_many_connections", retry_after=1)))
                transport.close()
                return
            self._reserved = verdict is Admission.RESERVED
            self._counted = host
        self._reading_since = self.event_loop.time()  # a connection that never sends a request does not hold its descriptor for ever
        loop = self.event_loop
        sweep = self._sweeps.get(loop)
        if sweep is None:
            every = max(0.01, min(1.0, self.read_seconds / 4, self.keep_alive_seconds / 4))
            sweep = self._sweeps[loop] = _Sweep(every)
        sweep.connections.add(self)
        if sweep.handle is None:  # it stops when the loop's last connection goes
            sweep.handle = loop.call_later(sweep.every, self._sweep, loop, sweep)

    def connection_lost(self, exc: Exception | None) -> None:
        self._reading_since = None
        sweep = self._sweeps.get(self.event_loop)
        if sweep is not None:
            sweep.connections.discard(self)
        if self._counted is not None:
            self._budget.release(self._counted, self)
            self._counted = None
        super().connection_lost(exc)

    def _displace(self) -> None:
        """Make room for a new connection: a head still arriving is told so, an idle one just closed.
        One that still holds bytes its client has not read is dropped with them: the budget has let
        it go, so a close waiting for them would keep its socket and memory uncounted."""
        self._counted = None  # the budget has let it go already
        self._reading_since = self._idle_since = None
        if self._corked.get_write_buffer_size():
            self._corked.abort()
            return
        if not self._corked.is_closing():
            if self._head_bytes or self._head_tail:
                self._corked.write(_refusal(ServiceUnavailable(BUSY, code="server_busy", retry_after=1)))
            self._corked.close()

    @classmethod
    def _sweep(cls, loop: asyncio.AbstractEventLoop, sweep: _Sweep) -> None:
        """Cut the connections of `loop` whose request is past its deadline, close those idle past
        the keep-alive timeout; again later while any connection is open."""
        sweep.handle = None
        now = loop.time()
        late = now - cls.read_seconds
        for connection in list(sweep.connections):
            if connection._corked.is_closing():  # closed, its last bytes not yet taken by the client
                if connection._closing_since is None:
                    connection._closing_since = now
                elif connection._closing_since <= now - cls.close_linger:
                    connection._corked.abort()  # a client that does not read holds nothing for long
            elif connection._reading_since is not None and connection._reading_since <= late:
                connection._too_slow()
            elif connection._idle_since is not None and connection._idle_since <= now - connection.keep_alive_seconds:
                connection._idle_since = None
                connection.close_idle()
        if sweep.connections:
            sweep.handle = loop.call_later(sweep.every, cls._sweep, loop, sweep)

    def _too_slow(self) -> None:
        self._reading_since = None
        if not self._corked.is_closing():
            self._corked.write(_refusal(RequestTimeout(f"the request did not arrive within {self.read_seconds:g} s")))
            self._corked.close()

    def data_received(self, data: bytes) -> None:
        if self._reading_head and not self._corked.is_closing():
            # Counted before parsing, to the head's blank line when it is in this read.
            # Empty lines before a request line are skipped by the parser: no end of a head there.
            tail, start = self._head_tail, 0
            if not self._head_started:  # the head (if any) starts in this read: nothing before it counts
                tail, start = b"", len(data) - len(data.lstrip(b"\r\n"))
                self._head_started = start < len(data)
            seen = tail + data
            end = seen.find(HEAD_END, start) if self._head_started else -1
            in_head = len(data) if end < 0 else max(0, end + len(HEAD_END) - len(tail))
            if self._head_bytes + in_head > MAX_HEAD_BYTES:
                self._corked.write(_TOO_LARGE)
                self._corked.close()
                return
            self._head_bytes += in_head
            self._head_tail = seen[-(len(HEAD_END) - 1):]
        HttpToolsAdapter.data_received(self, data)  # by name: super() makes an object on every read

    def request_began(self) -> None:
        if self._reading_since is None:  # else the connection's own deadline still runs
            self._reading_since = self.event_loop.time()

    def head_complete(self) -> None:
        self._reading_head = False
        self._in_request = True
        if self._reserved and self.request_path() not in self.reserved_paths:
            self.answer_with(_busy)  # this connection's requests only

    def request_complete(self) -> None:
        self._reading_since = None  # the whole request is in: answering it may take as long as it takes
        self._reading_head, self._head_bytes, self._head_tail = True, 0, b""  # next comes the next head
        self._head_started = False

    def response_complete(self, pipelined: bool) -> None:
        self._corked.flush()  # the whole response, in one write, before the next request is read
        self._in_request = pipelined

    def idle_began(self) -> None:
        self._idle_since = self.event_loop.time()  # the sweep closes it after the keep-alive timeout

    def idle_ended(self) -> None:
        self._idle_since = None


def _not_in_a_request(connection: BoundedHeadHttpTools) -> bool:
    return not connection._in_request


def bounded_protocol(read_seconds: float = 10.0, per_client: int = 256, max_connections: int = 2048,
                     reserve: int = 32, reserved_paths: frozenset[str] = frozenset({"/healthz"}),
                     close_linger: float = 60.0) -> type[BoundedHeadHttpTools]:
    """The protocol class to give uvicorn (`http=`, with `limit_concurrency=None`), with its own
    limits and connection counts."""
    return type("BoundedHttpTools", (BoundedHeadHttpTools,),
                {"read_seconds": read_seconds, "per_client": per_client, "reserved_paths": reserved_paths,
                 "close_linger": close_linger,
                 "_budget": ConnectionBudget(max_connections, per_client, reserve),
                 "_sweeps": WeakKeyDictionary()})
