"""REST conformance: generated inputs through the generated client against the running server;
every answer checked against the contract pinned here by hash. No retrieval runs (no worker), so
generated URLs are never fetched."""

from __future__ import annotations

import contextlib
import copy
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from evidencekit.client.generated.client import Client
from evidencekit.client.runtime import _errors as errors
from evidencekit.contracts._loader import LOCK_NAME, load_operation, read_json
from evidencekit.contracts._validation import OperationValidator
from evidencekit.server.evidence.handlers import fetchable
from tests.support import CONTRACTS_DIR

# The hashes the lock pins (what `evidencekit codegen lock` accepted), for the receipt operations:
# their answers' domain rules (membership, conflicts) are checked here beside the toolkit's plugin.
LOCKED = {name: entry["contract_hash"] for name, entry in read_json(CONTRACTS_DIR / LOCK_NAME)["operations"].items()}
PINNED = {name: LOCKED[name] for name in ("sosoapi_research_evidence_retrieve", "sosoapi_research_evidence_status")}
OPERATIONS = {name: load_operation(CONTRACTS_DIR / name) for name in PINNED}
PATHS = {name: op.rest["path"] for name, op in OPERATIONS.items()}  # type: ignore[index]
FORMATS = {"uuid": st.uuids().map(str)}


def test_the_contracts_are_the_pinned_ones() -> None:
    assert {name: op.contract_hash for name, op in OPERATIONS.items()} == PINNED


def check_answer(operation: str, response: httpx.Response) -> None:
    assert response.headers["x-contract-hash"] == PINNED[operation]
    assert response.status_code < 500, response.text
    body = response.json()
    if response.status_code == 200:
        assert OperationValidator.of(OPERATIONS[operation]).output_errors(body) == []
    else:
        assert set(body) >= {"error", "message", "code", "request_id"}


@pytest.mark.parametrize("operation", sorted(PINNED))
def test_generated_valid_inputs_get_contract_valid_answers(server: dict[str, Any], operation: str) -> None:
    op = OPERATIONS[operation]
    schema = op.rest_variant.input_schema  # type: ignore[union-attr]

    seen: dict[str, dict[str, Any]] = {}  # mutation_id -> the input it was first used with

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(payload=from_schema(schema, custom_formats=FORMATS), member=st.booleans())
    def run(payload: dict[str, Any], member: bool) -> None:
        if member:
            payload = {**payload, "workspace_id": server["workspace_id"]}
        answers: list[httpx.Response] = []
        http = httpx.Client(base_url=server["base"], event_hooks={"response": [answers.append]})
        with Client(server["base"], token=server["token"], http_client=http) as client:
            call = getattr(client, op.python_name)
            with contextlib.suppress(errors.ApiError):  # error answers are checked below, raw
                call(payload)  # the generated client, typed result
        response = answers[-1]
        response.read()
        check_answer(operation, response)
        expected = 403
        if member and not fetchable(payload.get("url", "https://status.example/")):
            expected = 400  # not an http(s) URL: refused before a receipt exists
        elif member:
            first = seen.setdefault(payload["mutation_id"], payload)
            reused = "url" in payload and {k: v for k, v in first.items() if k != "mutation_id"} != {
                k: v for k, v in payload.items() if k != "mutation_id"}
            expected = 409 if reused else 200
        assert response.status_code == expected, response.text

    run()


def mutations(payload: dict[str, Any], schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for name in schema["required"]:
        yield {k: v for k, v in payload.items() if k != name}
    yield {**payload, "unexpected": True}
    for name, prop in schema["properties"].items():
        yield {**payload, name: 12345}
        yield {**payload, name: None}
        if "maxLength" in prop:
            yield {**payload, name: "a" * (prop["maxLength"] + 1)}
        if prop.get("format") == "uuid":
            yield {**payload, name: "not-a-uuid"}
        if "enum" in prop:
            yield {**payload, name: "not-in-enum"}


@pytest.mark.parametrize("operation", sorted(PINNED))
def test_invalid_inputs_are_400_never_5xx(server: dict[str, Any], operation: str) -> None:
    op = OPERATIONS[operation]
    schema = op.rest_variant.input_schema  # type: ignore[union-attr]

    @settings(max_examples=15, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(payload=from_schema(schema, custom_formats=FORMATS))
    def run(payload: dict[str, Any]) -> None:
        payload = {**payload, "workspace_id": server["workspace_id"]}
        with httpx.Client(base_url=server["base"], headers={"Authorization": f"Bearer {server['token']}"}) as http:
            for bad in mutations(copy.deepcopy(payload), schema):
                response = http.post(PATHS[operation], content=json.dumps(bad),
                                     headers={"Content-Type": "application/json"})
                check_answer(operation, response)
                assert response.status_code == 400, (bad, response.text)

    run()


def test_the_generated_client_speaks_the_pinned_contract(server: dict[str, Any]) -> None:
    with Client(server["base"], token=server["token"]) as client:
        answer = client.retrieve({"workspace_id": server["workspace_id"], "mutation_id": str(uuid.uuid4()),
                                  "url": "https://example.com/never-fetched", "kind": "url_text"})
    assert answer.retrieval.state == "pending"
