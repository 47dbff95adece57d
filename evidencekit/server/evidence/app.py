"""The service people run: REST routes from the generated skeleton, the store, the in-process worker."""

from __future__ import annotations

import asyncio
import contextlib
import os
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
from evidencekit.server.evidence.store.db import database_url, open_store
from evidencekit.server.evidence.store.models import Workspace
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from evidencekit.server.generated.app import create_app as create_generated_app
from evidencekit.server.runtime import NotFound, loopback_security


async def resource_metadata(request: Request) -> Response:
    settings = OAuthSettings.from_env()
    if settings is None:
        raise NotFound("OAuth is not configured on this server")  # answered by the app's error handler
    return JSONResponse(settings.resource_metadata())


async def healthz(_: Request) -> Response:
    try:
        await Workspace.all().limit(1).count()
    except Exception as exc:  # noqa: BLE001 - health reports, never raises
        return JSONResponse({"status": "unavailable", "database": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok", "database": "ok"})


PUBLIC_HOSTNAME_ENV = "EVIDENCEKIT_PUBLIC_HOSTNAME"


def mcp_security(environ: dict[str, str] | None = None) -> Any:
    """Host and Origin checks for /mcp: loopback, plus the configured public hostname."""
    env = os.environ if environ is None else environ
    public = env.get(PUBLIC_HOSTNAME_ENV, "").strip()
    return loopback_security(*([public] if public else []))


def create_app(url: str | None = None, *, in_process_worker: bool = True,
               worker_settings: WorkerSettings | None = None,
               fetch_limits: FetchLimits | None = None) -> Starlette:
    """The service over the store at `url` (DATABASE_URL's, else the data folder's); its in-process
    worker with `worker_settings` (else the environment's) and its fetcher with `fetch_limits`
    (else FetchLimits())."""
    store_url = url or database_url()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_store(store_url, shared=True):
            if not in_process_worker:
                yield
                return
            stop = asyncio.Event()
            async with open_engine(fetch_limits=fetch_limits) as engine:
                app.state.worker = worker = Worker(engine, worker_settings or WorkerSettings.from_env())
                task = asyncio.create_task(worker.run(stop))
                try:
                    yield
                finally:
                    stop.set()
                    await worker.finish(task)

    routes = [Route("/healthz", healthz), Route(METADATA_PATH, resource_metadata),
              Route(METADATA_PATH + "/mcp", resource_metadata)]
    return create_generated_app(EvidenceHandlers(), evidence_hooks(), mcp=mcp_settings, routes=routes,
                                lifespan=lifespan, mcp_security=mcp_security(),
                                protected_prefixes=("/research-api/",))
