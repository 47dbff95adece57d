"""The service end to end over REST: real uvicorn with the app's lifespan (store + in-process worker),
the generated client, a local origin reached through EVIDENCEKIT_ALLOW_PRIVATE_HOSTS."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import httpx
import pytest

from evidencekit.client.generated.client import Client
from evidencekit.client.runtime import _errors as errors
from evidencekit.server.evidence.admin import bootstrap
from evidencekit.server.evidence.app import create_app
from evidencekit.server.evidence.auth import EvidenceAuth
from evidencekit.server.evidence.store import access
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import User, Workspace
from evidencekit.server.evidence.worker import WorkerSettings
from evidencekit.server.generated.operations import GET_DOCUMENTS, RETRIEVE, STATUS
from evidencekit.server.runtime import _access_log as access_log
from tests.origin import Origin, Reply, serve_origin
from tests.support import eventually, live_server, validator_named

PAGE = (b"<html lang='en'><head><title>Lab notes</title></head><body><article><h1>Lab notes</h1>"
        b"<p>The sample was stable for three weeks at room temperature.</p></article></body></html>")


@pytest.fixture(scope="module")
def origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server


@pytest.fixture(scope="module")
def service(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    data = tmp_path_factory.mktemp("service")
    url = f"sqlite:///{data / 'svc.sqlite3'}?busy_timeout=10000"
    port = origin.url.rsplit(":", 1)[1]
    patch = pytest.MonkeyPatch()
    patch.setenv("EVIDENCEKIT_ALLOW_PRIVATE_HOSTS", f"127.0.0.1:{port}")
    patch.setenv("EVIDENCEKIT_DATA_DIR", str(data))

    async def people() -> dict[str, str]:
        async with open_store(url):
            first = await bootstrap()
            workspace = await Workspace.get(id=first["workspace_id"])
            viewer = await User.create(name="viewer")
            await access.add_member(workspace, viewer, "viewer")
            _, viewer_token = await access.create_token(viewer)
            return {"workspace_id": first["workspace_id"], "token": first["token"], "viewer": viewer_token}

    who = asyncio.run(people())
    app = create_app(url, worker_settings=WorkerSettings(poll_interval=0.05))
    with live_server(app, lifespan="on") as base:
        yield {**who, "base": base}
    patch.undo()


def wait_settled(client: Client, workspace: str, mutation: str) -> dict[str, object]:
    def settled() -> dict[str, object] | None:
        status = client.status({"workspace_id": workspace, "mutation_id": mutation})
        assert status.retrieval is not None
        return None if status.retrieval.state in ("pending", "running") else status.model_dump(mode="json")

    return eventually(settled, what=f"receipt {mutation} to settle", every=0.05)


def test_retrieve_then_status_until_completed(service: dict[str, str], origin: Origin) -> None:
    target = origin.reply("/notes", Reply(PAGE))
    mutation = str(uuid.uuid4())
    with Client(service["base"], token=service["token"]) as client:
        accepted = client.retrieve({"workspace_id": service["workspace_id"], "mutation_id": mutation,
                                    "url": target, "kind": "url_text"})
        assert accepted.retrieval.state in ("pending", "running", "completed")
        final = wait_settled(client, service["workspace_id"], mutation)
        again = client.retrieve({"workspace_id": service["workspace_id"], "mutation_id": mutation,
                                 "url": target, "kind": "url_text"})
    retrieval = final["retrieval"]
    assert retrieval["state"] == "completed" and retrieval["result"]["status"] == "ready"
    assert "stable for three weeks" in retrieval["result"]["text"] and retrieval["evidence"]["revision"] == 1
    assert again.retrieval.id == accepted.retrieval.id
    assert origin.hits.count("/notes") == 1
    for operation in ("sosoapi_research_evidence_retrieve", "sosoapi_research_evidence_status"):
        assert validator_named(operation).output_errors(final) == []


def test_auth_errors(service: dict[str, str]) -> None:
    body = {"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4()),
            "url": "https://example.com/", "kind": "url_text"}
    missing = httpx.post(service["base"] + "/research-api/evidence/retrieve", json=body)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["code"] == "unauthenticated" and "request_id" in missing.json()
    assert missing.headers["x-contract-hash"] == RETRIEVE.contract_hash
    with Client(service["base"], token="ek_wrong") as client, pytest.raises(errors.Unauthorized):
        client.retrieve(body)
    with Client(service["base"], token=service["viewer"]) as client:
        with pytest.raises(errors.Forbidden) as caught:
            client.retrieve(body)
        assert caught.value.code == "insufficient_role"
        assert client.status({"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())}).retrieval is None
        with pytest.raises(errors.Forbidden) as caught:
            client.status({"workspace_id": str(uuid.uuid4()), "mutation_id": str(uuid.uuid4())})
        assert caught.value.code == "not_a_member"


def test_conflict_is_409(service: dict[str, str], origin: Origin) -> None:
    mutation = str(uuid.uuid4())
    body = {"workspace_id": service["workspace_id"], "mutation_id": mutation, "url": origin.url + "/a", "kind": "url_text"}
    with Client(service["base"], token=service["token"]) as client:
        client.retrieve(body)
        with pytest.raises(errors.Conflict) as caught:
            client.retrieve({**body, "url": origin.url + "/b"})
    assert caught.value.code == "mutation_conflict"
    # the refusal says what to do next, not only what went wrong
    assert "use a new mutation_id (a fresh UUID) for a different retrieval" in caught.value.message
    assert "repeat the exact same input to read this one" in caught.value.message


def test_an_id_that_is_no_uuid_is_refused_with_an_example_not_a_regex(service: dict[str, str]) -> None:
    body = {"workspace_id": service["workspace_id"], "mutation_id": "run-1", "url": "https://example.com/",
            "kind": "url_text"}
    refused = httpx.post(service["base"] + RETRIEVE.rest_path, json=body,
                         headers={"Authorization": f"Bearer {service['token']}"})
    assert refused.status_code == 400 and refused.json()["code"] == "validation_failed"
    fields = refused.json()["fields"]
    assert {field["field"] for field in fields} == {"$.mutation_id"}
    assert {field["message"] for field in fields} == {"must be a UUID such as 3f2c9a4e-8b1d-4c6e-9f0a-1b2c3d4e5f60"}
    assert "[0-9a-fA-F]" not in refused.text


def test_a_client_of_another_contract_is_refused_before_anything_is_done(service: dict[str, str],
                                                                         origin: Origin) -> None:
    """A client generated from another contract version sends its hash; the server refuses the call
    (412 contract_mismatch) instead of acting on a request it may read differently."""
    mutation = str(uuid.uuid4())
    body = {"workspace_id": service["workspace_id"], "mutation_id": mutation, "url": origin.url + "/old-client",
            "kind": "url_text"}
    headers = {"Authorization": f"Bearer {service['token']}", "X-Contract-Hash": "sha256:0000000000000000"}
    refused = httpx.post(service["base"] + RETRIEVE.rest_path, json=body, headers=headers)
    assert refused.status_code == 412 and refused.json()["code"] == "contract_mismatch"
    assert RETRIEVE.contract_hash in refused.json()["message"]
    assert refused.headers["x-contract-hash"] == RETRIEVE.contract_hash
    with Client(service["base"], token=service["token"]) as client:  # sends the right hash: accepted
        assert client.status({"workspace_id": service["workspace_id"], "mutation_id": mutation}).retrieval is None
        assert client.retrieve(body).retrieval.mutation_id == uuid.UUID(mutation)


def test_a_contract_hash_header_that_is_no_contract_hash_is_malformed_not_another_contract(
        service: dict[str, str]) -> None:
    """A value that is no `sha256:` + 16 hex digits (empty too) is malformed data, 400, as OpenAPI
    tools expect of a value outside the header's declared values; another contract's hash is 412."""
    body = {"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())}
    for value in ("", "0", "sha256:XYZ", "e6a8eb28919d74d9", "sha256:0000000000000000000"):
        headers = {"Authorization": f"Bearer {service['token']}", "X-Contract-Hash": value}
        answer = httpx.post(service["base"] + STATUS.rest_path, json=body, headers=headers)
        assert answer.status_code == 400 and answer.json()["code"] == "invalid_contract_hash", (value, answer.text)
    headers = {"Authorization": f"Bearer {service['token']}", "X-Contract-Hash": STATUS.contract_hash}
    assert httpx.post(service["base"] + STATUS.rest_path, json=body, headers=headers).status_code == 200


def test_unknown_paths_and_wrong_methods_are_json_errors(service: dict[str, str]) -> None:
    """Starlette's own 404 and 405 take the shape of every other error."""
    auth = {"Authorization": f"Bearer {service['token']}", "X-Request-Id": "trace-7"}
    wrong_method = httpx.get(service["base"] + "/research-api/evidence/status", headers=auth)
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"
    assert wrong_method.json() == {"error": "method_not_allowed", "code": "method_not_allowed", "request_id": "trace-7",
                                   "message": "GET is not allowed on /research-api/evidence/status; allowed: POST"}
    assert wrong_method.headers["x-request-id"] == "trace-7"
    assert wrong_method.headers["x-contract-hash"] == STATUS.contract_hash
    for path in ("/research-api/evidence/nope", "/nope", "/.well-known/oauth-protected-resource"):
        unknown = httpx.request("GET" if "well-known" in path else "POST", service["base"] + path, headers=auth, json={})
        assert unknown.status_code == 404 and unknown.headers["content-type"] == "application/json"
        assert unknown.json()["code"] == "not_found"
        assert (path in unknown.json()["message"]) or "OAuth is not configured" in unknown.json()["message"]
        assert unknown.headers["x-request-id"] == unknown.json()["request_id"] == "trace-7"
        assert "x-contract-hash" not in unknown.headers  # no operation lives there


