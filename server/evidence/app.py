"""The service people run: REST routes from the generated skeleton, the store, the in-process worker."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from evidencekit.server.evidence.auth_middleware import METADATA_PATH, BearerAuth
from evidencekit.server.evidence.direct_dispatch import DirectDispatch
from evidencekit.server.evidence.handlers import EvidenceHandlers
from evidencekit.server.evidence.mcp_server import build_server
from evidencekit.server.evidence.oauth import OAuthSettings
from evidencekit.server.evidence.retrieval.lifecycle import open_engine
from evidencekit.server.evidence.store.db import database_url, open_store
from evidencekit.server.evidence.store.models import Workspace
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from evidencekit.server.generated.rest import build_rest_routes
from evidencekit.server.runtime.access_log import AccessLog
from evidencekit.server.runtime.body_limit import BodyLimit
from evidencekit.server.runtime.errors import NotFound
from evidencekit.server.runtime.http_errors import HANDLERS, answer

OPENAPI = Path(__file__).resolve().parents[1] / "generated" / "openapi.json"


async def openapi(_: Request) -> Response:
    return Response(OPENAPI.read_bytes(), media_type="application/json")


async def resource_metadata(request: Request) -> Response:
    settings = OAuthSettings.from_env()
    if settings is None:
        return answer(request, NotFound("OAuth is not configured on this server"))
    return JSONResponse(settings.resource_metadata())


async def healthz(_: Request) -> Response:
    try:
        await Workspace.all().limit(1).count()
    except Exception as exc:  # noqa: BLE001 - health reports, never raises
        return JSONResponse({"status": "unavailable", "database": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok", "database": "ok"})


PUBLIC_HOSTNAME_ENV = "EVIDENCEKIT_PUBLIC_HOSTNAME"


def mcp_security(environ: dict[str, str] | None = None) -> TransportSecuritySettings:
    """Host and Origin checks for /mcp: loopback, plus the configured public hostname."""
    env = os.environ if environ is None else environ
    hosts = [host for loopback in ("127.0.0.1", "localhost", "[::1]") for host in (loopback, f"{loopback}:*")]
    public = env.get(PUBLIC_HOSTNAME_ENV, "").strip()
    if public:
        hosts += [public, f"{public}:*"]  # with no port: the scheme's default (80, 443)
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def create_app(url: str | None = None, *, in_process_worker: bool = True,
               worker_settings: WorkerSettings | None = None) -> DirectDispatch:
    store_url = url or database_url()
    sessions = StreamableHTTPSessionManager(app=build_server(), stateless=True, security_settings=mcp_security())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_store(store_url, shared=True), sessions.run():
            if not in_process_worker:
                yield
                return
            stop = asyncio.Event()
            async with open_engine() as engine:
                app.state.worker = worker = Worker(engine, worker_settings or WorkerSettings.from_env())
                task = asyncio.create_task(worker.run(stop))
                try:
                    yield
                finally:
                    stop.set()
                    await worker.finish(task)

    operations = build_rest_routes(EvidenceHandlers())
    routes = [*operations, Route("/openapi.json", openapi),
              Route("/healthz", healthz), Route("/mcp", BodyLimit(StreamableHTTPASGIApp(sessions))),
              Route(METADATA_PATH, resource_metadata), Route(METADATA_PATH + "/mcp", resource_metadata)]
    app = Starlette(routes=routes, middleware=[Middleware(AccessLog), Middleware(BearerAuth)],
                    exception_handlers=HANDLERS, lifespan=lifespan)
    return DirectDispatch(app, operations)
