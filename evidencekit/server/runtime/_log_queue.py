"""Logging written off the event loop: the loop queues each record, a thread formats and writes
them in batches.

Formatting a line and writing it to stderr on the loop cost about a quarter of a status read's
throughput (scripts/bench.py status, the logged rows). A thread woken for every record costs as
much again, in hand-overs of the interpreter lock; so the writer, woken by the first record to
wait, lets a batch gather for INTERVAL seconds (or until BATCH records wait) and writes it with one
write. With nothing to write it sleeps until something comes: an idle server's writer never takes
the interpreter lock from its event loop. Each batch takes the lock from a busy loop a few times
(waking, writing, after the write), so batches are few: at 0.05 s, the access log cost get_book 12-14%
of its rate (scripts/bench_servers.py, 5 rounds, two runs), at 0.2 s -2 to 9%. A line reaches the
stream at most INTERVAL late; a warning at once; what waits at exit or SIGTERM is written. A WARNING or worse is written
at once, after what waits before it: the thread that logs it wakes the writer and waits until it
is written, so the lines a crash leaves are on disk. Records keep their arguments until written
(the access log's are strings and numbers). `close()`, also at exit, writes what is still queued.

The queue is bounded (`max_waiting` records, 10,000 by default: ~2 MiB of access lines): when the
stream does not keep up (a stalled pipe, a full disk behind it) further INFO lines are dropped and
counted instead of growing the process, and the count is written as a WARNING line of its own once
the stream takes lines again. Warnings have room for as many again before they are dropped too.
A warning waits at most STALL_SECONDS for its write; once a wait has run out, warnings do not
wait until a write completes again: the thread that logs (the event loop) is held by a stalled
stream once, for that long, never for every warning, and never writes to the stream itself.

A line logged on every request (the access log) can skip the LogRecord too (`direct_handler`,
`BatchedLog.put`): making and handling a record cost ~8 us of the loop's time, a status read's
tenth, for a line whose only destination is this handler's queue. It is queued as the bare facts it
states, with a `Maker` that writes a run of such lines at once: the interpreter lock makes the
writer's time the loop's too, and a Python step per line cost the served
process several times what it costs in a loop of its own (scripts/bench_servers.py: the access log
took 13% of get_book's throughput with a line made per step, 8% with a run made column by column).
"""

from __future__ import annotations

import atexit
import collections
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from operator import itemgetter
from typing import Any, TextIO, cast

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
INTERVAL = 0.2  # seconds a batch gathers once its first line waits
BATCH = 4096  # records that end a batch's gathering before INTERVAL is over
MAX_WAITING = 10_000  # INFO records queued at most; warnings may take as many again
STALL_SECONDS = 1.0  # how long a warning waits for a write under way


class _SecondsCached(logging.Formatter):
    """The standard `asctime` (`2026-12-02 03:38:02,123`), its date and time formatted once a second."""

    def __init__(self, fmt: str) -> None:
        super().__init__(fmt)
        self._second, self._text = -1, ""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return self.time_text(record.created, record.msecs)

    def time_text(self, created: float, msecs: float) -> str:
        second = int(created)
        if second != self._second:
            self._second, self._text = second, time.strftime("%Y-%m-%d %H:%M:%S", self.converter(second))
        return f"{self._text},{int(msecs):03d}"


# A line queued as a list, [maker, time.perf_counter(), *what it says]: the writer hands each run of
# one maker's lines to it at once, with a function from a second (of the epoch) to its text as
# FORMAT's asctime starts and the offset from perf_counter() time to the epoch. It gives the lines'
# whole text, made without a Python step per line (map, zip): a line a request writes (the access
# log's) costs the served process far more per step than the same step costs in a loop of its own.
Maker = Callable[[list[list[Any]], Callable[[int], str], float], Iterable[str]]
_first = itemgetter(0)


