"""`evidencekit worker`: the background worker as its own process (several may share PostgreSQL)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from datetime import timedelta

from server.env_check import check_or_exit, configure_logging
from server.retrieval.lifecycle import open_engine
from server.store.db import database_url, open_store
from server.worker import Worker, WorkerSettings

log = logging.getLogger("evidencekit.worker")
GRACE_ENV = "EVIDENCEKIT_WORKER_GRACE_SECONDS"


def settings_from_env(environ: dict[str, str] | None = None) -> WorkerSettings:
    env = os.environ if environ is None else environ
    return WorkerSettings(
        lease=timedelta(seconds=float(env.get("EVIDENCEKIT_LEASE_SECONDS", "60"))),
        poll_interval=float(env.get("EVIDENCEKIT_POLL_SECONDS", "0.5")),
        max_attempts=int(env.get("EVIDENCEKIT_MAX_ATTEMPTS", "3")),
        concurrency=int(env.get("EVIDENCEKIT_WORKER_CONCURRENCY", "4")),
    )


async def run_worker(url: str | None = None, settings: WorkerSettings | None = None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with open_store(url or database_url()), open_engine() as engine:
        worker = Worker(engine, settings or settings_from_env())
        log.info("worker %s started", worker.worker_id)
        print(f"worker {worker.worker_id} ready", flush=True)
        task = asyncio.create_task(worker.run(stop))
        await stop.wait()
        grace = float(os.environ.get(GRACE_ENV, "30"))
        try:  # finish what is in hand; past the grace period, cancel (which releases the receipts)
            await asyncio.wait_for(task, grace)
        except TimeoutError:
            log.warning("worker %s: grace period over, releasing unfinished receipts", worker.worker_id)
        log.info("worker %s stopped", worker.worker_id)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="evidencekit worker", description=__doc__ + " Settings come from the "
                            "environment (DATABASE_URL, EVIDENCEKIT_*; see README.md).").parse_args(argv or [])
    check_or_exit()
    configure_logging("INFO")
    asyncio.run(run_worker())
    return 0
