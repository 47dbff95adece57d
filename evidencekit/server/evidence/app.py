"""The service people run: REST routes from the generated skeleton, the store, the in-process worker."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from evidencekit.server.evidence.auth import METADATA_PATH, evidence_hooks
from evidencekit.server.evidence.fetch.fetcher import FetchLimits
from evidencekit.server.evidence.handlers import EvidenceHandlers
from evidencekit.server.evidence.mcp_server import mcp_settings
from evidencekit.server.evidence.oauth import OAuthSettings
from evidencekit.server.evidence.retrieval.lifecycle import open_engine
from evidencekit.server.evidence.settings import PUBLIC_HOSTNAME_ENV, EvidenceSettings
from evidencekit.server.evidence.store.access import keep_for
from evidencekit.server.evidence.store.db import database_url, open_store
from evidencekit.server.evidence.store.models import Workspace
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from evidencekit.server.generated.app import create_app as create_generated_app
from evidencekit.server.runtime import HostPolicy, NotFound


def metadata_route(oauth: OAuthSettings | None) -> Any:
    """RFC 9728 protected resource metadata, as configured where the app starts (404 without OAuth)."""
    async def resource_metadata(_: Request) -> Response:
        if oauth is None:
            raise NotFound("OAuth is not configured on this server")  # answered by the app's error handler
        return JSONResponse(oauth.resource_metadata())
    return resource_metadata


async def healthz(_: Request) -> Response:
    try:
        await Workspace.all().limit(1).count()
    except Exception as exc:  # noqa: BLE001 - health reports, never raises
        return JSONResponse({"status": "unavailable", "database": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok", "database": "ok"})


def host_policy(settings: EvidenceSettings) -> HostPolicy:
    """The hosts the service answers to (every route but /healthz; /mcp takes their pages as
    Origin): loopback, plus the configured public hostname."""
    public = settings.public_hostname
    return HostPolicy([public] if public else [], how_to_allow=f"set {PUBLIC_HOSTNAME_ENV} to the hostname clients "
                                                              "use where the server runs (docs/settings.md)")


def create_app(url: str | None = None, *, settings: EvidenceSettings | None = None, in_process_worker: bool = True,
               worker_settings: WorkerSettings | None = None,
               fetch_limits: FetchLimits | None = None) -> Starlette:
    """The service over the store at `url` (DATABASE_URL's, else the data folder's), as `settings`
    say (else the environment's, read here, once: docs/settings.md); its in-process worker with
    `worker_settings` (else the settings') and its fetcher with `fetch_limits` (else FetchLimits())."""
    store_url = url or database_url()
    settings = settings or EvidenceSettings.from_env()
    keep_for(settings.auth_cache_seconds)
    handlers = EvidenceHandlers(settings=settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_store(store_url, shared=True):
            if not in_process_worker:
                yield
                return
            stop = asyncio.Event()
            async with open_engine(fetch_limits=fetch_limits, settings=settings) as engine:
                app.state.worker = worker = Worker(engine, worker_settings or settings.worker,
                                                   arrivals=handlers.service.arrivals)
                task = asyncio.create_task(worker.run(stop))
                try:
                    yield
                finally:
                    stop.set()
                    await worker.finish(task)

    metadata = metadata_route(settings.oauth)
    routes = [Route("/healthz", healthz), Route(METADATA_PATH, metadata), Route(METADATA_PATH + "/mcp", metadata)]
    return create_generated_app(handlers, evidence_hooks(settings),
                                mcp=mcp_settings(settings.mcp), routes=routes, lifespan=lifespan,
                                hosts=host_policy(settings), protected_prefixes=("/research-api/",))
