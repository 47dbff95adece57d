"""What /mcp holds open: GET and DELETE answered 405 (no server-initiated stream), POSTs bounded
per credential and in all, an answer idle past its limit ended."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from evidencekit.server.generated.app import create_app
from evidencekit.server.runtime import _mcp_streams as mcp_streams
from evidencekit.server.runtime._mcp import McpSettings
from evidencekit.server.runtime._mcp_streams import StreamLimits
from tests.support import (
    PATIENCE,
    AllowAll,
    ExampleHandlers,
    Hold,
    ManualClockLoop,
    eventually,
    live_server,
    on_manual_clock,
)

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class HeldStatus(ExampleHandlers):
    """status holds its answer until released (a tool that takes its time); `held.waiting`: the
    calls in progress."""

    def __init__(self) -> None:
        super().__init__()
        self.held = Hold()

    async def status(self, payload: Any, context: Any) -> Any:
        await self.held.wait()
        return await super().status(payload, context)

    def in_progress(self, count: int) -> None:
        eventually(lambda: self.held.waiting == count, what=f"{count} calls in progress")


def app_with(handlers: Any, limits: StreamLimits) -> Any:
    from dataclasses import replace

    from evidencekit.server.evidence.auth import evidence_hooks

    return create_app(handlers, replace(evidence_hooks(), auth=AllowAll()),
                      mcp=McpSettings(name="test", streams=limits))


def status_call(token: str) -> httpx.Response:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "sosoapi_research_evidence_status",
        "arguments": {"workspace_id": str(uuid.uuid4()), "mutation_id": str(uuid.uuid4())}}}
    return httpx.post(BASE[0] + "/mcp", json=call, headers={**ACCEPT, "Authorization": f"Bearer {token}"},
                      timeout=PATIENCE)


BASE: list[str] = [""]


def test_a_get_or_delete_on_mcp_is_answered_405_at_once() -> None:
    """The SDK held every GET open with nothing to send (one for 656 s)."""
    with live_server(app_with(ExampleHandlers(), StreamLimits()), lifespan="on") as base:
        for method in ("GET", "DELETE"):
            answer = httpx.request(method, base + "/mcp", headers={"Accept": "text/event-stream",
                                                                   "Authorization": "Bearer t"}, timeout=5)
            assert answer.status_code == 405 and answer.headers["allow"] == "POST", answer.text
            body = answer.json()
            assert body["code"] == "method_not_allowed" and "no server-initiated stream" in body["message"]
            assert body["request_id"] == answer.headers["x-request-id"]


def test_one_credential_holds_at_most_its_share_and_all_together_the_total() -> None:
    handlers = HeldStatus()
    with live_server(app_with(handlers, StreamLimits(per_credential=2, total=3, idle_seconds=60)),
                     lifespan="on") as base, ThreadPoolExecutor(8) as pool:
        BASE[0] = base
        held = [pool.submit(status_call, "alpha") for _ in range(2)]
        handlers.in_progress(2)
        third = status_call("alpha")
        assert third.status_code == 429 and third.json()["code"] == "too_many_streams", third.text
        assert third.headers["retry-after"] == "1"
        other = pool.submit(status_call, "beta")  # another credential still gets in: three in all
        handlers.in_progress(3)
        fourth = status_call("gamma")
        assert fourth.status_code == 503 and fourth.json()["code"] == "too_many_streams", fourth.text
        handlers.held.release()
        assert [future.result().status_code for future in (*held, other)] == [200, 200, 200]
        assert status_call("alpha").status_code == 200  # all ended: room again


def test_an_answer_idle_past_the_limit_is_ended() -> None:
    """On a real server, its loop's own clock: only the idle limit can end this call."""
    handlers = HeldStatus()  # never released: the tool would hold the request for ever
    with live_server(app_with(handlers, StreamLimits(idle_seconds=0.5)), lifespan="on") as base:
        BASE[0] = base
        answer = status_call("alpha")
        handlers.held.release()
    # /mcp answers JSON: nothing was sent, so the caller gets a 503 it can read and retry
    assert answer.status_code == 503 and answer.json()["code"] == "stream_idle", answer.text
    assert answer.headers["retry-after"] == "1"


