"""The HTTP protocol `evidencekit serve` runs: a request's head is bounded, its body is not cut by it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import httpx
import uvicorn
from uvicorn.server import ServerState

from evidencekit.server.runtime._http_protocol import (
    MAX_HEAD_BYTES,
    BoundedHeadHttpTools,
    bounded_protocol,
)
from tests.support import Hold, ManualClockLoop, eventually, live_server, on_manual_clock


async def echo_length(scope: dict[str, Any], receive: Any, send: Any) -> None:
    size = 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = str(size).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def test_an_oversized_head_is_refused_with_431_and_the_connection_closed() -> None:
    with live_server(echo_length, http=BoundedHeadHttpTools) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Filler: ")
            sent = 0
            try:
                while sent < 4 * MAX_HEAD_BYTES:  # a header that never ends
                    connection.sendall(b"a" * 4096)
                    sent += 4096
            except (BrokenPipeError, ConnectionResetError):
                pass
            answer = b""
            try:
                while chunk := connection.recv(65536):
                    answer += chunk
            except ConnectionResetError:
                pass
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert b'"code":"request_header_fields_too_large"' in answer


def test_ordinary_heads_and_bodies_pass_and_keep_alive_counts_each_request_anew() -> None:
    with live_server(echo_length, http=BoundedHeadHttpTools) as base, httpx.Client() as client:
        headers = {"X-Filler": "a" * (MAX_HEAD_BYTES // 2)}
        for _ in range(4):  # one connection: the heads together pass the bound, each alone does not
            response = client.post(base + "/", headers=headers, content=b"b" * 60_000)
            assert (response.status_code, response.text) == (200, "60000")


def read_all(connection: socket.socket) -> bytes:
    answer = b""
    try:
        while chunk := connection.recv(65536):
            answer += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return answer


def test_a_connection_that_sends_nothing_is_cut_with_a_408_on_a_real_server() -> None:
    """The sweep on uvicorn's own loop and clock: a client that never sends its request is answered
    408 and loses the connection (the socket's timeout is only how long the test waits for it)."""
    with live_server(echo_length, http=bounded_protocol(read_seconds=0.5)) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=60) as silent:
            answer = read_all(silent)
    assert answer.startswith(b"HTTP/1.1 408 ") and b'"code":"request_timeout"' in answer, answer[:200]


def test_a_request_that_trickles_or_never_comes_is_cut_at_the_read_deadline() -> None:
    """The deadline counts from the head's first byte (the connection's start, for one that sends
    nothing): bytes trickling in do not move it."""

    async def run(loop: ManualClockLoop) -> None:
        opened = connections(read_seconds=0.5, keep_alive=60)
        (trickling, trickling_transport), (silent, silent_transport) = opened(), opened()
        trickling.data_received(b"POST / HTTP/1.1\r\nHost: x\r\n")
        await loop.advance(0.3, step=0.05)
        trickling.data_received(b"X-Slow: 1\r\n")  # still within the head, and within its deadline
        assert not trickling_transport.closed and not silent_transport.closed
        await loop.advance(0.3, step=0.05)  # past the deadline (and a sweep), not past 0.5 s since the last byte
        for transport in (trickling_transport, silent_transport):
            assert transport.closed and len(transport.writes) == 1, transport.writes
            answer = transport.writes[0]
            assert answer.startswith(b"HTTP/1.1 408 ") and b'"code":"request_timeout"' in answer, answer[:200]
        for protocol in (trickling, silent):
            protocol.connection_lost(None)

    on_manual_clock(run)


