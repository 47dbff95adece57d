"""What the parse pool reads of concurrent.futures.ProcessPoolExecutor's private attributes, here
only: its processes (to kill them when a parse runs past its deadline) and its pipes, made wide
enough for a page in one write.

concurrent.futures.ProcessPoolExecutor passes each call and each result through a pipe, 64 KiB on
Linux. A 200 KB page's result (its text, markdown and index words; 140 KB pickled for
bench_origin_app's pages, more at the time) crossed in several reads by the executor's result thread, which between reads waits for the GIL held by the
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

try:  # Linux's pipe size commands (the fcntl module names them on Linux only)
    from fcntl import F_GETPIPE_SZ, F_SETPIPE_SZ, fcntl
except ImportError:  # elsewhere the pipes stay as they are
    fcntl = None  # type: ignore[assignment]

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


def pipe_size(end: int) -> int | None:
    if fcntl is None:
        return None
    try:
        return fcntl(end, F_GETPIPE_SZ)
    except OSError:
        return None


def widen(executor: ProcessPoolExecutor, size: int = PIPE_BYTES) -> bool:
    """Widen the executor's two pipes to `size` bytes (or as close as the system allows); whether
    both are now at least that wide."""
    if fcntl is None:
        return False
    ends = pipe_ends(executor)
    for end in ends:
        with contextlib.suppress(OSError):  # over the system's limit (EPERM), or not a pipe
            fcntl(end, F_SETPIPE_SZ, size)
    widened = bool(ends) and all((pipe_size(end) or 0) >= size for end in ends)
    if not widened:
        log.debug("parse pool pipes left at their size: a large page's result crosses in several reads")
    return widened
