"""What the plumbing of a status read costs, without HTTP or a load generator: CPU per request.

    .venv/bin/python scripts/bench_plumbing.py [--rounds 10] [--batches 600]

The status benchmark (scripts/bench.py status) measures through uvicorn and wrk, and on a shared
2-core machine its rounds drift by 20-30%: too coarse to see a few microseconds. Profilers do not
help either. py-spy over-samples the frames that make a system call (it put 10% of the time on the
request id's os.urandom, which an A/B showed costs nothing measurable), and cProfile's per-call
overhead swamps coroutine-heavy code.

This drives each ASGI app in a process of its own with ready-made request scopes, 32 requests at a
time (as wrk's 32 connections do), and reads the process's CPU time:

- the service: `research-evidence serve`'s app, no worker, heap settled as serve settles it
- logged: the same app at serve's default log level (INFO: one access line per request), its log
  thread writing to a file; the process's CPU time counts that thread's formatting and writes too
- floor: the status call's own steps in a bare ASGI function (bench_floor_app.py)

Both read the same 1,000 receipts of one SQLite store: pending (`--load pending`, every poll before
the last) or settled with 6,000 characters of text each (`--load settled`, the final poll). They
alternate for `--rounds` rounds, and each side's minimum is the figure: noise only ever adds time. The difference is what
the plumbing costs: dispatch, the bearer check's wrapper, request ids, error mapping, the request
context and the answer's headers. The logged side over the service is what the access log costs,
free of the drift that makes the wrk rows' "what logging costs" vary by +-0.15.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONCURRENT = 32
RECEIPTS = 1000
STATUS = "/research-api/evidence/status"
RETRIEVE = "/research-api/evidence/retrieve"

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
SIDES = ("service", "logged", "floor")


def scope_for(path: str, token: str, body: bytes) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
            "headers": [(b"host", b"127.0.0.1:8000"), (b"user-agent", b"bench"), (b"accept", b"*/*"),
                        (b"content-type", b"application/json"), (b"authorization", f"Bearer {token}".encode()),
                        (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "state": {}}


async def call(app: App, path: str, token: str, body: bytes) -> bytes:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope_for(path, token, body), receive, send)
    if sent[0]["status"] != 200:
        raise SystemExit(f"{path} answered {sent[0]['status']}: {sent[-1].get('body', b'')[:300]!r}")
    return bytes(sent[-1]["body"])


async def started(app: App) -> asyncio.Task[None]:
    """The app's lifespan, started (it opens the store) and left running."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    task = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                   inbox.get, outbox.put))
    message = await outbox.get()
    if message["type"] != "lifespan.startup.complete":
        raise SystemExit(f"startup failed: {message}")
    return task


async def cpu_per_request(app: App, token: str, bodies: list[bytes], batches: int) -> float:
    async def batch(number: int) -> None:
        await asyncio.gather(*(call(app, STATUS, token, bodies[(number * CONCURRENT + turn) % len(bodies)])
                               for turn in range(CONCURRENT)))

    for number in range(50):  # warm: caches filled, statements prepared
        await batch(number)
    from evidencekit.server.runtime import flush_logs

    flush_logs()
    before = time.process_time()
    for number in range(batches):
        await batch(number)
    flush_logs()  # the lines still queued are formatted and written inside the measurement
    return (time.process_time() - before) / (batches * CONCURRENT)


async def make_receipts(app: App, token: str, workspace: str, load: str) -> list[dict[str, str]]:
    """RECEIPTS receipts made through `app` (never fetched), settled with a page of text each for
    `load` "settled"; their status bodies."""
    bodies = []
    for number in range(RECEIPTS):
        mutation = str(uuid.uuid4())
        await call(app, RETRIEVE, token, json.dumps({
            "workspace_id": workspace, "mutation_id": mutation, "kind": "url_text",
            "url": f"https://example.com/never-fetched/{number}"}).encode())
        bodies.append({"workspace_id": workspace, "mutation_id": mutation})
    if load == "settled":
        sys.path.insert(0, str(ROOT / "scripts"))
        from bench_status import settle_with_text

        from evidencekit.server.evidence.store.db import database_url

        await settle_with_text(database_url(), RECEIPTS, opened=True)
    return bodies