class BatchedLog(logging.Handler):
    """Writes the records it is given to `stream`, from a thread of its own, in batches."""

    def __init__(self, stream: TextIO | None = None, fmt: str = FORMAT, max_waiting: int = MAX_WAITING) -> None:
        super().__init__()
        self.stream = stream or sys.stderr
        self.max_waiting = max_waiting
        self.own_format = _SecondsCached(fmt) if fmt == FORMAT else None  # what a Maker's lines are written in
        self.setFormatter(self.own_format or _SecondsCached(fmt))
        self.waiting: collections.deque[logging.LogRecord | list[Any]] = collections.deque()  # appends are thread-safe
        # Taken to empty the queue, and by a warning to queue itself with its event, so that a
        # batch's events are exactly those of the warnings in it; an INFO line never takes it.
        # Re-entrant: the SIGTERM handler flushes (taking it) on the main thread, which may hold it;
        # what waits then may go unwritten (the writer needs it), but the process ends.
        self.queue = threading.RLock()
        self.announced: list[threading.Event] = []  # set once the batch holding their warning is written
        self.dropped = 0  # records not queued since the last write said so (under `queue`)
        self.stalled = False  # a wait for the writer ran out, and no write has completed since
        self.writing = threading.Lock()  # one batch written at a time, in order
        # A record queued while the writer sleeps (or is about to: it says so first, then looks at
        # the queue) wakes it: a batch begins. Asked after the append, so that one of the two sees
        # the other: a length read before it may be stale by then.
        self.sleeping = False
        self.wake = threading.Event()
        self.now = threading.Event()  # set by a warning, a flush, BATCH records or close: write it now
        self.closing = False
        self.writer = threading.Thread(target=self._write_on, name="evidencekit-log-writer", daemon=True)
        self.writer.start()
        atexit.register(self.close)

    def _room(self, warning: bool) -> bool:
        """Whether one more record may wait; counted as dropped when not."""
        if len(self.waiting) < (2 * self.max_waiting if warning else self.max_waiting):
            return True
        with self.queue:
            self.dropped += 1
        return False

    def emit(self, record: logging.LogRecord) -> None:
        if self.closing:  # closed (logging.config does it), the writer gone: written here
            self.waiting.append(record)
            self.flush()
            return
        warning = record.levelno >= logging.WARNING
        if not self._room(warning):
            return
        if not warning:
            self.waiting.append(record)
            if self.sleeping:
                self.wake.set()
            elif len(self.waiting) > BATCH and not self.now.is_set():
                self.now.set()
            return
        written = threading.Event()
        with self.queue:
            self.waiting.append(record)
            self.announced.append(written)
        self._written_by_writer(written, 0 if self.stalled else STALL_SECONDS)

    def _written_by_writer(self, written: threading.Event, timeout: float) -> None:
        """Wake the writer and wait for `written`, at most `timeout` s: the caller (the event loop)
        never writes to a stream that may block."""
        self.wake.set()
        self.now.set()
        if not written.wait(timeout):
            self.stalled = True

    def put(self, item: list[Any]) -> None:
        """A line queued as `[maker, time.perf_counter(), *what it says]` (`Maker`), for callers
        that `direct_handler` gave this handler; while the queue holds fewer than
        min(BATCH, max_waiting) lines, appending to `waiting` and waking a sleeping writer does
        what this does."""
        waiting = self.waiting
        waited = len(waiting)
        if waited >= self.max_waiting and not self._room(False):
            return
        waiting.append(item)
        if self.sleeping:
            self.wake.set()
        if waited == BATCH:
            self.now.set()

    def _made(self, run: list[list[Any]], second_text: Callable[[int], str], to_wall: float) -> list[str]:
        """The text of a run of one maker's lines; a line it cannot make is reported, as logging
        reports a record it cannot format, and the others written."""
        maker = run[0][0]
        try:
            return list(maker(run, second_text, to_wall))
        except Exception:  # noqa: BLE001 - found again line by line below
            made = []
            for item in run:
                try:
                    made.extend(maker([item], second_text, to_wall))
                except Exception:  # noqa: BLE001 - as logging does: report it and go on
                    self.handleError(logging.LogRecord("evidencekit.log", logging.INFO, "", 0, "%r", (item[1:],), None))
            return made

    def flush(self) -> None:
        """Have every waiting record written: by the writer thread while it runs (waiting at most
        STALL_SECONDS, or not at all while the stream is stalled), else here."""
        if self.writer.is_alive() and not self.closing:
            written = threading.Event()
            with self.queue:
                self.announced.append(written)
            self._written_by_writer(written, 0 if self.stalled else STALL_SECONDS)
        elif self.writing.acquire(timeout=STALL_SECONDS):
            try:
                self._write_waiting()
            finally:
                self.writing.release()

    def _write_waiting(self) -> None:
        with self.queue:
            items = [self.waiting.popleft() for _ in range(len(self.waiting))]
            announced, self.announced = self.announced, []
            dropped, self.dropped = self.dropped, 0
        lines = []
        if dropped:
            lines.append(self.format(logging.LogRecord(
                "evidencekit.log", logging.WARNING, __file__, 0,
                "%d log records dropped: the log stream did not keep up", (dropped,), None)))
        own = self.own_format or _SecondsCached(FORMAT)  # a Maker's lines are in FORMAT whatever came since
        to_wall = time.time() - time.perf_counter()  # a line's perf_counter() time to the time of day

        def second_text(second: int) -> str:
            return own.time_text(second, 0)[:-4]

        for kind, run in groupby(items, type):
            if kind is list:
                for _, same in groupby(cast("Iterator[list[Any]]", run), _first):
                    lines += self._made(list(same), second_text, to_wall)
                continue
            for record in cast("Iterator[logging.LogRecord]", run):
                try:
                    lines.append(self.format(record))
                except Exception:  # noqa: BLE001 - as logging does: report it and go on
                    self.handleError(record)
        if lines:
            try:
                self.stream.write("\n".join(lines) + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # a closed or broken stream: nothing left to tell
                pass
        self.stalled = False
        for written in announced:
            written.set()

    def _write_on(self) -> None:
        while not self.closing:
            self.sleeping = True
            if not self.waiting:
                self.wake.wait()
            self.sleeping = False
            self.now.wait(INTERVAL)
            self.wake.clear()
            self.now.clear()
            with self.writing:
                self._write_waiting()

    def close(self) -> None:
        """Write what waits and stop the writer (a second call does nothing more). A stream
        stalled for good holds the exit for STALL_SECONDS past the writer's 5 s, not for ever."""
        if not self.closing:
            self.closing = True
            self.wake.set()
            self.now.set()
            self.writer.join(timeout=5)
        self.flush()
        super().close()


def direct_handler(logger: logging.Logger) -> BatchedLog | None:
    """The BatchedLog an INFO record of `logger` would reach, when it reaches nothing else: no
    filter on the logger or the handler, no other handler up the hierarchy, the handler's level
    and format its own. Asked per line (a handler or filter added since then counts at once);
    None otherwise, and the caller logs a record as usual."""
    if logger.filters:
        return None
    found: BatchedLog | None = None
    current: logging.Logger | None = logger
    while current is not None:
        for handler in current.handlers:
            if found is not None or not isinstance(handler, BatchedLog):
                return None
            found = handler
        current = current.parent if current.propagate else None
    if found is None or found.filters or found.level > logging.INFO or found.closing or \
            found.formatter is not found.own_format:
        return None
    return found


def flush_logs() -> None:
    """Write what the root logger's handlers hold, before an exit that runs no exit handler."""
    for handler in logging.getLogger().handlers:
        handler.flush()


def _flush_then_end(number: int, frame: object) -> None:
    """SIGTERM with no handler of the application's: end as the signal would, after the logs are
    written (the default action runs no exit handler; uvicorn raises the signal again once it has
    shut down)."""
    flush_logs()
    signal.signal(number, signal.SIG_DFL)
    signal.raise_signal(number)


def log_off_the_loop(level: str, stream: TextIO | None = None) -> logging.Handler | None:
    """Route every record through a BatchedLog (the handler returned), the root logger at `level`: what
    `logging.basicConfig(level=..., format=FORMAT)` does, and like it nothing when the root logger
    has handlers already (an application's own logging configuration, or pytest's). A SIGTERM
    that would end the process at once first writes what waits."""
    root = logging.getLogger()
    if root.handlers:
        return None
    # What FORMAT never prints is not collected for every record (the logging HOWTO's "Optimization")
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    handler = BatchedLog(stream)
    root.addHandler(handler)
    root.setLevel(level)
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _flush_then_end)
    return handler