def test_an_idle_call_the_sdk_serves_is_ended_and_the_server_goes_on() -> None:
    """A call the direct path leaves to the SDK (its params carry `_meta`) runs in the SDK's task
    group: the idle limit cancels the request's task through it, and nothing is left behind."""
    handlers = HeldStatus()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "sosoapi_research_evidence_status", "_meta": {"progressToken": 1},
        "arguments": {"workspace_id": str(uuid.uuid4()), "mutation_id": str(uuid.uuid4())}}}
    headers = {**ACCEPT, "Authorization": "Bearer alpha", "MCP-Protocol-Version": "2025-06-18"}
    errors = _Errors()
    watched = [logging.getLogger(name) for name in ("", "uvicorn.error", "asyncio", "mcp")]
    try:
        with live_server(app_with(handlers, StreamLimits(idle_seconds=0.5)), lifespan="on") as base:
            for logger in watched:  # once uvicorn has set its loggers up (they pass nothing to the root)
                logger.addHandler(errors)
            answer = httpx.post(base + "/mcp", json=call, headers=headers, timeout=PATIENCE)  # the tool never answers
            assert answer.status_code == 503 and answer.json()["code"] == "stream_idle", answer.text
            handlers.held.release()
            again = httpx.post(base + "/mcp", json=call, headers=headers, timeout=PATIENCE)
            assert again.status_code == 200 and again.json()["result"]["isError"] is False, again.text
    finally:
        for logger in watched:
            logger.removeHandler(errors)
    assert not errors.seen, errors.seen


class _Errors(logging.Handler):
    """Every ERROR record it is given (and nothing of it shown)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(f"{record.name}: {record.getMessage()}")


def test_an_idle_answer_that_never_started_is_a_503_the_caller_can_read() -> None:
    from evidencekit.server.runtime._mcp_streams import McpStreams

    async def silent(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await asyncio.Event().wait()  # never answers

    app = McpStreams(silent, StreamLimits(idle_seconds=0.3))
    with live_server(app) as base:
        answer = httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "ping"}, timeout=PATIENCE)
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.json()["code"] == "stream_idle"


def test_keep_alive_comments_do_not_keep_a_silent_call_open() -> None:
    """The SDK sends `: ping` every 15 s on an event stream; counted as activity, they kept a tool
    call that never answers open past any idle limit. Here one every 0.05 s of the test's clock,
    for as long as the call lasts."""

    async def pinging(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        while True:
            await send({"type": "http.response.body", "body": b": ping - now\r\n\r\n", "more_body": True})
            await asyncio.sleep(0.05)

    sent, left, took, raised = _call(pinging, idle=0.5)
    assert raised is None and left == 0 and took < 0.5 + 2 * mcp_streams.AGAIN_SECONDS  # cut at its idle limit
    assert sent[-1] == {"type": "http.response.body", "more_body": False,
                        "body": b'event: message\r\ndata: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, '
                                b'"message": "no answer within 0.5 s"}}\r\n\r\n'}


def test_one_credential_written_differently_is_still_one_credential() -> None:
    handlers = HeldStatus()
    with live_server(app_with(handlers, StreamLimits(per_credential=1, total=10, idle_seconds=60)),
                     lifespan="on") as base, ThreadPoolExecutor(2) as pool:
        BASE[0] = base
        held = pool.submit(status_call, "alpha")
        handlers.in_progress(1)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "sosoapi_research_evidence_status",
            "arguments": {"workspace_id": str(uuid.uuid4()), "mutation_id": str(uuid.uuid4())}}}
        for spelling in ("bearer alpha", "BEARER  alpha", "Bearer alpha"):
            again = httpx.post(base + "/mcp", json=call, headers={**ACCEPT, "Authorization": spelling}, timeout=10)
            assert again.status_code == 429, (spelling, again.text)
        handlers.held.release()
        assert held.result().status_code == 200


def test_an_error_of_the_app_behind_comes_out_as_itself() -> None:
    """Not wrapped in an ExceptionGroup, which the host app's exception handlers would not match."""
    import pytest

    from evidencekit.server.runtime._mcp_streams import McpStreams

    async def failing(scope: Any, receive: Any, send: Any) -> None:
        raise ValueError("the app's own error")

    async def call() -> None:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def send(message: Any) -> None:
            pass

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "client": ("127.0.0.1", 1)}
        await McpStreams(failing)(scope, receive, send)

    with pytest.raises(ValueError, match="the app's own error"):
        asyncio.run(call())


_CHUNKS = st.lists(st.sampled_from([b":", b": ping", b"data: x", b"{", b" ", b"\t", b"", b"\x0b", b"\x0c", b"x",
                                    b"event: message"]), max_size=4).flatmap(
    lambda parts: st.lists(st.sampled_from([b"\n", b"\r", b"\r\n", b""]), min_size=len(parts), max_size=len(parts))
    .map(lambda ends: b"".join(part + end for part, end in zip(parts, ends, strict=True))))


