"""mcp_single_exchange against the SDK functions it stands in for: its reading of a body is
json.loads' where it takes one, a remembered ladder verdict is the verdict the ladder gives the
request in hand, and a shaped result is serialize_server_result's, member order included."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_types import JSONRPCRequest
from mcp_types import methods as surfaces
from pydantic import ValidationError

from evidencekit.server.runtime import _mcp_single_exchange as single_exchange

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10)


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same JSON types all the way down (1 is not 1.0, True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# Texts near JSON: written by json.dumps in several encodings and spacings, then perhaps cut or
# spliced with bytes a body may carry (escapes of lone surrogates, NaN, a byte-order mark, NUL,
# invalid UTF-8, a repeated key)
_SPLICES = [b"NaN", b"-Infinity", b'"\\ud800"', b"\xef\xbb\xbf", b"\x00", b"\xff", b'"a":1,"a":2,', b"1e400",
            b"\x01", b" ", b",", b"}", b"{", b"-0", b"-0.0", b"1E2",
            b"0.1e-1", b"123456789012345678901234567890", b"9" * 4300, b"9" * 4301, b"1.00000000000000011102230246251565404236316680908203125", b'"\\u00e9"', "é".encode(), "é".encode("utf-16-le")]


@st.composite
def near_json(draw: st.DrawFn) -> bytes:
    value = draw(st.dictionaries(st.text(max_size=4), _JSON, max_size=4) | _JSON)
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), indent=draw(st.none() | st.just(1)))
    body = text.encode(draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-32-le"])))
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.integers(0, len(body)))
        cut = draw(st.integers(0, 2))
        body = body[:where] + draw(st.sampled_from(_SPLICES)) + body[where + cut:]
    return body


@settings(max_examples=3000, deadline=None, database=None)
@given(body=near_json())
def test_a_body_is_read_as_json_loads_reads_it(body: bytes) -> None:
    try:
        mine = single_exchange.decoded(body)
    except (ValueError, RecursionError):
        return  # left to the SDK, which reads it its own way
    assert same(mine, json.loads(body))


@settings(max_examples=300, deadline=None, database=None)
@given(value=st.dictionaries(st.text(max_size=4), _JSON, max_size=4), ascii_only=st.booleans())
def test_a_utf8_body_without_nan_is_read_here(value: dict[str, Any], ascii_only: bool) -> None:
    """What clients send (UTF-8 JSON) takes the remembered way, not the SDK's."""
    body = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    if not ascii_only and any(0xD800 <= ord(c) <= 0xDFFF for c in json.dumps(value, ensure_ascii=False)):
        return  # a lone surrogate is not UTF-8
    assert same(single_exchange.decoded(body), value)


ENVELOPE: dict[str, Any] = {VERSION_KEY: MODERN, CAPABILITIES_KEY: {}}
# Small pools, so that requests share some of what the ladder reads and differ in the rest
_METAS = st.sampled_from([
    ENVELOPE, {**ENVELOPE, INFO_KEY: {"name": "t", "version": "1"}}, {**ENVELOPE, INFO_KEY: {"name": 5}},
    {**ENVELOPE, "progressToken": 1}, {**ENVELOPE, "progressToken": 1.5}, {**ENVELOPE, "progressToken": None},
    {**ENVELOPE, "progressToken": math.inf}, {**ENVELOPE, "progressToken": [None]}, {**ENVELOPE, "x": [-math.inf]},
    {**ENVELOPE, VERSION_KEY: "2025-06-18"}, {**ENVELOPE, VERSION_KEY: 7}, {**ENVELOPE, CAPABILITIES_KEY: []},
    {**ENVELOPE, CAPABILITIES_KEY: {"sampling": {}}}, {**ENVELOPE, CAPABILITIES_KEY: {"sampling": 1}},
    {VERSION_KEY: MODERN}, {}, [], None, "x",
])
_NAMES = st.sampled_from(["get_book", "search_books", "", "=?base64?Z2V0X2Jvb2s=?="])
_ARGUMENTS: st.SearchStrategy[Any] = st.sampled_from(["absent", None, {}, {"id": 1}, {"query": "x", "limit": 5}, [], "x", 3])
_HEADER_VALUES = st.sampled_from(["2026-07-28", "2025-06-18", "tools/call", "tools/list", "get_book",
                                  "search_books", "", "=?base64?Z2V0X2Jvb2s=?="])
# lowercase, as ASGI servers give them, and now and then not (the SDK's reading fails on those)
_HEADER_NAMES = st.sampled_from([b"mcp-protocol-version", b"mcp-method", b"mcp-name", b"accept", b"mcp-name",
                                 b"MCP-Name", b"X-Trace"])


@st.composite
def calls(draw: st.DrawFn) -> tuple[dict[str, Any], list[tuple[bytes, bytes]]]:
    """A tools/call with a plain envelope and a string name, and its raw headers: mostly what the
    SDK's Client sends, changed in a few places."""
    name = draw(_NAMES)
    params: dict[str, Any] = {"name": name}
    arguments = draw(_ARGUMENTS)
    if arguments != "absent":
        params["arguments"] = arguments
    if draw(st.integers(0, 5)):
        params["_meta"] = json.loads(json.dumps(draw(_METAS)))
    headers = [(b"content-type", b"application/json"), (b"mcp-protocol-version", MODERN.encode()),
               (b"mcp-method", b"tools/call"), (b"mcp-name", name.encode())]
    for _ in range(draw(st.integers(0, 2))):
        change = draw(st.sampled_from(["drop", "set", "add"]))
        if change == "drop" and headers:
            del headers[draw(st.integers(0, len(headers) - 1))]
        elif change == "set" and headers:
            where = draw(st.integers(0, len(headers) - 1))
            headers[where] = (headers[where][0], draw(_HEADER_VALUES).encode())
        else:
            headers.insert(draw(st.integers(0, len(headers))), (draw(_HEADER_NAMES), draw(_HEADER_VALUES).encode()))
    request_id = draw(st.integers(-(2**63), 2**63 - 1) | st.text(max_size=4))
    if draw(st.booleans()):  # ASGI lets a server give each pair as any two-item sequence
        headers = [list(pair) for pair in headers]  # type: ignore[misc]
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}, headers


