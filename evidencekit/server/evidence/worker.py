"""The background worker: claim a receipt, retrieve it while renewing the lease, settle it.

Runs in the server process by default and as its own process (`research-evidence worker`) to scale out.
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

from evidencekit.server.evidence import lease_owner, transcript
from evidencekit.server.evidence.arrivals import Arrivals
from evidencekit.server.evidence.env_check import setting_as
from evidencekit.server.evidence.retrieval.engine import RetrievalEngine, Retrieved
from evidencekit.server.evidence.store import heartbeats, jobs, receipts
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.outage import is_store_outage

log = logging.getLogger("evidencekit.worker")


@dataclass(frozen=True)
class WorkerSettings:
    lease: timedelta = timedelta(seconds=60)
    poll_interval: float = 0.5
    max_attempts: int = 3
    concurrency: int = 4
    # slots past `concurrency` for the first receipt of a workspace with nothing running, so one
    # workspace filling the regular slots with slow pages does not hold back another's (at most the
    # engine's spare_capacity)
    spare: int = 2
    sweep_interval: float = 30.0
    grace: float = 30.0  # on stop: seconds to finish what is in hand before releasing it
    # seconds between a worker's heartbeats, and between its looks for dead lease holders; a holder
    # silent for four of its beats is dead (store/heartbeats.py)
    heartbeat: float = 3.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WorkerSettings:
        """The settings `research-evidence serve` and `research-evidence worker` both read (docs/settings.md)."""
        defaults = cls()

        def seconds(value: str) -> timedelta:
            return timedelta(seconds=float(value))

        return cls(lease=setting_as("EVIDENCEKIT_LEASE_SECONDS", defaults.lease, seconds, environ),
                   poll_interval=setting_as("EVIDENCEKIT_POLL_SECONDS", defaults.poll_interval, float, environ),
                   max_attempts=setting_as("EVIDENCEKIT_MAX_ATTEMPTS", defaults.max_attempts, int, environ),
                   concurrency=setting_as("EVIDENCEKIT_WORKER_CONCURRENCY", defaults.concurrency, int, environ),
                   spare=setting_as("EVIDENCEKIT_WORKER_SPARE_SLOTS", defaults.spare, int, environ),
                   grace=setting_as("EVIDENCEKIT_WORKER_GRACE_SECONDS", defaults.grace, float, environ),
                   heartbeat=setting_as("EVIDENCEKIT_HEARTBEAT_SECONDS", defaults.heartbeat, float, environ))


def content_of(retrieved: Retrieved) -> Content | None:
    """What a settle keeps of a successful retrieval. A caption track's document text and markdown
    are its cues' (transcript.py): every cue up to the transcript's bound, not the contract's text
    cut at 20,000 characters."""
    if not retrieved.succeeded or retrieved.content_hash is None:
        return None
    result = retrieved.result
    text, markdown = result["text"], retrieved.markdown
    if result["kind"] == "published_captions":
        text, markdown = transcript.cue_text(result["segments"]), transcript.cue_lines(result["segments"])
    return Content(retrieved.content_hash, result["provenance"]["source_url"], result["title"],
                   result["description"], text, markdown, result["segments"])


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
                 worker_id: str | None = None, arrivals: Arrivals | None = None) -> None:
        """`arrivals`: what rings when this process queues a receipt (the service's), else only polls."""
        self.engine = engine
        self.arrivals = arrivals or Arrivals()
        self.settings = settings or WorkerSettings()
        self.worker_id = worker_id or lease_owner.worker_id()
        # No more slots than the engine runs retrievals at once: a receipt claimed only to wait for the
        # engine would spend an attempt and sit under this worker's lease while another worker is idle.
        self.slots = min(self.settings.concurrency, self.engine.capacity)
        self.spare = min(self.settings.spare, getattr(self.engine, "spare_capacity", 0))

    async def sweep(self, stop: asyncio.Event) -> None:
        """Expire receipts past valid_until (purging their content) and settle abandoned ones."""
        while not stop.is_set():
            try:
                await receipts.purge_expired()
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

    async def take_up_the_dead(self, watched: float = 0.0) -> int:
        """Free at once the leases of dead holders instead of waiting them out: processes of this
        machine that are gone (a crash, SIGKILL), then holders anywhere whose heartbeat stopped, of
        those this worker could have seen beat in the `watched` seconds it has beaten unbroken. The
        first does not depend on the heartbeats: a failing look for the second leaves it done."""
        here = []
        if lease_owner.boot_id():
            owners = await jobs.running_owners(lease_owner.host_prefix())
            here = [owner for owner in owners if owner != self.worker_id and lease_owner.is_dead_here(owner)]
        freed = await self._expire(here, "dead worker(s) of this machine")
        silent = [owner for owner in await heartbeats.silent_owners(watched) if owner != self.worker_id]
        return freed + await self._expire(silent, "worker(s) whose heartbeat stopped")

    async def _expire(self, dead: list[str], how: str) -> int:
        if not dead:
            return 0
        taken = await jobs.expire_leases(dead)
        await heartbeats.forget(dead)
        if taken:
            log.warning("worker %s: took up %d receipts of %d %s", self.worker_id, taken, len(dead), how)
        return taken

    async def watch(self, stop: asyncio.Event) -> None:
        """Beat, and take up dead holders' receipts, every `heartbeat` seconds until stop."""
        every = self.settings.heartbeat
        beating_since = last_beat = None  # loop times: this worker's unbroken run of beats
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            try:
                await heartbeats.beat(self.worker_id, every)
                now = loop.time()
                if last_beat is None or beating_since is None or now - last_beat > 2 * every:
                    beating_since = now  # a gap: what others did meanwhile was not seen
                last_beat = now
            except Exception as exc:  # noqa: BLE001 - the next beat tries again; leases still expire
                beating_since = None
                log.warning("worker %s: heartbeat failed (%s: %s)", self.worker_id, type(exc).__name__, exc)
            try:
                await self.take_up_the_dead(watched=0.0 if beating_since is None else loop.time() - beating_since)
            except Exception as exc:  # noqa: BLE001 - tried again at the next beat
                log.warning("worker %s: the look for dead workers failed (%s: %s)", self.worker_id,
                            type(exc).__name__, exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)

    async def run(self, stop: asyncio.Event) -> None:
        """Work with `slots` receipts at once until `stop` is set; then finish what is in hand.
        Cancelled (the grace period is over), release what is in hand to other workers."""
        watching = asyncio.create_task(self.watch(stop))  # beats first: a look for the dead at once
        sweeping = asyncio.create_task(self.sweep(stop))  # both end by themselves once stop is set
        try:
            await _Hand(self).work(stop)
        except asyncio.CancelledError:
            sweeping.cancel()
            watching.cancel()
            raise
        finally:
            with contextlib.suppress(Exception):  # a clean stop: not taken for dead meanwhile
                await asyncio.shield(heartbeats.forget([self.worker_id]))
        await sweeping
        await watching


class _Hand:
    """What one worker holds: its claimed receipts, their retrievals and the settles waiting.

    One claimer keeps the slots full (a claim takes as many receipts as slots are free), each
    retrieval runs as its own task, one settler settles whatever finished meanwhile in one
    transaction, and one heartbeat renews every lease held in one statement. A slot frees when its
    retrieval ends, not when the receipt is settled: the next page is fetched while the last one is
    written (at most a slot's worth of finished receipts per slot wait for the settler; past that,
    no claim). A claim that leaves slots empty is followed by the next when a slot frees (a
    workspace's backlog waits for its regular slots, not for the poll interval), when this process
    queues a receipt (Arrivals), or else after the poll interval (receipts queued elsewhere): an
    idle worker looks once per interval."""

    MOST_PER_SETTLE = 64

    def __init__(self, worker: Worker) -> None:
        self.worker, self.settings, self.worker_id = worker, worker.settings, worker.worker_id
        self.held: dict[str, jobs.Claimed] = {}  # claimed, not yet settled or released
        self.retrieving: set[str] = set()  # of those, the ones whose retrieval runs: they fill the slots
        self.spares: set[str] = set()  # of those, the ones in spare slots
        self.lost: set[str] = set()  # leases found lost (said once each)
        self.finished: asyncio.Queue[jobs.Settle] = asyncio.Queue()
        self.retrievals: set[asyncio.Task[None]] = set()
        self.freed = asyncio.Event()  # a slot came free, or a settle made room
        self.arrived = asyncio.Event()  # this process queued a receipt
        self.backoff = _StoreBackoff(self.settings.poll_interval, self.settings.sweep_interval)

    async def work(self, stop: asyncio.Event) -> None:
        with self.worker.arrivals.listening(self.arrived.set):
            await self._work(stop)

    async def _work(self, stop: asyncio.Event) -> None:
        tasks = [asyncio.create_task(self._claim(stop)), asyncio.create_task(self._keep_leases())]
        settling = asyncio.create_task(self._settle())
        try:
            await tasks[0]  # until stop; then what is in hand is finished
            while self.held:
                self.freed.clear()
                await self.freed.wait()
        except asyncio.CancelledError:
            for task in self.retrievals:
                task.cancel()
            await asyncio.gather(*self.retrievals, return_exceptions=True)
            settling.cancel()  # a settle in progress rolls back: its receipts are released below
            await asyncio.gather(settling, return_exceptions=True)
            if self.held:
                await jobs.release_many(list(self.held), self.worker_id)
            raise
        finally:
            for task in (*tasks, settling):
                task.cancel()
            await asyncio.gather(*tasks, settling, return_exceptions=True)

    async def _pause(self, stop: asyncio.Event, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), seconds)

    async def _until_freed(self, stop: asyncio.Event, most: float | None = None, *, arrived: bool = False) -> None:
        """Until a slot frees (`freed`, cleared before), `stop` is set, or `most` seconds pass; with
        `arrived`, also until this process queues a receipt (`arrived`, cleared before)."""
        waits = [asyncio.create_task(self.freed.wait()), asyncio.create_task(stop.wait())]
        if arrived:
            waits.append(asyncio.create_task(self.arrived.wait()))
        try:
            await asyncio.wait(waits, timeout=most, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def _claim(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            free_regular = self.worker.slots - (len(self.retrieving) - len(self.spares))
            free = free_regular + self.worker.spare - len(self.spares)
            if free <= 0 or self._settles_backed_up():
                self.freed.clear()
                await self._until_freed(stop)
                continue
            if self.backoff.left() > 0:  # the database was unavailable: no claim till then
                await self._pause(stop, self.backoff.left())
                continue
            self.freed.clear()  # a slot freeing or a receipt queued while this claim runs is a reason for the next
            self.arrived.clear()
            try:
                claimed = await jobs.claim_many(self.worker_id, self.settings.lease,
                                                max_attempts=self.settings.max_attempts, limit=free,
                                                any_limit=free_regular)
                self.backoff.reset()
            except Exception as exc:
                self._failed("claim", exc)
                await self._pause(stop, max(self.backoff.left(), self.settings.poll_interval))
                continue
            for number, receipt in enumerate(claimed):
                if str(receipt.id) in self.held:  # taken for dead, and taken back by this worker itself:
                    self.lost.discard(str(receipt.id))  # its retrieval still runs; the lease is ours again
                    continue
                self.held[str(receipt.id)] = receipt
                self.retrieving.add(str(receipt.id))
                spare = number >= free_regular  # past the regular slots: a fair choice (claim_many)
                if spare:
                    self.spares.add(str(receipt.id))
                task = asyncio.create_task(self._retrieve(receipt, spare))
                self.retrievals.add(task)
                task.add_done_callback(self.retrievals.discard)
            if len(claimed) < free:  # nothing more for these slots now; a freed regular slot may take more
                await self._until_freed(stop, self.settings.poll_interval, arrived=True)

    def _failed(self, step: str, exc: Exception) -> None:
        if is_store_outage(exc):
            pause = self.backoff.failed()
            log.warning("worker %s: database unavailable (%s: %s); trying again in %.0fs",
                        self.worker_id, type(exc).__name__, exc, pause)
        else:
            log.exception("worker %s: %s failed; retrying", self.worker_id, step)

    async def _retrieve(self, receipt: jobs.Claimed, spare: bool = False) -> None:
        engine = self.worker.engine
        try:
            if spare:
                retrieved = await engine.retrieve(receipt.url, receipt.kind, receipt.language, spare=True)
            else:
                retrieved = await engine.retrieve(receipt.url, receipt.kind, receipt.language)
        except Exception:  # its lease runs out and another attempt is made (or it settles unconfirmed)
            log.exception("worker %s: retrieving receipt %s failed", self.worker_id, receipt.id)
            self._drop([str(receipt.id)])
            return
        # a caption track's document text is its cues' (content_of), not the result's the engine indexed
        words = retrieved.index_words if retrieved.result.get("kind") == "url_text" else None
        try:
            settle = jobs.Settle(receipt, retrieved.result, content_of(retrieved), words)
        except Exception:  # held no longer: its lease runs out and another attempt is made
            log.exception("worker %s: keeping receipt %s's result failed", self.worker_id, receipt.id)
            self._drop([str(receipt.id)])
            return
        self.finished.put_nowait(settle)
        self._retrieved(str(receipt.id))

    def _retrieved(self, receipt_id: str) -> None:
        """Its slot is free for the next claim; the receipt stays held until settled."""
        self.retrieving.discard(receipt_id)
        self.spares.discard(receipt_id)
        self.freed.set()

    def _settles_backed_up(self) -> bool:
        """More fetched receipts wait to be settled than slots and spares together: no claim till they drain."""
        return len(self.held) - len(self.retrieving) > self.worker.slots + self.worker.spare

    def _drop(self, ids: list[str]) -> None:
        """No longer held (settled, or given up). A claim is worth making again only if this frees a
        slot, makes room in a settle backlog that held claims back, or leaves a workspace with none of
        its receipts here (its next one may now be a fair choice for a spare slot): a settle in a
        workspace still running here changes nothing a claim could find, and made one claim in three
        of a backlog's drain come back empty."""
        backlog = self._settles_backed_up()
        slot = any(receipt_id in self.retrieving for receipt_id in ids)
        spaces = {self.held[receipt_id].workspace_id for receipt_id in ids if receipt_id in self.held}
        for receipt_id in ids:
            self.held.pop(receipt_id, None)
            self.retrieving.discard(receipt_id)
            self.spares.discard(receipt_id)
            self.lost.discard(receipt_id)
        if backlog or slot or not self.held or spaces - {receipt.workspace_id for receipt in self.held.values()}:
            self.freed.set()

    async def _settle(self) -> None:
        """Settle what finished, a batch at a time, up to jobs.settles_at_once() batches side by side
        (cancelled, the batches in progress are too: they roll back)."""
        room = asyncio.Semaphore(jobs.settles_at_once())
        writing: set[asyncio.Task[None]] = set()

        def done(task: asyncio.Task[None]) -> None:
            writing.discard(task)
            room.release()

        try:
            while True:
                await room.acquire()
                batch = [await self.finished.get()]
                while not self.finished.empty() and len(batch) < self.MOST_PER_SETTLE:
                    batch.append(self.finished.get_nowait())
                task = asyncio.create_task(self._settle_batch(batch))
                writing.add(task)
                task.add_done_callback(done)
        finally:
            for task in writing:
                task.cancel()
            await asyncio.gather(*writing, return_exceptions=True)

    async def _settle_batch(self, batch: list[jobs.Settle]) -> None:
        """Settle `batch`, waiting out an unavailable database (the leases are kept meanwhile); a
        batch that fails otherwise is settled one by one, so one bad receipt fails alone."""
        while True:
            try:
                settled = await jobs.settle_many(self.worker_id, batch)
                break
            except Exception as exc:
                if is_store_outage(exc):
                    self._failed("settle", exc)
                    await asyncio.sleep(max(self.backoff.left(), self.settings.poll_interval))
                    continue
                if len(batch) > 1:
                    for item in batch:
                        await self._settle_batch([item])
                    return
                log.exception("worker %s: settling receipt %s failed", self.worker_id, batch[0].receipt.id)
                settled = set()
                break
        for item in batch:
            if str(item.receipt.id) not in settled:
                log.warning("lost the lease on receipt %s before settling; another worker owns it",
                            item.receipt.id)
        self._drop([str(item.receipt.id) for item in batch])

    async def _keep_leases(self) -> None:
        interval = self.settings.lease.total_seconds() / 3
        while True:
            await asyncio.sleep(interval)
            ids = [receipt_id for receipt_id in self.held if receipt_id not in self.lost]
            if not ids:
                continue
            try:
                held = await jobs.renew_many(ids, self.worker_id, self.settings.lease)
            except Exception as exc:  # noqa: BLE001 - a passing database error must not end renewal
                log.warning("worker %s: could not renew the leases on %d receipts (%s: %s); retrying",
                            self.worker_id, len(ids), type(exc).__name__, exc)
                continue
            for receipt_id in ids:
                if receipt_id not in held and receipt_id in self.held:
                    self.lost.add(receipt_id)
                    log.warning("lease on receipt %s was lost", receipt_id)
