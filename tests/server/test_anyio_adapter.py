"""evidencekit.server.runtime._anyio_adapter reads anyio's record of a task's cancel scopes; these
tests hold `shielded` to what mcp_streams' idle timer relies on, on the loops the server runs
(asyncio's and uvloop's). Event-driven: no test waits for time to pass."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
import uvloop

from evidencekit.server.runtime._anyio_adapter import shielded

LOOPS = {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


@pytest.fixture(params=sorted(LOOPS))
def run(request: pytest.FixtureRequest) -> Callable[[Callable[[], Awaitable[Any]]], Any]:
    def runner(main: Callable[[], Awaitable[Any]]) -> Any:
        with asyncio.Runner(loop_factory=LOOPS[request.param]) as loop:
            return loop.run(main())  # type: ignore[arg-type]

    return runner


def test_only_a_shield_around_the_task_counts(run: Callable[[Callable[[], Awaitable[Any]]], Any]) -> None:
    async def main() -> None:
        me = asyncio.current_task()
        assert me is not None
        assert not shielded(me)  # in no anyio scope at all
        with anyio.CancelScope():
            assert not shielded(me)
            with anyio.CancelScope(shield=True):
                assert shielded(me)
                with anyio.CancelScope():  # an unshielded scope inside the shield: still shielded
                    assert shielded(me)
                    with anyio.move_on_after(60):
                        assert shielded(me)
            assert not shielded(me)  # the shield left
        assert not shielded(me)

    run(main)


def test_another_tasks_shield_does_not_count(run: Callable[[Callable[[], Awaitable[Any]]], Any]) -> None:
    async def main() -> None:
        inside, leave = asyncio.Event(), asyncio.Event()

        async def shielding() -> None:
            with anyio.CancelScope(shield=True):
                inside.set()
                await leave.wait()

        async def plain() -> None:
            await leave.wait()

        holder, other = asyncio.create_task(shielding()), asyncio.create_task(plain())
        await inside.wait()
        assert shielded(holder) and not shielded(other)
        leave.set()
        await asyncio.gather(holder, other)
        assert not shielded(holder)  # a finished task is in no scope

    run(main)


def test_a_task_waiting_for_a_thread_is_shielded_as_a_loop_callback_sees_it(
        run: Callable[[Callable[[], Awaitable[Any]]], Any]) -> None:
    """What the idle timer asks, from a loop callback, of a request waiting in
    anyio.to_thread.run_sync (Starlette's run_in_threadpool): shielded until the thread is done."""
    async def main() -> None:
        loop = asyncio.get_running_loop()
        started, release = asyncio.Event(), threading.Event()

        def work() -> None:
            loop.call_soon_threadsafe(started.set)
            release.wait(30)

        async def request() -> None:
            await anyio.to_thread.run_sync(work)

        task = asyncio.create_task(request())
        await started.wait()
        seen: asyncio.Future[bool] = loop.create_future()
        loop.call_soon(lambda: seen.set_result(shielded(task)))  # as the timer's call_at does
        assert await seen
        release.set()
        await task
        assert not shielded(task)

    run(main)
