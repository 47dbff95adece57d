"""The runtime's app factory: the declared method, the protected paths whatever the method, and the
Starlette app it returns, which a team extends (routes, mounts, middleware, exception handlers)."""

from __future__ import annotations

import re
import uuid
from dataclasses import replace
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from evidencekit.contracts._spec import Requirement
from evidencekit.server.generated.app import OPENAPI, create_app
from evidencekit.server.generated.operations import OPERATIONS, STATUS
from evidencekit.server.runtime import _access_log as access_log
from evidencekit.server.runtime._app import Binding, build_app
from evidencekit.server.runtime._errors import ApiError
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._mcp import McpSettings
from tests.support import AllowAll, ExampleHandlers, live_server

BODY = {"workspace_id": str(uuid.uuid4()), "mutation_id": str(uuid.uuid4())}


class TokenOnly(AllowAll):
    async def authenticate(self, credential: str) -> AllowAll.Caller | None:
        return self.Caller() if credential == "good" else None


def app_for(spec: Any, prefixes: tuple[str, ...] = ()) -> Any:
    return build_app([Binding(spec, ExampleHandlers().status)], [], ServiceHooks(auth=TokenOnly()),
                     mcp=McpSettings(name="test"), openapi=OPENAPI, protected_prefixes=prefixes)


def test_an_operation_is_served_with_the_method_its_manifest_declares() -> None:
    with live_server(app_for(replace(STATUS, rest_method="PUT"))) as base:
        put = httpx.put(base + STATUS.rest_path, json=BODY, headers={"Authorization": "Bearer good"})
        post = httpx.post(base + STATUS.rest_path, json=BODY, headers={"Authorization": "Bearer good"})
    assert put.status_code == 200 and put.headers["x-contract-hash"] == STATUS.contract_hash
    assert post.status_code == 405 and post.headers["allow"] == "PUT"


def test_a_public_operation_under_a_protected_prefix_still_needs_a_token() -> None:
    public = replace(STATUS, requirement=Requirement())
    with live_server(app_for(public, ("/research-api/",))) as base:
        refused = httpx.post(base + STATUS.rest_path, json=BODY)  # the operation's route
        wrong_method = httpx.get(base + STATUS.rest_path)  # no route takes it: refused before the 405
        allowed = httpx.post(base + STATUS.rest_path, json=BODY, headers={"Authorization": "Bearer good"})
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert wrong_method.status_code == 401
    assert allowed.status_code == 200
    with live_server(app_for(public)) as base:
        assert httpx.post(base + STATUS.rest_path, json=BODY).status_code == 200  # public: no token needed


def test_every_path_the_runtime_serves_itself_is_reserved_from_the_operations() -> None:
    """The loader refuses an operation at a path the runtime routes itself (it would be shadowed):
    the two lists must agree, /docs and /healthz included."""
    from evidencekit.contracts._loader import reserved_path

    app = app_for(STATUS)
    own = [path for route in app.routes if (path := getattr(route, "path", None)) != STATUS.rest_path]
    assert {"/mcp", "/openapi.json", "/docs", "/healthz"} <= set(own)
    assert [path for path in own if reserved_path(path) is None] == []
    assert reserved_path(STATUS.rest_path) is None and reserved_path("/mcpx") is None


class TeamError(Exception):
    """An exception of a team's own, which its own exception handler answers."""


RAISES = uuid.UUID(int=7)  # the mutation id whose status read raises TeamError


class RaisingHandlers(ExampleHandlers):
    async def status(self, payload: Any, context: Any) -> Any:
        if payload.mutation_id == RAISES:
            raise TeamError(f"no status for {payload.mutation_id}")
        return await super().status(payload, context)


