"""Logging off the event loop: records are written by a thread, in order and in batches, formatted
as before; a warning at once; nothing queued is lost when the process ends."""

from __future__ import annotations

import collections
import io
import logging
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from evidencekit.server.runtime import _access_log as access_log
from evidencekit.server.runtime._log_queue import BatchedLog, direct_handler
from tests.support import eventually

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (\w+) (\S+) (.*)$")


def formatted(run: list[list[Any]], second_text: Any, to_wall: float) -> list[str]:
    """A log_queue.Maker of `[formatted, time, logger name, format, args]` lines: `format % args`,
    one line at a time (as a test needs, not as the access log makes them)."""
    texts = []
    for _, at, name, fmt, args in run:
        created = at + to_wall
        texts.append(f"{second_text(int(created))},{int((created - int(created)) * 1000):03d} INFO {name} {fmt % args}")
    return texts


def run_python(program: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`program` in a fresh interpreter (its own logging configuration and exit), from the repo root."""
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=check,
                          cwd=ROOT)


def test_records_are_written_in_order_in_batches_by_another_thread(tmp_path: Path) -> None:
    out = (tmp_path / "log.txt").open("w")
    handler = BatchedLog(out)
    writes: list[str] = []
    real_write = out.write

    def write(text: str) -> int:
        writes.append(threading.current_thread().name)
        return real_write(text)

    out.write = write  # type: ignore[method-assign]
    logger = logging.getLogger("evidencekit.test.queue")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        for number in range(500):
            logger.info("%s %s %.1fms", "POST", f"/path/{number}", 1.25)
        logger.debug("never written: below the level")
        eventually(lambda: (tmp_path / "log.txt").read_text().count("\n") == 500, what="the writer to write them")
        assert writes and set(writes) == {"evidencekit-log-writer"} and len(writes) < 50
        logger.warning("written at once, after the lines before it")
        assert (tmp_path / "log.txt").read_text().splitlines()[-1].endswith("after the lines before it")
    finally:
        handler.close()
        logger.removeHandler(handler)
        out.close()
    lines = (tmp_path / "log.txt").read_text().splitlines()
    assert len(lines) == 501
    assert [LINE.match(line).groups() for line in lines[:2]] == [  # type: ignore[union-attr]
        ("INFO", "evidencekit.test.queue", "POST /path/0 1.2ms"), ("INFO", "evidencekit.test.queue", "POST /path/1 1.2ms")]
    assert lines[499].endswith("/path/499 1.2ms")


def test_what_is_queued_at_exit_is_written() -> None:
    program = ("import logging\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "configure_logging('INFO')\n"
               "log = logging.getLogger('evidencekit.access')\n"
               "for n in range(2000):\n"
               "    log.info('line %d', n)\n")
    done = run_python(program)
    lines = done.stderr.splitlines()
    assert len(lines) == 2000 and lines[-1].endswith("INFO evidencekit.access line 1999")


def test_lines_waiting_when_sigterm_ends_the_process_are_written() -> None:
    """What uvicorn does after a graceful shutdown: it raises SIGTERM again, whose default action
    runs no exit handler."""
    program = ("import logging, os, signal\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "configure_logging('INFO')\n"
               "logging.getLogger('uvicorn.error').info('Finished server process')\n"
               "signal.raise_signal(signal.SIGTERM)\n"
               "print('not reached')\n")
    done = run_python(program, check=False)
    assert done.returncode == -15 and "not reached" not in done.stdout
    assert done.stderr.rstrip().endswith("INFO uvicorn.error Finished server process")


def test_sigterm_while_the_main_thread_holds_the_queue_ends_the_process() -> None:
    """The SIGTERM handler writes what waits, which takes the queue's lock: arriving while the
    main thread held it (a warning queuing itself, a full queue counting a drop), it waited for
    itself for ever. It ends now; what waited in that instant may go unwritten (the writer needs
    the lock the interrupted code holds, and the handler waits for it STALL_SECONDS at most)."""
    program = ("import logging, signal\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "configure_logging('INFO')\n"
               "handler = logging.getLogger().handlers[0]\n"
               "with handler.queue:\n"
               "    signal.raise_signal(signal.SIGTERM)\n"
               "print('not reached')\n")
    done = run_python(program, check=False)
    assert done.returncode == -15 and "not reached" not in done.stdout


def test_a_line_queued_without_a_record_is_written_as_its_record_would_be_in_order(tmp_path: Path) -> None:
    out = (tmp_path / "log.txt").open("w")
    handler = BatchedLog(out)
    logger = logging.getLogger("evidencekit.test.lines")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        assert direct_handler(logger) is handler
        logger.info("%s %s %s %.1fms request_id=%s", "POST", "/a", 200, 1.25, "r1")
        handler.put([formatted, time.perf_counter(), logger.name, "%s %s %s %.1fms request_id=%s",
                     ("POST", "/b", 404, 0.5, "r2")])
        logger.info("%s %s %s %.1fms request_id=%s", "GET", "/c", 200, 3.0, "r3")
    finally:
        handler.close()
        logger.removeHandler(handler)
        out.close()
    lines = (tmp_path / "log.txt").read_text().splitlines()
    assert [LINE.match(line).groups() for line in lines] == [  # type: ignore[union-attr]
        ("INFO", "evidencekit.test.lines", "POST /a 200 1.2ms request_id=r1"),
        ("INFO", "evidencekit.test.lines", "POST /b 404 0.5ms request_id=r2"),
        ("INFO", "evidencekit.test.lines", "GET /c 200 3.0ms request_id=r3")]
    stamps = [time.mktime(time.strptime(line[:19], "%Y-%m-%d %H:%M:%S")) + int(line[20:23]) / 1000 for line in lines]
    assert stamps == sorted(stamps) and abs(stamps[1] - time.time()) < 5  # local time, as the records'


def test_the_access_log_of_a_served_process_goes_straight_to_the_log_thread() -> None:
    program = ("import asyncio, logging\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "from evidencekit.server.runtime import _access_log as access_log, _log_queue as log_queue\n"
               "configure_logging('INFO')\n"
               "from evidencekit.server.runtime._hosts import HostPolicy\n"
               "from evidencekit.server.runtime._policies import Policies\n"
               "def logged(app):  # the app's policy layer, which writes the access line\n"
               "    return Policies(app, hosts=HostPolicy(), handlers={})\n"
               "assert log_queue.direct_handler(access_log.log) is not None\n"
               "async def app(scope, receive, send):\n"
               "    await send({'type': 'http.response.start', 'status': 201, 'headers': [(b'x-request-id', b'r7')]})\n"
               "    await send({'type': 'http.response.body', 'body': b''})\n"
               "async def noop(message): pass\n"
               "scope = {'type': 'http', 'method': 'POST', 'path': '/a b', 'raw_path': b'/a%20b?token=x', 'headers': [(b'host', b'localhost')]}\n"
               "asyncio.run(logged(app)(scope, None, noop))\n")
    done = run_python(program)
    match = LINE.match(done.stderr.splitlines()[-1])
    assert match is not None, done.stderr
    assert match.group(1, 2) == ("INFO", "evidencekit.access")
    assert re.fullmatch(r"POST /a%20b 201 \d+\.\dms request_id=r7", match.group(3)), match.group(3)


def test_access_lines_queued_as_lists_read_as_their_records_would_in_order() -> None:
    """A request's line goes to the log thread as the bare facts (access_log.line_of); the thread
    makes a run of them at once (access_log.made): the same text a record of the line gives, the path
    as sent and made printable, in order with what else was logged."""
    out = io.StringIO()
    handler = BatchedLog(out)
    started = time.perf_counter()
    sent: list[dict[str, Any]] = [{"method": "POST", "path": "/a b", "raw_path": b"/a%20b?token=secret"},
            {"method": "GET", "path": "/x", "raw_path": b"/x\x1b[2J\n"},  # not printable: escaped
            {"method": "GET", "path": "/no raw path"}]
    try:
        handler.put(access_log.line_of(sent[0], 201, "r1", started, started + 0.0012))
        handler.put(access_log.line_of(sent[1], 404, "r2", started, started + 0.5))
        handler.emit(logging.LogRecord("evidencekit.other", logging.INFO, "", 0, "between %s", ("them",), None))
        handler.put(access_log.line_of(sent[2], 500, "-", started, started + 0.00004))
        handler.put(access_log.line_of(sent[0], 200, "r3", started, started + 2.5))
    finally:
        handler.close()
    lines = out.getvalue().splitlines()
    assert [LINE.match(line).groups() for line in lines] == [  # type: ignore[union-attr]
        ("INFO", "evidencekit.access", "POST /a%20b 201 1.2ms request_id=r1"),
        ("INFO", "evidencekit.access", "GET /x\\x1b[2J\\x0a 404 500.0ms request_id=r2"),
        ("INFO", "evidencekit.other", "between them"),
        ("INFO", "evidencekit.access", "GET /no raw path 500 0.0ms request_id=-"),
        ("INFO", "evidencekit.access", "POST /a%20b 200 2500.0ms request_id=r3")]
    stamps = [time.mktime(time.strptime(line[:19], "%Y-%m-%d %H:%M:%S")) + int(line[20:23]) / 1000 for line in lines]
    assert abs(stamps[0] - time.time()) < 5 and 2.4 < stamps[4] - stamps[0] < 2.6  # each line's own time
    record = logging.LogRecord(access_log.NAME, logging.INFO, "", 0, "%s %s %s %.1fms request_id=%s",
                               ("POST", access_log.logged_path(sent[0]), 201, 1.2, "r1"), None)
    assert lines[0][24:] == f"INFO {access_log.NAME} {record.getMessage()}"


def test_the_access_log_writes_its_lines_straight_to_the_log_thread_and_sees_the_level_within_the_lookup_time() -> None:
    program = ("import asyncio, logging, time\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "from evidencekit.server.runtime import _access_log as access_log\n"
               "configure_logging('INFO')\n"
               "from evidencekit.server.runtime._hosts import HostPolicy\n"
               "from evidencekit.server.runtime._policies import Policies\n"
               "def logged(app):  # the app's policy layer, which writes the access line\n"
               "    return Policies(app, hosts=HostPolicy(), handlers={})\n"
               "async def endpoint(scope, receive, send):\n"
               "    await send({'type': 'http.response.start', 'status': 201, 'headers': [(b'x-request-id', b'r7')]})\n"
               "    await send({'type': 'http.response.body', 'body': b''})\n"
               "app = logged(endpoint)\n"
               "async def noop(message): pass\n"
               "def request(raw):\n"
               "    scope = {'type': 'http', 'method': 'POST', 'path': '/a b', 'raw_path': raw, 'headers': [(b'host', b'localhost')]}\n"
               "    asyncio.run(app(scope, None, noop))\n"
               "for n in range(3):\n"
               "    request(b'/a%20b?token=x')\n"
               "assert access_log.LANE.waiting is not None\n"
               "access_log.log.setLevel(logging.WARNING)\n"
               "while (left := access_log.LANE.until - time.perf_counter()) > 0:  # the lookup's time is over\n"
               "    time.sleep(left)\n"
               "request(b'/a%20b?quiet')\n")
    done = run_python(program)
    lines = [LINE.match(line) for line in done.stderr.splitlines() if "evidencekit.access" in line]
    assert len(lines) == 3, done.stderr
    for match in lines:
        assert match is not None and match.group(1, 2) == ("INFO", "evidencekit.access")
        assert re.fullmatch(r"POST /a%20b 201 \d+\.\dms request_id=r7", match.group(3)), match.group(3)


def test_a_handler_added_while_serving_sees_the_access_log_within_the_lookup_time() -> None:
    """The access log looks up where its lines go once per RESOLVE_SECONDS, not per line: a handler
    added to it (a team's own, say) sees the lines of requests made after that long."""
    program = ("import asyncio, io, logging, time\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "from evidencekit.server.runtime import _access_log as access_log\n"
               "configure_logging('INFO')\n"
               "from evidencekit.server.runtime._hosts import HostPolicy\n"
               "from evidencekit.server.runtime._policies import Policies\n"
               "def logged(app):  # the app's policy layer, which writes the access line\n"
               "    return Policies(app, hosts=HostPolicy(), handlers={})\n"
               "async def app(scope, receive, send):\n"
               "    await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
               "    await send({'type': 'http.response.body', 'body': b''})\n"
               "async def noop(message): pass\n"
               "def request(path):\n"
               "    scope = {'type': 'http', 'method': 'GET', 'path': path, 'raw_path': path.encode(), 'headers': [(b'host', b'localhost')]}\n"
               "    asyncio.run(logged(app)(scope, None, noop))\n"
               "request('/before')\n"
               "seen = io.StringIO()\n"
               "access_log.log.addHandler(logging.StreamHandler(seen))\n"
               "while (left := access_log.LANE.until - time.perf_counter()) > 0:  # the lookup's time is over\n"
               "    time.sleep(left)\n"
               "request('/after')\n"
               "print(seen.getvalue(), end='')\n")
    done = run_python(program)
    assert "GET /before" not in done.stdout and done.stdout.startswith("GET /after 200 "), done.stdout
    assert "GET /before 200 " in done.stderr and "GET /after 200 " in done.stderr, done.stderr


def test_a_line_takes_the_record_path_when_anything_else_would_see_the_record() -> None:
    handler = BatchedLog(io.StringIO())
    parent = logging.getLogger("evidencekit.test.direct")
    logger = logging.getLogger("evidencekit.test.direct.access")
    parent.propagate = False
    parent.addHandler(handler)
    try:
        assert direct_handler(logger) is handler
        noticing = logging.Filter("nothing")
        logger.addFilter(noticing)  # a filter on the logger itself
        assert direct_handler(logger) is None
        logger.removeFilter(noticing)
        handler.addFilter(noticing)  # a filter on the handler
        assert direct_handler(logger) is None
        handler.removeFilter(noticing)
        other = logging.StreamHandler(io.StringIO())
        logger.addHandler(other)  # another destination on the way up
        assert direct_handler(logger) is None
        logger.removeHandler(other)
        handler.setLevel(logging.WARNING)  # the handler would drop an INFO record
        assert direct_handler(logger) is None
        handler.setLevel(logging.NOTSET)
        handler.setFormatter(logging.Formatter("%(message)s"))  # a format of the application's
        assert direct_handler(logger) is None
        parent.propagate = True  # nothing but the root logger's handlers (pytest's) beyond
        parent.removeHandler(handler)
        assert direct_handler(logger) is None
    finally:
        parent.removeHandler(handler)
        parent.propagate = True
        handler.close()


def test_a_line_that_cannot_be_formatted_is_reported_and_the_rest_written(capsys: Any) -> None:
    out = io.StringIO()
    handler = BatchedLog(out)
    try:
        handler.put([formatted, time.perf_counter(), "evidencekit.test.bad", "%s %d", ("POST", "not a number")])
        handler.put([formatted, time.perf_counter(), "evidencekit.test.bad", "%s %s", ("GET", "/ok")])
        handler.flush()
    finally:
        handler.close()
    assert out.getvalue().rstrip().endswith("INFO evidencekit.test.bad GET /ok")
    assert "--- Logging error ---" in capsys.readouterr().err  # logging's own report, naming the line


class StalledStream(io.StringIO):
    """A stream whose writes block until released (stdout piped to a reader that stopped reading)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.writing = threading.Event()

    def write(self, text: str) -> int:
        self.writing.set()
        self.release.wait()
        return super().write(text)


def test_a_stalled_stream_bounds_the_queue_counts_what_is_dropped_and_never_holds_a_warning() -> None:
    stream = StalledStream()
    handler = BatchedLog(stream, max_waiting=1_000)  # type: ignore[arg-type]
    logger = logging.getLogger("evidencekit.test.stalled")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.info("the first line: the writer takes it and blocks in its write")
        assert stream.writing.wait(5)
        for number in range(60_000):
            handler.put([formatted, time.perf_counter(), "evidencekit.access", "GET /x/%d 200", (number,)])
        assert len(handler.waiting) == 1_000 and handler.dropped == 59_000  # bounded, and counted

        def warn() -> None:
            logger.warning("a warning while the stream is stalled: %s", "first")
            logger.warning("a warning while the stream is stalled: %s", "second")

        warning = threading.Thread(target=warn)
        warning.start()
        warning.join(timeout=30)
        assert not warning.is_alive()  # waited STALL_SECONDS for the first, not at all for the second
        assert len(handler.waiting) == 1_002  # warnings have room past the bound
    finally:
        stream.release.set()
        handler.close()
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    dropped = [line for line in lines if "log records dropped" in line]
    assert len(dropped) == 1 and LINE.match(dropped[0]).groups() == (  # type: ignore[union-attr]
        "WARNING", "evidencekit.log", "59000 log records dropped: the log stream did not keep up")
    assert lines.index(dropped[0]) == 1  # said where the gap is: right after what was written before it
    assert sum("GET /x/" in line for line in lines) == 1_000
    assert lines[-1].endswith("stalled: second")


def test_a_warning_never_writes_to_a_stalled_stream_from_the_thread_that_logs_it() -> None:
    """With the writer idle and the pipe full, a warning wrote on the caller's thread (the event
    loop) and blocked there; it is the writer's to write, and the caller waits 1 s at most."""
    stream = StalledStream()
    handler = BatchedLog(stream)  # type: ignore[arg-type]
    logger = logging.getLogger("evidencekit.test.idle-writer")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        caller = threading.Thread(target=lambda: logger.warning("Invalid HTTP request received."))
        caller.start()
        caller.join(timeout=10)
        assert not caller.is_alive() and stream.writing.is_set()  # the writer holds the write, not the caller
        assert threading.current_thread().name != "evidencekit-log-writer"
        flushing = threading.Thread(target=handler.flush)  # flush_logs at SIGTERM: bounded too
        flushing.start()
        flushing.join(timeout=10)
        assert not flushing.is_alive()
    finally:
        stream.release.set()
        handler.close()
        logger.removeHandler(handler)
    assert stream.getvalue().rstrip().endswith("Invalid HTTP request received.")


class _CountedEvent(threading.Event):
    """An Event that notes the timeout of each wait on it."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return super().wait(timeout)


def test_an_idle_writer_sleeps_until_a_line_comes_and_writes_what_comes_meanwhile() -> None:
    """The writer woke every 0.05 s to find nothing, taking the interpreter lock from an idle event
    loop each time; it now waits without a timeout until a line (or a warning, a flush) comes."""
    stream = io.StringIO()
    handler = BatchedLog(stream)
    writes = []
    real_write = handler._write_waiting

    def counted_write() -> None:
        writes.append(len(handler.waiting))
        real_write()

    handler._write_waiting = counted_write  # type: ignore[method-assign]
    first_wake, handler.wake = handler.wake, _CountedEvent()
    first_wake.set()  # the writer leaves its wait on the first Event and waits on the counted one
    logger = logging.getLogger("evidencekit.test.idle")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        eventually(lambda: handler.wake.waits, what="the writer to wait on the counted Event")  # type: ignore[attr-defined]
        logger.info("one line")
        eventually(lambda: "one line" in stream.getvalue(), what="the line to be written")
        eventually(lambda: len(handler.wake.waits) >= 2, what="the writer to wait again")  # type: ignore[attr-defined]
        assert handler.wake.waits == [None] * len(handler.wake.waits)  # type: ignore[attr-defined]
        done = len(writes)
        for number in range(3):  # lines queued straight to an idle writer wake it as a record does
            handler.put([formatted, time.perf_counter(), "evidencekit.access", "GET /put/%d 200", (number,)])
        eventually(lambda: "/put/2 200" in stream.getvalue(), what="the put lines to be written")
        assert len(writes) - done <= 2  # one batch (or the first line and then the rest), not a wake per line
    finally:
        handler.close()
        logger.removeHandler(handler)


def test_a_line_queued_as_the_writer_falls_asleep_wakes_it() -> None:
    """A producer that read the queue's length before the writer emptied it and fell asleep, then
    appended: with the wake decided from that stale length, the line (and every one after it,
    the queue never empty again) waited until a warning came."""
    stream = io.StringIO()
    handler = BatchedLog(stream)

    def writer_asleep() -> bool:
        frame = sys._current_frames().get(handler.writer.ident or -1)
        while frame is not None:
            if frame.f_code.co_name == "wait" and frame.f_locals.get("self") is handler.wake:
                return True
            frame = frame.f_back
        return False

    class Racing(collections.deque):  # type: ignore[type-arg]
        armed = False

        def __len__(self) -> int:
            length = super().__len__()
            if self.armed and threading.current_thread() is not handler.writer:
                self.armed = False
                handler.wake.set()  # what queued the line before: the writer takes it and sleeps again
                eventually(lambda: not super(Racing, self).__len__() and writer_asleep(),
                           what="the writer to empty the queue and sleep")
            return length

    try:
        eventually(writer_asleep, what="the idle writer to sleep")
        racing = Racing([[formatted, time.perf_counter(), "evidencekit.access", "GET /before 200", ()]])
        handler.waiting = racing
        racing.armed = True
        handler.put([formatted, time.perf_counter(), "evidencekit.access", "GET /after 200", ()])
        eventually(lambda: "GET /after 200" in stream.getvalue(), what="the line queued as the writer fell asleep")
    finally:
        handler.close()
