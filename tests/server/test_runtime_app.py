"""The runtime's app factory: the declared method, and the protected paths on both dispatch paths."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import httpx

from evidencekit.contracts.spec import Requirement
from evidencekit.server.generated.app import OPENAPI
from evidencekit.server.generated.operations import STATUS
from evidencekit.server.runtime.app import Binding, build_app
from evidencekit.server.runtime.hooks import ServiceHooks
from evidencekit.server.runtime.mcp import McpSettings
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
        refused = httpx.post(base + STATUS.rest_path, json=BODY)  # the direct dispatch
        wrong_method = httpx.get(base + STATUS.rest_path)  # the Starlette app's middleware
        allowed = httpx.post(base + STATUS.rest_path, json=BODY, headers={"Authorization": "Bearer good"})
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert wrong_method.status_code == 401
    assert allowed.status_code == 200
    with live_server(app_for(public)) as base:
        assert httpx.post(base + STATUS.rest_path, json=BODY).status_code == 200  # public: no token needed


def test_every_path_the_runtime_serves_itself_is_reserved_from_the_operations() -> None:
    """The loader refuses an operation at a path the runtime routes itself (it would be shadowed):
    the two lists must agree, /docs and /healthz included."""
    from evidencekit.contracts.loader import reserved_path

    app = app_for(STATUS)
    own = [path for route in app.app.routes if (path := getattr(route, "path", None)) != STATUS.rest_path]
    assert {"/mcp", "/openapi.json", "/docs", "/healthz"} <= set(own)
    assert [path for path in own if reserved_path(path) is None] == []
    assert reserved_path(STATUS.rest_path) is None and reserved_path("/mcpx") is None
