"""CPU per status read through the HTTP protocol, without sockets or a load generator.

    .venv/bin/python scripts/bench_protocol.py [--load pending|settled] [--database sqlite|postgres]
                                               [--rounds 6] [--batches 200]

The wrk rows (scripts/bench.py status) drift 20-30% between rounds on a shared 2-core machine, and
scripts/bench_plumbing.py drives the ASGI app alone, so neither sees what the protocol in front of
the app costs. This feeds raw HTTP/1.1 requests into uvicorn's httptools protocol, 32 connections
at a time (as wrk's 32), over in-memory transports that keep what is written, and reads the
process's CPU time. The kernel's share (the socket writes, the receiving side of TCP) is left out;
what is measured is the Python and C the server runs per request. Sides, each in a process of its
own, alternating for `--rounds` rounds, each figure the minimum (noise only ever adds time):

- service: `research-evidence serve`'s app on its own protocol (server/runtime/_http_protocol.py)
- service, stock protocol: the same app on uvicorn's httptools protocol as it ships
- peer: the status benchmark's bare Starlette endpoint returning the same bytes, stock protocol

The app reads 1,000 receipts of one store: pending, or settled with a page of text. On PostgreSQL
(a fresh database on the local server, EVIDENCEKIT_TEST_PG's, dropped at the end) the CPU time of
the server's backends for that database is read from /proc and shown beside the process's: on a
2-core machine it is time taken from the service and its clients. Only 127.0.0.1 appears, in the
requests' headers; nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_common import backend_pids, backend_seconds  # noqa: E402

CONCURRENT = 32
SIDES = ("service", "stock", "peer")
LABELS = {"service": "service (serve's protocol)", "stock": "service, uvicorn's stock protocol",
          "peer": "peer (bare Starlette, stock protocol)"}


class MemoryTransport(asyncio.Transport):
    """A connection's transport that keeps what is written and says when something was."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closing = False
        self.answered: asyncio.Future[None] | None = None
        self.peer = ("127.0.0.1", port)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": self.peer}.get(name, default)

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))
        if self.answered is not None and not self.answered.done():
            self.answered.set_result(None)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0


