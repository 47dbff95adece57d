"""The SDK's checks of a single-exchange (2026-07-28) `tools/call`, remembered by what they read.

The SDK answers such a call after a ladder of checks: the JSON-RPC envelope (`JSONRPCRequest`),
no routing header sent twice, the `params._meta` envelope against the routing headers
(`classify_inbound_request`), and the params against the version's request model
(`validate_client_request`). Under load the ladder cost a call more than the tool itself. Its
verdict reads only the tool's name, whether `arguments` is absent, null or an object (not what it
holds), the `_meta` object, and the routing headers as sent (their names and values, duplicates
included): `Ladder` runs it once for each such key and remembers the verdict. The request id and
the argument values are not read (an exact `jsonrpc: "2.0"`, an id that is a string or a 64-bit
integer and no other envelope member are required first: `JSONRPCRequest` takes every such
envelope). tests/server/test_mcp_single_exchange.py holds the remembered verdicts to the ladder's
on generated requests, and tests/server/test_mcp_direct.py the answers to the SDK's.

`complete` shapes ToolCaller's result as `serialize_server_result` does at the versions it was
checked for, without a model round trip; anything else goes through the SDK's function.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp_types import JSONRPCRequest
from mcp_types import methods as surfaces
from pydantic import ValidationError
from pydantic_core import from_json
from starlette.datastructures import Headers

ENVELOPE_KEYS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_ROUTING: Final = frozenset(name.encode("ascii") for name in
                            (MCP_PROTOCOL_VERSION_HEADER, MCP_METHOD_HEADER, MCP_NAME_HEADER))
_ABSENT: Final = object()
_ID_RANGE: Final = range(-(2**63), 2**63)
# What one key may hold of `_meta`, and how many keys are kept: a client sends one envelope over and
# over; a caller that varies it only costs itself the ladder
MEMO_META_BYTES: Final = 4096
MEMO_KEYS: Final = 1024
# Versions at which `complete` was checked against serialize_server_result (the test holds it)
SHAPED_VERSIONS: Final = frozenset({"2026-07-28"})
_TEXT_ITEM_KEYS: Final = frozenset({"type", "text"})
_RESULT_KEYS: Final = frozenset({"content", "structuredContent", "isError"})


def decoded(body: bytes) -> Any:
    """The body as the SDK's `json.loads(body)` reads it, read by pydantic-core (a third of the
    time); ValueError where either refuses it. pydantic-core refuses more (NaN and the infinities
    as words, lone surrogates, UTF-16 and UTF-32, a byte-order mark, nesting past ~200 levels): the
    caller leaves those to the SDK. tests/server/test_mcp_single_exchange.py holds the two readings
    equal where both read."""
    return from_json(body, allow_inf_nan=False, cache_strings=False)


def plain_envelope(message: Mapping[str, Any]) -> bool:
    """Whether `JSONRPCRequest` takes this envelope whatever its params hold: the four members
    only, jsonrpc exactly "2.0", an id that is a string or a 64-bit integer, params an object."""
    request_id = message.get("id")
    return (message.keys() == ENVELOPE_KEYS and message["jsonrpc"] == "2.0" and type(message["jsonrpc"]) is str
            and (type(request_id) is str or (type(request_id) is int and request_id in _ID_RANGE))
            and type(message["method"]) is str and type(message["params"]) is dict)


class Ladder:
    """The SDK's ladder for single-exchange `tools/call` requests, its verdicts remembered by key."""

    def __init__(self) -> None:
        self._verdicts: dict[tuple[Any, ...], str | None] = {}

    def protocol_version(self, message: dict[str, Any], raw_headers: Sequence[tuple[bytes, bytes]]) -> str | None:
        """The protocol version the ladder passes `message` (a `tools/call` with a plain envelope and
        a string name) at, or None where any rung refuses it."""
        key = _key(message["params"], raw_headers)
        if key is None:
            return _verdict(message, raw_headers)
        try:
            return self._verdicts[key]
        except KeyError:
            pass
        verdict = _verdict(message, raw_headers)
        if len(self._verdicts) >= MEMO_KEYS:
            self._verdicts.clear()
        self._verdicts[key] = verdict
        return verdict


def _key(params: Mapping[str, Any], raw_headers: Sequence[tuple[bytes, bytes]]) -> tuple[Any, ...] | None:
    """Everything the ladder reads of a request, or None when `_meta` cannot be written exactly or
    is too large to keep, or a header name is not lowercase (every name is read then). orjson
    writes two JSON values the same only when they are the same value of the same types: it refuses
    integers past 64 bits and lone surrogates, and the one value it writes as another, a float read
    as infinity (1e400), is looked for wherever it wrote a null."""
    meta = params.get("_meta", _ABSENT)
    if meta is _ABSENT:
        written = None
    else:
        try:
            written = orjson.dumps(meta)
        except TypeError:
            return None
        if len(written) > MEMO_META_BYTES or (b"null" in written and _not_finite(meta)):
            return None
    shape = type(params.get("arguments", _ABSENT))  # absent (the marker's type), null, an object, ...
    routing = []
    for name, value in raw_headers:
        lowered = name.lower()
        if lowered != name:
            return None  # a name ASGI servers lowercase: the ladder reads every name then (and fails)
        if lowered in _ROUTING:
            routing.append((name, value))
    return (params["name"], shape, written, tuple(routing))


def _not_finite(value: Any) -> bool:
    """Whether a float past the largest (1e400 reads as infinity) is in `value`: orjson writes it
    as null."""
    if type(value) is float:
        return not math.isfinite(value)
    if type(value) is dict:
        return any(_not_finite(item) for item in value.values())
    if type(value) is list:
        return any(_not_finite(item) for item in value)
    return False


def _verdict(message: dict[str, Any], raw_headers: Sequence[tuple[bytes, bytes]]) -> str | None:
    """The ladder itself, its rungs in the SDK's order (its single-exchange entry)."""
    try:
        JSONRPCRequest.model_validate(message)
    except ValidationError:
        return None
    headers = Headers(raw=list(raw_headers))
    if find_duplicated_routing_header(headers.items()) is not None:
        return None
    verdict = classify_inbound_request(message, headers=dict(headers))
    if isinstance(verdict, InboundLadderRejection):
        return None
    try:
        surfaces.validate_client_request("tools/call", verdict.protocol_version, message["params"])
    except (ValidationError, KeyError, ValueError):
        return None
    return verdict.protocol_version


def complete(version: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """ToolCaller's result (content of text items, structuredContent or not, isError) as the SDK
    dumps a complete CallToolResult for `version` (`serialize_server_result`), in its member order;
    any other result, or version, through that function."""
    content = result.get("content")
    structured = result.get("structuredContent", _ABSENT)
    if version in SHAPED_VERSIONS and type(content) is list and type(result.get("isError")) is bool and \
            (structured is _ABSENT or type(structured) is dict) and result.keys() <= _RESULT_KEYS:
        items = []
        for item in content:
            if type(item) is not dict or item.keys() != _TEXT_ITEM_KEYS or item["type"] != "text" or \
                    type(item["text"]) is not str:
                break
            items.append({"text": item["text"], "type": "text"})
        else:
            shaped = {"content": items, "isError": result["isError"], "resultType": "complete"}
            if structured is not _ABSENT:
                shaped["structuredContent"] = structured
            return shaped
    return surfaces.serialize_server_result("tools/call", version, {**result, "resultType": "complete"})
