"""evidencekit.server.runtime._uvicorn_adapter puts uvicorn's httptools protocol behind named hooks and
copies its on_response_complete; these tests hold it to what serving relies on, in process (each
step awaited on the hook that marks it, no waiting for time to pass) and on a real uvicorn server.
Run them on the lowest and highest uvicorn the pin allows."""

from __future__ import annotations

import asyncio
import socket
from typing import Any, ClassVar

import httpx
import uvicorn
from uvicorn.server import ServerState

from evidencekit.server.runtime._uvicorn_adapter import HttpToolsAdapter
from tests.server.test_http_protocol import RecordingTransport, echo_length, read_all
from tests.support import live_server


def post(body: bytes, *extra: bytes) -> bytes:
    head = [b"POST / HTTP/1.1", b"Host: x", b"Content-Length: " + str(len(body)).encode(), *extra]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class Recorder(HttpToolsAdapter):
    """Records each hook as it is called; `until` awaits the n-th call of one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.events: list[str] = []
        self.changed = asyncio.Event()
        super().__init__(*args, **kwargs)

    def _note(self, event: str) -> None:
        self.events.append(event)
        self.changed.set()

    def request_began(self) -> None:
        self._note("request_began")

    def head_complete(self) -> None:
        self._note("head_complete")

    def request_complete(self) -> None:
        self._note("request_complete")

    def response_complete(self, pipelined: bool) -> None:
        self._note(f"response_complete pipelined={pipelined}")

    def idle_began(self) -> None:
        self._note("idle_began")

    def idle_ended(self) -> None:
        self._note("idle_ended")

    async def until(self, event: str, count: int = 1) -> None:
        async with asyncio.timeout(5):
            while sum(1 for seen in self.events if seen.startswith(event)) < count:
                self.changed.clear()
                await self.changed.wait()


class FlowTransport(RecordingTransport):
    """Also records whether the protocol lets the socket be read."""

    reading = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


def opened(app: Any = echo_length, protocol: type[HttpToolsAdapter] = Recorder,
           **options: Any) -> tuple[Any, FlowTransport, ServerState]:
    config = uvicorn.Config(app, lifespan="off", log_level="warning", **options)
    config.load()
    state = ServerState()
    made = protocol(config=config, server_state=state, app_state={}, _loop=asyncio.get_running_loop())
    transport = FlowTransport()
    made.connection_made(transport)
    return made, transport, state


def bodies(transport: RecordingTransport) -> list[bytes]:
    answers = b"".join(transport.writes).split(b"HTTP/1.1 ")[1:]
    assert all(answer.startswith(b"200 ") for answer in answers), answers
    return [answer.rsplit(b"\r\n\r\n", 1)[1] for answer in answers]


ONE_REQUEST = ["idle_ended", "request_began", "head_complete", "request_complete",
               "response_complete pipelined=False", "idle_ended", "idle_began"]


def test_a_keep_alive_connection_answers_a_request_then_the_next_on_it() -> None:
    async def main() -> None:
        protocol, transport, state = opened()
        protocol.data_received(post(b"abc"))
        await protocol.until("idle_began")
        assert bodies(transport) == [b"3"] and not transport.closed
        protocol.data_received(post(b"abcde"))  # the same connection, after its wait began
        await protocol.until("idle_began", 2)
        assert bodies(transport) == [b"3", b"5"] and not transport.closed
        assert protocol.events == ONE_REQUEST * 2  # each wait ended by the data that came
        assert state.total_requests == 2  # what uvicorn's --limit-max-requests counts
        protocol.connection_lost(None)

    asyncio.run(main())


def test_no_keep_alive_timer_of_uvicorns_closes_the_connection() -> None:
    """uvicorn would close this connection the loop turn after its answer (timeout_keep_alive=0);
    the adapter leaves the wait to idle_began's owner."""
    async def main() -> None:
        protocol, transport, _ = opened(timeout_keep_alive=0)
        assert protocol.keep_alive_seconds == 0
        protocol.data_received(post(b"abc"))
        await protocol.until("idle_began")
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0, turn.set_result, None)  # after any timer due now
        await turn
        assert not transport.closed
        protocol.close_idle()  # what the owner does once the wait is over
        assert transport.closed
        protocol.connection_lost(None)

    asyncio.run(main())


