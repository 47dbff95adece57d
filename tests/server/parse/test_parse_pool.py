"""Pages parsed in worker processes read exactly as inline, and a dead worker does not break parsing."""

from __future__ import annotations

import asyncio
import os
import pathlib
import signal
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidencekit.server.evidence.parse import _executor, parse_html
from evidencekit.server.evidence.parse.pool import (
    PROCESSES_ENV,
    HtmlParser,
    ParseTimeout,
    processes_from_env,
)
from tests.support import PATIENCE, ManualClockLoop, eventually, on_manual_clock, until

pytestmark = pytest.mark.anyio
PAGE = ("<html lang='de'><head><title>Bericht</title></head><body><nav>Menü</nav><article><h1>Bericht</h1>"
        + "<p>Die <b>Messung</b> zeigt ein stabiles Ergebnis über die Saison.</p>" * 40
        + "</article></body></html>").encode()


async def test_a_page_parsed_in_a_worker_process_equals_the_inline_parse() -> None:
    parser = HtmlParser(1)
    try:
        pooled = await parser.parse(PAGE, http_charset="utf-8", content_language="de-DE")
    finally:
        parser.close()
    assert pooled == parse_html(PAGE, http_charset="utf-8", content_language="de-DE")
    assert pooled.title == "Bericht" and "**Messung**" in pooled.markdown


async def test_a_killed_parse_process_is_replaced_and_the_page_still_parses() -> None:
    parser = HtmlParser(1)
    try:
        await parser.warm_up()
        assert parser._pool is not None
        for pid in list(parser._pool._processes):  # type: ignore[attr-defined]
            os.kill(pid, signal.SIGKILL)
        page = await parser.parse(PAGE)
        assert page.title == "Bericht"
    finally:
        parser.close()


def test_the_number_of_processes_comes_from_the_environment() -> None:
    assert processes_from_env({PROCESSES_ENV: "0"}) == 0
    assert processes_from_env({PROCESSES_ENV: "3"}) == 3
    assert processes_from_env({}) == min(8, max(1, len(os.sched_getaffinity(0)) - 1))
    with pytest.raises(ValueError, match=PROCESSES_ENV):
        processes_from_env({PROCESSES_ENV: "-1"})


def test_parse_processes_do_not_outlive_a_killed_server() -> None:
    import subprocess
    import sys

    script = ("import asyncio, signal\nfrom evidencekit.server.evidence.parse.pool import HtmlParser\n"
              "parser = HtmlParser(2)\nasyncio.run(parser.warm_up())\n"
              "print(*parser._pool._processes, flush=True)\nsignal.pause()  # serves until killed\n")
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert server.stdout is not None
    children = [int(pid) for pid in server.stdout.readline().split()]
    assert len(children) == 2
    server.kill()
    out, err = server.communicate(timeout=PATIENCE)  # returns only once no child holds its pipes
    eventually(lambda: not any(os.path.exists(f"/proc/{pid}") and "zombie" not in _state(pid) for pid in children),
               what=f"parse processes {children} to end with their server")


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(line for line in status if line.startswith("State:")).lower()
    except (FileNotFoundError, ProcessLookupError):
        return "zombie"