class Tagging:
    """A team's middleware: every answer it passes gets `x-team: yes`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def tagged(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-team", b"yes")]
            await send(message)

        await self.app(scope, receive, tagged if scope["type"] == "http" else send)


async def team_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"team": str(exc), "path": request.url.path}, status_code=418)


async def hello(request: Request) -> Response:
    if "fail" in request.query_params:
        raise TeamError("hello failed")
    return PlainTextResponse("hello")


async def describe(request: Request) -> Response:
    return PlainTextResponse("POST a status read here")


async def files(scope: Any, receive: Any, send: Any) -> None:
    await PlainTextResponse(f"file {scope['path']} under {scope['root_path']}")(scope, receive, send)


def test_create_app_returns_a_starlette_app_whose_routes_are_the_operations() -> None:
    app = create_app(ExampleHandlers(), ServiceHooks(auth=TokenOnly()))
    assert isinstance(app, Starlette)
    served = {(path, method) for route in app.routes if isinstance(route, Route)
              for path, method in [(route.path, next(iter(route.methods or {"*"})))]}
    assert {(spec.rest_path, spec.rest_method or "POST") for spec in OPERATIONS} <= served


def test_a_team_adds_a_route_a_mount_a_middleware_and_an_exception_handler() -> None:
    """`create_app` returned a wrapper around a Starlette app that had none of add_route, mount or
    add_exception_handler, and served the operations past the app's exception handlers."""
    app = create_app(RaisingHandlers(), ServiceHooks(auth=TokenOnly()))
    app.add_route("/team/hello", hello, methods=["GET"])
    app.add_route(STATUS.rest_path, describe, methods=["GET"])  # beside the operation, another method
    app.mount("/team/files", files)
    app.add_middleware(Tagging)
    app.add_exception_handler(TeamError, team_error)
    token = {"Authorization": "Bearer good"}
    with live_server(app, lifespan="on") as base:
        answers = {
            "route": httpx.get(base + "/team/hello"),
            "route raising": httpx.get(base + "/team/hello?fail=1"),
            "mount": httpx.get(base + "/team/files/a.txt"),
            "operation": httpx.post(base + STATUS.rest_path, json=BODY, headers=token),
            "operation raising": httpx.post(base + STATUS.rest_path, headers=token,
                                            json={**BODY, "mutation_id": str(RAISES)}),
            "operation refused": httpx.post(base + STATUS.rest_path, json=BODY),
            "route at the operation's path": httpx.get(base + STATUS.rest_path, headers=token),
            "openapi": httpx.get(base + "/openapi.json"),
            "mcp": httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                              headers={**token, "Accept": "application/json, text/event-stream"}),
            "nowhere": httpx.get(base + "/team/nowhere"),
        }
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {"route": 200, "route raising": 418, "mount": 200, "operation": 200, "operation raising": 418,
                        "operation refused": 401, "route at the operation's path": 200, "openapi": 200, "mcp": 200,
                        "nowhere": 404}, {name: answer.text[:200] for name, answer in answers.items()}
    assert {name for name, answer in answers.items() if answer.headers.get("x-team") != "yes"} == set()
    assert answers["route"].text == "hello" and answers["mount"].text == "file /team/files/a.txt under /team/files"
    assert answers["route raising"].json() == {"team": "hello failed", "path": "/team/hello"}
    assert answers["operation raising"].json() == {"team": f"no status for {RAISES}", "path": STATUS.rest_path}
    assert answers["operation"].json()["retrieval"]["state"] and answers["operation"].headers["x-contract-hash"]
    assert answers["route at the operation's path"].text == "POST a status read here"
    assert answers["nowhere"].json()["code"] == "not_found"  # the runtime's own handlers stay for the rest


def test_an_operations_errors_stay_the_runtimes_unless_the_team_handles_them() -> None:
    """A handler's unexpected exception is the runtime's logged 500 (not the server's traceback), and
    an ApiError it raises the contract's answer, until the team adds a handler of its own for them."""
    app = create_app(RaisingHandlers(), ServiceHooks(auth=TokenOnly()))
    raising = {**BODY, "mutation_id": str(RAISES)}
    with live_server(app, lifespan="on") as base:
        unhandled = httpx.post(base + STATUS.rest_path, json=raising,
                               headers={"Authorization": "Bearer good", "X-Request-Id": "team-1"})
    assert unhandled.status_code == 500 and unhandled.headers["x-contract-hash"] == STATUS.contract_hash
    assert unhandled.json() == {"error": "internal_error", "message": "internal server error", "code": "internal_error",
                                "request_id": "team-1"}
    app = create_app(RaisingHandlers(), ServiceHooks(auth=TokenOnly()))
    app.add_exception_handler(ApiError, team_error)  # the team's, for the runtime's own errors too
    with live_server(app, lifespan="on") as base:
        refused = httpx.post(base + STATUS.rest_path, json={"workspace_id": "x"}, headers={"Authorization": "Bearer good"})
    assert refused.status_code == 418 and refused.json()["team"].startswith("request does not match the contract")


