"""The OpenAPI 3.1 document of the REST surface, built from the contracts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencekit.codegen._config import CodegenConfig, ErrorResponse
from evidencekit.codegen._headers import json_comment
from evidencekit.codegen._lock import compatible_hashes
from evidencekit.codegen._views import success_status
from evidencekit.contracts._loader import Operation
from evidencekit.contracts._query import kind_of
from evidencekit.contracts._schema_walk import DATA, each_subschema

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
        "code": {"type": "string", "description": "Machine code, e.g. validation_failed."},
        "request_id": {"type": "string", "description": "Also sent as X-Request-Id."},
        "fields": {"type": "array", "items": {"$ref": "#/components/schemas/FieldError"}},
        "retry_after_seconds": {"type": "integer", "minimum": 0,
                                "description": "Seconds to wait before trying again (also Retry-After)."},
    },
    "required": ["error", "message", "code", "request_id"],
}

_HEADER = {"schema": {"type": "string"}}
# What only an operation that declares `auth` answers: a public one has no caller to refuse.
_CALLER_ERRORS = frozenset({"401", "403"})


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


def _path_item(op: Operation, examples: dict[str, Any], errors: Mapping[str, ErrorResponse],
               compatible: list[str]) -> dict[str, Any]:
    rest = op.rest or {}
    prefix = op.class_prefix
    request_body: dict[str, Any] = {"schema": {"$ref": f"#/components/schemas/{prefix}Input"}}
    response_body: dict[str, Any] = {"schema": {"$ref": f"#/components/schemas/{prefix}Output"}}
    if "input" in examples:
        request_body["example"] = examples["input"]
        response_body["example"] = examples["output"]
    responses: dict[str, Any] = {
        str(success_status(op)): {
            "description": f"The operation's result. Completion: {op.manifest.get('completion_rule', '')}",
            "headers": {
                "X-Contract-Hash": {"schema": {"type": "string"}, "description": (
                    "The contract this answer is valid under: the caller's own when it sent an earlier, "
                    "compatible hash, else this operation's.")},
                "X-Contract-Newer": {"schema": {"type": "string"}, "description": (
                    "Sent only to a caller of an earlier, compatible contract: the newer contract served here.")},
                "X-Request-Id": _HEADER,
                "X-Note": {"schema": {"type": "string"}, "description": (
                    "Sent once per note the server has on this answer (what it means beyond its JSON, the "
                    "next step): printable ASCII, any other character percent-encoded as UTF-8 (`%` too).")},
            },
            "content": {"application/json": response_body},
        }
    }
    read_only = ((op.mcp or {}).get("annotations") or {}).get("readOnlyHint") is True
    auth = op.manifest.get("auth", {})
    for status, error in errors.items():
        if error.applies_to(op.name, read_only) and (auth or status not in _CALLER_ERRORS):
            responses[status] = {"$ref": f"#/components/responses/{error.name}"}
    return {
        rest["method"].lower(): {
            "operationId": op.name,
            "summary": op.title,
            "description": op.description,
            "x-contract-hash": op.contract_hash,
            "x-capability": auth.get("capability"),
            "x-minimum-role": auth.get("minimum_role"),
            "x-credential-kinds": auth.get("credential_kinds", []),
            "security": [{"bearerAuth": []}] if auth else [],
            "parameters": [
                {"name": "X-Request-Id", "in": "header", "required": False, "schema": {"type": "string"},
                 "description": "Echoed when it is 1-128 characters of [A-Za-z0-9._:-]; generated otherwise."},
                # The hashes served are the valid values. Another contract's hash is refused with the
                # documented 412 before anything is done; a value that is no contract hash at all with 400,
                # which is what OpenAPI tools (Schemathesis's defaults) expect for malformed data: a 412
                # there, or for a value the schema admits, counts against the server.
                {"name": "X-Contract-Hash", "in": "header", "required": False,
                 "schema": {"type": "string", "enum": [op.contract_hash, *compatible]},
                 "description": "The contract hash the caller was built from: this operation's, or an earlier "
                                "compatible one. Another contract's hash (`sha256:` and 16 hex digits) is refused "
                                "with 412 `contract_mismatch` before anything is done; a value that is no "
                                "contract hash with 400 `invalid_contract_hash`."},
                *(query_parameters(op) if rest["method"] == "GET" else []),
            ],
            **({} if rest["method"] == "GET" else
               {"requestBody": {"required": True, "content": {"application/json": request_body}}}),
            "responses": responses,
        }
    }


def query_parameters(op: Operation) -> list[dict[str, Any]]:
    """A GET operation's input as query parameters (contracts._query): each top-level property, its
    schema the input component's own; an object-valued one as JSON text."""
    variant = op.variants[(op.rest or {})["variant"]]
    schema = variant.input_schema
    component = f"#/components/schemas/{op.class_prefix}Input"
    required = set(schema.get("required", []))
    parameters = []
    for name, sub in (schema.get("properties") or {}).items():
        ref = {"$ref": f"{component}/properties/{name.replace('~', '~0').replace('/', '~1')}"}
        parameter: dict[str, Any] = {"name": name, "in": "query", "required": name in required}
        if kind_of(sub, schema) == "json":
            parameter["content"] = {"application/json": {"schema": ref}}
        else:
            parameter.update(schema=ref, style="form", explode=True)
        parameters.append(parameter)
    return parameters


