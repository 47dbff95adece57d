"""Real processes against one database: duplicate requests race, workers share the work, and a
worker killed mid-fetch loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Receipt, WorkerBeat
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from tests.origin import Origin, Reply, serve_origin
from tests.support import PATIENCE, Hold, until

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.anyio


@pytest.fixture
def http_origin() -> Iterator[Origin]:
    with serve_origin() as origin:
        yield origin


# A held page sends a space this often: held across a process's start, it outlasts the fetch's read timeout
TRICKLE = 1.0


def env_for(database_url: str, origin: Origin, **extra: str) -> dict[str, str]:
    port = origin.url.rsplit(":", 1)[1]
    return {**os.environ, "DATABASE_URL": database_url, "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": f"127.0.0.1:{port}",
            "PYTHONPATH": str(ROOT), **extra}


class Running:
    """`evidencekit ARGS` in a process of its own, what it prints (stdout and stderr) gathered as it
    comes: a line can be waited for, and a pipe left unread never stalls its log writer."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "evidencekit", *args], cwd=ROOT, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.readers = [threading.Thread(target=self.lines.extend, args=(stream,), daemon=True)
                        for stream in (self.process.stdout, self.process.stderr)]
        for reader in self.readers:
            reader.start()

    def said(self, text: str) -> str | None:
        return next((line for line in list(self.lines) if text in line), None)

    async def line(self, text: str) -> str:
        """The first line that says `text`, once it has; the process ending without it fails."""

        def seen() -> str | None:
            if (found := self.said(text)) is None and self.process.poll() is not None:
                for reader in self.readers:
                    reader.join(timeout=PATIENCE)
                assert (found := self.said(text)) is not None, f"ended without saying {text!r}: {self.output()}"
            return found

        return await until(seen, what=repr(text))

    def output(self) -> str:
        return "".join(self.lines)

    def stop(self, sig: int | None = signal.SIGTERM) -> str:
        """Send `sig` (None: none), wait for the end and the last of its output, and return all of it."""
        if sig is not None:
            self.process.send_signal(sig)
        self.process.wait(timeout=PATIENCE)
        for reader in self.readers:
            reader.join(timeout=PATIENCE)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return self.output()

    @property
    def returncode(self) -> int | None:
        return self.process.returncode


async def start_worker(env: dict[str, str]) -> Running:
    worker = Running(["worker"], env)
    await worker.line("ready")
    return worker


def worker_id(worker: Running) -> str:
    return (worker.said("ready") or "").split()[1]


async def submitted(url: str, count: int) -> list[uuid.UUID]:
    return [(await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), f"{url}?n={n}", "url_text")))[0].id
            for n in range(count)]


# A lease far longer than any wait of these tests: a receipt taken up within a wait was taken up
# for its holder's death, not at its lease's end, however loaded the machine.
LONG_LEASE = 600.0
TAKEN_UP_WITHIN = LONG_LEASE / 5


