"""A batch from one workspace: receipts settled per second against the fetch and parse rate (issue 54).

    .venv/bin/python scripts/bench_drain.py [--pages 1000] [--rounds 3] [--databases sqlite postgresql]
                                            [--postgres postgresql://postgres@127.0.0.1:5432/test]

Ours: `research-evidence serve` with the worker's defaults (4 slots and 2 spare, EVIDENCEKIT_POLL_SECONDS
0.5), on a fresh database each round (a SQLite file, or a PostgreSQL database through DATABASE_URL).
The harness submits PAGES distinct ~200 KB pages from a local HTTPS origin, all in one workspace (50
requests in flight), and waits until every receipt settled as bench.py retrieve does; the time runs
from the first submit to the last settle. The peer, in the same round: the same pages fetched with one
httpx client, 4 in flight (the worker's slots), each body read with parse_html, in one process.
Each round runs both, the order alternating; the ratio (ours / peer) is taken within each round and
shown as the median (lowest-highest). Beside it, the CPU time a page cost each (ours: the server and
its parse processes while the batch drained; the peer: its process), which a shared machine's
load moves less than the rates: on two cores, the rate follows the CPU a page takes.
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

SLOTS = 4  # the worker's default EVIDENCEKIT_WORKER_CONCURRENCY: the peer's fetches in flight


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


def drain(database: dict[str, str], folder: Path, origin: str, pages: list[str]) -> tuple[float, float]:
    """Receipts settled per second by `research-evidence serve` with its worker defaults, and the CPU
    milliseconds a page cost it (the server and its parse processes)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("EVIDENCEKIT_")}
    env.pop("DATABASE_URL", None)
    env |= {**database, "EVIDENCEKIT_LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT),
            "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": origin.removeprefix("https://"),
            "EVIDENCEKIT_CA_BUNDLE": str(folder / "ca.pem"), "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "1000000"}
    cpu: list[float] = []
    seconds, _ = served_settle(env, pages, cpu)
    return len(pages) / seconds, 1000 * cpu[0] / len(pages)


def fetch_and_parse(folder: Path, pages: list[str]) -> tuple[float, float]:
    """Pages fetched and parsed per second in one process, SLOTS at once, and the CPU milliseconds a
    page cost that process."""
    started, used = time.perf_counter(), time.process_time()
    asyncio.run(plain_fetch_and_parse(pages, str(folder / "ca.pem"), SLOTS))
    return len(pages) / (time.perf_counter() - started), 1000 * (time.process_time() - used) / len(pages)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--databases", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"])
    parser.add_argument("--postgres", default=PG_ADMIN, help="a PostgreSQL server's URL (a database is made there)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    lines = []
    with tempfile.TemporaryDirectory() as tmp, https_origin(Path(tmp)) as origin:
        folder = Path(tmp)
        for kind in args.databases:
            ours: list[tuple[float, float]] = []
            peers: list[tuple[float, float]] = []
            for turn in range(args.rounds):
                pages = [f"{origin}/page/{turn * args.pages + n}" for n in range(args.pages)]  # new pages each round
                if turn % 2:
                    peers.append(fetch_and_parse(folder, pages))
                with fresh_database(kind, folder, args.postgres) as database:
                    ours.append(drain(database, folder, origin, pages))
                if not turn % 2:
                    peers.append(fetch_and_parse(folder, pages))
            rates, peer_rates = [rate for rate, _ in ours], [rate for rate, _ in peers]
            lines.append(f"| {'SQLite' if kind == 'sqlite' else 'PostgreSQL'} | {statistics.median(rates):.1f} | "
                         f"{statistics.median(peer_rates):.1f} | {shown_ratio(ratios(rates, peer_rates))} | "
                         f"{statistics.median(cpu for _, cpu in ours):.1f} | "
                         f"{statistics.median(cpu for _, cpu in peers):.1f} |")
    print(f"command: python scripts/bench_drain.py --pages {args.pages} --rounds {args.rounds} "
          f"--databases {' '.join(args.databases)}")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"\n| database | receipts settled/s, {args.pages} pages of one workspace | "
          f"peer: pages fetched + parsed/s, {SLOTS} at once | ratio | CPU ms a page, ours (server + "
          f"parse processes) | CPU ms a page, peer |\n|---|---:|---:|---:|---:|---:|")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
