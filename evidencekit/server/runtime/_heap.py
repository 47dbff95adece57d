"""The garbage collector, set for a long-running server once it has imported everything.

Measured under `scripts/bench.py status` (wrk, 32 connections): the collector took ~6% of the
server's time, and each full collection walked the ~120,000 objects imports leave behind (modules,
classes, the compiled validators), stalling every request in flight for ~80 ms. Those objects live
as long as the process: `gc.freeze()` moves them out of the collector's sight. With 32 requests in
flight, their frames, futures and dicts alone pass the default 700 objects that start a young
collection, which then finds nothing to free (the status path makes no cyclic garbage): it starts
at 7,000 here, so garbage cycles still go, just not every ~30 requests.

What a cycle holds waits longer for it then: a fetch cut at the byte cap had left its connection,
with MBs of unread body in the socket buffers, in httpx's response/stream cycle, and the server
peaked at 531 MB in scripts/bench.py's memory run until the fetcher broke that cycle
(server/fetch/fetcher.py; tests/server/fetch/test_fetcher.py checks a cut fetch leaves none).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 7_000


def settle() -> None:
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
