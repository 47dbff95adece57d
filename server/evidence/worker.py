"""The background worker: claim a receipt, retrieve it while renewing the lease, settle it.

Runs in the server process by default and as its own process (`evidencekit worker`) to scale out.
Stopping (SIGTERM) lets the current retrieval finish, or releases it if it cannot within the grace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from evidencekit.server.evidence import lease_owner
from evidencekit.server.evidence.env_check import setting
from evidencekit.server.evidence.retrieval.engine import RetrievalEngine, Retrieved
from evidencekit.server.evidence.store import jobs, ratelimit, receipts
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.outage import is_store_outage

log = logging.getLogger("evidencekit.worker")


@dataclass(frozen=True)
class WorkerSettings:
    lease: timedelta = timedelta(seconds=60)
    poll_interval: float = 0.5
    max_attempts: int = 3
    concurrency: int = 4
    sweep_interval: float = 30.0
    grace: float = 30.0  # on stop: seconds to finish what is in hand before releasing it

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WorkerSettings:
        """The settings `evidencekit serve` and `evidencekit worker` both read (docs/settings.md)."""
        def read(name: str, default: str) -> str:
            return setting(name, default, environ)

        return cls(lease=timedelta(seconds=float(read("EVIDENCEKIT_LEASE_SECONDS", "60"))),
                   poll_interval=float(read("EVIDENCEKIT_POLL_SECONDS", "0.5")),
                   max_attempts=int(read("EVIDENCEKIT_MAX_ATTEMPTS", "3")),
                   concurrency=int(read("EVIDENCEKIT_WORKER_CONCURRENCY", "4")),
                   grace=float(read("EVIDENCEKIT_WORKER_GRACE_SECONDS", "30")))


def content_of(retrieved: Retrieved) -> Content | None:
    if not retrieved.succeeded or retrieved.content_hash is None:
        return None
    result = retrieved.result
    return Content(retrieved.content_hash, result["provenance"]["source_url"], result["title"],
                   result["description"], result["text"], retrieved.markdown, result["segments"])


class _StoreBackoff:
    """One pause for all of a worker's slots while the database is unavailable (down, or a SQLite
    file another process holds locked), doubling up to the sweep interval. On SQLite every claim
    waits out the busy timeout on the one connection status and token reads also queue on; claiming
    again at the poll interval would leave them no turn."""

    def __init__(self, shortest: float, longest: float) -> None:
        self.shortest, self.longest = shortest, max(shortest, longest)
        self.current = 0.0
        self.until = 0.0  # time.monotonic() before which no slot claims

    def failed(self) -> float:
        self.current = min(self.longest, max(self.shortest, self.current * 2 or 1.0))
        self.until = time.monotonic() + self.current
        return self.current

    def left(self) -> float:
        return self.until - time.monotonic()

    def reset(self) -> None:
        self.current = self.until = 0.0


class Worker:
    def __init__(self, engine: RetrievalEngine, settings: WorkerSettings | None = None,
                 worker_id: str | None = None) -> None:
        self.engine = engine
        self.settings = settings or WorkerSettings()
        self.worker_id = worker_id or lease_owner.worker_id()

    async def run_once(self) -> bool:
        """Claim and settle one receipt; False when there was nothing to claim."""
        receipt = await jobs.claim(self.worker_id, self.settings.lease, max_attempts=self.settings.max_attempts)
        if receipt is None:
            return False
        await self._process(receipt)
        return True

    async def _process(self, receipt: Receipt) -> None:
        heartbeat = asyncio.create_task(self._keep_lease(receipt))
        try:
            retrieved = await self.engine.retrieve(receipt.url, receipt.kind, receipt.language)
        except asyncio.CancelledError:
            heartbeat.cancel()
            await jobs.release(receipt.id, self.worker_id)
            raise
        finally:
            heartbeat.cancel()
        try:
            await jobs.settle(receipt, self.worker_id, retrieved.result, content_of(retrieved))
        except jobs.LeaseLost:
            log.warning("lost the lease on receipt %s before settling; another worker owns it", receipt.id)

    async def _keep_lease(self, receipt: Receipt) -> None:
        interval = self.settings.lease.total_seconds() / 3
        while True:
            await asyncio.sleep(interval)
            try:
                held = await jobs.renew(receipt.id, self.worker_id, self.settings.lease)
            except Exception as exc:  # noqa: BLE001 - a passing database error must not end renewal
                log.warning("worker %s: could not renew the lease on receipt %s (%s: %s); retrying",
                            self.worker_id, receipt.id, type(exc).__name__, exc)
                continue
            if not held:
                log.warning("lease on receipt %s was lost", receipt.id)
                return

    async def sweep(self, stop: asyncio.Event) -> None:
        """Expire receipts past valid_until (purging their content) and settle abandoned ones."""
        while not stop.is_set():
            try:
                await receipts.purge_expired()
                await ratelimit.forget_old_windows()
                await jobs.settle_abandoned(self.settings.max_attempts)
            except Exception as exc:
                if is_store_outage(exc):
                    log.warning("worker %s: sweep skipped, database unavailable (%s: %s)", self.worker_id,
                                type(exc).__name__, exc)
                else:
                    log.exception("worker %s: sweep failed; retrying", self.worker_id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.sweep_interval)

    async def finish(self, running: asyncio.Task[None]) -> None:
        """Once stop is set: let `running` (this worker's `run`) finish what is in hand within the
        grace period; past it, cancel it, which releases the unfinished receipts to other workers."""
        try:
            await asyncio.wait_for(running, self.settings.grace)
        except TimeoutError:
            log.warning("worker %s: grace period over, releasing unfinished receipts", self.worker_id)

    async def take_up_the_dead(self) -> int:
        """Free at once the leases held by dead processes of this machine (a crash, SIGKILL) instead
        of waiting them out; holders elsewhere keep theirs until they expire."""
        owners = await jobs.running_owners(lease_owner.host_prefix())
        dead = [owner for owner in owners if owner != self.worker_id and lease_owner.is_dead_here(owner)]
        freed = await jobs.expire_leases(dead)
        if freed:
            log.warning("worker %s: took up %d receipts of %d dead worker(s) of this machine", self.worker_id,
                        freed, len(dead))
        return freed

    async def run(self, stop: asyncio.Event) -> None:
        """Work with `concurrency` slots until `stop` is set; then finish what is in hand."""
        backoff = _StoreBackoff(self.settings.poll_interval, self.settings.sweep_interval)
        if lease_owner.boot_id():
            try:
                await self.take_up_the_dead()
            except Exception as exc:  # noqa: BLE001 - the leases then expire as they would have
                log.warning("worker %s: could not look for dead workers' leases (%s: %s)", self.worker_id,
                            type(exc).__name__, exc)

        async def slot() -> None:
            while not stop.is_set():
                if backoff.left() > 0:  # another slot found the database unavailable: no claim till then
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), backoff.left())
                    continue
                pause = self.settings.poll_interval
                try:
                    worked = await self.run_once()
                    backoff.reset()
                except Exception as exc:
                    worked = False
                    if is_store_outage(exc):
                        pause = backoff.failed()
                        log.warning("worker %s: database unavailable (%s: %s); trying again in %.0fs",
                                    self.worker_id, type(exc).__name__, exc, pause)
                    else:
                        log.exception("worker %s: claim or settle failed; retrying", self.worker_id)
                if not worked:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), pause)

        # No more slots than the engine runs retrievals at once: a receipt claimed only to wait for the
        # engine would spend an attempt and sit under this worker's lease while another worker is idle.
        slots = min(self.settings.concurrency, self.engine.capacity)
        await asyncio.gather(self.sweep(stop), *(slot() for _ in range(slots)))
