"""`evidencekit serve`'s in-process worker takes the same EVIDENCEKIT_* settings as `evidencekit worker`,
and the app the settings it started with.

Its own module: the app opens the store as the process's one shared tortoise context."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from evidencekit.client.generated.client import Client
from evidencekit.server.evidence.admin import bootstrap
from evidencekit.server.evidence.app import create_app
from evidencekit.server.evidence.mcp_server import listed_tools
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.worker import WorkerSettings
from tests.origin import Origin, Reply, serve_origin
from tests.support import Hold, eventually, live_server, running_service

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
    from evidencekit.server.evidence.settings import EvidenceSettings
    from evidencekit.server.evidence.store.receipts import DEFAULT_RETENTION, retention_from_env

    names = ["EVIDENCEKIT_LEASE_SECONDS", "EVIDENCEKIT_POLL_SECONDS", "EVIDENCEKIT_MAX_ATTEMPTS",
             "EVIDENCEKIT_WORKER_CONCURRENCY", "EVIDENCEKIT_WORKER_GRACE_SECONDS", "EVIDENCEKIT_RETRIEVE_PER_MINUTE",
             "EVIDENCEKIT_RETENTION_HOURS"]
    with pytest.MonkeyPatch.context() as patch:
        for name in names:
            patch.setenv(name, " ")
        assert problems() == []
        assert WorkerSettings.from_env() == WorkerSettings()
        assert EvidenceSettings.from_env().service.retrieve_per_minute == 60
        assert retention_from_env() == DEFAULT_RETENTION


@pytest.mark.parametrize(("profile", "output_schemas"), [("core", "1"), ("full", "1"), ("core", "0")])
def test_the_mcp_listing_follows_the_settings_the_app_started_with(tmp_path: Path, profile: str,
                                                                 output_schemas: str) -> None:
    """The settings the app started with decide; the environment changed while it runs changes
    nothing (it was read on every request: a process's listing could change under its clients)."""
    async def listing(service: dict[str, Any]) -> dict[str, Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {service['token']}"}) as http, \
                streamable_http_client(service["mcp"], http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
                     for t in (await session.list_tools()).tools}
            if profile == "core":  # a tool outside the profile is not callable either
                with pytest.raises(MCPError, match="Unknown tool"):
                    await session.call_tool("sosoapi_research_evidence_status", {
                        "workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())})
        return tools

    env = {"EVIDENCEKIT_MCP_PROFILE": profile, "SOSOAPI_OUTPUT_SCHEMAS": output_schemas}
    with running_service(tmp_path, worker=False, env=env) as service, pytest.MonkeyPatch.context() as changed:
        changed.setenv("EVIDENCEKIT_MCP_PROFILE", "core" if profile == "full" else "full")  # undone first
        changed.setenv("SOSOAPI_OUTPUT_SCHEMAS", "0" if output_schemas == "1" else "1")
        tools = asyncio.run(listing(service))
    expected = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
                for t in listed_tools(profile, output_schemas == "1")}
    assert tools == expected
    assert all(("outputSchema" in t) is (output_schemas == "1") for t in tools.values())


def test_an_unset_or_empty_setting_is_the_settings_objects_own_default() -> None:
    """The environment readers hold no defaults of their own: with nothing set (or set empty), what
    a process reads is what the settings objects say, so a default changed there is changed everywhere."""
    from evidencekit.server.evidence.settings import EvidenceSettings

    assert EvidenceSettings.from_env({}) == EvidenceSettings()
    assert WorkerSettings.from_env({name: " " for name in ("EVIDENCEKIT_POLL_SECONDS", "EVIDENCEKIT_LEASE_SECONDS")}) \
        == WorkerSettings()