@settings(max_examples=1000, deadline=None, database=None)
@given(chunk=_CHUNKS | st.binary(max_size=12), kind=st.sampled_from(["http.response.body", "http.response.start"]))
def test_only_comments_and_blank_lines_are_keep_alive(chunk: bytes, kind: str) -> None:
    """The idle timer's reading of a chunk (a first byte that says something settles it at once)
    is the event-stream definition: every line that is not blank is a comment."""
    message = {"type": kind, "body": chunk}
    reference = kind == "http.response.body" and bool(chunk) and \
        all(line.startswith(b":") for line in chunk.splitlines() if line.strip())
    assert mcp_streams._keep_alive_only(message) == reference


def _call(app: Any, idle: float, meanwhile: Any = None) -> tuple[list[dict[str, Any]], int, float, BaseException | None]:
    """McpStreams(app) asked once in a task of its own, as a server asks it, on a clock the test
    moves (in steps of the timer's AGAIN_SECONDS, at most a minute of it): the messages sent, the
    cancellations left asked of the task after it, the seconds it took, and what it raised.
    `meanwhile(loop)`, if given, runs beside the call first."""
    from evidencekit.server.runtime._mcp_streams import McpStreams

    sent: list[dict[str, Any]] = []
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"content-type", b"application/json")],
             "client": ("127.0.0.1", 1)}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def request(loop: ManualClockLoop) -> tuple[int, float, BaseException | None]:
        started = loop.time()
        raised = None
        try:
            await McpStreams(app, StreamLimits(idle_seconds=idle))(scope, receive, send)
        except Exception as error:  # noqa: BLE001 - reported to the test
            raised = error
        left = asyncio.current_task().cancelling()  # type: ignore[union-attr]
        return left, loop.time() - started, raised

    async def main(loop: ManualClockLoop) -> tuple[int, float, BaseException | None]:
        task = asyncio.create_task(request(loop))
        if meanwhile is not None:
            await meanwhile(loop)
        for _ in range(int(60 / mcp_streams.AGAIN_SECONDS)):
            if task.done():
                return task.result()
            await loop.advance(mcp_streams.AGAIN_SECONDS)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise AssertionError(f"not ended after a minute of the test's clock; sent {sent[-3:]}")

    left, took, raised = on_manual_clock(main)
    return sent, left, took, raised


def _answered(sent: list[dict[str, Any]]) -> int:
    return next(message["status"] for message in sent if message["type"] == "http.response.start")


def test_a_section_shielded_from_cancellation_is_not_cut() -> None:
    """anyio's to_thread.run_sync (Starlette's run_in_threadpool) waits for its thread in a shielded
    scope: cut there, the thread would go on with its limiter slot handed back. The call goes on
    past the limit until the section ends, and is answered as it answers."""
    import anyio

    entered, leave, returned = threading.Event(), threading.Event(), threading.Event()

    def section() -> None:
        entered.set()
        assert leave.wait(PATIENCE)

    async def threaded(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await anyio.to_thread.run_sync(section)
        returned.set()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def past_the_limit(loop: ManualClockLoop) -> None:
        assert await asyncio.to_thread(entered.wait, PATIENCE)
        await loop.advance(1.0, step=mcp_streams.AGAIN_SECONDS)  # five idle limits: the timer asks again and again
        leave.set()
        # the thread's return reaches the loop in real time: the test's clock must not run out first
        # (a loaded machine let a minute of it pass, idle step after idle step, before it came)
        assert await asyncio.to_thread(returned.wait, PATIENCE)

    sent, left, took, raised = _call(threaded, idle=0.2, meanwhile=past_the_limit)
    assert raised is None and _answered(sent) == 200 and took >= 1.0 and left == 0


def test_a_cancellation_the_app_swallows_is_asked_again() -> None:
    async def stubborn(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        with contextlib.suppress(asyncio.CancelledError):  # swallowed once
            await asyncio.Event().wait()
        await asyncio.Event().wait()

    sent, left, took, raised = _call(stubborn, idle=0.2)
    assert raised is None and _answered(sent) == 503 and left == 0
    assert took <= 0.2 + 2 * mcp_streams.AGAIN_SECONDS + 1e-9  # asked again at the next turn of the timer


def test_a_cancellation_the_app_turns_into_an_error_is_not_left_counted() -> None:
    async def converting(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise RuntimeError("the app's own error") from None

    sent, left, took, raised = _call(converting, idle=0.2)
    assert isinstance(raised, RuntimeError) and not sent and left == 0
