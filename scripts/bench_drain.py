"""A batch from one workspace: receipts settled per second against the fetch and parse rate (issue 54).

    .venv/bin/python scripts/bench_drain.py [--pages 1000] [--rounds 3] [--databases sqlite postgresql]
                                            [--postgres postgresql://postgres@127.0.0.1:5432/test]
                                            [--latency-ms 100]

Ours: `research-evidence serve` with the worker's defaults (4 slots and 2 spare, EVIDENCEKIT_POLL_SECONDS
0.5), on a fresh database each round (a SQLite file, or a PostgreSQL database through DATABASE_URL).
The harness submits PAGES distinct ~200 KB pages from a local HTTPS origin, all in one workspace (50
requests in flight), and waits until every receipt settled as bench.py retrieve does; the time runs
from the first submit to the last settle. The peer, in the same round: the same pages fetched with one
httpx client, 4 in flight (the worker's slots), each body read with parse_html, in one process.
Each round runs both, the order alternating; the ratio (ours / peer) is taken within each round and
shown as the median (lowest-highest). Beside it, the CPU time a page cost each (ours: the server and
its parse processes while the batch drained, plus on PostgreSQL the backends serving its database,
read from /proc; the peer: its process), which a shared machine's load moves less than the rates:
on two cores, the rate follows the CPU a page takes.

Then, per database, the same rounds from a distant origin (each page answered after --latency-ms):
ours against the fetch + parse alone on those pages. There the fetches, not the two cores, set the
rate, so the ratio shows what the drain's own turns (claim, settle, the wake-ups between) cost a
slot: a worker that slept the poll interval between turns would show it here at once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import plain_fetch_and_parse, served_settle
from bench_common import (
    PG_ADMIN,
    PYTHON,
    ROOT,
    database_url_beside,
    free_port,
    pg_database,
    ratios,
    shown_ratio,
    wait_ready,
)

QUICK_POLL = 0.02  # the poll interval issue 54 drained 1,273 pages at in 17-31 s (82 s at the default)
SLOTS = 4  # the worker's default EVIDENCEKIT_WORKER_CONCURRENCY: the peer's fetches in flight
LATENCY_MS = 100  # the distant origin's wait before each page (--latency-ms)


@contextmanager
def https_origin(folder: Path) -> Iterator[str]:
    """bench_origin_app on 127.0.0.1 over HTTPS (a trustme CA written to folder/ca.pem): its base URL."""
    import trustme

    ca = trustme.CA()
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(folder / "origin.pem"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    port = free_port()
    origin = subprocess.Popen([PYTHON, "-m", "uvicorn", "bench_origin_app:app", "--host", "127.0.0.1", "--port",
                               str(port), "--ssl-keyfile", str(folder / "origin.pem"), "--ssl-certfile",
                               str(folder / "origin.pem"), "--log-level", "warning", "--no-access-log"],
                              cwd=ROOT / "scripts")
    try:
        wait_ready(f"https://127.0.0.1:{port}/page/1", origin, verify=str(folder / "ca.pem"))
        yield f"https://127.0.0.1:{port}"
    finally:
        origin.terminate()
        origin.wait(timeout=30)


@contextmanager
def fresh_database(kind: str, folder: Path, admin_url: str) -> Iterator[dict[str, str]]:
    """The environment choosing a new empty database: a data folder's SQLite file, or DATABASE_URL."""
    data = folder / f"data-{uuid.uuid4().hex[:8]}"
    data.mkdir()
    if kind == "sqlite":
        yield {"EVIDENCEKIT_DATA_DIR": str(data)}
        return
    name = f"evidencekit_drain_{uuid.uuid4().hex[:8]}"
    asyncio.run(pg_database(True, name))
    try:
        yield {"EVIDENCEKIT_DATA_DIR": str(data), "DATABASE_URL": database_url_beside(admin_url, name)}
    finally:
        asyncio.run(pg_database(False, name))