async def named(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers with its path's name, never reading the request (as most GET handlers)."""
    body = scope["path"][1:].encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def test_pipelined_requests_are_answered_in_order_each_started_when_the_last_is_done() -> None:
    async def main() -> None:
        protocol, transport, state = opened(named)
        protocol.data_received(b"".join(f"GET /{name} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
                                        for name in ("one", "two", "three")))  # one read, three requests
        assert not transport.reading  # uvicorn stops reading while requests wait
        await protocol.until("idle_began")
        assert bodies(transport) == [b"one", b"two", b"three"]
        assert transport.reading  # and reads again once they are answered (no app read a body)
        responses = [event for event in protocol.events if event.startswith("response_complete")]
        assert responses == ["response_complete pipelined=True"] * 2 + ["response_complete pipelined=False"]
        assert protocol.events.count("idle_began") == 1 and state.total_requests == 3
        protocol.connection_lost(None)

    asyncio.run(main())


def test_a_response_that_closes_the_connection_begins_no_wait() -> None:
    async def main() -> None:
        protocol, transport, state = opened()
        protocol.data_received(post(b"abc", b"Connection: close"))
        await protocol.until("response_complete")
        assert transport.closed and bodies(transport) == [b"3"]
        assert "idle_began" not in protocol.events and state.total_requests == 1
        protocol.connection_lost(None)

    asyncio.run(main())


def test_the_hooks_read_the_connection_and_can_hand_a_request_to_another_app() -> None:
    async def elsewhere(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"9")]})
        await send({"type": "http.response.body", "body": b"elsewhere"})

    class Routing(Recorder):
        seen: ClassVar[list[tuple[Any, ...]]] = []

        def head_complete(self) -> None:
            super().head_complete()
            path = self.request_path()
            self.seen.append((path, self.client_host, self.event_loop is asyncio.get_running_loop()))
            if path == "/elsewhere":
                self.answer_with(elsewhere)

    async def main() -> None:
        protocol, transport, _ = opened(protocol=Routing, timeout_keep_alive=7)
        assert protocol.keep_alive_seconds == 7
        protocol.data_received(b"GET /a%20b?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        await protocol.until("idle_began")
        protocol.data_received(b"GET /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n")
        await protocol.until("idle_began", 2)
        assert bodies(transport) == [b"0", b"elsewhere"]
        assert Routing.seen == [("/a%20b", "127.0.0.1", True), ("/elsewhere", "127.0.0.1", True)]
        protocol.connection_lost(None)

    asyncio.run(main())


class Counting(HttpToolsAdapter):
    """Counts the connections a real server makes; closes one idle at once when asked."""

    made: ClassVar[int] = 0
    close_when_idle: ClassVar[bool] = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        type(self).made += 1
        super().connection_made(transport)

    def idle_began(self) -> None:
        if self.close_when_idle:
            self.event_loop.call_soon(self.close_idle)


def test_a_real_server_answers_requests_one_after_another_on_one_connection() -> None:
    protocol: type[Counting] = type("Counting", (Counting,), {"made": 0})  # type: ignore[assignment]
    with live_server(echo_length, http=protocol) as base, httpx.Client() as client:
        for size in (3, 60_000, 5):
            response = client.post(base + "/", content=b"b" * size)
            assert (response.status_code, response.text) == (200, str(size))
        assert protocol.made == 1
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(post(b"abc") + post(b"abcde"))  # pipelined
            answers = b""
            while answers.count(b"HTTP/1.1 200 ") < 2 or not answers.endswith(b"5"):
                answers += connection.recv(65536)
            connection.sendall(post(b"a", b"Connection: close"))  # read once the pipeline is done
            answers += read_all(connection)  # to the server's close
        assert [answer.rsplit(b"\r\n\r\n", 1)[1] for answer in answers.split(b"HTTP/1.1 200 ")[1:]] == [
            b"3", b"5", b"1"]


def test_a_real_server_closes_a_connection_the_adapter_closes_idle() -> None:
    protocol = type("Closing", (Counting,), {"made": 0, "close_when_idle": True})
    with live_server(echo_length, http=protocol, timeout_keep_alive=60) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(post(b"abc"))
            answer = read_all(connection)  # returns at the server's close, long before 60 s
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\n3")
