from __future__ import annotations

import json

from openapi_spec_validator import validate

from evidencekit.contracts._loader import load_operations
from tests.support import CONTRACTS_DIR
from tests.support import REPO as PROJECT_ROOT

DOCUMENT = json.loads((PROJECT_ROOT / "server/generated/openapi.json").read_text())


def test_the_document_is_valid_openapi_3_1() -> None:
    assert DOCUMENT["openapi"] == "3.1.0"
    validate(DOCUMENT)


def test_every_rest_operation_is_described_with_its_schemas_and_hash() -> None:
    rest = [op for op in load_operations(CONTRACTS_DIR) if op.rest]
    assert sorted(DOCUMENT["paths"]) == sorted(op.rest["path"] for op in rest)
    for op in rest:
        item = DOCUMENT["paths"][op.rest["path"]][op.rest["method"].lower()]
        assert item["operationId"] == op.name
        assert item["x-contract-hash"] == op.contract_hash
        ref = item["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert DOCUMENT["components"]["schemas"][ref.rsplit("/", 1)[1]] == op.rest_variant.input_schema
        read_only = op.mcp["annotations"]["readOnlyHint"]
        expected = {"200", "400", "401", "403", "405", "412", "413", "500", "503"} | (set() if read_only else {"409", "429"})
        # unknown_document, unknown_page_token
        expected |= {"404"} if op.name in ("get_documents", "search_documents") else set()
        expected |= {"429"} if op.name == "search_documents" else set()  # too_many_searches
        assert set(item["responses"]) == expected, op.name  # what the server can answer, no more
        assert {"X-Request-Id", "X-Contract-Hash"} <= {p["name"] for p in item["parameters"]}
    responses = DOCUMENT["components"]["responses"]
    assert "WWW-Authenticate" in responses["Unauthorized"]["headers"]
    assert "Allow" in responses["MethodNotAllowed"]["headers"]
    assert all({"X-Request-Id", "X-Contract-Hash"} <= set(r["headers"]) for r in responses.values())