def drain(database: dict[str, str], folder: Path, origin: str, pages: list[str],
          poll: float | None = None) -> tuple[float, float, float]:
    """Receipts settled per second by `research-evidence serve` with its worker defaults (or another
    `poll` interval), the CPU milliseconds a page cost it (the server and its parse processes) and
    those a page cost its PostgreSQL backends (0 on SQLite)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("EVIDENCEKIT_")}
    env.pop("DATABASE_URL", None)
    if poll is not None:
        env["EVIDENCEKIT_POLL_SECONDS"] = str(poll)
    env |= {**database, "EVIDENCEKIT_LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT),
            "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": origin.removeprefix("https://"),
            "EVIDENCEKIT_CA_BUNDLE": str(folder / "ca.pem"), "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "1000000"}
    cpu: list[float] = []
    backends: list[float] = []
    seconds, _ = served_settle(env, pages, cpu, backends)
    return len(pages) / seconds, 1000 * cpu[0] / len(pages), 1000 * backends[0] / len(pages)


def fetch_and_parse(folder: Path, pages: list[str]) -> tuple[float, float]:
    """Pages fetched and parsed per second in one process, SLOTS at once, and the CPU milliseconds a
    page cost that process."""
    started, used = time.perf_counter(), time.process_time()
    asyncio.run(plain_fetch_and_parse(pages, str(folder / "ca.pem"), SLOTS))
    return len(pages) / (time.perf_counter() - started), 1000 * (time.process_time() - used) / len(pages)


def engine_alone(folder: Path, origin: str, first: int, count: int, path: str = "page") -> tuple[float, float]:
    """The service's own fetch and parse without its store and API: its RetrievalEngine (the guarded
    fetcher, the parse processes, the index words) retrieving the pages SLOTS at once in a process of
    its own. Pages a second, and the CPU milliseconds a page cost that process and its parse processes."""
    child = subprocess.run([PYTHON, __file__, "--engine-alone", str(folder / "ca.pem"), origin, str(first), str(count),
                            path],
                           cwd=ROOT, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    rate, cpu = child.stdout.split()
    return float(rate), float(cpu)


async def _engine_alone(ca_file: str, origin: str, first: int, count: int, path: str) -> tuple[float, float]:
    from bench import cpu_seconds

    from evidencekit.server.evidence.retrieval.lifecycle import open_engine
    from evidencekit.server.evidence.settings import EvidenceSettings

    settings = EvidenceSettings.from_env({"EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": origin.removeprefix("https://"),
                                          "EVIDENCEKIT_CA_BUNDLE": ca_file})
    async with open_engine(settings=settings) as engine:
        gate = asyncio.Semaphore(SLOTS)

        async def one(url: str) -> None:
            async with gate:
                retrieved = await engine.retrieve(url, "url_text")
            if not retrieved.succeeded:
                raise SystemExit(f"{url}: {retrieved.result}")

        started, used = time.perf_counter(), cpu_seconds(os.getpid())
        await asyncio.gather(*(one(f"{origin}/{path}/{n}") for n in range(first, first + count)))
        return count / (time.perf_counter() - started), 1000 * (cpu_seconds(os.getpid()) - used) / count


def latency_bound(kind: str, folder: Path, origin: str, args: argparse.Namespace, first: int) -> str:
    """Rounds of ours (the default poll) against the fetch + parse alone on pages a distant origin
    answers after args.latency_ms: the machine is not saturated, so a drain that refills its slots
    at once settles at the engine's rate. A table row."""
    ours: list[float] = []
    engines: list[float] = []
    path = f"slow/{args.latency_ms}"
    for turn in range(args.rounds):
        start = first + turn * args.pages
        if turn % 2:
            engines.append(engine_alone(folder, origin, start, args.pages, path)[0])
        with fresh_database(kind, folder, args.postgres) as database:
            ours.append(drain(database, folder, origin, [f"{origin}/{path}/{start + n}" for n in range(args.pages)])[0])
        if not turn % 2:
            engines.append(engine_alone(folder, origin, start, args.pages, path)[0])
    return (f"| {'SQLite' if kind == 'sqlite' else 'PostgreSQL'} | {statistics.median(ours):.1f} | "
            f"{statistics.median(engines):.1f} | {shown_ratio(ratios(ours, engines))} |")


