"""The hosts the app answers to (hosts.py), on every route, and /mcp's Origin and Content-Type checks
(mcp_hosts.py): each reads the first header of its name, as the MCP SDK's own checks (which they
stand in for) read them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from evidencekit.server.runtime._hosts import HostPolicy
from evidencekit.server.runtime._mcp_hosts import McpHosts
from evidencekit.server.runtime._policies import Policies
from tests.support import AllowAll, ExampleHandlers, live_server

POLICY = HostPolicy(["library.example.org"])


def status_of(headers: list[tuple[bytes, bytes]]) -> int:
    sent: list[dict[str, Any]] = []

    async def served(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "client": ("127.0.0.1", 1)}
    checks = Policies(McpHosts(served, POLICY), hosts=POLICY, handlers={})  # the app's Host check
    asyncio.run(checks(scope, receive, send))
    return next(message["status"] for message in sent if message["type"] == "http.response.start")


JSON = (b"content-type", b"application/json")


@pytest.mark.parametrize(("headers", "status"), [
    ([JSON, (b"host", b"localhost:8000")], 200),
    ([JSON, (b"host", b"LocalHost:8000")], 200),  # a name's case is not its own
    ([JSON, (b"host", b"[::1]:8000")], 200),
    ([JSON, (b"host", b"library.example.org")], 200),
    ([JSON, (b"host", b"attacker.example")], 421),
    ([JSON, (b"host", b"library.example.org.attacker.example")], 421),
    ([JSON, (b"host", b"localhost:8000@attacker.example")], 421),
    ([JSON], 421),  # no Host at all
    ([JSON, (b"host", b"localhost:8000"), (b"host", b"attacker.example")], 200),
    ([JSON, (b"host", b"attacker.example"), (b"host", b"localhost:8000")], 421),
    ([JSON, (b"host", b"library.example.org"), (b"origin", b"https://attacker.example")], 403),
    ([JSON, (b"host", b"localhost"), (b"origin", b"http://localhost"), (b"origin", b"https://attacker.example")], 200),
    ([(b"content-type", b"text/plain"), JSON, (b"host", b"localhost")], 400),
    ([(b"content-type", b"Application/JSON; charset=utf-8"), (b"host", b"localhost")], 200),
])
def test_the_first_of_each_header_is_the_one_checked(headers: list[tuple[bytes, bytes]], status: int) -> None:
    assert status_of(headers) == status


@pytest.fixture(scope="module")
def public_app() -> Iterator[str]:
    from evidencekit.server.evidence.auth import evidence_hooks
    from evidencekit.server.generated.app import create_app

    app = create_app(ExampleHandlers(), replace(evidence_hooks(), auth=AllowAll()),
                     hosts=HostPolicy(["api.example.org"]))
    with live_server(app, lifespan="on") as base:
        yield base


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/research-api/evidence/status"), ("POST", "/mcp"), ("GET", "/openapi.json"), ("GET", "/docs"),
    ("GET", "/no/such/path"),
])
def test_a_host_not_allowed_is_refused_alike_on_every_route(public_app: str, method: str, path: str) -> None:
    """allowed_hosts guarded /mcp alone: REST, the OpenAPI document and the docs answered any Host
    (a DNS rebinding page could read them and call the operations with a browser's cookies or a
    token it had), and a team had to add Starlette's TrustedHostMiddleware by hand, with other words
    and status. Every route now answers a Host outside loopback and allowed_hosts with the same 421,
    naming the host and how to allow it; the allowed ones are served."""
    body = {"workspace_id": "11111111-1111-4111-8111-111111111111", "mutation_id": "40000000-0000-4000-8000-000000000001"}
    port = public_app.rsplit(":", 1)[1]
    sent = {"json": body} if method == "POST" else {}
    accept = {"Accept": "application/json, text/event-stream"}
    refused = httpx.request(method, public_app + path, headers={**accept, "Host": f"attacker.example:{port}"},
                            timeout=30, **sent)  # type: ignore[arg-type]
    assert refused.status_code == 421 and refused.headers["content-type"] == "application/json", refused.text
    said = refused.json()
    assert said["code"] == "host_not_allowed" and said["request_id"] == refused.headers["x-request-id"]
    assert said["message"] == (f"this server does not answer to the host 'attacker.example:{port}': allow it with "
                               "`allowed_hosts` in [tool.evidencekit.codegen] and regenerate, or build the app with "
                               "`create_app(..., hosts=HostPolicy([...]))`")
    for host in (f"api.example.org:{port}", f"127.0.0.1:{port}", "localhost"):
        served = httpx.request(method, public_app + path, headers={**accept, "Host": host}, timeout=30,
                               **sent)  # type: ignore[arg-type]
        assert served.status_code != 421, (host, served.text)


def test_the_health_check_answers_any_host(public_app: str) -> None:
    """A load balancer or an orchestrator probes an instance by its address, not by a name a browser
    could be tricked into: /healthz answers whatever the Host."""
    probed = httpx.get(public_app + "/healthz", headers={"Host": "10.0.3.7:8000"}, timeout=30)
    assert probed.status_code == 200 and probed.json() == {"status": "ok"}


def test_a_health_route_of_the_teams_own_is_held_to_the_hosts() -> None:
    """Only the default /healthz answers any Host: with `healthz=False`, a route the team serves at
    /healthz is its own, checked like its other routes."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from evidencekit.server.evidence.auth import evidence_hooks
    from evidencekit.server.generated.app import create_app

    async def own(_: Request) -> JSONResponse:
        return JSONResponse({"status": "own"})

    app = create_app(ExampleHandlers(), replace(evidence_hooks(), auth=AllowAll()), hosts=HostPolicy(["api.example.org"]),
                     healthz=False, routes=[Route("/healthz", own)])
    with live_server(app, lifespan="on") as base:
        assert httpx.get(base + "/healthz", headers={"Host": "10.0.3.7:8000"}, timeout=30).status_code == 421
        assert httpx.get(base + "/healthz", headers={"Host": "api.example.org"}, timeout=30).json() == {"status": "own"}
