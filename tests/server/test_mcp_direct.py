"""The direct path of `/mcp` (mcp_direct) against the SDK it stands in for: the same requests sent
both ways get the same JSON-RPC answers, at every protocol version of the handshake era; what the
direct path does not take (notifications, batches, other methods and shapes, the single-exchange
era) is answered by the SDK as before (in JSON mode: app.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.inbound import validate_mcp_param_headers
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from evidencekit.server.generated.app import create_app
from evidencekit.server.runtime import _mcp_direct as mcp_direct
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._mcp import McpSettings
from tests.support import CONTRACTS_DIR, AllowAll, ExampleHandlers, live_server

ACCEPT_BOTH = "application/json, text/event-stream"
VERSIONS = [None, *HANDSHAKE_PROTOCOL_VERSIONS]  # None: no MCP-Protocol-Version header


def initialize(version: str) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def status_arguments() -> dict[str, Any]:
    path = CONTRACTS_DIR / "sosoapi_research_evidence_status" / "examples" / "mcp.input.json"
    return json.loads(path.read_text())["arguments"]  # type: ignore[no-any-return]


# (method, params) of the requests compared: every kind the direct path answers, with the answers
# that are errors (a bad argument, an unknown tool, a protected tool without a caller) among them
REQUESTS: list[tuple[str, Any]] = [
    ("ping", None),
    ("ping", {}),
    ("tools/list", None),
    ("tools/list", {}),
    ("initialize", initialize("2025-06-18")),
    ("initialize", initialize("2025-11-25")),
    ("initialize", initialize("1999-01-01")),  # unknown: the server answers its latest
    ("initialize", {"protocolVersion": "2025-06-18"}),  # params the SDK refuses
    ("tools/call", {"name": "sosoapi_research_evidence_status", "arguments": status_arguments()}),
    ("tools/call", {"name": "search_documents", "arguments": {"query": "ünïcode — text"}}),
    ("tools/call", {"name": "get_documents", "arguments": {"names": ["documents/x"]}}),
    ("tools/call", {"name": "search_documents", "arguments": {"query": 5}}),
    ("tools/call", {"name": "search_documents"}),
    ("tools/call", {"name": "no_such_tool", "arguments": {}}),
    ("tools/call", {"name": 5, "arguments": {}}),
    ("tools/call", {"name": "search_documents", "arguments": {"query": "x"}, "_meta": {"progressToken": 1}}),
    ("resources/list", None),
    ("no/such/method", {}),
]


class CountingAuth(AllowAll):
    """Any credential is a caller but "wrong"."""

    async def authenticate(self, credential: str) -> AllowAll.Caller | None:
        return None if credential == "wrong" else await super().authenticate(credential)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    app = create_app(ExampleHandlers(), ServiceHooks(auth=CountingAuth()), mcp=McpSettings(name="t", version="9"))
    with live_server(app, lifespan="on") as url:
        yield url


def post(base: str, body: Any, version: str | None, accept: str = ACCEPT_BOTH,
         token: str | None = "ada") -> httpx.Response:
    headers = {"Content-Type": "application/json", "Accept": accept}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(base + "/mcp", content=content, headers=headers, timeout=30)


def message_of(answer: httpx.Response) -> Any:
    """The JSON-RPC message an answer carries: its JSON body, or its event stream's message; an
    error result's request_id (new for every call) left out."""
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in answer.text.splitlines() if line.startswith("data:")]
        message = json.loads(next(item for item in data if item))
    else:
        message = answer.json() if answer.content else None
    result = message.get("result") if isinstance(message, dict) else None
    if isinstance(result, dict) and result.get("isError"):
        for item in result["content"]:
            error = json.loads(item["text"])
            assert error.pop("request_id")
            item["text"] = json.dumps(error)
    return message


def both_ways(base: str, body: Any, version: str | None, monkeypatch: pytest.MonkeyPatch,
              **options: Any) -> tuple[httpx.Response, httpx.Response]:
    """(direct, SDK): the answer as served, and as the SDK alone answers it."""
    direct = post(base, body, version, **options)
    with monkeypatch.context() as patched:
        async def to_the_sdk(*_: Any) -> bool:
            return False

        patched.setattr(mcp_direct.McpDirect, "_answer", to_the_sdk)
        sdk = post(base, body, version, **options)
    return direct, sdk