def main() -> int:
    if sys.argv[1:2] == ["--engine-alone"]:
        ca_file, origin, first, count, path = sys.argv[2:7]
        rate, cpu = asyncio.run(_engine_alone(ca_file, origin, int(first), int(count), path))
        print(rate, cpu)
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--databases", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"])
    parser.add_argument("--postgres", default=PG_ADMIN, help="a PostgreSQL server's URL (a database is made there)")
    parser.add_argument("--latency-ms", type=int, default=LATENCY_MS,
                        help="the distant origin's wait before each page; 0 skips those rounds")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    lines, distant = [], []
    with tempfile.TemporaryDirectory() as tmp, https_origin(Path(tmp)) as origin:
        folder = Path(tmp)
        for kind in args.databases:
            ours: list[tuple[float, float, float]] = []
            quick_poll: list[tuple[float, float, float]] = []
            engines: list[tuple[float, float]] = []
            peers: list[tuple[float, float]] = []
            for turn in range(args.rounds):
                first = turn * args.pages  # new pages each round
                pages = [f"{origin}/page/{first + n}" for n in range(args.pages)]
                if turn % 2:
                    peers.append(fetch_and_parse(folder, pages))
                    engines.append(engine_alone(folder, origin, first, args.pages))
                with fresh_database(kind, folder, args.postgres) as database:
                    ours.append(drain(database, folder, origin, pages))
                with fresh_database(kind, folder, args.postgres) as database:
                    quick_poll.append(drain(database, folder, origin, pages, poll=QUICK_POLL))
                if not turn % 2:
                    engines.append(engine_alone(folder, origin, first, args.pages))
                    peers.append(fetch_and_parse(folder, pages))
            rates = [rate for rate, _, _ in ours]
            server = statistics.median(cpu for _, cpu, _ in ours)
            database = statistics.median(cpu for _, _, cpu in ours)
            whole = statistics.median(cpu + backends for _, cpu, backends in ours)
            lines.append(f"| {'SQLite' if kind == 'sqlite' else 'PostgreSQL'} | {statistics.median(rates):.1f} | "
                         f"{shown_ratio(ratios([rate for rate, _, _ in quick_poll], rates))} | "
                         f"{statistics.median(rate for rate, _ in engines):.1f} | "
                         f"{shown_ratio(ratios(rates, [rate for rate, _ in engines]))} | "
                         f"{statistics.median(rate for rate, _ in peers):.1f} | "
                         f"{shown_ratio(ratios(rates, [rate for rate, _ in peers]))} | "
                         f"{whole:.1f} ({server:.1f} + {database:.1f}) / "
                         f"{' / '.join(f'{statistics.median(cpu for _, cpu in runs):.1f}' for runs in (engines, peers))} |")
            if args.latency_ms:
                distant.append(latency_bound(kind, folder, origin, args, first=args.rounds * args.pages))
    print(f"command: python scripts/bench_drain.py --pages {args.pages} --rounds {args.rounds} "
          f"--databases {' '.join(args.databases)} --latency-ms {args.latency_ms}")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"\n| database | ours: receipts settled/s, {args.pages} pages of one workspace | the same at a "
          f"{QUICK_POLL} s poll, ratio to ours | the service's fetch + parse alone, pages/s ({SLOTS} at once) | "
          f"ours / that | peer: plain fetch + parse/s ({SLOTS} at once, one process) | ours / peer | "
          f"CPU ms a page: ours (server + PostgreSQL's backends) / fetch + parse alone / peer |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(lines))
    if distant:
        print(f"\nThe same from a distant origin (each page answered after {args.latency_ms} ms), where the "
              f"fetches, not the CPU, set the rate:\n\n| database | ours: receipts settled/s | the service's fetch + "
              f"parse alone, pages/s ({SLOTS} at once) | ours / that |\n|---|---:|---:|---:|")
        print("\n".join(distant))
    return 0


if __name__ == "__main__":
    sys.exit(main())