async def test_fifty_concurrent_identical_retrieves_make_one_receipt_and_one_fetch(
    database_url: str, http_origin: Origin
) -> None:
    target = http_origin.reply("/once", Reply(b"<html><body><p>Fetched exactly once.</p></body></html>"))
    async with open_store(database_url):
        pass  # migrate once up front, so the race below is about receipts, not tables
    processes = [
        subprocess.Popen([sys.executable, str(Path(__file__).with_name("submit_many.py")), database_url, "10", target],
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(5)
    ]
    outputs = [p.communicate(timeout=PATIENCE) for p in processes]
    assert all(p.returncode == 0 for p in processes), outputs
    created = sum(int(out.split()[0]) for out, _ in outputs)
    assert created == 1
    workers = [await start_worker(env_for(database_url, http_origin, EVIDENCEKIT_POLL_SECONDS="0.1"))
               for _ in range(2)]
    try:
        async with open_store(database_url):
            assert await Receipt.all().count() == 1
            await until(lambda: Receipt.filter(state="completed").exists(), what="the receipt to complete")
            receipt = await Receipt.first()
            assert receipt is not None and receipt.result is not None
            assert receipt.result["status"] == "ready"
    finally:
        logs = [worker.stop() for worker in workers]
    assert http_origin.hits.count("/once") == 1
    assert all(worker.returncode == 0 for worker in workers), logs


async def test_a_worker_killed_mid_fetch_loses_nothing(database_url: str, http_origin: Origin) -> None:
    hold = Hold()  # the origin answers once the doomed worker is gone
    slow = http_origin.reply("/slow", Reply(b"<html><body><p>Slow but sure.</p></body></html>", hold=hold, trickle=TRICKLE))
    async with open_store(database_url):
        ids = await submitted(slow, 4)
    env = env_for(database_url, http_origin, EVIDENCEKIT_LEASE_SECONDS="1.5", EVIDENCEKIT_POLL_SECONDS="0.1",
                  EVIDENCEKIT_WORKER_CONCURRENCY="4")
    doomed = await start_worker(env)
    try:
        async with open_store(database_url):
            await until(lambda: Receipt.filter(state="running").exists(), what="the doomed worker to claim")
        doomed.stop(signal.SIGKILL)
        hold.release()  # the origin recovers
        survivor = await start_worker(env)
        try:
            async with open_store(database_url):
                await until(lambda: _all_settled(ids), what="the receipts to settle")
                states = {r.state for r in await Receipt.filter(id__in=ids)}
                assert states <= {"completed", "unconfirmed"} and "running" not in states
                assert await Receipt.filter(id__in=ids, state="completed").count() == 4
        finally:
            log = survivor.stop()
        assert survivor.returncode == 0, log
    finally:
        hold.release()
        doomed.stop(signal.SIGKILL)


async def test_a_restart_on_the_same_machine_takes_up_the_dead_workers_receipts_at_once(
        database_url: str, http_origin: Origin) -> None:
    """The dead worker's leases run ten minutes; the restarted one must not wait them out."""
    hold = Hold()
    slow = http_origin.reply("/stuck", Reply(b"<html><body><p>Taken up.</p></body></html>", hold=hold, trickle=TRICKLE))
    async with open_store(database_url):
        ids = await submitted(slow, 4)
    env = env_for(database_url, http_origin, EVIDENCEKIT_LEASE_SECONDS=f"{LONG_LEASE:g}",
                  EVIDENCEKIT_POLL_SECONDS="0.1", EVIDENCEKIT_WORKER_CONCURRENCY="4")
    doomed = await start_worker(env)
    try:
        async with open_store(database_url):
            await until(lambda: _running(ids, 4, worker_id(doomed)), what="the doomed worker to hold all four")
        doomed.stop(signal.SIGKILL)
        hold.release()
        survivor = await start_worker(env)
        try:
            async with open_store(database_url):
                await until(lambda: _all_settled(ids), TAKEN_UP_WITHIN, "the receipts, well before their leases end")
                assert await Receipt.filter(id__in=ids, state="completed").count() == 4
        finally:
            log = survivor.stop()
        assert "took up 4 receipts of 1 dead worker(s) of this machine" in log, log[-2000:]
    finally:
        hold.release()
        doomed.stop(signal.SIGKILL)


async def test_a_worker_killed_while_serve_runs_is_taken_up_within_20_s_not_its_lease(
        database_url: str, http_origin: Origin, tmp_path: Path) -> None:
    """SIGKILL of a separate `evidencekit worker` while `serve` keeps running: its receipts were
    taken up after 58.6 s (the 60 s lease), as a live process looked for dead holders only when it
    started. Now within a few heartbeats (3 s each); here the leases run ten minutes and the
    take-up is waited for at most a fifth of that, after serve's worker has looked for dead holders
    once and found the doomed one alive (the seconds it takes are measured by
    scripts/bench_hostile.py, not asserted)."""
    hold = Hold()
    slow = http_origin.reply("/held", Reply(b"<html><body><p>Taken up while serving.</p></body></html>", hold=hold, trickle=TRICKLE))
    async with open_store(database_url):
        ids = await submitted(slow, 4)
    env = env_for(database_url, http_origin, EVIDENCEKIT_LEASE_SECONDS=f"{LONG_LEASE:g}",
                  EVIDENCEKIT_POLL_SECONDS="0.1", EVIDENCEKIT_WORKER_CONCURRENCY="4", EVIDENCEKIT_DATA_DIR=str(tmp_path))
    doomed = await start_worker(env)
    serving: Running | None = None
    try:
        doomed_id = worker_id(doomed)
        async with open_store(database_url):
            await until(lambda: _running(ids, 4, doomed_id), what="the doomed worker to hold all four")
        serving = Running(["serve", "--port", "0"], env)
        await serving.line("serving")
        async with open_store(database_url):
            # serve's worker beats, then looks for dead holders; a second beat: it has looked once
            first = await until(lambda: WorkerBeat.filter(worker_id__not=doomed_id).first(), what="serve's worker")
            await until(lambda: WorkerBeat.filter(worker_id=first.worker_id, beat_at__gt=first.beat_at).exists(),
                        what="serve's worker to beat again")
            assert await _running(ids, 4, doomed_id)  # found alive, left alone
        doomed.stop(signal.SIGKILL)
        hold.release()
        async with open_store(database_url):
            await until(lambda: _all_settled(ids), TAKEN_UP_WITHIN, "the receipts, well before their leases end")
            assert await Receipt.filter(id__in=ids, state="completed").count() == 4
    finally:
        hold.release()
        doomed.stop(signal.SIGKILL)
        log = serving.stop() if serving is not None else ""
    assert "took up 4 receipts of 1 dead worker(s) of this machine" in log, log[-2000:]


async def _running(ids: list, count: int, owner: str) -> bool:  # type: ignore[type-arg]
    return await Receipt.filter(id__in=ids, state="running", lease_owner=owner).count() == count


async def _all_settled(ids: list) -> bool:  # type: ignore[type-arg]
    return await Receipt.filter(id__in=ids, state__in=["pending", "running"]).count() == 0


async def _start_one_held(database_url: str, origin: Origin, hold: Hold, **extra: str) -> tuple[object, Running]:
    """A worker fetching one page the origin holds until `hold` is released."""
    path = f"/graceful-{uuid.uuid4().hex[:6]}"
    url = origin.reply(path, Reply(b"<html><body><p>Worth the wait.</p></body></html>", hold=hold, trickle=TRICKLE))
    async with open_store(database_url):
        receipt, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), url, "url_text"))
    worker = await start_worker(env_for(database_url, origin, EVIDENCEKIT_POLL_SECONDS="0.1", **extra))
    await until(lambda: path in origin.hits, what="the worker to fetch the page")
    return receipt.id, worker


