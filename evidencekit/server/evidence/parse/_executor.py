"""What the parse pool reads of concurrent.futures.ProcessPoolExecutor's private attributes, here
only: its processes (to kill them when a parse runs past its deadline) and its pipes, made wide
enough for a page in one write.

concurrent.futures.ProcessPoolExecutor passes each call and each result through a pipe, 64 KiB on
Linux. A 200 KB page's result (its text, markdown and index words: ~600 KB pickled) crossed in
about ten reads by the executor's result thread, which between reads waits for the GIL held by the
busy event loop (up to sys.getswitchinterval(), 5 ms, a time), while the parse process, its write
blocked, waited too: during a drain (scripts/bench_drain.py) a page spent 45 ms in the parse step
for ~10 ms of parsing. Widened to PIPE_BYTES (F_SETPIPE_SZ; Linux's limit for an unprivileged
process, /proc/sys/fs/pipe-max-size, is 1 MiB by default) a result crosses in one write: 28-31 ms.

The attributes (`_processes`, a dict of pid -> process; `_call_queue` and `_result_queue`, each a
multiprocessing queue with a `_reader` connection) are CPython's, 3.11 to 3.13. Where one is missing
(another Python), processes() is empty and the pipes stay as they are (widen() says so).
"""

from __future__ import annotations

import contextlib
import logging
from concurrent.futures import ProcessPoolExecutor
from typing import Any

PIPE_BYTES = 1024 * 1024

log = logging.getLogger("evidencekit.parse")


def processes(executor: ProcessPoolExecutor) -> list[Any]:
    """The executor's live worker processes (multiprocessing.Process objects), or []."""
    found: dict[Any, Any] = getattr(executor, "_processes", None) or {}
    return list(found.values())


def pipe_ends(executor: ProcessPoolExecutor) -> list[int]:
    """The file descriptors of the executor's call and result pipes (the reading ends), or []."""
    ends = []
    for name in ("_call_queue", "_result_queue"):
        reader = getattr(getattr(executor, name, None), "_reader", None)
        if reader is None or not hasattr(reader, "fileno"):
            return []
        ends.append(reader.fileno())
    return ends


def _pipe_commands() -> tuple[int, int] | None:
    """fcntl's F_GETPIPE_SZ and F_SETPIPE_SZ, or None where the system has none (they are Linux's)."""
    try:
        import fcntl
    except ImportError:  # not on a POSIX system
        return None
    get, set_ = getattr(fcntl, "F_GETPIPE_SZ", None), getattr(fcntl, "F_SETPIPE_SZ", None)
    return None if get is None or set_ is None else (get, set_)


def pipe_size(end: int) -> int | None:
    commands = _pipe_commands()
    if commands is None:
        return None
    import fcntl

    try:
        return fcntl.fcntl(end, commands[0])
    except OSError:
        return None


def widen(executor: ProcessPoolExecutor, size: int = PIPE_BYTES) -> bool:
    """Widen the executor's two pipes to `size` bytes (or as close as the system allows); whether
    both are now at least that wide."""
    commands = _pipe_commands()
    if commands is None:
        return False
    import fcntl

    ends = pipe_ends(executor)
    for end in ends:
        with contextlib.suppress(OSError):  # over the system's limit (EPERM), or not a pipe
            fcntl.fcntl(end, commands[1], size)
    widened = bool(ends) and all((pipe_size(end) or 0) >= size for end in ends)
    if not widened:
        log.debug("parse pool pipes left at their size: a large page's result crosses in several reads")
    return widened