# values, not schemas here (the discriminator is rewritten on its own)
_DATA = DATA | {"x-invalid-default", "discriminator"}


def rehomed(schema: Any, home: str) -> Any:
    """`schema` copied to `home` in the document: its local `$ref`s (`#/$defs/X`, `#`, `#anchor`) point
    there, or they would point at nothing once the schema is a component (anchors become pointers:
    the input and output copies of one schema would otherwise declare each anchor twice)."""
    return _rehome(schema, home, _anchor_pointers(schema, ""))


def _anchor_pointers(node: Any, at: str) -> dict[str, str]:
    """Each plain-name anchor of `node` ($anchor, $dynamicAnchor, draft-07 `$id: "#name"`) -> its JSON pointer."""
    found: dict[str, str] = {}
    if isinstance(node, list):
        for index, item in enumerate(node):
            found.update(_anchor_pointers(item, f"{at}/{index}"))
    elif isinstance(node, dict):
        for key in ("$anchor", "$dynamicAnchor", "$id"):
            name = node.get(key)
            if isinstance(name, str) and (key != "$id" or name.startswith("#")):
                found.setdefault(name.removeprefix("#"), at)
        for key, value in node.items():
            if key not in _DATA:
                found.update(_anchor_pointers(value, f"{at}/{key.replace('~', '~0').replace('/', '~1')}"))
    return found


def _rehome(schema: Any, home: str, anchors: dict[str, str]) -> Any:
    if isinstance(schema, list):
        return [_rehome(item, home, anchors) for item in schema]
    if not isinstance(schema, dict):
        return schema
    moved = each_subschema(schema, lambda value: _rehome(value, home, anchors), _DATA)
    for key in ("$anchor", "$dynamicAnchor"):
        if key in moved:
            moved[f"x-{key[1:]}"] = moved.pop(key)
    if isinstance(moved.get("$id"), str) and moved["$id"].startswith("#"):
        moved["x-id"] = moved.pop("$id")
    ref = schema.get("$ref")
    if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
        moved["$ref"] = home + ref[1:]
    elif isinstance(ref, str) and ref.startswith("#") and ref[1:] in anchors:
        moved["$ref"] = home + anchors[ref[1:]]
    if "discriminator" in schema:
        del moved["discriminator"]
        moved.update(_discriminator(schema["discriminator"], home))
    return moved


def _discriminator(value: Any, home: str) -> dict[str, Any]:
    """OpenAPI reads `discriminator` as its own object (a propertyName, a mapping to refs): rehomed
    when it is one, kept as `x-discriminator` when a schema uses the word otherwise."""
    mapping = value.get("mapping", {}) if isinstance(value, dict) else None
    if (not isinstance(value, dict) or not isinstance(value.get("propertyName"), str) or not isinstance(mapping, dict)
            or not all(isinstance(target, str) for target in mapping.values())):
        return {"x-discriminator": value}
    moved = {name: home + target[1:] if target.startswith("#") else target for name, target in mapping.items()}
    return {"discriminator": {**value, "mapping": moved} if "mapping" in value else dict(value)}


def with_valid_defaults(schema: Any) -> Any:
    """`schema` with each `default` its own subschema refuses kept as `x-invalid-default` instead.

    JSON Schema calls `default` an annotation that need not validate (a published CI schema gives a
    step `default: "shared"` outside its enum); OpenAPI validators check it, and client generators
    would offer it. The contract itself is unchanged: this is the OpenAPI copy."""
    if not isinstance(schema, dict):
        return schema
    from evidencekit.contracts._validation import compile_schema

    contract = compile_schema(schema)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = each_subschema(node, walk, _DATA)
        if "default" in node and not contract.evolve(schema=node).is_valid(node["default"]):
            out["x-invalid-default"] = out.pop("default")
        return out

    return walk(schema)


def openapi_document(operations: list[Operation], examples: dict[str, dict[str, Any]], config: CodegenConfig,
                     compatible: Mapping[str, list[str]] | None = None) -> dict[str, Any]:
    """`compatible`: the lock's earlier hashes per operation (read from the lock when not given)."""
    rest_ops = [op for op in operations if op.rest]
    if compatible is None:
        compatible = compatible_hashes(config.contracts)
    schemas: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for op in rest_ops:
        variant = op.rest_variant
        assert variant is not None
        for name, schema in ((f"{op.class_prefix}Input", variant.input_schema),
                             (f"{op.class_prefix}Output", variant.output_schema)):
            schemas[name] = rehomed(with_valid_defaults(schema), f"#/components/schemas/{name}")
        paths[op.rest["path"]] = _path_item(  # type: ignore[index]
            op, examples.get(op.name, {}), config.errors, compatible.get(op.name, []))
    schemas["Error"] = ERROR_SCHEMA
    schemas["FieldError"] = FIELD_ERROR_SCHEMA
    return {
        "openapi": "3.1.0",
        "info": {
            "title": config.title,
            "version": config.version or "+".join(op.contract_hash.removeprefix("sha256:") for op in rest_ops),
            "description": json_comment(rest_ops),
            "x-contract-hashes": {op.name: op.contract_hash for op in rest_ops},
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": {error.name: _error_response(error.description, status) for status, error in config.errors.items()},
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
        },
    }