def request_bytes(token: str, body: dict[str, str]) -> bytes:
    data = json.dumps(body).encode()
    return (f"POST /research-api/evidence/status HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: bench\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


async def cpu_per_request(side: str, data: Path, batches: int) -> tuple[float, float]:
    """The process's CPU per request, and the database backends' (0 on SQLite, and for the peer)."""
    import uvicorn
    from uvicorn.lifespan.on import LifespanOn
    from uvicorn.server import ServerState

    from evidencekit.server.runtime import _heap as heap

    boot = json.loads((data / "boot.json").read_text())
    if side == "peer":
        os.environ["BENCH_PEER_BODY"] = str(data / "answer.json")
        import bench_peer_app

        app: Any = bench_peer_app.app
    else:
        from evidencekit.server.evidence.app import create_app

        app = create_app(in_process_worker=False)
    http: Any = "httptools"
    if side == "service":
        from evidencekit.server.runtime._http_protocol import bounded_protocol

        http = bounded_protocol()
    config = uvicorn.Config(app, log_level="warning", log_config=None, access_log=False, http=http,
                            limit_concurrency=2048, timeout_keep_alive=5)  # as `research-evidence serve` runs it
    config.load()
    lifespan = LifespanOn(config)
    await lifespan.startup()
    heap.settle()
    requests = [request_bytes(boot["token"], body) for body in json.loads((data / "bodies.json").read_text())]
    loop = asyncio.get_running_loop()
    state = ServerState()
    connections = []
    for number in range(CONCURRENT):
        transport = MemoryTransport(50000 + number)
        protocol = config.http_protocol_class(config=config, server_state=state, app_state=lifespan.state)
        protocol.connection_made(transport)
        connections.append((protocol, transport))

    async def batch(number: int) -> None:
        for turn, (protocol, transport) in enumerate(connections):
            transport.written.clear()
            transport.answered = loop.create_future()
            protocol.data_received(requests[(number * CONCURRENT + turn) % len(requests)])
        await asyncio.gather(*(transport.answered for _, transport in connections if transport.answered))
        await asyncio.sleep(0)  # what the turn that answered left to do
        for _, transport in connections:
            if not transport.written[0].startswith(b"HTTP/1.1 200 "):
                raise SystemExit(f"{side} answered {transport.written[0][:300]!r}")

    for number in range(50):  # warm: caches filled, statements prepared
        await batch(number)
    backends = await backend_pids(os.environ["DATABASE_URL"]) if side != "peer" and "DATABASE_URL" in os.environ else []
    database_started = backend_seconds(backends)
    started = time.process_time()
    for number in range(batches):
        await batch(number)
    cost = (time.process_time() - started) / (batches * CONCURRENT)
    database_cost = (backend_seconds(backends) - database_started) / (batches * CONCURRENT)
    for protocol, _ in connections:
        protocol.connection_lost(None)
    await lifespan.shutdown()
    return cost, database_cost


async def make_receipts(data: Path, load: str) -> None:
    """The receipts bench_plumbing reads (pending, or settled with text), their status bodies and
    one answer (what the peer returns)."""
    import bench_plumbing

    from evidencekit.server.evidence.app import create_app

    boot = json.loads((data / "boot.json").read_text())
    app: Any = create_app(in_process_worker=False)
    running = await bench_plumbing.started(app)
    bodies = await bench_plumbing.make_receipts(app, boot["token"], boot["workspace_id"], load)
    (data / "bodies.json").write_text(json.dumps(bodies))
    (data / "answer.json").write_bytes(await bench_plumbing.call(app, bench_plumbing.STATUS, boot["token"],
                                                                 json.dumps(bodies[0]).encode()))
    running.cancel()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", choices=("pending", "settled"), default="pending")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--batches", type=int, default=200, help=f"batches of {CONCURRENT} requests per side and round")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)  # one measurement
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--make", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    import uvloop

    if args.make:
        uvloop.run(make_receipts(Path(args.data), args.load))
        return 0
    if args.side:
        print(*uvloop.run(cpu_per_request(args.side, Path(args.data), args.batches)))
        return 0
    from bench_common import PG_ADMIN, database_url_beside, pg_database

    costs: dict[str, list[tuple[float, float]]] = {side: [] for side in SIDES}
    name = f"evidencekit_bench_protocol_{os.getpid()}"
    postgres = database_url_beside(PG_ADMIN, name) if args.database == "postgres" else None
    if postgres:
        asyncio.run(pg_database(True, name))
    try:
        _measure(args, postgres, costs)
    finally:
        if postgres:
            asyncio.run(pg_database(False, name))
    print(f"CPU per status read through the protocol, {CONCURRENT} connections, "
          f"{'PostgreSQL' if args.database == 'postgres' else 'SQLite'}, {args.load} receipts, "
          f"{args.rounds} rounds (minimum; median in brackets)")
    for side in SIDES:
        ordered = sorted(costs[side])
        line = f"  {LABELS[side] + ':':40s} {ordered[0][0] * 1e6:6.1f} us  ({ordered[len(ordered) // 2][0] * 1e6:.1f})"
        if args.database == "postgres" and side != "peer":
            database = sorted(cost[1] for cost in costs[side])
            line += f"  + PostgreSQL's backends {database[0] * 1e6:.1f} us ({database[len(database) // 2] * 1e6:.1f})"
        print(line)
    best = {side: min(cost[0] for cost in values) for side, values in costs.items()}
    print(f"  serve's protocol over the stock one: {best['service'] / best['stock']:.2f}; "
          f"peer / service: {best['peer'] / best['service']:.2f}")
    return 0


def _measure(args: argparse.Namespace, postgres: str | None, costs: dict[str, list[tuple[float, float]]]) -> None:
    """Every side's (process, database backends) CPU per request in every round, on SQLite in a
    temporary data folder, or on the `postgres` database."""
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "EVIDENCEKIT_DATA_DIR": data, "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "10000",
               "EVIDENCEKIT_LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT)}
        env.pop("DATABASE_URL", None)
        if postgres:
            env["DATABASE_URL"] = postgres
        boot = subprocess.run([sys.executable, "-m", "evidencekit", "admin", "bootstrap", "--json"],
                              cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
        (Path(data) / "boot.json").write_text(boot)
        subprocess.run([sys.executable, __file__, "--make", "--data", data, "--load", args.load], cwd=ROOT, env=env,
                       check=True)
        for turn in range(args.rounds):
            for side in SIDES[turn % len(SIDES):] + SIDES[:turn % len(SIDES)]:
                out = subprocess.run([sys.executable, __file__, "--side", side, "--data", data,
                                      "--batches", str(args.batches)], cwd=ROOT, env=env, capture_output=True,
                                     text=True, check=True).stdout
                process, database = out.strip().splitlines()[-1].split()
                costs[side].append((float(process), float(database)))


if __name__ == "__main__":
    sys.exit(main())
