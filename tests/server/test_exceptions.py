"""The app's error middlewares answer as Starlette's own do: the same app served with them (the
runtime's ServiceApp) and with Starlette's gives the same answers, and raises the same exceptions to
the server, for every way an exception reaches them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from evidencekit.server.runtime._app import ServiceApp


class TeamError(Exception):
    pass


class TeamSubError(TeamError):
    pass


class Unhandled(Exception):
    pass


async def team_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"handled": type(exc).__name__}, status_code=418)


def sync_handler(request: Request, exc: Exception) -> Response:
    return PlainTextResponse(f"sync {exc}", status_code=409)


async def teapot(request: Request, exc: Exception) -> Response:
    return PlainTextResponse("a 404 of the team's", status_code=404)


async def server_error(request: Request, exc: Exception) -> Response:
    return PlainTextResponse(f"500 for {type(exc).__name__}", status_code=500)


async def raises(request: Request) -> Response:
    kind = request.url.path.rsplit("/", 1)[1]
    if kind == "team":
        raise TeamError("team")
    if kind == "sub":
        raise TeamSubError("sub")
    if kind == "http":
        raise HTTPException(status_code=404)
    if kind == "teapot":
        raise HTTPException(status_code=418, detail="short and stout")
    if kind == "sync":
        raise KeyError("sync")
    if kind == "unhandled":
        raise Unhandled("nobody handles this")
    return PlainTextResponse("fine")


async def late(request: Request) -> Response:
    async def body() -> AsyncIterator[bytes]:
        yield b"started"
        raise TeamError("after the answer started")

    return StreamingResponse(body())


class AsgiRaises:
    """An ASGI endpoint (as the operations are): what it raises reaches the exception middleware
    itself, not the wrapper Starlette puts around a function endpoint."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["path"] == "/asgi/late":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            raise TeamError("after the answer started")
        await raises(Request(scope, receive, send))
        await PlainTextResponse("fine")(scope, receive, send)


class Raising:
    """A team middleware that raises past the exception middleware (to the server error one)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/middleware":
            raise TeamError("in a middleware")
        await self.app(scope, receive, send)


def app_of(kind: type[Starlette], handlers: dict[Any, Any]) -> Starlette:
    routes = [Route("/raise/{kind}", raises), Route("/late", late), Route("/middleware", raises),
              Route("/asgi/{kind}", AsgiRaises())]
    if kind is ServiceApp:
        return ServiceApp(routes=routes, lifespan=None, exception_handlers=handlers,  # type: ignore[arg-type]
                          middleware=[Middleware(Raising)])
    return Starlette(routes=routes, exception_handlers=handlers, middleware=[Middleware(Raising)])


HANDLERS: list[dict[Any, Any]] = [
    {},
    {TeamError: team_error},
    {TeamError: team_error, TeamSubError: sync_handler, KeyError: sync_handler},
    {404: teapot, HTTPException: team_error},
    {500: server_error},
    {Exception: server_error, TeamError: team_error},
]
KINDS = ["none", "team", "sub", "http", "teapot", "sync", "unhandled"]
PATHS = [*(f"/raise/{kind}" for kind in KINDS), *(f"/asgi/{kind}" for kind in [*KINDS, "late"]), "/late", "/middleware",
         "/nowhere"]


def outcome(app: Starlette, path: str, raise_app_exceptions: bool = True) -> tuple[str, Any]:
    """The answer, or the exception the app raised to the server; with `raise_app_exceptions` off,
    what the client gets when the server takes such an exception (as uvicorn does)."""
    async def run() -> tuple[str, Any]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=raise_app_exceptions)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            try:
                answer = await client.get(path)
            except Exception as exc:  # noqa: BLE001 - what reaches the server is part of the outcome
                return "raised", (type(exc).__name__, str(exc))
        return "answered", (answer.status_code, answer.text)

    return asyncio.run(run())


@pytest.mark.parametrize("handlers", HANDLERS, ids=lambda handlers: ",".join(map(str, handlers)) or "none")
def test_the_error_middlewares_answer_as_starlettes(handlers: dict[Any, Any]) -> None:
    for path in PATHS:
        ours, theirs = app_of(ServiceApp, handlers), app_of(Starlette, handlers)
        assert outcome(ours, path) == outcome(theirs, path), path
        assert outcome(app_of(ServiceApp, handlers), path, False) == outcome(app_of(Starlette, handlers), path, False)
