"""`research-evidence worker`: the background worker as its own process (several may share PostgreSQL)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal

from evidencekit.server.evidence.env_check import check_or_exit, configure_logging
from evidencekit.server.evidence.retrieval.lifecycle import open_engine
from evidencekit.server.evidence.settings import EvidenceSettings
from evidencekit.server.evidence.store.db import database_url, open_store
from evidencekit.server.evidence.worker import Worker, WorkerSettings

log = logging.getLogger("evidencekit.worker")


async def run_worker(url: str | None = None, settings: WorkerSettings | None = None,
                     evidence: EvidenceSettings | None = None) -> None:
    """`evidence`: the service's settings (else the environment's, read here, where the process starts);
    `settings`: the worker's own, when given apart."""
    evidence = evidence or EvidenceSettings.from_env()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with open_store(url or database_url()), open_engine(settings=evidence) as engine:
        worker = Worker(engine, settings or evidence.worker)
        log.info("worker %s started", worker.worker_id)
        print(f"worker {worker.worker_id} ready", flush=True)
        task = asyncio.create_task(worker.run(stop))
        await stop.wait()
        log.info("worker %s stopping: finishing what it holds, for at most %gs", worker.worker_id,
                 worker.settings.grace)
        await worker.finish(task)
        log.info("worker %s stopped", worker.worker_id)


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog="research-evidence worker", description=__doc__ + " Settings come from the "
                            "environment: the database (DATABASE_URL, else EVIDENCEKIT_DATA_DIR), "
                            "EVIDENCEKIT_LEASE_SECONDS, EVIDENCEKIT_POLL_SECONDS, EVIDENCEKIT_MAX_ATTEMPTS, "
                            "EVIDENCEKIT_WORKER_CONCURRENCY, EVIDENCEKIT_WORKER_SPARE_SLOTS, EVIDENCEKIT_WORKER_GRACE_SECONDS, "
                            "EVIDENCEKIT_HEARTBEAT_SECONDS, "
                            "EVIDENCEKIT_PARSE_PROCESSES, EVIDENCEKIT_RETENTION_HOURS, EVIDENCEKIT_CA_BUNDLE "
                            "(docs/settings.md in the source repository explains each).")


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv or [])
    check_or_exit()
    configure_logging("INFO")
    asyncio.run(run_worker())
    return 0
