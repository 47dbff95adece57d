"""Stateless `/mcp` requests answered as JSON, without the SDK's per-request session machinery.

In stateless mode the MCP SDK sets up, for every POST, a transport, a server task, memory streams
and a task group, and answers with an event stream: about twenty times the cost of the same
operation over REST. Most requests a stateless client sends are one of four plain requests, and
their answers need none of that: `tools/call` (through the same ToolCaller, and so the same
operation pipeline, as the SDK's handler), `tools/list`, `initialize` and `ping`. Those are
answered here, as the SDK answers them (it runs in JSON mode: _app.py). So is a single-exchange
(2026-07-28) `tools/call` of a listed tool, once the SDK's own ladder of envelope checks passes it
(`_single_exchange_call`; mcp_single_exchange remembers the ladder's verdicts by what they read).

A request without `MCP-Protocol-Version` is taken to be at 2025-03-26, as the spec says and the SDK
does. A `tools/call` at a version whose result shape may differ from the one ToolCaller writes (an
SDK may leave structuredContent out before 2025-06-18) is shaped by the SDK's own per-version sieve,
as the SDK sends it (`_WHOLE_CALL_VERSIONS`).

Everything else goes to the SDK unchanged: notifications and responses (202), batches, anything
that is not one well-formed request of those four methods with params in their plain shape (a
`_meta`, a cursor, a task), any other single-exchange request (and any the ladder refuses), a
protocol version not known (the SDK refuses it), requests whose Accept (no JSON) or Content-Type
the SDK would refuse, and GET and DELETE. tests/server/test_mcp_direct.py sends the
same requests both ways, fixed and generated, and holds the answers equal. A request is read with
the SDK's own parser (pydantic-core), so what it refuses (nesting past its limit) is the SDK's to
answer.

One difference: the SDK's server middleware (its OpenTelemetry spans) does not see the requests
answered here; the access log does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http import CONTENT_TYPE_JSON
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    MCP_PROTOCOL_VERSION_HEADER,
    find_invalid_x_mcp_header,
    validate_mcp_param_headers,
    x_mcp_header_map,
)
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    SERVER_INFO_META_KEY,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
)
from mcp_types import methods as surfaces
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import ValidationError
from pydantic_core import from_json
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime import _mcp_single_exchange as single_exchange
from evidencekit.server.runtime._body_limit import replaying
from evidencekit.server.runtime._json_answer import answer_bytes
from evidencekit.server.runtime._mcp import ToolCaller

log = logging.getLogger("evidencekit.mcp")

# Versions at which a tools/call result goes on the wire as ToolCaller writes it (content,
# structuredContent, isError): those whose result model in the SDK's per-version sieve is the latest
# handshake version's, which leaves it whole. At any other (2025-03-26, say, the version of a request
# without MCP-Protocol-Version, where an SDK may drop structuredContent) the result goes through the
# sieve, as the SDK sends it.
_CALL_RESULT = surfaces.SERVER_RESULTS[("tools/call", LATEST_HANDSHAKE_VERSION)]
_WHOLE_CALL_VERSIONS = frozenset(version for version in HANDSHAKE_PROTOCOL_VERSIONS
                                 if surfaces.SERVER_RESULTS.get(("tools/call", version)) is _CALL_RESULT)
_VERSION_KEY = MCP_PROTOCOL_VERSION_HEADER.encode("ascii")
_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_MODERN_CALL_KEYS = frozenset({"name", "arguments", "_meta"})
_CALL_KEYS = frozenset({"name", "arguments"})
_JSON_HEADERS = [(b"content-type", CONTENT_TYPE_JSON.encode("ascii"))]


class McpDirect:
    """ASGI app in front of the SDK's Streamable HTTP app (`sdk`), given the whole body of a POST
    in one message (BodyLimit reads it)."""

    def __init__(self, sdk: ASGIApp, caller: ToolCaller, server: Server[Any]) -> None:
        self.sdk = sdk
        self.caller = caller
        self.server = server
        self._lists: dict[str, dict[str, Any]] = {}  # tools/list by protocol version, made once each
        self._param_headers: dict[str, tuple[Mapping[str, Any], bool]] = {}  # _has_param_headers
        self._stamp: dict[str, Any] | None = None  # server_info_stamp, copied once: only ever serialized here
        self._ladder = single_exchange.Ladder()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.sdk(scope, receive, send)
            return
        version, accepts_json, json_body = _request_headers(scope)
        message = await receive()
        answered = False
        if accepts_json and json_body and version in MODERN_PROTOCOL_VERSIONS and not message.get("more_body"):
            try:
                answered = await self._single_exchange_call(scope, send, version, message.get("body", b""))
            except Exception:  # past the tool pipeline's own net: the SDK's answer to a handler failure
                log.exception("/mcp %s tools/call failed", version)
                answered = True
                await _send(send, {"jsonrpc": "2.0", "id": None, "error": {"code": INTERNAL_ERROR,
                                                                          "message": "Internal error"}})
        elif accepts_json and json_body and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS):
            request = _plain_request(message.get("body", b"")) if not message.get("more_body") else None
            if request is not None:
                try:
                    answered = await self._answer(scope, send, version or DEFAULT_NEGOTIATED_VERSION, *request)
                except Exception:  # past the tool pipeline's own net (settings or instructions that raise)
                    log.exception("/mcp %s failed", request[1])
                    await _send(send, {"jsonrpc": "2.0", "id": request[0],
                                       "error": {"code": INTERNAL_ERROR, "message": "Internal error"}})
                    return
        if not answered:
            await self.sdk(scope, replaying(message, receive), send)

    async def _answer(self, scope: Scope, send: Send, version: str, request_id: str | int, method: str,
                      params: dict[str, Any] | None) -> bool:
        """Answer the request and say True, or say False to leave it to the SDK."""
        result: Any
        if method == "tools/call":
            if params is None or not params.keys() <= _CALL_KEYS:
                return False
            name, arguments = params.get("name"), params.get("arguments")
            if type(name) is not str or not (arguments is None or type(arguments) is dict):
                return False
            try:
                result = await self.caller.result(name, arguments, scope)
            except MCPError as error:
                await _send(send, {"jsonrpc": "2.0", "id": request_id, "error": error.error.model_dump(
                    by_alias=True, mode="json", exclude_none=True)})
                return True
            if version not in _WHOLE_CALL_VERSIONS:  # an older result shape: the SDK's sieve shapes it
                result = surfaces.serialize_server_result("tools/call", version, result)
        elif params:  # ping, tools/list and initialize with more than their plain params: the SDK's
            if method != "initialize":
                return False
            result = self._initialized(version, params)
            if result is None:
                return False
        elif method == "tools/list":
            result = self._tools(version)
        elif method == "ping":
            result = {}
        else:
            return False
        await _send(send, {"jsonrpc": "2.0", "id": request_id, "result": result})
        return True

    async def _single_exchange_call(self, scope: Scope, send: Send, version: str, body: bytes) -> bool:
        """A 2026-07-28 `tools/call` of a tool this server lists, its envelope checked by the SDK's
        own ladder (mcp_single_exchange.Ladder: the checks its single-exchange entry runs), answered
        as that entry answers it; False for anything else (other methods, a refusal, a tool not
        listed, a body only the SDK's reading takes)."""
        try:
            message = single_exchange.decoded(body)
        except (ValueError, RecursionError):
            return False
        if type(message) is not dict or message.get("method") != "tools/call" or \
                not single_exchange.plain_envelope(message):
            return False
        params = message["params"]
        if not params.keys() <= _MODERN_CALL_KEYS:
            return False
        name, arguments = params.get("name"), params.get("arguments")
        if type(name) is not str or not (arguments is None or type(arguments) is dict):
            return False
        schema = self.caller.input_schema(name)
        if schema is None or self.server.cache_hints.get("tools/call") is not None:
            return False  # an unknown or hidden tool, a cache hint to add: the SDK's to answer
        protocol_version = self._ladder.protocol_version(message, scope["headers"])
        if protocol_version is None:
            return False
        if self._has_param_headers(name, schema) and \
                validate_mcp_param_headers(schema, arguments or {}, Headers(scope=scope)) is not None:
            return False
        result = await self.caller.result(name, arguments, scope)
        # as the SDK dumps the CallToolResult its handler gets back, then shapes it for the version
        shaped = single_exchange.complete(protocol_version, result)
        meta = shaped.get("_meta")
        if meta is None or (isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None):
            if self._stamp is None:  # the SDK deep-copies it on every read, for callers that change it
                self._stamp = self.server.server_info_stamp
            shaped["_meta"] = {**(meta or {}), SERVER_INFO_META_KEY: self._stamp}
        await _send(send, {"jsonrpc": "2.0", "id": message["id"], "result": shaped})
        return True

    def _has_param_headers(self, name: str, schema: Mapping[str, Any]) -> bool:
        """Whether `schema` asks for Mcp-Param headers the SDK checks (remembered per tool, for the
        schema it was worked out from). When it asks for none, validate_mcp_param_headers has nothing
        to compare, whatever the arguments and headers, and answers None: its only refusals are
        inside its walk of the schema's annotated properties (x_mcp_header_map), and a schema
        find_invalid_x_mcp_header refuses is not checked at all."""
        known = self._param_headers.get(name)
        if known is None or known[0] is not schema:
            asks = find_invalid_x_mcp_header(schema) is None and bool(x_mcp_header_map(schema))
            known = self._param_headers[name] = (schema, asks)
        return known[1]

    def _tools(self, version: str) -> dict[str, Any]:
        """tools/list's result at `version`, as the SDK shapes it, made once per version."""
        listed = self._lists.get(version)
        if listed is None:
            dumped = {"tools": [tool.model_dump(by_alias=True, mode="json", exclude_none=True)
                                for tool in self.caller.tools()]}
            listed = self._lists[version] = surfaces.serialize_server_result("tools/list", version, dumped)
        return listed

    def _initialized(self, version: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """initialize's result as the SDK's stateless connection answers it (the requested protocol
        version when it is one of the handshake's, else the latest), or None for params it refuses."""
        try:
            surfaces.validate_client_request("initialize", version, params)
            requested = InitializeRequestParams.model_validate(params, by_name=False).protocol_version
        except (ValidationError, KeyError, ValueError):
            return None
        options = self.server.create_initialization_options()
        result = InitializeResult(
            protocol_version=requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION,
            capabilities=options.capabilities,
            server_info=Implementation(name=options.server_name, title=options.title,
                                       description=options.description, version=options.server_version,
                                       website_url=options.website_url, icons=options.icons),
            instructions=options.instructions)
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return surfaces.serialize_server_result("initialize", version, dumped)


def _request_headers(scope: Scope) -> tuple[str | None, bool, bool]:
    """(MCP-Protocol-Version, whether Accept takes JSON, whether the Content-Type is JSON), the
    first of each name, read as the SDK's transport reads them in JSON mode."""
    version = accept = content_type = None
    for name, value in scope["headers"]:
        if name == _VERSION_KEY and version is None:
            version = value.decode("latin-1")
        elif name == b"accept" and accept is None:
            accept = value.decode("latin-1")
        elif name == b"content-type" and content_type is None:
            content_type = value.decode("latin-1")
    types = {part.strip().split(";")[0].strip().lower() for part in (accept or "").split(",")}
    accepts_json = bool(types & {"*/*", CONTENT_TYPE_JSON, "application/*"})
    json_body = CONTENT_TYPE_JSON in (part.strip() for part in (content_type or "").split(";")[0].split(","))
    return version, accepts_json, json_body


def _plain_request(body: bytes) -> tuple[str | int, str, dict[str, Any] | None] | None:
    """(id, method, params) of a single JSON-RPC request with nothing else in its envelope; None
    for anything else (a notification, a batch, text that is not JSON), which the SDK answers.
    Read by the SDK's own parser (pydantic-core), which refuses what it refuses (nesting past its
    limit, say)."""
    try:
        message = from_json(body, cache_strings=False)
    except ValueError:
        return None
    if type(message) is not dict or not message.keys() <= _ENVELOPE_KEYS or message.get("jsonrpc") != "2.0":
        return None
    request_id, method, params = message.get("id"), message.get("method"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int) or not isinstance(method, str):
        return None
    if "params" in message and not isinstance(params, dict):
        return None
    return request_id, method, params


async def _send(send: Send, answer: dict[str, Any]) -> None:
    body = answer_bytes(answer)
    await send({"type": "http.response.start", "status": 200,
                "headers": [*_JSON_HEADERS, (b"content-length", str(len(body)).encode("ascii"))]})
    await send({"type": "http.response.body", "body": body})
