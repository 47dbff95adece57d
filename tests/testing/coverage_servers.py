"""A server another team might write for one published contract (`place_order`, JSON Schema
2020-12, a closed object two levels down reached through a $ref), over REST and MCP Streamable
HTTP (the SDK's low-level server, the contract's schemas listed as they are), that validates its
input against the contract with one constraint left out: the bugs the gate's coverage phase must
find with few examples."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
from mcp import types
from mcp.server.lowlevel import Server
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from evidencekit.codegen._cli import main as codegen

TOOL = "place_order"
PATH = "/orders"
INPUT: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["item", "colour"],
    "properties": {
        "item": {"type": "string", "minLength": 1, "maxLength": 12},
        "colour": {"type": "string", "enum": ["red", "green", "blue"]},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 100},
        "ref": {"type": "string", "format": "uuid"},
        "due": {"type": "string", "format": "date-time"},
        "box": {"type": "object", "additionalProperties": False,
                "properties": {"size": {"$ref": "#/$defs/size"}, "gift": {"type": "boolean"}}},
    },
    "$defs": {"size": {"type": "object", "additionalProperties": False, "required": ["width"],
                       "properties": {"width": {"type": "integer", "minimum": 1, "maximum": 50}}}},
}
OUTPUT: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": ["accepted"],
                          "properties": {"accepted": {"type": "boolean"}}}


def lax(constraint: str) -> dict[str, Any]:
    """The input schema with one constraint left out: `enum` ($.colour), `maxLength` ($.item), or
    `closed` (additionalProperties false of $.box.size); or made tighter than the contract:
    `tight` ($.box.size.width at most 49, the contract 50)."""
    schema = copy.deepcopy(INPUT)
    if constraint == "enum":
        del schema["properties"]["colour"]["enum"]
    elif constraint == "maxLength":
        del schema["properties"]["item"]["maxLength"]
    elif constraint == "tight":
        schema["$defs"]["size"]["properties"]["width"]["maximum"] = 49
    else:
        del schema["$defs"]["size"]["additionalProperties"]
    return schema


def planted_app(constraint: str | None, *, formats: bool = True, speaks_toolkit: str | None = None,
                refuse: Callable[[Any], str | None] | None = None) -> Starlette:
    """REST `POST /orders` and MCP at `/mcp`, validating against lax(constraint) (None: the
    contract itself); a refusal is a 422 over REST, an isError result over MCP. `formats=False`:
    validated as `Draft202012Validator(schema)` is by default, formats as annotations.
    `speaks_toolkit`: the contract hash its REST answers carry (X-Contract-Hash), its refusals
    the toolkit's 400 naming `fields`. `refuse`: a business refusal (REST 422, naming no field) of
    the inputs it returns a message for."""
    checker = jsonschema.FormatChecker() if formats else None
    validator = jsonschema.Draft202012Validator(lax(constraint) if constraint else INPUT, format_checker=checker)
    headers = {"X-Contract-Hash": speaks_toolkit} if speaks_toolkit else None

    def problems(payload: Any) -> list[str]:
        return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(payload)]

    async def rest(request: Request) -> JSONResponse:
        if request.method == "GET":
            return JSONResponse({"detail": "use POST"}, status_code=405, headers=headers)
        try:
            payload = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"detail": ["not JSON"]}, status_code=422, headers=headers)
        found = problems(payload)
        if found and speaks_toolkit:
            body = {"error": "bad_request", "message": "the input does not match", "code": "validation_failed",
                    "request_id": "r1", "fields": [{"path": text.split(":")[0], "message": text} for text in found]}
            return JSONResponse(body, status_code=400, headers=headers)
        if found:
            return JSONResponse({"detail": found}, status_code=422, headers=headers)
        said = refuse(payload) if refuse else None
        if said:
            return JSONResponse({"detail": said}, status_code=422, headers=headers)
        return JSONResponse({"accepted": True}, headers=headers)

    async def list_tools(context: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=TOOL, input_schema=INPUT, output_schema=OUTPUT)])

    async def call_tool(context: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        found = problems(params.arguments or {})
        if found:
            return types.CallToolResult(content=[types.TextContent(type="text", text="; ".join(found))],
                                        is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text='{"accepted": true}')],
                                    structured_content={"accepted": True})

    server = Server("orders", on_list_tools=list_tools, on_call_tool=call_tool)
    return server.streamable_http_app(custom_starlette_routes=[Route(PATH, rest, methods=["POST", "GET"])])


def publish(root: Path) -> Path:
    """The contract as a locked contracts folder under `root`."""
    folder = root / "contracts" / TOOL
    folder.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "orders"\n[tool.evidencekit.codegen]\n'
                                         'contracts = "contracts"\npackage = "orders.generated"\n')
    (folder / "mcp.input.schema.json").write_text(json.dumps(INPUT))
    (folder / "mcp.output.schema.json").write_text(json.dumps(OUTPUT))
    manifest = {"operation": TOOL, "python_name": TOOL, "title": {"en": "Place an order"},
                "description": {"en": "An order of one item in one colour."},
                "variants": {"mcp": {"input": "mcp.input.schema.json", "output": "mcp.output.schema.json"}},
                "model_variant": "mcp", "rest": {"path": PATH, "method": "POST", "variant": "mcp"},
                "mcp": {"tool_name": TOOL, "variant": "mcp", "annotations": {}}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert codegen(["lock", "--project", str(root)]) == 0
    return root / "contracts"