async def one_side(side: str, token: str, workspace: str, bodies_file: Path, batches: int, load: str) -> float:
    """CPU per request of one side, in a process of its own (two stores opened by one process
    would share tortoise's process-wide fallback). The first run makes the receipts."""
    from evidencekit.server.runtime import _heap as heap

    if side == "logged":
        from evidencekit.server.runtime import log_off_the_loop

        log_off_the_loop("INFO", (bodies_file.parent / "access.log").open("a"))
    if side in ("service", "logged"):
        from evidencekit.server.evidence.app import create_app

        app: App = create_app(in_process_worker=False)  # type: ignore[assignment]
    else:
        sys.path.insert(0, str(ROOT / "scripts"))
        import bench_floor_app

        app = bench_floor_app.app
    running = await started(app)
    if not bodies_file.exists():
        bodies_file.write_text(json.dumps(await make_receipts(app, token, workspace, load)))
    heap.settle()
    cost = await cpu_per_request(app, token, [json.dumps(body).encode() for body in json.loads(bodies_file.read_text())],
                                 batches)
    running.cancel()
    return cost


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batches", type=int, default=600, help=f"batches of {CONCURRENT} requests per side and round")
    parser.add_argument("--load", choices=("pending", "settled"), default="pending",
                        help="what the receipts read are: pending, or settled with text")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)  # one measurement
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        import uvloop

        boot = json.loads((Path(args.data) / "boot.json").read_text())
        cost = uvloop.run(one_side(args.side, boot["token"], boot["workspace_id"], Path(args.data) / "bodies.json",
                                   args.batches, args.load))
        print(cost)
        return 0
    costs: dict[str, list[float]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "EVIDENCEKIT_DATA_DIR": data, "EVIDENCEKIT_RETRIEVE_PER_MINUTE": str(RECEIPTS * 10),
               "EVIDENCEKIT_LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT)}
        env.pop("DATABASE_URL", None)
        boot = subprocess.run([sys.executable, "-m", "evidencekit", "admin", "bootstrap", "--json"],
                              cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
        (Path(data) / "boot.json").write_text(boot)
        for turn in range(args.rounds):
            for side in SIDES[turn % len(SIDES):] + SIDES[:turn % len(SIDES)]:
                out = subprocess.run([sys.executable, __file__, "--side", side, "--data", data,
                                      "--batches", str(args.batches), "--load", args.load], cwd=ROOT, env=env, capture_output=True,
                                     text=True, check=True).stdout
                costs[side].append(float(out.strip().splitlines()[-1]))
        lines = sum(1 for _ in (Path(data) / "access.log").open("rb"))
    expected = args.rounds * (args.batches + 50) * CONCURRENT
    if lines < expected:
        raise SystemExit(f"the logged side wrote {lines} access lines of {expected}: its access log is not on")
    best = {side: min(values) * 1e6 for side, values in costs.items()}
    service, logged, floor = best["service"], best["logged"], best["floor"]
    print(f"CPU per status read, {CONCURRENT} at a time, SQLite, {args.load} receipts, {args.rounds} rounds (minimum; median in brackets)")
    print(f"  service (research-evidence serve's app): {service:6.1f} us  ({statistics.median(costs['service']) * 1e6:.1f})")
    print(f"  logged (the same, access log on):  {logged:6.1f} us  ({statistics.median(costs['logged']) * 1e6:.1f})")
    print(f"  floor (bench_floor_app.py):        {floor:6.1f} us  ({statistics.median(costs['floor']) * 1e6:.1f})")
    print(f"  plumbing: {service - floor:.1f} us; floor / service = {floor / service:.2f}")
    print(f"  access log: {logged - service:.1f} us a request; service / logged = {service / logged:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
