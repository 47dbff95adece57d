"""The OpenAPI 3.1 document of the REST surface, built from the contracts."""

from __future__ import annotations

from typing import Any

from contracts.loader import Operation

from .headers import json_comment

FIELD_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "field": {"type": "string", "description": "JSON path of the failing field, e.g. $.url"},
        "message": {"type": "string"},
        "keyword": {"type": "string", "description": "The JSON Schema keyword that failed."},
    },
    "required": ["field", "message", "keyword"],
}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {"type": "string", "description": "Error category, e.g. bad_request."},
        "message": {"type": "string", "description": "What went wrong, for people."},
        "code": {"type": "string", "description": "Machine code, e.g. validation_failed, mutation_conflict."},
        "request_id": {"type": "string", "description": "Also sent as X-Request-Id."},
        "fields": {"type": "array", "items": {"$ref": "#/components/schemas/FieldError"}},
    },
    "required": ["error", "message", "code", "request_id"],
}

ERROR_RESPONSES = {
    "400": ("BadRequest", "The body is not JSON or does not match the contract; `fields` names every failing field."),
    "401": ("Unauthorized", "Missing or invalid bearer token (`WWW-Authenticate: Bearer`)."),
    "403": ("Forbidden", "The token lacks the capability, or its owner the workspace role."),
    "409": ("Conflict", "The mutation_id was used with a different input (code `mutation_conflict`)."),
    "405": ("MethodNotAllowed", "The path exists, the method does not (`Allow` lists the one that does)."),
    "412": ("ContractMismatch", "`X-Contract-Hash` was sent and is not this operation's contract hash "
                                "(code `contract_mismatch`); nothing was done."),
    "413": ("PayloadTooLarge", "The request body is too large."),
    "429": ("RateLimited", "Too many requests; honour `Retry-After`."),
    "500": ("InternalError", "Server error, including `contract_violation`: read the result again before retrying."),
    "503": ("Unavailable", "The database cannot be reached (code `unavailable`); retrying later is safe."),
}

_HEADER = {"schema": {"type": "string"}}


# Only an operation that changes something can conflict with an earlier call or spend the rate limit.
_MUTATION_ONLY = frozenset({"409", "429"})


def _error_response(description: str, status: str) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Request-Id": _HEADER, "X-Contract-Hash": _HEADER}
    if status == "401":
        headers["WWW-Authenticate"] = _HEADER
    if status == "405":
        headers["Allow"] = _HEADER
    if status == "429":
        headers["Retry-After"] = {"schema": {"type": "integer", "minimum": 1}}
    return {
        "description": description,
        "headers": headers,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _path_item(op: Operation, examples: dict[str, Any]) -> dict[str, Any]:
    rest = op.rest or {}
    prefix = op.class_prefix
    request_body: dict[str, Any] = {"schema": {"$ref": f"#/components/schemas/{prefix}Input"}}
    response_body: dict[str, Any] = {"schema": {"$ref": f"#/components/schemas/{prefix}Output"}}
    if "input" in examples:
        request_body["example"] = examples["input"]
        response_body["example"] = examples["output"]
    responses: dict[str, Any] = {
        "200": {
            "description": f"The operation's result. Completion: {op.manifest.get('completion_rule', '')}",
            "headers": {"X-Contract-Hash": _HEADER, "X-Request-Id": _HEADER},
            "content": {"application/json": response_body},
        }
    }
    read_only = ((op.mcp or {}).get("annotations") or {}).get("readOnlyHint") is True
    for status, (name, _) in ERROR_RESPONSES.items():
        if not (read_only and status in _MUTATION_ONLY):
            responses[status] = {"$ref": f"#/components/responses/{name}"}
    auth = op.manifest.get("auth", {})
    return {
        rest["method"].lower(): {
            "operationId": op.name,
            "summary": op.title,
            "description": op.description,
            "x-contract-hash": op.contract_hash,
            "x-capability": auth.get("capability"),
            "x-minimum-role": auth.get("minimum_role"),
            "x-credential-kinds": auth.get("credential_kinds", []),
            "security": [{"bearerAuth": []}],
            "parameters": [
                {"name": "X-Request-Id", "in": "header", "required": False, "schema": {"type": "string"},
                 "description": "Echoed when it is 1-128 characters of [A-Za-z0-9._:-]; generated otherwise."},
                {"name": "X-Contract-Hash", "in": "header", "required": False, "schema": {"type": "string"},
                 "description": "The contract hash the caller was built from; when it is not "
                                f"{op.contract_hash}, the call is refused with 412 before anything is done."},
            ],
            "requestBody": {"required": True, "content": {"application/json": request_body}},
            "responses": responses,
        }
    }


def openapi_document(operations: list[Operation], examples: dict[str, dict[str, Any]]) -> dict[str, Any]:
    rest_ops = [op for op in operations if op.rest]
    schemas: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for op in rest_ops:
        variant = op.rest_variant
        assert variant is not None
        schemas[f"{op.class_prefix}Input"] = variant.input_schema
        schemas[f"{op.class_prefix}Output"] = variant.output_schema
        paths[op.rest["path"]] = _path_item(op, examples.get(op.name, {}))  # type: ignore[index]
    schemas["Error"] = ERROR_SCHEMA
    schemas["FieldError"] = FIELD_ERROR_SCHEMA
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "evidencekit research evidence API",
            "version": "+".join(op.contract_hash.removeprefix("sha256:") for op in rest_ops),
            "description": json_comment(rest_ops),
            "x-contract-hashes": {op.name: op.contract_hash for op in rest_ops},
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": {name: _error_response(text, status) for status, (name, text) in ERROR_RESPONSES.items()},
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
        },
    }