def test_every_access_line_is_written_by_one_function(monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """An operation's POST (once served past the app and its middleware) and every other request
    had their lines written by two pieces of code; now both go through access_log.write_line."""
    written: list[tuple[str, str, int, str]] = []
    original = access_log.write_line

    def spy(scope: Any, status: int, request_id: str, started: float) -> None:
        written.append((scope["method"], scope["path"], status, request_id))
        original(scope, status, request_id, started)

    monkeypatch.setattr(access_log, "write_line", spy)
    caplog.set_level("INFO", logger=access_log.NAME)
    access_log.LANE.until = -access_log.RESOLVE_SECONDS  # its last look at the level made stale
    requests = [("POST", STATUS.rest_path, {"Authorization": "Bearer good"}, "op-1", 200),
                ("POST", STATUS.rest_path, {}, "op-2", 401),
                ("GET", "/openapi.json", {}, "doc-1", 200),
                ("GET", "/nowhere", {}, "miss-1", 404)]
    with live_server(create_app(ExampleHandlers(), ServiceHooks(auth=TokenOnly())), lifespan="on") as base:
        for method, path, headers, request_id, status in requests:
            answer = httpx.request(method, base + path, json=BODY if method == "POST" else None,
                                   headers={**headers, "X-Request-Id": request_id})
            assert answer.status_code == status, answer.text
    expected = [(method, path, status, request_id) for method, path, _, request_id, status in requests]
    assert written == expected
    lines = [record.getMessage() for record in caplog.records if record.name == access_log.NAME]
    assert [re.fullmatch(r"(\S+) (\S+) (\d{3}) \d+\.\dms request_id=(\S+)", line).groups()  # type: ignore[union-attr]
            for line in lines] == [(method, path, str(status), request_id) for method, path, status, request_id in expected]


def test_every_answer_carries_a_request_id_and_its_access_line_names_it(
        caplog: pytest.LogCaptureFixture) -> None:
    """The runtime's own routes (/openapi.json, /docs), a team's routes (a health check, one that
    fails with a 500) answer with an X-Request-Id as the operations do, the caller's when sane, and
    the access line names the same one: a 500 was logged with "-" and answered with a new id."""
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def boom(request: Request) -> Response:
        raise RuntimeError("a team's bug")

    caplog.set_level("INFO", logger=access_log.NAME)
    access_log.LANE.until = -access_log.RESOLVE_SECONDS
    app = create_app(ExampleHandlers(), ServiceHooks(auth=TokenOnly()),
                     routes=[Route("/healthz", healthz), Route("/boom", boom)])
    answers = {}
    with live_server(app, lifespan="on") as base:
        for path in ("/openapi.json", "/docs", "/healthz", "/boom"):
            answers[path] = httpx.get(base + path)
        echoed = httpx.get(base + "/healthz", headers={"X-Request-Id": "probe-7"})
    assert answers["/boom"].status_code == 500 and answers["/boom"].json()["request_id"] == \
        answers["/boom"].headers["x-request-id"]
    assert echoed.headers["x-request-id"] == "probe-7"
    ids = {path: answer.headers.get("x-request-id") for path, answer in answers.items()}
    assert all(ids.values()) and len(set(ids.values())) == len(ids), ids
    lines = [record.getMessage() for record in caplog.records if record.name == access_log.NAME]
    logged = [match.groups() for line in lines
              if (match := re.fullmatch(r"GET (\S+) \d{3} \d+\.\dms request_id=(\S+)", line))]
    assert logged == [*ids.items(), ("/healthz", "probe-7")]
