"""Claim + settle throughput of the receipt store, with a stub retrieval that returns at once.

    .venv/bin/python scripts/bench_store.py [--receipts 4000] [--postgres postgresql://postgres@127.0.0.1:5432/test]

Each row: a fresh database (SQLite file, or a PostgreSQL database on 127.0.0.1), RECEIPTS pending
receipts in 20 workspaces, then N worker processes (`Worker.run`, as `research-evidence worker` runs it)
with the given concurrency, started and connected before the clock starts. The time runs from
"go" until every receipt is completed; each settle writes a result, an evidence row and a revision.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_common import database_url_beside  # noqa: E402

from evidencekit.server.evidence.retrieval.engine import Retrieved  # noqa: E402
from evidencekit.server.evidence.store.db import database_url, open_store  # noqa: E402
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit  # noqa: E402
from evidencekit.server.evidence.worker import Worker, WorkerSettings  # noqa: E402

RESULT = {
    "kind": "url_text", "status": "ready", "text": "stub", "title": None, "description": None, "segments": [],
    "reason": None, "warnings": [], "retry_after_seconds": None,
    "provenance": {"source_url": None, "retrieved_at": "2099-01-01T00:00:00Z", "mime_type": "text/plain",
                   "parser_version": "research-public-retrieval/v1", "content_kind": "document_text",
                   "caption_format": None, "language": None, "language_source": "unknown",
                   "platform_native_verified": False},
}
# (database, worker processes, concurrency per worker): the shipped default concurrency is 4, its cap 8
SETUPS = [("SQLite", 1, 4), ("SQLite", 1, 8), ("PostgreSQL", 1, 4), ("PostgreSQL", 1, 8),
          ("PostgreSQL", 2, 8), ("PostgreSQL", 4, 8)]


class StubEngine:
    capacity = 64  # retrievals at once, as RetrievalEngine.capacity

    async def retrieve(self, url: str, kind: str, language: str | None = None) -> Retrieved:
        return Retrieved(RESULT, "stub", f"hash-{url}")


async def work(url: str, concurrency: int) -> None:
    """One worker process: connect, say ready, wait for "go", work until told to stop."""
    async with open_store(url):
        worker = Worker(StubEngine(), WorkerSettings(lease=timedelta(seconds=30), poll_interval=0.05,  # type: ignore[arg-type]
                                                      concurrency=concurrency))
        loop = asyncio.get_running_loop()
        print("ready", flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)
        stop = asyncio.Event()
        task = asyncio.create_task(worker.run(stop))
        await loop.run_in_executor(None, sys.stdin.readline)
        stop.set()
        await task


async def fill(url: str, total: int) -> None:
    async with open_store(url):
        workspaces = [uuid.uuid4() for _ in range(20)]
        for number in range(total):
            await submit(RetrieveRequest(workspaces[number % 20], uuid.uuid4(), f"https://example.com/{number}",
                                         "url_text"), retention=timedelta(hours=1))


async def left(url: str) -> int:
    from tortoise.connection import get_connection

    rows = await get_connection("default").execute_query_dict(
        "SELECT count(*) AS n FROM receipt WHERE state IN ('pending', 'running')")
    return int(rows[0]["n"])


async def wait_all_settled(url: str, started: float) -> float:
    async with open_store(url):
        while await left(url):
            await asyncio.sleep(0.02)
        return time.perf_counter() - started


def run(url: str, total: int, processes: int, concurrency: int) -> float:
    asyncio.run(fill(url, total))
    workers = [subprocess.Popen([sys.executable, __file__, "--work", url, "--concurrency", str(concurrency)],
                                cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
               for _ in range(processes)]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        started = time.perf_counter()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        seconds = asyncio.run(wait_all_settled(url, started))
    finally:
        for worker in workers:
            if worker.stdin is not None:
                worker.stdin.write("stop\n")
                worker.stdin.close()
        for worker in workers:
            if worker.wait(timeout=60):
                raise SystemExit(f"a worker failed with {worker.returncode}")
    return total / seconds


async def pg_database(admin_url: str, create: bool, name: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(admin_url)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"' if create else f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


def one_setup(database: str, processes: int, concurrency: int, total: int, admin_url: str) -> float:
    if database == "SQLite":
        with tempfile.TemporaryDirectory() as tmp:
            return run(database_url({"EVIDENCEKIT_DATA_DIR": tmp}), total, processes, concurrency)
    name = f"evidencekit_bench_{uuid.uuid4().hex[:8]}"
    asyncio.run(pg_database(admin_url, True, name))
    try:
        return run(database_url_beside(admin_url, name), total, processes, concurrency)
    finally:
        asyncio.run(pg_database(admin_url, False, name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--receipts", type=int, default=4000)
    parser.add_argument("--postgres", default=os.environ.get("EVIDENCEKIT_TEST_PG",
                                                             "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.work:
        asyncio.run(work(args.work, args.concurrency))
        return 0
    rows = [(database, processes, concurrency, one_setup(database, processes, concurrency, args.receipts,
                                                         args.postgres))
            for database, processes, concurrency in SETUPS]
    print(f"command: python scripts/bench_store.py --receipts {args.receipts}")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print("| database | worker processes | concurrency each | receipts settled/s |\n|---|---:|---:|---:|")
    for database, processes, concurrency, rate in rows:
        print(f"| {database} | {processes} | {concurrency} | {rate:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