def watch_direct(monkeypatch: pytest.MonkeyPatch, method: str) -> list[bool]:
    """Whether each request reached through `McpDirect.<method>` was answered there (True) or left to
    the SDK (False), in order."""
    taken: list[bool] = []
    answer_directly = getattr(mcp_direct.McpDirect, method)

    async def watched(self: Any, *args: Any) -> bool:
        taken.append(await answer_directly(self, *args))
        return taken[-1]

    monkeypatch.setattr(mcp_direct.McpDirect, method, watched)
    return taken


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v or "no-header")
@pytest.mark.parametrize(("method", "params"), REQUESTS, ids=lambda v: json.dumps(v)[:40])
def test_the_direct_answer_is_the_sdks(base: str, version: str | None, method: str, params: Any,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        request["params"] = params
    direct, sdk = both_ways(base, request, version, monkeypatch)
    assert direct.status_code == sdk.status_code == 200
    assert message_of(direct) == message_of(sdk)


@pytest.mark.parametrize("request_id", ["abc", 0, -3, 2**53])
def test_ids_come_back_as_sent(base: str, request_id: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    request = {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
    direct, sdk = both_ways(base, request, "2025-06-18", monkeypatch)
    assert message_of(direct) == message_of(sdk) == {"jsonrpc": "2.0", "id": request_id, "result": {}}


def test_plain_requests_are_answered_directly_the_rest_by_the_sdk(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = watch_direct(monkeypatch, "_answer")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search_documents", "arguments": {"query": "x"}}}
    answer = post(base, call, "2025-06-18")
    assert answer.headers["content-type"] == "application/json" and taken == [True]
    assert int(answer.headers["content-length"]) == len(answer.content)
    assert post(base, call, "2025-06-18", accept="application/json").status_code == 200 and taken[-1] is True
    # what it leaves goes to the SDK (JSON too: it runs in JSON mode), or gets the SDK's refusals
    taken.clear()
    assert post(base, {"jsonrpc": "2.0", "id": 1, "method": "resources/list"},
                "2025-06-18").headers["content-type"] == "application/json"
    assert post(base, {**call, "params": {**call["params"], "_meta": {"progressToken": 2}}},
                "2025-06-18").headers["content-type"] == "application/json"
    assert taken == [False, False]
    assert post(base, call, "2025-06-18", accept="text/event-stream").status_code == 406
    notification = post(base, {"jsonrpc": "2.0", "method": "notifications/initialized"}, "2025-06-18")
    assert (notification.status_code, notification.content) == (202, b"")
    batch = post(base, [call, call], "2025-06-18")
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32602
    broken = post(base, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', "2025-06-18")
    assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
    assert httpx.get(base + "/mcp", headers={"Accept": ACCEPT_BOTH, "Authorization": "Bearer ada"}).status_code == 405


SEARCH_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "search_documents", "arguments": {"query": "x"}}}


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v or "no-header")
def test_a_tools_call_at_every_handshake_version_takes_the_direct_path(
        base: str, version: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without MCP-Protocol-Version a request is taken to be at 2025-03-26 (the spec's default, as
    the SDK takes it): its tools/call is answered directly all the same, as the SDK answers it."""
    taken = watch_direct(monkeypatch, "_answer")
    direct, sdk = both_ways(base, SEARCH_CALL, version, monkeypatch)
    assert taken == [True]  # the SDK's answer was asked for with _answer patched out: not watched
    assert direct.status_code == sdk.status_code == 200
    assert direct.headers["content-type"] == "application/json"
    assert message_of(direct) == message_of(sdk)
    result = direct.json()["result"]
    assert result["isError"] is False and json.loads(result["content"][0]["text"])["results"]


@pytest.mark.parametrize("version", [None, "2025-03-26"], ids=lambda v: v or "no-header")
def test_a_tools_call_at_a_version_of_another_result_shape_is_shaped_as_the_sdk_shapes_it(
        base: str, version: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the SDK's sieve gives 2025-03-26 a result shape of its own (as an SDK may: no
    structuredContent), the direct answer goes through the same sieve."""
    sieve = methods.serialize_server_result

    def older_shape(method: str, at: str, data: Any, **options: Any) -> dict[str, Any]:
        shaped = sieve(method, at, data, **options)
        if (method, at) == ("tools/call", "2025-03-26"):
            del shaped["structuredContent"]
        return shaped

    monkeypatch.setattr(methods, "serialize_server_result", older_shape)  # the SDK's sieve, and so ours
    monkeypatch.setattr(mcp_direct, "_WHOLE_CALL_VERSIONS", frozenset({"2025-06-18", "2025-11-25"}), raising=False)
    taken = watch_direct(monkeypatch, "_answer")
    direct, sdk = both_ways(base, SEARCH_CALL, version, monkeypatch)
    assert taken == [True]
    assert message_of(direct) == message_of(sdk)
    assert set(direct.json()["result"]) == {"content", "isError"}
    assert "structuredContent" in post(base, SEARCH_CALL, "2025-06-18").json()["result"]


@pytest.mark.parametrize("version", ["1999-01-01", "2025-3-26", ""])
def test_a_tools_call_at_a_version_nobody_supports_is_still_refused(
        base: str, version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = watch_direct(monkeypatch, "_answer")
    direct, sdk = both_ways(base, SEARCH_CALL, version, monkeypatch)
    assert taken == []  # never offered to the direct path
    assert direct.status_code == sdk.status_code == 400
    assert direct.json()["error"]["code"] == sdk.json()["error"]["code"] == -32602


def test_a_single_exchange_version_is_the_sdks(base: str) -> None:
    """2026-07-28 requests carry their own envelope: the SDK answers them, in one exchange."""
    answer = post(base, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "2026-07-28")
    assert answer.status_code in (200, 400)
    assert answer.headers["content-type"] == "application/json"


def test_the_bearer_check_comes_before_the_direct_path(base: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    refused = post(base, ping, "2025-06-18", token="wrong")
    assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"


def test_what_the_sdks_parser_refuses_is_the_sdks_to_answer(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct path reads a request with the SDK's own parser: a message nested past its limit
    gets the SDK's parse error, not an answer."""
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    params = {**initialize("2025-06-18"), "capabilities": {"experimental": {"deep": deep}}}
    direct, sdk = both_ways(base, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
                            "2025-06-18", monkeypatch)
    assert direct.status_code == sdk.status_code == 400
    assert direct.json()["error"]["code"] == sdk.json()["error"]["code"] == -32700


def test_arguments_keep_values_json_cannot_write_compactly() -> None:
    """NaN and infinities (which the SDK's parser reads) reach the typed model as they were sent,
    not as null (orjson's writing of them)."""
    from evidencekit.server.runtime._request_size import json_input

    raw, _ = json_input({"x": float("nan"), "y": float("inf"), "z": None})
    assert "NaN" in str(raw) and "Infinity" in str(raw)
    assert json_input({"q": "é"}) == (b'{"q":"\xc3\xa9"}', 10)  # compact UTF-8, as sent


def test_a_failing_notes_function_is_an_error_result_not_a_dropped_answer() -> None:
    def broken(spec: Any, data: Any) -> list[str]:
        raise RuntimeError("notes broke")

    app = create_app(ExampleHandlers(), ServiceHooks(auth=CountingAuth()), mcp=McpSettings(name="t", notes=broken))
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "search_documents", "arguments": {"query": "x"}}}
    with live_server(app, lifespan="on") as url:
        answer = post(url, call, "2025-06-18")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    result = answer.json()["result"]
    assert result["isError"] is True and json.loads(result["content"][0]["text"])["error"] == "internal_error"


@pytest.mark.anyio
async def test_a_client_of_the_single_exchange_era_calls_tools_through_the_sdk(base: str) -> None:
    """The SDK's Client in its default mode speaks 2026-07-28 (server/discover first): the SDK
    answers it, checking the call's Mcp-Param headers against the tool's schema, which it now asks
    the tool caller for (get_tool_input_schema) instead of listing every tool on each call."""
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": "Bearer ada"}) as http, \
            Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
        result = await client.call_tool("search_documents", {"query": "notes"})
    assert not result.is_error and result.structured_content is not None
    assert "results" in result.structured_content


MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
# (params, extra headers) of 2026-07-28 tools/calls: answered directly when the SDK's ladder passes
# them, left to the SDK otherwise; the answers must be the same either way
MODERN_CALLS: list[tuple[dict[str, Any], dict[str, str]]] = [
    ({"name": "search_documents", "arguments": {"query": "notes"}, "_meta": ENVELOPE}, {}),
    ({"name": "search_documents", "arguments": {"query": "ünïcode"},
      "_meta": {**ENVELOPE, "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}}, {}),
    ({"name": "sosoapi_research_evidence_status", "arguments": status_arguments(), "_meta": ENVELOPE}, {}),
    ({"name": "search_documents", "arguments": {"query": 5}, "_meta": ENVELOPE}, {}),  # an isError result
    ({"name": "search_documents", "_meta": ENVELOPE}, {}),
    ({"name": "no_such_tool", "arguments": {}, "_meta": ENVELOPE}, {}),  # the SDK's error
    ({"name": "search_documents", "arguments": {"query": "x"}}, {}),  # no envelope: refused
    ({"name": "search_documents", "arguments": {"query": "x"},
      "_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-06-18"}}, {}),  # mismatch
    ({"name": "search_documents", "arguments": {"query": "x"}, "_meta": ENVELOPE}, {"Mcp-Name": "get_documents"}),
    ({"name": "search_documents", "arguments": {"query": "x"}, "_meta": ENVELOPE}, {"Mcp-Method": "tools/list"}),
    ({"name": "search_documents", "arguments": {"query": "x"}, "_meta": {**ENVELOPE, "progressToken": 3}}, {}),
]


def post_modern(base: str, params: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    routing = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH, "Authorization": "Bearer ada",
               "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": str(params.get("name")),
               **headers}
    body = {"jsonrpc": "2.0", "id": "m-1", "method": "tools/call", "params": params}
    return httpx.post(base + "/mcp", json=body, headers=routing, timeout=30)


@pytest.mark.parametrize(("params", "headers"), MODERN_CALLS, ids=lambda v: json.dumps(v)[:50])
def test_a_single_exchange_call_is_answered_as_the_sdk_answers_it(
        base: str, params: dict[str, Any], headers: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    direct = post_modern(base, params, headers)
    with monkeypatch.context() as patched:
        async def to_the_sdk(*_: Any) -> bool:
            return False

        patched.setattr(mcp_direct.McpDirect, "_single_exchange_call", to_the_sdk)
        sdk = post_modern(base, params, headers)
    assert direct.status_code == sdk.status_code
    assert message_of(direct) == message_of(sdk)


def test_a_plain_single_exchange_call_takes_the_direct_path(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = watch_direct(monkeypatch, "_single_exchange_call")
    answer = post_modern(base, *MODERN_CALLS[0])
    assert answer.status_code == 200 and taken == [True]
    result = answer.json()["result"]
    assert result["resultType"] == "complete" and "io.modelcontextprotocol/serverInfo" in result["_meta"]
    post_modern(base, *MODERN_CALLS[5])  # an unknown tool: the SDK's
    post_modern(base, *MODERN_CALLS[8])  # a routing header that disagrees: the SDK's refusal
    assert taken == [True, False, False]


def _listed_input_schemas() -> list[Any]:
    """The published MCP input schemas: what the tool caller hands the SDK for each tool."""
    return [json.loads(path.read_text()) for path in sorted(CONTRACTS_DIR.glob("*/mcp.input.schema.json"))]


_HEADER_NAMES = st.sampled_from(["Mcp-Param-Query", "mcp-param-names", "Mcp-Param-", "Mcp-Name", "X-Other"])
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=300, deadline=None, database=None)
@given(arguments=st.dictionaries(st.sampled_from(["query", "names", "workspace_id", "x"]), _JSON, max_size=4),
       headers=st.dictionaries(_HEADER_NAMES, st.text(max_size=8), max_size=4))
def test_a_schema_that_asks_for_no_param_headers_never_has_them_refused(arguments: dict[str, Any],
                                                                        headers: dict[str, str]) -> None:
    """The direct path skips the SDK's Mcp-Param check for a tool whose schema asks for no such
    header (McpDirect._has_param_headers): the SDK's check refuses nothing there, whatever the
    arguments and headers; and a schema that does ask is told apart."""
    invalid = {"type": "object", "properties": {"query": {"type": "object", "x-mcp-header": "Query"}}}
    listed = _listed_input_schemas()
    assert len(listed) >= 4
    for schema in [*listed, invalid]:
        assert not mcp_direct.McpDirect._has_param_headers(_Remembers(), "tool", schema)
        assert validate_mcp_param_headers(schema, arguments, headers) is None
    asking = {"type": "object", "properties": {"query": {"type": "string", "x-mcp-header": "Query"}}}
    assert mcp_direct.McpDirect._has_param_headers(_Remembers(), "tool", asking)


class _Remembers:
    """What McpDirect._has_param_headers keeps between calls."""

    def __init__(self) -> None:
        self._param_headers: dict[str, Any] = {}


# Generated requests, sent both ways: the lists above, each changed in up to three places (the id of
# another JSON type, the envelope's members, the params' shape and members, the version and routing
# headers, Accept): envelopes nobody wrote down, near the line between what the direct path takes
# and what it leaves to the SDK
_IDS = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=6), st.none(), st.booleans(),
                 st.floats(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=1))
_TOOLS = st.one_of(st.sampled_from(["search_documents", "get_documents", "sosoapi_research_evidence_status",
                                    "no_such_tool"]), st.integers(), st.none())
_ARGUMENTS = st.one_of(st.none(), st.just({"query": "notes"}), st.just({"names": ["documents/x"]}),
                       st.just(status_arguments()), st.lists(st.integers(), max_size=2),
                       st.dictionaries(st.sampled_from(["query", "names", "x"]), _JSON, max_size=2))
_METAS = st.one_of(st.just(ENVELOPE), st.just({**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-06-18"}),
                   st.just({"progressToken": 1}), st.just({}), st.dictionaries(st.text(max_size=4), _JSON, max_size=2))
_TOKEN = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12)


def _changed(data: st.DataObject, body: dict[str, Any], headers: dict[str, str]) -> None:
    """One change to a request (its body or its headers), drawn from `data`."""
    change = data.draw(st.sampled_from(["id", "jsonrpc", "extra", "method", "params", "name", "arguments",
                                        "meta", "cursor", "version", "routing", "accept"]))
    params = body.get("params")
    if change == "id":
        body["id"] = data.draw(_IDS)
    elif change == "jsonrpc":
        body["jsonrpc"] = data.draw(st.sampled_from(["1.0", 2, None]))
    elif change == "extra":
        body[data.draw(st.sampled_from(["extra", "result", "error"]))] = data.draw(_JSON)
    elif change == "method":
        body["method"] = data.draw(st.sampled_from(["tools/call", "tools/list", "ping", "initialize",
                                                    "resources/list", "notifications/initialized"]))
    elif change == "params":
        body["params"] = data.draw(st.one_of(st.none(), st.just([]), st.integers(), st.just({})))
    elif change == "version":
        version = data.draw(st.sampled_from([None, *HANDSHAKE_PROTOCOL_VERSIONS, MODERN, "1999-01-01"]))
        headers.pop("MCP-Protocol-Version", None)
        if version is not None:
            headers["MCP-Protocol-Version"] = version
    elif change == "routing":
        header = data.draw(st.sampled_from(["Mcp-Method", "Mcp-Name", "Mcp-Param-Query"]))
        if data.draw(st.booleans()):
            headers.pop(header, None)
        else:
            headers[header] = data.draw(st.one_of(_TOKEN, st.sampled_from(["tools/call", "search_documents"])))
    elif change == "accept":
        headers["Accept"] = data.draw(st.sampled_from(["application/json", "text/event-stream", "*/*"]))
    elif isinstance(params, dict):
        key = {"name": "name", "arguments": "arguments", "meta": "_meta", "cursor": "cursor"}[change]
        value = {"name": _TOOLS, "arguments": _ARGUMENTS, "meta": _METAS, "cursor": st.text(max_size=3)}[change]
        if data.draw(st.booleans()) and key in params:
            del params[key]
        else:
            params[key] = data.draw(value)


@settings(max_examples=200, deadline=None, database=None)
@given(data=st.data())
def test_generated_requests_get_the_sdks_answers(base: str, data: st.DataObject) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH, "Authorization": "Bearer ada"}
    if data.draw(st.booleans()):  # a request of the handshake era
        method, params = data.draw(st.sampled_from(REQUESTS))
        version = data.draw(st.sampled_from(VERSIONS))
        if version is not None:
            headers["MCP-Protocol-Version"] = version
    else:  # a 2026-07-28 tools/call, its routing headers and all
        method = "tools/call"
        params, extra = data.draw(st.sampled_from(MODERN_CALLS))
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": method, "Mcp-Name": str(params.get("name")),
                        **extra})
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": data.draw(st.integers(0, 99) | st.text(max_size=4) | _IDS),
                            "method": method}
    if params is not None:
        body["params"] = json.loads(json.dumps(params))  # a copy the changes may change
    for _ in range(data.draw(st.integers(0, 3))):
        _changed(data, body, headers)
    content = json.dumps(body).encode()
    direct = httpx.post(base + "/mcp", content=content, headers=headers, timeout=30)
    with pytest.MonkeyPatch.context() as patched:
        async def to_the_sdk(*_: Any) -> bool:
            return False

        patched.setattr(mcp_direct.McpDirect, "_answer", to_the_sdk)
        patched.setattr(mcp_direct.McpDirect, "_single_exchange_call", to_the_sdk)
        sdk = httpx.post(base + "/mcp", content=content, headers=headers, timeout=30)
    assert direct.status_code == sdk.status_code, (direct.text, sdk.text)
    assert message_of(direct) == message_of(sdk)
