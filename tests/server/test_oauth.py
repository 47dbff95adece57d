"""OAuth resource server: JWT access tokens from an issuer whose JWKS is served on loopback."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from evidencekit.server.evidence.app import create_app
from evidencekit.server.evidence.store import access
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import User, Workspace
from tests.support import live_server

AUDIENCE = "https://evidence.test/mcp"
PING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def issuer() -> Iterator[dict[str, Any]]:
    key = new_key()
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": "test-key", "use": "sig", "alg": "RS256"})
    app = Starlette(routes=[Route("/.well-known/jwks.json", lambda _: JSONResponse({"keys": [jwk]}))])
    with live_server(app) as url:
        yield {"url": url, "key": key}


@pytest.fixture(scope="module")
def service(issuer: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("oauth")
    url = f"sqlite://{data / 'o.sqlite3'}?busy_timeout=10000"
    patch = pytest.MonkeyPatch()
    patch.setenv("EVIDENCEKIT_OAUTH_ISSUER", issuer["url"])
    patch.setenv("EVIDENCEKIT_OAUTH_AUDIENCE", AUDIENCE)

    async def people() -> str:
        async with open_store(url):
            workspace = await Workspace.create(name="lab")
            alice = await User.create(name="alice", oauth_subject="alice-sub")
            await access.add_member(workspace, alice, "editor")
            return str(workspace.id)

    workspace_id = asyncio.run(people())
    with live_server(create_app(url, in_process_worker=False), lifespan="on") as base:
        yield {"base": base, "workspace_id": workspace_id}
    patch.undo()


def token(issuer: dict[str, Any], **changes: Any) -> str:
    claims = {"iss": issuer["url"], "aud": AUDIENCE, "sub": "alice-sub", "scope": "openid agent:research",
              "exp": int(time.time()) + 300, "iat": int(time.time())}
    key = changes.pop("key", issuer["key"])
    claims.update(changes)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, key, algorithm="RS256",
                      headers={"kid": "test-key"})


def call_mcp(service: dict[str, Any], bearer: str, message: dict[str, Any] = PING) -> httpx.Response:
    return httpx.post(service["base"] + "/mcp", json=message, headers={**ACCEPT, "Authorization": f"Bearer {bearer}"})


def sse_json(response: httpx.Response) -> dict[str, Any]:
    text = response.text
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1] if data else text)  # type: ignore[no-any-return]


def test_protected_resource_metadata_names_the_issuer(service: dict[str, Any], issuer: dict[str, Any]) -> None:
    metadata = httpx.get(service["base"] + "/.well-known/oauth-protected-resource").json()
    assert metadata["resource"] == AUDIENCE and metadata["authorization_servers"] == [issuer["url"]]
    assert "agent:research" in metadata["scopes_supported"]
    expected = 'Bearer resource_metadata="https://evidence.test/.well-known/oauth-protected-resource/mcp"'
    for host in ({}, {"Host": "localhost"}):  # from the configured audience, never the request's Host
        challenge = httpx.post(service["base"] + "/mcp", json=PING, headers={**ACCEPT, **host})
        assert challenge.status_code == 401 and challenge.headers["www-authenticate"] == expected
    assert httpx.get(service["base"] + "/.well-known/oauth-protected-resource/mcp").json()["resource"] == AUDIENCE


def test_a_valid_access_token_reaches_the_tools(service: dict[str, Any], issuer: dict[str, Any]) -> None:
    listed = call_mcp(service, token(issuer))
    assert listed.status_code == 200
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "sosoapi_research_evidence_status",
        "arguments": {"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())}}}
    result = sse_json(call_mcp(service, token(issuer), call))["result"]
    assert result.get("isError") is not True and result["structuredContent"] == {"retrieval": None}


@pytest.mark.parametrize("changes", [
    {"aud": "https://another-service.test/mcp"},
    {"iss": "https://other-issuer.test"},
    {"exp": int(time.time()) - 10},
    {"sub": "mallory"},
    {"exp": None},
], ids=["other-audience", "other-issuer", "expired", "unknown-subject", "no-expiry"])
def test_tokens_that_are_not_for_this_server_are_401(service: dict[str, Any], issuer: dict[str, Any],
                                                     changes: dict[str, Any]) -> None:
    assert call_mcp(service, token(issuer, **changes)).status_code == 401


def test_a_token_signed_by_another_key_is_401(service: dict[str, Any], issuer: dict[str, Any]) -> None:
    assert call_mcp(service, token(issuer, key=new_key())).status_code == 401


def test_without_the_research_scope_tools_refuse(service: dict[str, Any], issuer: dict[str, Any]) -> None:
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "sosoapi_research_evidence_status",
        "arguments": {"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())}}}
    result = sse_json(call_mcp(service, token(issuer, scope="openid"), call))["result"]
    assert result["isError"] is True and "agent:research" in result["content"][0]["text"]