async def test_two_pages_per_process_are_handed_over_but_one_large_body(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from evidencekit.server.evidence.parse import pool as pool_module

    lock, release = threading.Lock(), threading.Event()
    now = {"pages": 0, "large": 0}
    most = {"pages": 0, "large": 0}

    def watched(body: bytes, **_: object) -> str:
        with lock:
            now["pages"] += 1
            now["large"] += len(body) > pool_module.LARGE_BODY
            most.update({key: max(most[key], now[key]) for key in now})
        release.wait(PATIENCE)
        with lock:
            now["pages"] -= 1
            now["large"] -= len(body) > pool_module.LARGE_BODY
        return "parsed"

    monkeypatch.setattr(pool_module, "parse_html", watched)
    threads = ThreadPoolExecutor(8)  # stands in for the process pool: it would take all eight at once
    parser = HtmlParser(1)
    monkeypatch.setattr(parser, "_executor", lambda: threads)
    large = b"x" * (pool_module.LARGE_BODY + 1)
    try:
        for bodies, expected in (([PAGE] * 6, {"pages": 2, "large": 0}), ([large] * 4, {"pages": 1, "large": 1}),
                                 ([large, large, PAGE, PAGE], {"pages": 2, "large": 1})):
            most.update(pages=0, large=0)
            release.clear()
            parsing = [asyncio.create_task(parser.parse(body)) for body in bodies]
            await asyncio.sleep(0)  # each has taken its slots (and handed its page over), or waits for one
            handed = 2 - parser._slots._value  # type: ignore[attr-defined]
            await until(lambda handed=handed: handed and now["pages"] == handed,
                        what="the pages handed over to start")
            release.set()
            assert await asyncio.gather(*parsing) == ["parsed"] * len(bodies)
            assert most == expected
    finally:
        threads.shutdown()


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.text(alphabet="ab e\u0301\u200d\u0308\U0001F469", min_size=1, max_size=12), min_size=1,
                      max_size=40),
       limit=st.integers(min_value=1, max_value=120))
def test_a_text_cut_for_the_limit_clips_exactly_as_the_whole_text(words: list[str], limit: int) -> None:
    from evidencekit.server.evidence.parse.pool import parse_within
    from evidencekit.server.evidence.retrieval.limits import clip

    body = ("<html><body><article>" + "".join(f"<p>{word} {word}</p>" for word in words)
            + "</article></body></html>").encode()
    whole = parse_html(body)
    cut = parse_within(body, limit)
    assert cut.markdown == whole.markdown and len(cut.text) <= max(limit + 1, len(whole.text))
    assert clip(cut.text, limit, at_word=True) == clip(whole.text, limit, at_word=True)
    assert bool(cut.text.strip()) == bool(whole.text.strip())


async def test_pages_cancelled_while_waiting_leave_no_permit_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from evidencekit.server.evidence.parse import pool as pool_module

    release = threading.Event()
    started = []

    def blocked(body: bytes, **_: object) -> str:
        started.append(body)
        release.wait(PATIENCE)
        return "parsed"

    monkeypatch.setattr(pool_module, "parse_html", blocked)
    threads = ThreadPoolExecutor(8)
    parser = HtmlParser(1)
    monkeypatch.setattr(parser, "_executor", lambda: threads)
    large = b"x" * (pool_module.LARGE_BODY + 1)
    try:
        busy = [asyncio.create_task(parser.parse(body)) for body in (large, PAGE)]  # both slots taken
        waiting = [asyncio.create_task(parser.parse(body)) for body in (large, PAGE, PAGE)]
        await until(lambda: len(started) == 2, what="the two pages to start")  # the three wait for slots
        for task in waiting:
            task.cancel()
        release.set()
        assert await asyncio.gather(*busy) == ["parsed", "parsed"]
        assert all(task.cancelled() for task in waiting)
        assert parser._slots._value == 2 and parser._large_slots._value == 1  # every permit came back
    finally:
        threads.shutdown()


async def test_a_parse_past_its_deadline_is_killed_and_the_pool_reads_on() -> None:
    import asyncio
    import time

    parser = HtmlParser(1)
    try:
        await parser.warm_up()
        loop = asyncio.get_running_loop()
        hostile = b"<p>" + b"<b>word " * 400_000  # 3 MB
        started = time.monotonic()
        calm = asyncio.ensure_future(parser.parse(PAGE))  # in the same pool when it is killed
        with pytest.raises(ParseTimeout):
            await parser.parse(hostile, deadline=loop.time() + 0.005)  # it takes some 30 ms
        assert time.monotonic() - started < 2  # cut at its deadline, not read to the end
        assert (await calm).title == "Bericht"  # read again in the new pool
        assert (await parser.parse(PAGE, deadline=loop.time() + 30)).title == "Bericht"
    finally:
        parser.close()