def test_a_token_lookup_that_meets_a_database_outage_is_a_json_503(service: dict[str, str],
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    async def database_down(secret: str) -> None:
        raise ConnectionRefusedError(111, "Connection refused")  # what asyncpg meets when PostgreSQL is down

    monkeypatch.setattr(EvidenceAuth, "authenticate", staticmethod(database_down))
    auth = {"Authorization": f"Bearer {service['token']}", "X-Request-Id": "outage-1"}
    body = {"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())}
    for path in (STATUS.rest_path, "/mcp"):
        answer = httpx.post(service["base"] + path, json=body, headers=auth)
        assert answer.status_code == 503, answer.text
        assert answer.json()["code"] == "unavailable" and answer.json()["request_id"] == "outage-1"
        assert answer.headers["x-request-id"] == "outage-1"
    assert answer.headers.get("x-contract-hash") is None  # /mcp: no one operation's contract
    # the outage is logged with the path as sent: a %0a in it cannot start a forged line
    caplog.set_level("ERROR")
    forged = httpx.post(service["base"] + "/research-api/x%0aFORGED%20line", json=body, headers=auth)
    assert forged.status_code == 503
    logged = [r.getMessage() for r in caplog.records if "bearer check" in r.getMessage() and "FORGED" in r.getMessage()]
    assert logged == ["database unavailable in the bearer check of POST /research-api/x%0aFORGED%20line: "
                      "ConnectionRefusedError: [Errno 111] Connection refused"]


def test_openapi_and_health(service: dict[str, str]) -> None:
    document = httpx.get(service["base"] + "/openapi.json").json()
    assert document["openapi"] == "3.1.0" and "/research-api/evidence/retrieve" in document["paths"]
    health = httpx.get(service["base"] + "/healthz")
    assert health.status_code == 200 and health.json() == {"status": "ok", "database": "ok"}




def log_access(caplog: pytest.LogCaptureFixture) -> None:
    """INFO on the access log, seen by the next request's line: the log looks its level up once per
    access_log.RESOLVE_SECONDS, not per request, so its last look is made stale."""
    caplog.set_level("INFO", logger="evidencekit.access")
    access_log.LANE.until = -access_log.RESOLVE_SECONDS


def access_line(caplog: pytest.LogCaptureFixture, request_id: str) -> str:
    """The access-log line of one request (written by the server's thread, so waited for)."""
    return eventually(lambda: next((r.getMessage() for r in list(caplog.records)
                                    if f"request_id={request_id}" in r.getMessage()), None),
                      what=f"the access-log line of {request_id}")


def test_requests_are_logged_with_their_id_and_never_the_token(service: dict[str, str],
                                                               caplog: pytest.LogCaptureFixture) -> None:
    log_access(caplog)
    response = httpx.post(service["base"] + "/research-api/evidence/status",
                          json={"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())},
                          headers={"Authorization": f"Bearer {service['token']}", "X-Request-Id": "trace-42"})
    assert response.status_code == 200 and response.headers["x-request-id"] == "trace-42"
    line = access_line(caplog, "trace-42")
    assert line.startswith("POST /research-api/evidence/status 200")
    assert all(service["token"] not in r.getMessage() for r in caplog.records)


def test_refusals_are_logged_with_their_status_and_id(service: dict[str, str],
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """The bearer check's 401 and the endpoint's 400 are logged as sent."""
    log_access(caplog)
    path = service["base"] + "/research-api/evidence/status"
    anonymous = httpx.post(path, json={}, headers={"X-Request-Id": "no-token-1"})
    invalid = httpx.post(path, json={"workspace_id": "x"}, headers={"Authorization": f"Bearer {service['token']}",
                                                                     "X-Request-Id": "invalid-1"})
    assert (anonymous.status_code, invalid.status_code) == (401, 400)
    assert access_line(caplog, "no-token-1").startswith("POST /research-api/evidence/status 401 ")
    assert access_line(caplog, "invalid-1").startswith("POST /research-api/evidence/status 400 ")


def test_a_path_cannot_forge_access_log_lines(service: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """The path is logged as sent (percent-encoded), so %0a cannot start a forged line."""
    log_access(caplog)
    forged = "/healthz%0aGET%20/admin%20200%200.1ms%20request_id=forged%0d%1b[2J?token=secret"
    response = httpx.get(service["base"] + forged, headers={"X-Request-Id": "forge-1"})
    assert response.status_code == 404
    line = access_line(caplog, "forge-1")
    assert line.startswith("GET /healthz%0aGET%20/admin%20200%200.1ms%20request_id=forged%0d%1b[2J 404 ")
    assert line.isprintable() and "secret" not in line


def test_captions_over_rest(service: dict[str, str], origin: Origin) -> None:
    track = origin.reply("/talk.vtt", Reply(b"WEBVTT\n\n00:00.000 --> 00:01.000\nHello there.\n", content_type="text/vtt"))
    page = origin.reply("/talk", Reply(f"<html><body><video src='v.mp4'><track kind='captions' srclang='en' "
                                       f"src='{track}'></video></body></html>".encode()))
    mutation = str(uuid.uuid4())
    with Client(service["base"], token=service["token"]) as client:
        client.retrieve({"workspace_id": service["workspace_id"], "mutation_id": mutation, "url": page,
                         "kind": "published_captions", "language": "en"})
        final = wait_settled(client, service["workspace_id"], mutation)
    result = final["retrieval"]["result"]
    assert result["segments"] == [{"start_ms": 0, "end_ms": 1000, "text": "Hello there."}]
    assert result["provenance"]["source_url"] == track and result["provenance"]["language"] == "en"


@pytest.mark.parametrize("url", ["ftp://example.com/file.txt", "mailto:someone@example.com", "https:///no-host",
                                 "http://[unbalanced/"])
def test_a_url_that_can_never_be_fetched_is_a_400_and_no_receipt(service: dict[str, str], url: str) -> None:
    auth = {"Authorization": f"Bearer {service['token']}"}
    ids = {"workspace_id": service["workspace_id"], "mutation_id": str(uuid.uuid4())}
    refused = httpx.post(service["base"] + RETRIEVE.rest_path, headers=auth,
                         json={**ids, "url": url, "kind": "url_text"})
    assert refused.status_code == 400, refused.text
    # a URL the contract's format already refuses is validation_failed; one it allows, unsupported_url
    assert refused.json()["code"] in ("unsupported_url", "validation_failed")
    assert [field["field"] for field in refused.json()["fields"]] == ["$.url"]
    status = httpx.post(service["base"] + STATUS.rest_path, headers=auth, json=ids)
    assert status.json() == {"retrieval": None}  # nothing was started, nothing counted against the rate


def test_documents_not_found_are_a_404_naming_each_name(service: dict[str, str]) -> None:
    auth = {"Authorization": f"Bearer {service['token']}"}
    names = ["documents/nowhere.test/a", "documents/nowhere.test/b", "documents/nowhere.test/a"]
    answer = httpx.post(service["base"] + GET_DOCUMENTS.rest_path, headers=auth, json={"names": names})
    assert answer.status_code == 404 and answer.json()["code"] == "unknown_document"
    assert [field["field"] for field in answer.json()["fields"]] == ["$.names[0]", "$.names[1]", "$.names[2]"]
    assert answer.headers["x-contract-hash"] == GET_DOCUMENTS.contract_hash
    document = httpx.get(service["base"] + "/openapi.json").json()
    assert "404" in document["paths"][GET_DOCUMENTS.rest_path]["post"]["responses"]  # declared
