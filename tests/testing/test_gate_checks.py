"""The gate's judgement of one answer: contract checks always, the toolkit's protocol only when the
target speaks it; what is a note and not a failure; reproductions that hold no secret; pins."""

from __future__ import annotations

import shlex

import pytest

from evidencekit.testing._answers import curl, jsonrpc_call
from evidencekit.testing._contracts import load_contracts
from evidencekit.testing._gate.checks import Answer, applied, first_difference, judge
from evidencekit.testing._gate.inputs import Pin, PinError
from tests.support import CONTRACTS_DIR

CONTRACT = load_contracts(CONTRACTS_DIR)["sosoapi_research_evidence_status"]
LOCKED = CONTRACT.locked_hash
NO_RECEIPT = {"retrieval": None}
BODY = {"error": "bad_request", "message": "no", "code": "validation_failed", "request_id": "r1",
        "fields": [{"field": "$.workspace_id", "message": "is required", "keyword": "required"}]}


def rest(status: int, data: object, contract_hash: str | None = LOCKED, **more: object) -> Answer:
    outcome = "success" if status < 300 else "refused" if status < 500 else "server_error"
    return Answer(outcome, f"HTTP {status}", data, status=status, rest=True,
                  contract_hash=contract_hash, validation_refusal=status == 400, **more)


def failed(answer: Answer, *, valid: bool, protocol: bool) -> dict[str, str]:
    return judge(CONTRACT, answer, valid=valid, protocol=protocol).failures


def test_a_conforming_answer_passes_in_either_mode() -> None:
    for protocol in (False, True):
        assert failed(rest(200, NO_RECEIPT), valid=True, protocol=protocol) == {}
        assert failed(rest(400, BODY), valid=False, protocol=protocol) == {}


def test_the_error_shape_and_the_header_are_the_toolkits_protocol() -> None:
    """A server of another make refuses in its own words and sends no hash: no violation, unless
    it speaks the toolkit's protocol (or --strict)."""
    foreign = rest(422, {"detail": [{"loc": ["body", "workspace_id"]}]}, contract_hash=None)
    assert failed(foreign, valid=False, protocol=False) == {}
    assert set(failed(foreign, valid=False, protocol=True)) == {"error_body", "contract_hash"}
    no_fields = rest(400, {key: value for key, value in BODY.items() if key != "fields"})
    assert failed(no_fields, valid=False, protocol=False) == {}
    assert "names no `fields`" in failed(no_fields, valid=False, protocol=True)["validation_fields"]
    assert failed(no_fields, valid=True, protocol=True) == {}  # a valid input's refusal need not name fields


def test_another_contract_hash_fails_in_any_mode() -> None:
    for protocol in (False, True):
        problem = failed(rest(200, NO_RECEIPT, contract_hash="sha256:0000000000000000"), valid=True,
                         protocol=protocol)["contract_hash"]
        assert "the server serves another version of the contract" in problem
    refused = failed(rest(412, BODY, contract_hash="sha256:0000000000000000"), valid=True, protocol=False)
    assert refused["contract_hash"].endswith("and refused the call")
    newer = judge(CONTRACT, rest(200, NO_RECEIPT, contract_newer="sha256:1111111111111111"), valid=True,
                  protocol=True)
    assert newer.failures == {} and newer.notes == ["the server serves a newer compatible contract "
                                                    "(sha256:1111111111111111)"]


def test_contract_checks_hold_everywhere() -> None:
    outside = failed(rest(200, {"retrieval": {"state": "nonsense"}}), valid=True, protocol=False)
    assert outside["valid_answers"].startswith("HTTP 200: [mcp] $.retrieval")
    accepted = judge(CONTRACT, rest(200, NO_RECEIPT), valid=False, protocol=False,
                     invalid_because="$.workspace_id is required").failures
    assert accepted["invalid_refused"].startswith("an invalid input ($.workspace_id is required) was answered")
    assert "no_server_error" in failed(rest(503, BODY), valid=True, protocol=False)
    assert "no_server_error" in failed(rest(500, "oops"), valid=False, protocol=False)
    assert failed(Answer("no_answer", "no answer within 10 s"), valid=True, protocol=False) == {
        "answered": "no answer to a valid input: no answer within 10 s"}


