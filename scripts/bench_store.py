"""Claim + settle throughput of the receipt store, with a stub retrieval that returns at once.

    .venv/bin/python scripts/bench_store.py [--receipts 1000] [--postgres postgresql://postgres@127.0.0.1:5432/test]

Runs, one after another: 1 worker process on SQLite, 1 and 4 worker processes on PostgreSQL
(each on a fresh database), and prints receipts settled per second. Only 127.0.0.1 is used.
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

from evidencekit.server.evidence.retrieval.engine import Retrieved  # noqa: E402
from evidencekit.server.evidence.store.db import open_store  # noqa: E402
from evidencekit.server.evidence.store.models import Receipt  # noqa: E402
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


class StubEngine:
    capacity = 64  # retrievals at once, as RetrievalEngine.capacity
    async def retrieve(self, url: str, kind: str, language: str | None = None) -> Retrieved:
        return Retrieved(RESULT, "stub", f"hash-{url}")


async def work(url: str, total: int) -> None:
    async with open_store(url):
        worker = Worker(StubEngine(), WorkerSettings(lease=timedelta(seconds=30), poll_interval=0.05,
                                                      concurrency=4))  # type: ignore[arg-type]
        stop = asyncio.Event()
        task = asyncio.create_task(worker.run(stop))
        while await Receipt.filter(state="completed").count() < total:
            await asyncio.sleep(0.2)
        stop.set()
        await task


async def fill(url: str, total: int) -> None:
    async with open_store(url):
        workspace = uuid.uuid4()
        for number in range(total):
            await submit(RetrieveRequest(workspace, uuid.uuid4(), f"https://example.com/{number}", "url_text"))


def run(url: str, total: int, processes: int) -> float:
    asyncio.run(fill(url, total))
    started = time.perf_counter()
    workers = [subprocess.Popen([sys.executable, __file__, "--work", url, "--receipts", str(total)], cwd=ROOT)
               for _ in range(processes)]
    for worker in workers:
        worker.wait()
        if worker.returncode:
            raise SystemExit(f"worker failed with {worker.returncode}")
    return total / (time.perf_counter() - started)


async def pg_database(admin_url: str, create: bool, name: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(admin_url)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"' if create else f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--receipts", type=int, default=1000)
    parser.add_argument("--postgres", default=os.environ.get("EVIDENCEKIT_TEST_PG",
                                                             "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.work:
        asyncio.run(work(args.work, args.receipts))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(("SQLite", 1, run(f"sqlite:///{tmp}/bench.sqlite3?busy_timeout=10000", args.receipts, 1)))
    for processes in (1, 4):
        name = f"evidencekit_bench_{uuid.uuid4().hex[:8]}"
        asyncio.run(pg_database(args.postgres, True, name))
        try:
            rows.append(("PostgreSQL", processes, run(args.postgres.rsplit("/", 1)[0] + "/" + name,
                                                     args.receipts, processes)))
        finally:
            asyncio.run(pg_database(args.postgres, False, name))
    print(f"command: python scripts/bench_store.py --receipts {args.receipts}")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    print("| database | worker processes | receipts settled/s |\n|---|---:|---:|")
    for database, processes, rate in rows:
        print(f"| {database} | {processes} | {rate:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
