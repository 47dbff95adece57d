"""`evidencekit serve`'s in-process worker takes the same EVIDENCEKIT_* settings as `evidencekit worker`.

Its own module: the app opens the store as the process's one shared tortoise context."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from evidencekit.client.generated.client import Client
from evidencekit.server.evidence.admin import bootstrap
from evidencekit.server.evidence.app import create_app
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.worker import WorkerSettings
from tests.origin import Origin, Reply, serve_origin
from tests.support import Hold, eventually, live_server

PAGE = b"<html lang='en'><head><title>Slow</title></head><body><p>Slow to come.</p></body></html>"


@pytest.fixture
def origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server


def test_the_in_process_worker_reads_its_settings_and_grace_from_the_environment(
        origin: Origin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`evidencekit serve` honours the same EVIDENCEKIT_* worker settings as `evidencekit worker`:
    with a short grace, stopping the server releases a retrieval still in hand instead of waiting."""
    url = f"sqlite:///{tmp_path / 'svc.sqlite3'}?busy_timeout=10000"
    monkeypatch.setenv("EVIDENCEKIT_ALLOW_PRIVATE_HOSTS", f"127.0.0.1:{origin.url.rsplit(':', 1)[1]}")
    monkeypatch.setenv("EVIDENCEKIT_DATA_DIR", str(tmp_path))
    for name, value in {"LEASE_SECONDS": "9", "POLL_SECONDS": "0.05", "MAX_ATTEMPTS": "5",
                        "WORKER_CONCURRENCY": "2", "WORKER_GRACE_SECONDS": "0.2"}.items():
        monkeypatch.setenv(f"EVIDENCEKIT_{name}", value)
    held = Hold()  # the page is answered only once the server has stopped
    target = origin.reply("/slow-at-shutdown", Reply(PAGE, hold=held))

    async def bootstrapped() -> dict[str, str]:
        async with open_store(url):
            return await bootstrap()

    first = asyncio.run(bootstrapped())
    app = create_app(url)
    mutation = str(uuid.uuid4())
    try:
        with live_server(app, lifespan="on") as base, Client(base, token=first["token"]) as client:
            assert app.state.worker.settings == WorkerSettings(
                lease=timedelta(seconds=9), poll_interval=0.05, max_attempts=5, concurrency=2, grace=0.2)
            client.retrieve({"workspace_id": first["workspace_id"], "mutation_id": mutation,
                             "url": target, "kind": "url_text"})
            eventually(lambda: "/slow-at-shutdown" in origin.hits, what="the worker to fetch")
    finally:
        held.release()

    async def receipt_after_stop() -> Receipt:
        async with open_store(url):
            return await Receipt.get(mutation_id=mutation)

    released = asyncio.run(receipt_after_stop())
    assert (released.state, released.lease_owner, released.result) == ("pending", None, None)


def test_empty_settings_read_as_unset_like_the_settings_check() -> None:
    """env_check lets an empty value through as unset; every reader must then take the default."""
    from evidencekit.server.evidence.env_check import problems
    from evidencekit.server.evidence.service import ServiceSettings
    from evidencekit.server.evidence.store.receipts import DEFAULT_RETENTION, retention_from_env

    names = ["EVIDENCEKIT_LEASE_SECONDS", "EVIDENCEKIT_POLL_SECONDS", "EVIDENCEKIT_MAX_ATTEMPTS",
             "EVIDENCEKIT_WORKER_CONCURRENCY", "EVIDENCEKIT_WORKER_GRACE_SECONDS", "EVIDENCEKIT_RETRIEVE_PER_MINUTE",
             "EVIDENCEKIT_RETENTION_HOURS"]
    with pytest.MonkeyPatch.context() as patch:
        for name in names:
            patch.setenv(name, " ")
        assert problems() == []
        assert WorkerSettings.from_env() == WorkerSettings()
        assert ServiceSettings.from_env().retrieve_per_minute == 60
        assert retention_from_env() == DEFAULT_RETENTION