def test_a_redirect_is_a_note() -> None:
    verdict = judge(CONTRACT, Answer("other", "HTTP 307 to /next", status=307, rest=True, contract_hash=LOCKED),
                    valid=False, protocol=True)
    assert verdict.failures == {} and "redirects are not followed" in verdict.notes[0]


def test_mcp_refusals() -> None:
    """An isError result and a JSON-RPC invalid-params error both refuse; only the toolkit's
    protocol asks for the error body and its fields; an internal error is a server error."""
    rpc = Answer("refused", "JSON-RPC error -32602: Invalid params", rpc_error=True)
    assert failed(rpc, valid=False, protocol=False) == {}
    assert "not an isError result naming the fields" in failed(rpc, valid=False, protocol=True)["validation_fields"]
    text = Answer("refused", "an isError result", "Error executing tool: bad input", validation_refusal=True)
    assert failed(text, valid=False, protocol=False) == {}
    assert set(failed(text, valid=False, protocol=True)) == {"error_body"}
    internal = Answer("server_error", "JSON-RPC error -32603: boom", rpc_error=True)
    assert set(failed(internal, valid=True, protocol=False)) == {"no_server_error"}
    unchecked = Answer("success", "a result", unchecked="no structuredContent")
    assert judge(CONTRACT, unchecked, valid=True, protocol=False).notes == ["no structuredContent"]
    assert failed(unchecked, valid=True, protocol=True) == {"valid_answers": "a result: no structuredContent"}


def test_the_checks_each_call_is_held_to() -> None:
    assert applied(rest=True, valid=True, protocol=False) == [
        "valid_answers", "no_server_error", "answered", "contract_hash"]
    assert applied(rest=False, valid=False, protocol=True) == [
        "invalid_refused", "no_server_error", "answered", "error_body", "validation_fields"]


def test_first_difference() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None
    assert first_difference({"a": [1, {"b": 3}]}, {"a": [1, {"b": 2}]}) == "$.a[1].b: listed 3, the contract 2"
    assert first_difference({"x": True}, {"x": 1}) == "$.x: listed true, the contract 1"
    assert first_difference({}, {"maxLength": 5}) == "$.maxLength: listed nothing, the contract 5"
    assert first_difference({"extra": 1}, {}) == "$.extra: listed 1, the contract nothing"


def test_a_reproduction_shows_no_secret() -> None:
    line = curl("POST", "https://api.example/x", {"q": "it's"},
                secret={"Authorization": "Bearer ek_secret", "X-Api-Key": "k_secret"},
                plain={"X-Contract-Hash": LOCKED})
    assert "secret" not in line
    assert shlex.split(line) == [
        "curl", "-s", "-X", "POST", "https://api.example/x", "-H", "Authorization: Bearer $TOKEN",
        "-H", "X-Api-Key: $X_API_KEY", "-H", f"X-Contract-Hash: {LOCKED}", "-H", "Content-Type: application/json",
        "-d", '{"q": "it\'s"}']
    assert '-H "Authorization: Bearer $TOKEN"' in line  # double quotes: the shell fills the token in
    assert jsonrpc_call("t", {"s": "\ud800"}) == (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"s": "\\ud800"}}}')


@pytest.mark.parametrize(("text", "pin"), [
    ("workspace_id=f3e129f4-4d91-40ad-9d5c-1e63eac3456a", Pin("workspace_id", "f3e129f4-4d91-40ad-9d5c-1e63eac3456a")),
    ("get_book:limit=5", Pin("limit", 5, "get_book")),
    ('names=["documents/a"]', Pin("names", ["documents/a"])),
    ("url=http://127.0.0.1:9/x", Pin("url", "http://127.0.0.1:9/x")),
])
def test_pins(text: str, pin: Pin) -> None:
    assert Pin.parse(text) == pin


def test_a_pin_without_a_name_is_refused() -> None:
    with pytest.raises(PinError, match="expected"):
        Pin.parse("novalue")