_REMEMBERING = single_exchange.Ladder()  # shared by every example: verdicts outlive the request that made them


@settings(max_examples=2000, deadline=None, database=None)
@given(call=calls())
def test_a_remembered_verdict_is_the_ladders_verdict_for_the_request_in_hand(
        call: tuple[dict[str, Any], list[tuple[bytes, bytes]]]) -> None:
    message, headers = call
    assert single_exchange.plain_envelope(message)
    fresh = _outcome(single_exchange._verdict, message, headers)
    assert _outcome(_REMEMBERING.protocol_version, message, headers) == fresh
    assert _outcome(_REMEMBERING.protocol_version, message, headers) == fresh  # now from memory


def _outcome(ladder: Any, message: dict[str, Any], headers: Any) -> tuple[str, Any]:
    try:
        return "verdict", ladder(message, headers)
    except KeyError as error:  # Starlette's Headers cannot read a name that is not lowercase
        return "refused", str(error)


def test_the_plain_call_passes_and_its_verdict_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK Client's call passes the ladder; another call that differs only in its id and
    argument values does not run the ladder again."""
    runs: list[Any] = []
    ladder_itself = single_exchange._verdict

    def counted(message: dict[str, Any], headers: Any) -> str | None:
        runs.append(message["id"])
        return ladder_itself(message, headers)

    monkeypatch.setattr(single_exchange, "_verdict", counted)
    ladder = single_exchange.Ladder()
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": "get_book", "arguments": {"id": "x"}, "_meta": ENVELOPE}}
    headers = [(b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"tools/call"), (b"mcp-name", b"get_book")]
    assert ladder.protocol_version(message, headers) == MODERN
    again = {**message, "id": "other", "params": {**message["params"], "arguments": {"id": "y", "z": [1]}}}
    assert ladder.protocol_version(again, headers) == MODERN
    assert runs == [1]
    assert ladder.protocol_version(message, [*headers, (b"mcp-name", b"get_book")]) is None  # sent twice
    assert ladder.protocol_version(message, headers[:2]) is None  # no Mcp-Name
    assert runs == [1, 1, 1]


def test_memory_is_bounded() -> None:
    ladder = single_exchange.Ladder()
    headers = [(b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"tools/call"), (b"mcp-name", b"t")]
    for number in range(single_exchange.MEMO_KEYS + 10):
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "t", "_meta": {**ENVELOPE, "progressToken": number}}}
        assert ladder.protocol_version(message, headers) == MODERN
    assert len(ladder._verdicts) <= single_exchange.MEMO_KEYS
    large = {**ENVELOPE, "x": "a" * single_exchange.MEMO_META_BYTES}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": large}}
    before = dict(ladder._verdicts)
    assert ladder.protocol_version(message, headers) == MODERN and ladder._verdicts == before  # not kept


@settings(max_examples=500, deadline=None, database=None)
@given(request_id=st.integers(-(2**63), 2**63 - 1) | st.text(max_size=4) | _JSON, method=st.text(max_size=12) | _JSON,
       params=st.dictionaries(st.text(max_size=5), _JSON, max_size=3) | _JSON, extra=st.booleans())
def test_a_plain_envelope_is_one_jsonrpcrequest_takes(request_id: Any, method: Any, params: Any, extra: bool) -> None:
    envelope = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    if extra:
        envelope["extra"] = 1
    if single_exchange.plain_envelope(envelope):
        JSONRPCRequest.model_validate(envelope)
    else:  # only what the four checks name is left out
        assert extra or type(request_id) not in (int, str) or type(method) is not str or type(params) is not dict \
            or (type(request_id) is int and not -(2**63) <= request_id < 2**63)


_TEXT_ITEMS = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)})
_ODD_ITEMS = _TEXT_ITEMS | st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5),
                                                  "annotations": st.just({"priority": 0.5})}) \
    | st.fixed_dictionaries({"type": st.just("image"), "data": st.just("AA=="), "mimeType": st.just("image/png")}) \
    | st.fixed_dictionaries({"type": st.sampled_from(["image", "audio"]), "text": st.text(max_size=3)})


@st.composite
def results(draw: st.DrawFn) -> dict[str, Any]:
    """ToolCaller's results (text content, structuredContent or not, isError), and now and then
    one of another shape (another content type, annotations, structuredContent null)."""
    odd = draw(st.integers(0, 4)) == 0
    result: dict[str, Any] = {"content": draw(st.lists(_ODD_ITEMS if odd else _TEXT_ITEMS, max_size=3)),
                              "isError": draw(st.booleans())}
    if draw(st.booleans()):
        result["structuredContent"] = draw(st.dictionaries(st.text(max_size=5), _JSON, max_size=4)
                                           | (st.none() if odd else st.nothing()))
    return result


@settings(max_examples=500, deadline=None, database=None)
@given(result=results())
def test_a_result_is_shaped_as_the_sdk_shapes_it(result: dict[str, Any]) -> None:
    for version in single_exchange.SHAPED_VERSIONS:
        try:
            sdk = surfaces.serialize_server_result("tools/call", version, {**result, "resultType": "complete"})
        except ValidationError:
            with pytest.raises(ValidationError):
                single_exchange.complete(version, result)
            continue
        assert same(single_exchange.complete(version, result), sdk)
