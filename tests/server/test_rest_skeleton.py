"""The generated REST routes, served by a real uvicorn server on loopback."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evidencekit.server.generated.models import RetrieveInput, RetrieveOutput
from evidencekit.server.generated.operations import RETRIEVE, STATUS
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._errors import Conflict, RateLimited
from tests.support import ExampleHandlers, example_output, live_server, skeleton_app

WORKSPACE = "11111111-1111-4111-8111-111111111111"
MUTATION = "40000000-0000-4000-8000-000000000001"
REQUEST = {"workspace_id": WORKSPACE, "mutation_id": MUTATION,
           "url": "https://example.com/research-notes", "kind": "url_text"}


class MisbehavingHandlers(ExampleHandlers):
    """Returns what the typed model accepts but the REST contract does not, or raises API errors."""

    async def retrieve(self, payload: RetrieveInput, context: RequestContext) -> RetrieveOutput:
        if payload.url.endswith("/conflict"):
            raise Conflict("mutation_id was used with another input", code="mutation_conflict")
        if payload.url.endswith("/busy"):
            raise RateLimited("slow down", retry_after=7)
        if payload.url.endswith("/crash"):
            raise RuntimeError("secret internal detail")
        if payload.url.endswith("/database-down"):  # what the store meets when PostgreSQL is unreachable
            import asyncpg

            await asyncpg.connect("postgresql://postgres@127.0.0.1:1/gone", timeout=5)
        data = example_output("sosoapi_research_evidence_retrieve")
        data["retrieval"]["id"] = "30000000-0000-0000-8000-000000000007"  # a uuid, not the REST pattern
        return RetrieveOutput.model_validate(data)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with live_server(skeleton_app(ExampleHandlers())) as url:
        yield url


@pytest.fixture(scope="module")
def bad_url() -> Iterator[str]:
    with live_server(skeleton_app(MisbehavingHandlers()), lifespan="on") as url:  # on: /mcp too
        yield url


def post(url: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.post(url + path, timeout=10, **kwargs)


def test_valid_request_gets_a_contract_valid_answer_with_the_hash(base_url: str) -> None:
    response = post(base_url, RETRIEVE.rest_path, json=REQUEST, headers={"X-Request-Id": "abc-123"})
    assert response.status_code == 200
    assert response.headers["x-contract-hash"] == RETRIEVE.contract_hash
    assert response.headers["x-request-id"] == "abc-123"
    body = response.json()
    assert body["retrieval"]["mutation_id"] == MUTATION
    assert body == {**example_output("sosoapi_research_evidence_retrieve"), "retrieval": body["retrieval"]}


def test_status_may_answer_null(base_url: str) -> None:
    response = post(base_url, STATUS.rest_path, json={"workspace_id": WORKSPACE, "mutation_id": str(uuid.UUID(int=0))})
    assert response.status_code == 200
    assert response.json() == {"retrieval": None}


def test_400_names_every_failing_field(base_url: str) -> None:
    response = post(base_url, RETRIEVE.rest_path, json={"url": "nope", "kind": "video", "extra": 1},
                    headers={"X-Request-Id": "bad id with spaces"})
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"error", "message", "code", "request_id", "fields"}
    assert body["code"] == "validation_failed"
    assert body["request_id"] == response.headers["x-request-id"] != "bad id with spaces"
    assert {f["field"] for f in body["fields"]} == {
        "$.url", "$.kind", "$.extra", "$.workspace_id", "$.mutation_id"}
    for name in ("$.url", "$.kind", "$.extra"):
        assert name in body["message"]


@pytest.mark.parametrize(("content", "code"), [
    (b"{not json", "invalid_json"), (b"[1, 2]", "validation_failed"),
    (b"[" * 20_000 + b"]" * 20_000, "invalid_json"),  # nested deeper than the parser goes
    (b'{"url": ' + b"9" * 5_000 + b"}", "invalid_json"),  # an integer past Python's digit limit
    (json.dumps({**REQUEST, "url": "https://e.com/\ud800"}).encode(), "invalid_json"),  # a lone surrogate
], ids=["garbage", "array", "deep", "huge-int", "surrogate"])
def test_malformed_bodies_are_400_json(base_url: str, content: bytes, code: str) -> None:
    response = post(base_url, RETRIEVE.rest_path, content=content, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json()["code"] == code


def test_oversized_body_is_413(base_url: str) -> None:
    response = post(base_url, RETRIEVE.rest_path, json={**REQUEST, "url": "https://e.com/" + "a" * 70_000})
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_a_request_too_large_is_refused_in_the_same_words_over_rest_and_mcp(base_url: str) -> None:
    """REST said 'request body is larger than 65536 bytes', MCP 'the arguments of ... are larger':
    one limit per operation (its max_request_bytes), checked by one function (request_size), the
    same refusal on both surfaces, naming the operation and what sets the limit."""
    status = {"workspace_id": WORKSPACE, "mutation_id": MUTATION, "padding": "p" * 66_000}  # past 64 KiB, not 68
    over_rest = post(base_url, STATUS.rest_path, json=status)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": STATUS.mcp_tool, "arguments": status}}
    over_mcp = httpx.post(base_url + "/mcp", json=call, headers={"Accept": "application/json, text/event-stream"},
                          timeout=30)
    assert over_rest.status_code == 413 and over_mcp.status_code == 200, (over_rest.text, over_mcp.text)
    result = over_mcp.json()["result"]
    assert result["isError"] is True
    said = json.loads(result["content"][0]["text"])
    assert (said["code"], said["message"]) == (over_rest.json()["code"], over_rest.json()["message"])
    assert said["message"] == (f"the request to {STATUS.name} is larger than 65536 bytes, the most this operation "
                               "takes (its max_request_bytes)")
    envelope = httpx.post(base_url + "/mcp", headers={"Accept": "application/json, text/event-stream"}, timeout=30,
                          json={**call, "params": {"name": STATUS.mcp_tool, "arguments": {"padding": "p" * 70_000}}})
    assert envelope.status_code == 413 and "the largest tool's max_request_bytes, 65536" in envelope.json()["message"]


def test_a_body_sent_in_pieces_is_read_whole(base_url: str) -> None:
    raw = json.dumps(REQUEST).encode()
    pieces = iter([raw[:10], raw[10:40], raw[40:]])  # chunked transfer encoding, no Content-Length
    response = post(base_url, RETRIEVE.rest_path, content=pieces, headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    assert response.json()["retrieval"]["mutation_id"] == MUTATION


def test_the_body_reader_joins_messages_and_stops_at_the_cap() -> None:
    import asyncio

    from evidencekit.server.runtime._errors import PayloadTooLarge
    from evidencekit.server.runtime._request_size import SizeLimit
    from evidencekit.server.runtime._rest_runtime import read_json_body

    def receiver(*pieces: bytes) -> Any:
        messages = [{"type": "http.request", "body": piece, "more_body": n < len(pieces) - 1}
                    for n, piece in enumerate(pieces)]

        async def receive() -> dict[str, Any]:
            return messages.pop(0)
        return receive

    raw, parsed = asyncio.run(read_json_body(receiver(b'{"a": ', b'[1, 2', b"]}"), {}))
    assert (raw, parsed) == (b'{"a": [1, 2]}', {"a": [1, 2]})
    with pytest.raises(PayloadTooLarge):
        asyncio.run(read_json_body(receiver(b"[" + b"1," * 10, b"1" * 100 + b"]"), {}, limit=SizeLimit(50, "it")))
    with pytest.raises(PayloadTooLarge):
        asyncio.run(read_json_body(receiver(b"1" * 51), {}, limit=SizeLimit(50, "it")))


def test_an_oversized_body_without_a_length_is_413(base_url: str) -> None:
    pieces = iter([b'{"url": "' + b"a" * 40_000, b"a" * 40_000 + b'"}'])
    response = post(base_url, RETRIEVE.rest_path, content=pieces, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_a_body_of_another_media_type_is_refused(base_url: str) -> None:
    response = post(base_url, RETRIEVE.rest_path, content=json.dumps(REQUEST), headers={"Content-Type": "text/plain"})
    assert response.status_code == 400
    assert response.json()["code"] == "unsupported_media_type"


def test_wrong_method_is_refused(base_url: str) -> None:
    assert httpx.get(base_url + RETRIEVE.rest_path).status_code == 405


def test_a_response_that_violates_the_contract_is_never_sent(bad_url: str, caplog: pytest.LogCaptureFixture) -> None:
    response = post(bad_url, RETRIEVE.rest_path, json=REQUEST)
    assert response.status_code == 500
    assert response.json()["code"] == "contract_violation"
    assert "30000000-0000-0000-8000-000000000007" not in response.text
    assert any("[rest] $.retrieval.id" in record.getMessage() for record in caplog.records)


def test_api_errors_map_to_their_status_and_headers(bad_url: str) -> None:
    conflict = post(bad_url, RETRIEVE.rest_path, json={**REQUEST, "url": "https://e.com/conflict"})
    assert (conflict.status_code, conflict.json()["code"]) == (409, "mutation_conflict")
    busy = post(bad_url, RETRIEVE.rest_path, json={**REQUEST, "url": "https://e.com/busy"})
    assert (busy.status_code, busy.headers["retry-after"]) == (429, "7")


def test_unexpected_errors_are_500_without_details(bad_url: str) -> None:
    response = post(bad_url, RETRIEVE.rest_path, json={**REQUEST, "url": "https://e.com/crash"})
    assert response.status_code == 500
    assert response.json()["code"] == "internal_error"
    assert "secret" not in response.text and "Traceback" not in response.text


def test_requests_without_an_id_get_distinct_ones(base_url: str) -> None:
    body = {"workspace_id": WORKSPACE, "mutation_id": str(uuid.UUID(int=0))}
    ids = [post(base_url, STATUS.rest_path, json=body).headers["x-request-id"] for _ in range(20)]
    assert len(set(ids)) == 20 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_request_ids_are_random_not_a_counter() -> None:
    """A counter behind a fixed prefix would tell callers the server's volume and its restarts."""
    import os

    from evidencekit.server.runtime._request_head import new_request_id

    ids = [new_request_id() for _ in range(200)]
    assert len(set(ids)) == 200 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert len({i[:8] for i in ids}) > 190  # no shared prefix
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.write(write, "".join(new_request_id() for _ in range(300)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64 * 300).decode()
    after = {new_request_id() for _ in range(300)}  # the parent's next ids, from what it held at the fork
    assert {child[start:start + 32] for start in range(0, len(child), 32)}.isdisjoint(after | set(ids))


def test_an_unreachable_database_is_503_unavailable_not_a_bare_500(bad_url: str) -> None:
    response = post(bad_url, RETRIEVE.rest_path, json={**REQUEST, "url": "https://example.com/database-down"})
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "unavailable" and "retry later" in body["message"]
    assert body["request_id"] == response.headers["x-request-id"]


def test_rest_and_mcp_send_one_error_body(bad_url: str) -> None:
    """One builder: the body REST answers with is the text of MCP's isError result, the wait
    included (MCP has no Retry-After header; it was added to MCP's body alone)."""
    import anyio

    from evidencekit.testing._mcp_client import call_tool_unchecked, http_session

    busy = {**REQUEST, "url": "https://e.com/busy"}
    rest = post(bad_url, RETRIEVE.rest_path, json=busy)

    async def call() -> Any:
        async with http_session(bad_url + "/mcp", {}) as session:
            return await call_tool_unchecked(session, "sosoapi_research_evidence_retrieve", busy)

    result = anyio.run(call)
    over_mcp = json.loads(result.content[0].text)
    assert result.is_error and rest.headers["retry-after"] == "7"
    assert rest.json()["request_id"] != over_mcp["request_id"]
    assert {**rest.json(), "request_id": "-"} == {**over_mcp, "request_id": "-"} == {
        "error": "rate_limited", "message": "slow down", "code": "rate_limited", "request_id": "-",
        "retry_after_seconds": 7}