def _started_then_stuck(marker: str) -> None:
    """A parse that says it has started (a file) and never ends: killed at its deadline."""
    import pathlib
    import threading

    pathlib.Path(marker).touch()
    threading.Event().wait()


def test_pages_still_waiting_in_a_killed_pool_are_read_in_the_new_one(tmp_path: pathlib.Path) -> None:
    # The pool takes two pages per process off its queue; the rest wait in the executor, not yet
    # started, when a deadline kills the pool. Those must be read again in the new pool, as the
    # started ones are, not end cancelled (a cancellation the awaiting retrieval never asked for).
    # On a clock the test moves: the deadline passes once the pages wait behind the stuck call.
    from functools import partial

    marker = tmp_path / "started"

    async def run(loop: ManualClockLoop) -> None:
        parser = HtmlParser(1)
        parser._slots = asyncio.Semaphore(6)  # more pages handed over than the executor starts at once
        try:
            await parser.warm_up()
            stuck = asyncio.ensure_future(parser.run(partial(_started_then_stuck, str(marker)), 10,
                                                     deadline=loop.time() + 0.5))
            await asyncio.to_thread(eventually, marker.exists, what="the stuck call to start in the one process")
            waiting = [asyncio.ensure_future(parser.parse(PAGE)) for _ in range(4)]  # queued behind it
            await loop.advance(1.0)
            with pytest.raises(ParseTimeout):
                await stuck
            assert [page.title for page in await asyncio.gather(*waiting)] == ["Bericht"] * 4
        finally:
            parser.close()

    on_manual_clock(run)


async def test_caption_files_and_plain_text_are_read_in_the_pool_too() -> None:
    parser = HtmlParser(1)
    try:
        cues = await parser.captions(b"WEBVTT\n\n00:00.000 --> 00:01.000\nHallo\n", None, "webvtt")
        assert cues is not None and [cue.text for cue in cues.cues] == ["Hallo"]
        assert await parser.captions(b"not captions", None, "subrip") is None  # CaptionError
        assert await parser.plain_text(b"caf\xc3\xa9\r\n", "utf-8") == "caf\u00e9\n"  # CRLF normalised
    finally:
        parser.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
async def test_a_large_pages_result_crosses_the_pools_pipes_in_one_write_also_after_a_crash() -> None:
    """A 200 KB page's result (~600 KB pickled) crossed the executor's 64 KiB pipes in ten reads,
    each waiting for the GIL of the busy server (45 ms a page in the parse step during a drain):
    the pipes are 1 MiB wide, in a pool replaced after a crash too, and the result is the same."""
    big = ("<html><body><article>" + "<p>Die Messung zeigt ein stabiles Ergebnis über die Saison.</p>" * 8000
           + "</article></body></html>").encode()
    parser = HtmlParser(1)
    try:
        await parser.warm_up()
        assert parser._pool is not None
        ends = _executor.pipe_ends(parser._pool)
        assert len(ends) == 2 and all(_executor.pipe_size(end) == _executor.PIPE_BYTES for end in ends)
        for pid in list(parser._pool._processes):  # type: ignore[attr-defined]
            os.kill(pid, signal.SIGKILL)
        page = await parser.parse(big)
        assert page == parse_html(big) and len(page.text) > 400_000
        assert all(_executor.pipe_size(end) == _executor.PIPE_BYTES for end in _executor.pipe_ends(parser._pool))
    finally:
        parser.close()


def test_an_executor_without_the_queues_it_knows_is_left_as_it_is() -> None:
    class Elsewhere:  # another Python's executor: no _call_queue / _result_queue
        pass

    assert _executor.pipe_ends(Elsewhere()) == []  # type: ignore[arg-type]
    assert _executor.widen(Elsewhere()) is False  # type: ignore[arg-type]
