"""One log line per HTTP request: method, path, status, duration, request id. Never headers,
bodies or query strings (they may carry tokens).

The app's policy layer (_policies.py: inside a team's middleware, around the Host and bearer
checks and every route, the operations' included) times each HTTP request and calls `write_line`,
the one function that writes a request's line.

The path is logged as the client sent it (still percent-encoded): decoded, `%0a` would let a
request write a line of its own into the log."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import add, mul, sub
from typing import Any

from starlette.types import Scope

from evidencekit.server.runtime._log_queue import BATCH, BatchedLog, direct_handler

NAME = "evidencekit.access"
log = logging.getLogger(NAME)
_LINE = "%s %s %s %.1fms request_id=%s"


def logged_path(scope: Scope) -> str:
    return _logged(scope.get("raw_path"), scope["path"])


def _logged(raw: bytes | None, path: str) -> str:
    """The path as it is logged: as sent (`raw`, without its query), else `path`; made printable."""
    if raw:
        known = _LOGGED.get(raw)
        if known is not None:
            return known
        path = raw.partition(b"?")[0].decode("latin-1")
    if not path.isprintable():
        path = "".join(char if char.isprintable() else f"\\x{ord(char):02x}" for char in path)
    if raw and len(raw) <= _KEPT_LENGTH:
        if len(_LOGGED) >= _KEPT_PATHS:  # paths of every kind (404s): kept no more than this many
            _LOGGED.clear()
        _LOGGED[raw] = path
    return path


# raw path as sent -> as logged: the operations' few paths, mostly (the log thread's, and the loop's
# for a line that goes as a record)
_LOGGED: dict[bytes, str] = {}
_KEPT_PATHS, _KEPT_LENGTH = 1024, 256


# How long what the access log does with a line (whether INFO is on, the handler it goes to) is kept
# before it is looked up again: a level set, a handler or filter added to the logging setup counts
# within this. Looked up for every line, it was a fifth of the line's cost under load
# (scripts/bench_servers.py).
RESOLVE_SECONDS = 0.1


class Lane:
    """What the access log does with a request's line, looked up once per RESOLVE_SECONDS
    (`refresh`): nothing (`enabled` false); or, while the log thread's handler is its only
    destination (log_queue.direct_handler), append it to that handler's `waiting` as a Maker's line
    while fewer than `room` lines wait, waking the writer if it sleeps (past that, `write_line` puts
    it, which ends the batch at BATCH lines or counts it dropped); or else make a record of it."""

    __slots__ = ("until", "enabled", "handler", "waiting", "room")

    def __init__(self) -> None:
        self.until = -RESOLVE_SECONDS
        self.enabled = False
        self.handler: BatchedLog | None = None
        self.waiting: deque[Any] | None = None
        self.room = 0

    def refresh(self, now: float) -> None:
        self.until = now + RESOLVE_SECONDS
        self.enabled = log.isEnabledFor(logging.INFO)
        handler = self.handler = direct_handler(log) if self.enabled else None
        usable = handler is not None and not handler.closing
        self.waiting = handler.waiting if usable else None  # type: ignore[union-attr]
        self.room = min(BATCH, handler.max_waiting) if usable else 0  # type: ignore[union-attr]


LANE = Lane()


def line_of(scope: Scope, status: int, request_id: str, started: float, now: float) -> list[Any]:
    """The request's line as the log thread's queue takes it: its bare facts (`made` makes its text)."""
    return [made, now, started, scope["method"], scope.get("raw_path"), scope["path"], status, request_id]


def write_line(scope: Scope, status: int, request_id: str, started: float) -> None:
    """The request's line: `started` is its time.perf_counter() when it came in. Queued for the log
    thread as its bare facts (`line_of`) while that thread's handler is the line's only destination;
    else handled as a record."""
    now = time.perf_counter()
    if now >= LANE.until:
        LANE.refresh(now)
    handler = LANE.handler
    if handler is not None and not handler.closing:
        line = line_of(scope, status, request_id, started, now)
        waiting = LANE.waiting
        if waiting is not None and len(waiting) < LANE.room:
            waiting.append(line)  # what handler.put does while this few lines wait
            if handler.sleeping:
                handler.wake.set()
        else:
            handler.put(line)
    else:  # a record made directly: Logger.info would first walk the stack to find its caller
        # (findCaller), which costs more than the rest of the line
        args = (scope["method"], logged_path(scope), status, (now - started) * 1000, request_id)
        log.handle(log.makeRecord(NAME, logging.INFO, "", 0, _LINE, args, None))


_TEXT = f"%s,%03d INFO {NAME} {_LINE}"  # log_queue.FORMAT's line of an access record


def made(run: list[list[Any]], second_text: Callable[[int], str], to_wall: float) -> Iterable[str]:
    """The text of a run of access lines (log_queue.Maker), as their records would be written:
    column by column, without a Python step per line."""
    _, ats, starts, methods, raws, paths, statuses, request_ids = zip(*run, strict=True)
    logged = {sent: _logged(*sent) for sent in set(zip(raws, paths, strict=True))}
    created = list(map(add, ats, repeat(to_wall)))
    seconds = list(map(int, created))
    stamps = {second: second_text(second) for second in set(seconds)}
    return map(_TEXT.__mod__, zip(map(stamps.__getitem__, seconds),
                                  map(mul, map(sub, created, seconds), repeat(1000)),  # msecs, as %03d cuts them
                                  methods, map(logged.__getitem__, zip(raws, paths, strict=True)), statuses,
                                  map(mul, map(sub, ats, starts), repeat(1000)), request_ids, strict=True))
