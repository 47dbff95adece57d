"""ExactRouter hands every request where Starlette's Router would, with the same scope, whatever
the routes (fixed paths, parameters, mounts, hosts, the same path twice) and however they change."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Host, Mount, Route, Router

from evidencekit.server.runtime._routing import ExactRouter


def named(name: str) -> Any:
    async def endpoint(request: Request) -> Response:
        scope = request.scope
        return JSONResponse({"by": name, "params": scope["path_params"], "route": getattr(scope["route"], "path", None),
                             "root_path": scope.get("root_path", "")})
    return endpoint


class Asgi:
    """An ASGI endpoint (what the operations are): Route calls it as it is, for any method."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await JSONResponse({"by": self.name, "endpoint": scope["endpoint"] is self,
                            "route": scope["route"].path})(scope, receive, send)


def routes() -> list[BaseRoute]:
    return [
        Route("/books/get", Asgi("get"), methods=["POST"]),
        Route("/books/get", named("get again"), methods=["GET"]),  # the same path, another method
        Route("/mcp", Asgi("mcp")),  # any method
        Route("/docs", named("docs"), methods=["GET"]),
        Route("/docs/{name}", named("asset"), methods=["GET"]),
        Route("/docs/init.js", named("shadowed"), methods=["GET"]),  # after the pattern that takes it
        Mount("/team", routes=[Route("/x", named("team x"), methods=["GET"])]),
        Route("/team/y", named("team y")),  # inside the mount's prefix: the mount takes it
        Route("/late", named("late"), methods=["GET"]),
    ]


REQUESTS = [("POST", "/books/get"), ("GET", "/books/get"), ("PUT", "/books/get"), ("HEAD", "/books/get"),
            ("POST", "/mcp"), ("DELETE", "/mcp"), ("GET", "/docs"), ("GET", "/docs/init.js"), ("GET", "/docs/a.css"),
            ("GET", "/team/x"), ("GET", "/team/y"), ("GET", "/late"), ("POST", "/late"), ("GET", "/nowhere"),
            ("GET", "/docs/"), ("GET", "/late/")]


def requested(app: Any, requests: list[tuple[str, str]], base_url: str = "http://test") -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url) as client:
            return [await client.request(method, path, follow_redirects=False) for method, path in requests]

    return asyncio.run(run())


def answers(router: Router, requests: list[tuple[str, str]] = REQUESTS) -> list[tuple[int, str, str]]:
    app = Starlette()
    app.router = router
    return [(answer.status_code, answer.headers.get("allow", ""), answer.text) for answer in requested(app, requests)]


def test_it_answers_as_starlettes_router() -> None:
    assert answers(ExactRouter(routes())) == answers(Router(routes()))


@pytest.mark.parametrize("change", ["insert", "append", "setitem", "delitem", "extend", "iadd", "assign", "pop",
                                    "remove", "clear", "sort", "reverse"])
def test_it_follows_every_change_to_its_routes(change: str) -> None:
    exact, plain = ExactRouter(routes()), Router(routes())
    answers(exact)  # the table made before the change

    def apply(router: Router) -> None:
        catch_all = Route("/{anything:path}", named("catch-all"))
        listed = router.routes
        {"insert": lambda: listed.insert(0, catch_all), "append": lambda: listed.append(catch_all),
         "setitem": lambda: listed.__setitem__(0, catch_all), "delitem": lambda: listed.__delitem__(0),
         "extend": lambda: listed.extend([catch_all]), "assign": lambda: setattr(router, "routes", [catch_all]),
         "pop": lambda: listed.pop(0), "remove": lambda: listed.remove(listed[0]), "clear": listed.clear,
         "sort": lambda: listed.sort(key=lambda route: getattr(route, "path", "") != "/{anything:path}"),
         "reverse": listed.reverse, "iadd": lambda: listed.__iadd__([catch_all])}[change]()
        if change in ("sort", "clear", "pop", "remove", "reverse", "delitem"):
            listed.insert(0, catch_all)

    apply(exact)
    apply(plain)
    assert answers(exact) == answers(plain)


def test_a_host_route_before_a_fixed_path_is_asked_first() -> None:
    """A host route may take any path: a fixed path after one is found by Starlette's search."""
    def made() -> list[BaseRoute]:
        return [Host("api.example.org", Router([Route("/books/get", named("by host"), methods=["POST"])])),
                Route("/books/get", Asgi("get"), methods=["POST"])]

    requests = [("POST", "/books/get")]
    assert answers(ExactRouter(made()), requests) == answers(Router(made()), requests)
    app = Starlette()
    app.router = ExactRouter(made())
    [answer] = requested(app, requests, "http://api.example.org")
    assert answer.json()["by"] == "by host"


def test_under_a_root_path_it_searches_as_starlette_does() -> None:
    inner = Starlette()
    inner.router = ExactRouter(routes())
    outer = Starlette(routes=[Mount("/api", app=inner)])
    [answer] = requested(outer, [("POST", "/api/books/get")])
    assert answer.status_code == 200 and answer.json()["by"] == "get"