async def test_sigterm_lets_the_worker_finish_what_it_holds(database_url: str, http_origin: Origin) -> None:
    """SIGTERM while a page is being fetched; the origin answers only once the worker has said it
    is stopping (and its grace is far longer than any wait here)."""
    hold = Hold()
    receipt_id, worker = await _start_one_held(database_url, http_origin, hold,
                                               EVIDENCEKIT_WORKER_GRACE_SECONDS=f"{LONG_LEASE:g}")
    try:
        worker.process.send_signal(signal.SIGTERM)
        await worker.line("stopping: finishing what it holds")
        hold.release()
        log = worker.stop(None)
    finally:
        hold.release()
        if worker.returncode is None:  # failed before it ended
            worker.stop(signal.SIGKILL)
    assert worker.returncode == 0, log
    async with open_store(database_url):
        assert (await Receipt.get(id=receipt_id)).state == "completed"


async def test_sigterm_past_the_grace_period_releases_the_receipt(database_url: str, http_origin: Origin) -> None:
    hold = Hold()  # the page is not answered before the worker has ended
    receipt_id, worker = await _start_one_held(database_url, http_origin, hold, EVIDENCEKIT_WORKER_GRACE_SECONDS="0.3")
    try:
        log = worker.stop()
    finally:
        hold.release()
    assert worker.returncode == 0, log
    async with open_store(database_url):
        receipt = await Receipt.get(id=receipt_id)
        assert (receipt.state, receipt.attempts, receipt.lease_owner) == ("pending", 0, None)
