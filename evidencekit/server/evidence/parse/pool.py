"""Where fetched bodies are read (HTML, caption files, plain text): in worker processes by default,
so neither a large page nor a hostile one stalls the event loop that also answers status calls
(a 2 MB page takes tens of milliseconds to read).

EVIDENCEKIT_PARSE_PROCESSES sets how many (default: one per usable CPU but one, at least 1, at
most 8); 0 parses on the event loop (and then no deadline can stop a parse).
A parse that runs past its deadline (the retrieval's) raises ParseTimeout and its processes are
killed (which one holds it, the pool does not say): the pages the others were reading start again
in a new pool. A worker process that dies (e.g. killed for memory) is replaced the same way; with
no deadline a page is tried once more, and a second death propagates, so the receipt is retried
like any crashed attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import TypeVar

from evidencekit.server.evidence.index_words import IndexWords, entry_words
from evidencekit.server.evidence.parse import _executor
from evidencekit.server.evidence.parse.captions import CaptionError, CaptionExtract
from evidencekit.server.evidence.parse.captions_srt import parse_subrip
from evidencekit.server.evidence.parse.captions_vtt import parse_webvtt
from evidencekit.server.evidence.parse.html_extract import HtmlExtract, parse_html
from evidencekit.server.evidence.parse.plain_text import parse_plain_text

T = TypeVar("T")

PROCESSES_ENV = "EVIDENCEKIT_PARSE_PROCESSES"
log = logging.getLogger("evidencekit.parse")


MAX_DEFAULT = 8
LARGE_BODY = 512 * 1024  # bodies past this go to the pool one per process


def usable_cpus() -> int:
    """CPUs this process may run on (a container's cpuset), not the host's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def processes_from_env(environ: dict[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    value = env.get(PROCESSES_ENV, "").strip()
    if not value:  # one CPU stays with the event loop (API, fetches, database)
        return min(MAX_DEFAULT, max(1, usable_cpus() - 1))
    count = int(value)
    if count < 0:
        raise ValueError(f"{PROCESSES_ENV} must be 0 or more, not {value}")
    return count


def _start_child(parent: int) -> None:
    """In each parse process: let go of the server's stdout/stderr (a supervisor reading them would
    otherwise wait on this process too), and exit once the server is gone, however it ended: the
    pool's own queue never reports a dead parent, as each child holds both ends of it."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    # Ctrl-C or a service manager signals the whole process group; the server's graceful stop
    # still needs these to finish the pages in hand, and they leave with the server anyway.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def exit_with_parent() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=exit_with_parent, daemon=True, name="exit-with-parent").start()


def parse_within(body: bytes, text_limit: int | None, *, http_charset: str | None = None,
                 content_language: str | None = None, markdown_limit: int | None = None,
                 url: str | None = None) -> HtmlExtract:
    """parse_html, with the text cut after text_limit + 1 characters when the caller will clip it
    to text_limit anyway: one character past the limit still tells it that the text was longer,
    and where a character ends (limits.clip reads no further). In a parse process this halves the
    result sent back for a long page (its markdown is kept whole)."""
    page = parse_html(body, http_charset=http_charset, content_language=content_language, url=url)
    if text_limit is not None and len(page.text) > text_limit + 1 and page.text[:text_limit + 1].strip():
        page = dataclasses.replace(page, text=page.text[:text_limit + 1])
    if markdown_limit is not None and len(page.markdown) > markdown_limit + 1:  # the same for the markdown
        page = dataclasses.replace(page, markdown=page.markdown[:markdown_limit + 1])
    return page


class ParseTimeout(Exception):
    """A parse ran past its deadline (its processes were killed)."""


def read_captions(body: bytes, http_charset: str | None, fmt: str) -> CaptionExtract | None:
    """A caption file's cues; None when it cannot be read as `fmt` (CaptionError)."""
    try:
        return (parse_webvtt if fmt == "webvtt" else parse_subrip)(body, http_charset)
    except CaptionError:
        return None


class HtmlParser:
    """The readers of fetched bodies behind an await; inline when `processes` is 0."""

    def __init__(self, processes: int = 0) -> None:
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None
        # Pages handed to the pool at once: two per process, so that each has its next page waiting
        # when it sends a result back (one per process left it idle through every hand-over); but
        # one large body per process, as more would only wait as pickled copies of bodies of up to
        # the byte cap (50 slots x 2 MB pickles pushed the server from 150 to 500 MB).
        self._slots = asyncio.Semaphore(2 * max(processes, 1))
        self._large_slots = asyncio.Semaphore(max(processes, 1))

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn: the server process holds threads (database, event loop) that fork would copy mid-state
            self._pool = ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_start_child, initargs=(os.getpid(),))
            _executor.widen(self._pool)
        return self._pool

    async def parse(self, body: bytes, *, http_charset: str | None = None, content_language: str | None = None,
                    text_limit: int | None = None, markdown_limit: int | None = None,
                    deadline: float | None = None, url: str | None = None) -> HtmlExtract:
        """parse_html's result; with `text_limit`, its text may come back cut after text_limit + 1
        characters (see parse_within). `deadline`: event-loop time, else ParseTimeout. `url`: the
        page's final URL, which relative links in the markdown are resolved against."""
        call = partial(parse_within, body, text_limit, http_charset=http_charset, content_language=content_language,
                       markdown_limit=markdown_limit, url=url)
        return await self.run(call, len(body), deadline)

    async def captions(self, body: bytes, http_charset: str | None, fmt: str,
                       deadline: float | None = None) -> CaptionExtract | None:
        return await self.run(partial(read_captions, body, http_charset, fmt), len(body), deadline)

    async def plain_text(self, body: bytes, http_charset: str | None, deadline: float | None = None) -> str:
        return await self.run(partial(parse_plain_text, body, http_charset), len(body), deadline)

    async def index(self, title: str | None, text: str) -> IndexWords:
        """What the search index holds of a document with this title and text (index_words), where
        pages are read; in a thread when pages are read on the event loop."""
        if self.processes == 0:
            return await asyncio.to_thread(entry_words, title, text)
        return await self.run(partial(entry_words, title, text), len(text))

    async def run(self, call: Callable[[], T], size: int, deadline: float | None = None) -> T:
        """`call()` in a parse process (a picklable partial), within `deadline` (event-loop time)."""
        if self.processes == 0:
            return call()
        loop = asyncio.get_running_loop()
        large = self._large_slots if size > LARGE_BODY else contextlib.nullcontext()
        async with large, self._slots:  # always in this order: a small page never holds a slot it waits on
            tries = 0
            while True:
                if deadline is not None and deadline <= loop.time():
                    raise ParseTimeout("no time was left to read the body")
                pool = self._executor()
                tries += 1
                try:
                    return await self._within(loop.run_in_executor(pool, call), pool, deadline)
                except BrokenProcessPool:
                    if self._pool is pool:  # pages that were in the same pool find it already replaced
                        log.warning("a parse process died; starting a new pool and reading the page again")
                        self._discard()
                    if deadline is None and tries >= 2:
                        raise

    async def _within(self, future: asyncio.Future[T], pool: ProcessPoolExecutor, deadline: float | None) -> T:
        if deadline is None:
            return await future
        try:
            return await asyncio.wait_for(future, deadline - asyncio.get_running_loop().time())
        except TimeoutError:
            log.warning("a parse ran past its deadline: killing its pool's processes")
            self._kill(pool)
            raise ParseTimeout("the body could not be read within the retrieval's deadline") from None

    def _kill(self, pool: ProcessPoolExecutor) -> None:
        for process in _executor.processes(pool):
            with contextlib.suppress(Exception):
                process.kill()
        if self._pool is pool:
            self._discard()

    async def warm_up(self) -> None:
        """Start the processes now rather than on the first page."""
        if self.processes:
            await asyncio.gather(*(self.parse(b"<p>warm</p>") for _ in range(self.processes)))

    def _discard(self) -> None:
        # Its pages not yet started are not cancelled: a cancelled future would reach the awaiting
        # retrieval as a cancellation it never asked for. With the processes gone, the executor
        # fails them with BrokenProcessPool, and `run` reads them again in the new pool.
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=False)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