def test_a_slow_answer_is_not_cut_by_the_read_deadline() -> None:
    answering = asyncio.Event()

    async def slow(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await answering.wait()  # the request itself arrived in time
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def run(loop: ManualClockLoop) -> None:
        protocol, transport = connections(read_seconds=0.5, keep_alive=60, app=slow)()
        protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")
        await loop.advance(2.0, step=0.05)  # four read deadlines
        assert not transport.closed and transport.writes == []
        answering.set()
        await loop.idle()
        assert not transport.closed and len(transport.writes) == 1 and transport.writes[0].endswith(b"\r\n\r\nok")
        protocol.connection_lost(None)

    on_manual_clock(run)


def test_one_client_holds_at_most_its_share_of_connections() -> None:
    with live_server(echo_length, http=bounded_protocol(read_seconds=5, per_client=3)) as base:
        port = int(base.rsplit(":", 1)[1])
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
        try:
            for connection in held:
                connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # half-sent requests
            with socket.create_connection(("127.0.0.1", port), timeout=5) as extra:
                answer = read_all(extra)
            assert answer.startswith(b"HTTP/1.1 503 ") and b"too_many_connections" in answer, answer[:200]
        finally:
            for connection in held:
                connection.close()
        for _ in range(50):  # the server notices the closed connections, then takes new ones
            response = httpx.post(base + "/", content=b"abc", timeout=5)
            if response.status_code == 200:
                break
        assert response.text == "3"


class RecordingTransport(asyncio.Transport):
    """What the protocol hands the socket: each write, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False
        self.closed_before_lost = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = self.aborted = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def writes_for(app: Any, *reads: bytes) -> RecordingTransport:
    """The writes `evidencekit serve`'s protocol makes for a request arriving in `reads`, once it
    has done all it does without time passing."""

    async def run(loop: ManualClockLoop) -> RecordingTransport:
        config = uvicorn.Config(app, lifespan="off", log_level="warning")
        config.load()
        protocol = bounded_protocol()(config=config, server_state=ServerState(), app_state={}, _loop=loop)
        transport = RecordingTransport()
        protocol.connection_made(transport)
        for read in reads:
            protocol.data_received(read)
            await loop.idle()
        transport.closed_before_lost = transport.closed
        protocol.connection_lost(None)
        return transport

    return on_manual_clock(run)


def test_a_response_goes_to_the_socket_in_one_write_head_and_body_together() -> None:
    request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
    transport = writes_for(echo_length, request)
    assert len(transport.writes) == 1, transport.writes
    assert transport.writes[0].startswith(b"HTTP/1.1 200 ") and transport.writes[0].endswith(b"\r\n\r\n3")
    assert not transport.closed_before_lost  # kept alive


def test_pipelined_requests_are_answered_in_order_one_write_each_and_close_flushes_first() -> None:
    one = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
    last = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nabcde"
    transport = writes_for(echo_length, one + last)
    assert [write.rsplit(b"\r\n", 1)[1] for write in transport.writes] == [b"3", b"5"], transport.writes
    assert transport.closed_before_lost


def test_a_streamed_body_goes_out_chunk_by_chunk_without_waiting_for_its_end() -> None:
    released = Hold()

    async def stream(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        await released.wait()  # held until the client has seen the first chunk
        await send({"type": "http.response.body", "body": b"second"})

    with live_server(stream, http=bounded_protocol()) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            seen = b""
            while b"first" not in seen:
                seen += connection.recv(65536)  # a chunk held back would time out here
            released.release()
            while not seen.endswith(b"0\r\n\r\n"):
                seen += connection.recv(65536)
        assert b"first" in seen and b"second" in seen


def test_a_large_body_written_in_one_turn_reaches_the_socket_as_it_goes() -> None:
    """Nothing past 64 KiB is held, so the real transport's flow control sees a large body."""
    chunk = b"z" * (1 << 20)

    async def big(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        for _ in range(5):  # no await that yields: one turn of the loop
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    transport = writes_for(big, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert len(transport.writes) >= 5, [len(write) for write in transport.writes]
    assert all(len(write) <= (1 << 20) + 1024 for write in transport.writes)
    assert sum(write.count(b"z") for write in transport.writes) == 5 << 20


ONE_BYTE_POST = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na"


def connections(read_seconds: float, keep_alive: float, close_linger: float = 60, app: Any = echo_length) -> Any:
    """A function opening connections of serve's protocol (`app` behind it) on the running loop."""
    loop = asyncio.get_running_loop()
    config = uvicorn.Config(app, lifespan="off", log_level="warning", timeout_keep_alive=keep_alive)
    config.load()
    protocol_class, state = bounded_protocol(read_seconds=read_seconds, close_linger=close_linger), ServerState()

    def opened() -> tuple[BoundedHeadHttpTools, RecordingTransport]:
        protocol = protocol_class(config=config, server_state=state, app_state={}, _loop=loop)
        transport = RecordingTransport()
        protocol.connection_made(transport)
        return protocol, transport

    return opened


def test_one_sweep_per_loop_cuts_late_requests_and_stops_with_the_last_connection() -> None:
    """The read deadline is kept by one sweep of the loop's connections, not a timer per request:
    connections coming and going never leave more than one sweep scheduled, a late head is cut
    within a sweep of its deadline, and the sweep stops once no connection is left."""

    async def run(loop: ManualClockLoop) -> None:
        opened = connections(read_seconds=0.2, keep_alive=60)  # swept every 0.05 s

        def sweeps_scheduled() -> int:
            return sum(1 for timer in loop._scheduled  # type: ignore[attr-defined]
                       if not timer.cancelled() and getattr(timer._callback, "__name__", "") == "_sweep")

        for _ in range(20):  # connections that answer a request at once and go
            protocol, transport = opened()
            protocol.data_received(ONE_BYTE_POST)
            await loop.idle()
            protocol.connection_lost(None)
            assert sweeps_scheduled() <= 1
        answered, answered_transport = opened()
        answered.data_received(ONE_BYTE_POST)
        late, late_transport = opened()
        late.data_received(b"POST / HTTP/1.1\r\nHost: x\r\n")  # a head that never ends
        assert sweeps_scheduled() == 1
        await loop.advance(0.15, step=0.05)
        assert not late_transport.closed  # before its deadline
        await loop.advance(0.1, step=0.05)  # the deadline and one sweep interval
        assert late_transport.closed and late_transport.writes[-1].startswith(b"HTTP/1.1 408 ")
        assert not answered_transport.closed  # its request came whole: no deadline on keep-alive
        late.connection_lost(None)
        answered.connection_lost(None)
        await loop.advance(0.05)
        assert sweeps_scheduled() == 0

    on_manual_clock(run)


def test_an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout() -> None:
    """uvicorn's keep-alive timeout, kept by the sweep: an answered connection left idle is closed
    once the timeout passes; a new request on it in time starts the wait anew."""

    async def run(loop: ManualClockLoop) -> None:
        opened = connections(read_seconds=10, keep_alive=0.3)  # swept every 0.075 s
        (idle, idle_transport), (reused, reused_transport) = opened(), opened()
        idle.data_received(ONE_BYTE_POST)
        reused.data_received(ONE_BYTE_POST)
        await loop.advance(0.2, step=0.025)
        assert not idle_transport.closed and len(idle_transport.writes) == 1  # answered, not yet idle for long
        reused.data_received(ONE_BYTE_POST)  # in time: kept open for another 0.3 s
        await loop.advance(0.25, step=0.025)  # 0.45 s idle, past the timeout and a sweep
        assert idle_transport.closed and len(idle_transport.writes) == 1
        assert not reused_transport.closed and len(reused_transport.writes) == 2
        await loop.advance(0.2, step=0.025)
        assert reused_transport.closed
        for protocol in (idle, reused):
            protocol.connection_lost(None)

    on_manual_clock(run)


def request_with_head_of(size: int) -> bytes:
    """A POST whose head (request line, headers and the blank line) is exactly `size` bytes."""
    start = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nX-Filler: "
    filler = size - len(start) - len(b"\r\n\r\n")
    return start + b"a" * filler + b"\r\n\r\n" + b"b"


def send_and_read(port: int, request: bytes, piece: int | None = None) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        try:
            for start in range(0, len(request), piece or len(request)):
                connection.sendall(request[start:start + (piece or len(request))])
        except (BrokenPipeError, ConnectionResetError):
            pass
        # the server may have answered and closed already (a refused head): read what it sent
        with contextlib.suppress(OSError):
            connection.shutdown(socket.SHUT_WR)
        return read_all(connection)


def test_the_head_limit_is_exact_whether_the_head_comes_in_one_write_or_many() -> None:
    """A 70 KB head sent in one write passed a 64 KiB limit (whole reads were counted after parsing)."""
    with live_server(echo_length, http=bounded_protocol()) as base:
        port = int(base.rsplit(":", 1)[1])
        for piece in (None, 1000, 7):
            at_limit = send_and_read(port, request_with_head_of(MAX_HEAD_BYTES), piece)
            assert at_limit.startswith(b"HTTP/1.1 200 ") and at_limit.endswith(b"1"), (piece, at_limit[:100])
            over = send_and_read(port, request_with_head_of(MAX_HEAD_BYTES + 1), piece)
            assert over.startswith(b"HTTP/1.1 431 "), (piece, over[:100])
        assert send_and_read(port, request_with_head_of(70 * 1024)).startswith(b"HTTP/1.1 431 ")


def health_and_slow(operation: Hold) -> Any:
    """/healthz answers at once; any other path holds its answer until `operation` is released (an
    operation in progress)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await receive()
        if scope["path"] != "/healthz":
            await operation.wait()
        body = b"ok " + scope["path"].encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    return app


def from_address(port: int, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def get(connection: socket.socket, path: str) -> bytes:
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    return read_all(connection)


def test_partial_heads_from_many_addresses_never_keep_out_the_health_check() -> None:
    """Nine addresses hold partial heads past the connection budget (uvicorn's limit_concurrency
    then answered every /healthz 503); the health probe and a client with one request get through."""
    protocol = bounded_protocol(read_seconds=30, per_client=20, max_connections=60, reserve=4)
    with live_server(health_and_slow(Hold()), http=protocol, limit_concurrency=None) as base:
        port = int(base.rsplit(":", 1)[1])
        flood = []
        try:
            for n in range(2, 11):
                for _ in range(12):
                    connection = from_address(port, f"127.0.0.{n}")
                    connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # never finished
                    flood.append(connection)
            for attempt in range(5):
                with from_address(port, "127.0.0.1") as probe:
                    answer = get(probe, "/healthz")
                assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"ok /healthz"), (attempt, answer[:200])
            assert protocol._budget.total <= 60 + 4
        finally:
            for connection in flood:
                connection.close()


def test_with_every_connection_in_a_request_the_reserve_answers_only_the_health_check() -> None:
    protocol = bounded_protocol(read_seconds=30, per_client=20, max_connections=4, reserve=2)
    operation = Hold()
    with live_server(health_and_slow(operation), http=protocol, limit_concurrency=None) as base:
        port = int(base.rsplit(":", 1)[1])
        busy = [from_address(port, "127.0.0.2") for _ in range(4)]
        try:
            for connection in busy:
                connection.sendall(b"GET /operation HTTP/1.1\r\nHost: x\r\n\r\n")  # each held till the end
            eventually(lambda: operation.waiting == 4, what="the four operations in progress")
            with from_address(port, "127.0.0.3") as probe:
                assert get(probe, "/healthz").startswith(b"HTTP/1.1 200 ")
            with from_address(port, "127.0.0.3") as other:
                refused = get(other, "/operation")
            assert refused.startswith(b"HTTP/1.1 503 ") and b'"code":"server_busy"' in refused, refused[:300]
            assert b"retry-after: 1" in refused.lower()
        finally:
            operation.release()
            for connection in busy:
                connection.close()


def test_empty_lines_before_the_request_line_do_not_end_the_count() -> None:
    """The parser skips empty lines before a request line; a blank line there ended the count, and
    the 150 KB head after it in the same write passed the 64 KiB limit."""
    with live_server(echo_length, http=bounded_protocol()) as base:
        port = int(base.rsplit(":", 1)[1])
        for lead in (b"\r\n\r\n", b"\r\n" * 10):
            for request in (lead + request_with_head_of(150 * 1024), lead + request_with_head_of(MAX_HEAD_BYTES)):
                answer = send_and_read(port, request)
                assert answer.startswith(b"HTTP/1.1 431 "), (len(request), answer[:100])
            assert send_and_read(port, b"\r\n" + request_with_head_of(MAX_HEAD_BYTES - 2)).startswith(b"HTTP/1.1 200 ")
    in_two_reads = writes_for(echo_length, b"\r\n\r\n", b"\r\n" + request_with_head_of(150 * 1024))
    assert [write[:13] for write in in_two_reads.writes] == [b"HTTP/1.1 431 "] and in_two_reads.closed_before_lost


def test_a_displaced_connection_whose_client_does_not_read_is_dropped_not_left_open() -> None:
    """A connection displaced with a large answer still unread was closed politely, which waits for
    the client to read: its socket and buffered answer stayed, uncounted by the budget."""
    big = b"z" * (8 << 20)

    async def large(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(big)).encode())]})
        await send({"type": "http.response.body", "body": big})

    async def run(loop: ManualClockLoop) -> None:
        config = uvicorn.Config(large, lifespan="off", log_level="warning", timeout_keep_alive=60)
        config.load()
        protocol_class, state = bounded_protocol(max_connections=1, reserve=0), ServerState()

        class Unread(RecordingTransport):
            def get_write_buffer_size(self) -> int:
                return sum(len(write) for write in self.writes)  # nothing was taken by the client

        first = protocol_class(config=config, server_state=state, app_state={}, _loop=loop)
        unread = Unread()
        first.connection_made(unread)
        first.data_received(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await loop.idle()  # answered: idle, its answer waiting in the buffer
        assert not first._in_request and unread.get_write_buffer_size() > len(big)
        second = protocol_class(config=config, server_state=state, app_state={}, _loop=loop)
        second.connection_made(RecordingTransport())
        assert unread.aborted  # dropped with the bytes nobody reads
        assert protocol_class._budget.total == 1
        for protocol in (first, second):
            protocol.connection_lost(None)

    on_manual_clock(run)


def test_a_connection_closed_but_never_drained_is_dropped_after_its_linger() -> None:
    """A close waits for the client to take the last bytes; a client that never reads would keep
    the connection (and its buffer) for ever."""

    async def run(loop: ManualClockLoop) -> None:
        opened = connections(read_seconds=0.2, keep_alive=60, close_linger=0.2)  # swept every 0.05 s
        protocol, transport = opened()
        protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\n")  # a head that never ends
        await loop.advance(0.25, step=0.05)  # cut with a 408: closing, but connection_lost never comes
        assert transport.closed and not transport.aborted
        await loop.advance(0.15, step=0.05)  # seen closing by a sweep, then less than its linger
        assert not transport.aborted
        await loop.advance(0.2, step=0.05)  # its linger, and a sweep
        assert transport.aborted
        protocol.connection_lost(None)

    on_manual_clock(run)


def test_the_protocols_refusals_are_the_error_tree_written_to_the_socket() -> None:
    """One builder: ApiError.to_json, as every surface sends it (the protocol wrote its own JSON,
    `error` and `code` the same word, and no Retry-After on a 503)."""
    import json as json_module

    from evidencekit.server.runtime._errors import ServiceUnavailable
    from evidencekit.server.runtime._http_protocol import _refusal

    written = _refusal(ServiceUnavailable("busy", code="too_many_connections", retry_after=1))
    head, _, body = written.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 Service Unavailable\r\n") and b"\r\nretry-after: 1\r\n" in head
    assert json_module.loads(body) == {"error": "unavailable", "code": "too_many_connections", "message": "busy",
                                       "request_id": "-", "retry_after_seconds": 1}
    assert f"content-length: {len(body)}".encode() in head
