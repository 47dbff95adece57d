"""Which isError results say the server failed (REST would have answered a 5xx) and which are
refusals: the toolkit's bodies by their `error`, any other server by what its result says."""

from __future__ import annotations

from typing import Any

import pytest

from evidencekit.testing._gate.error_results import server_failure


def toolkit(error: str, code: str) -> dict[str, Any]:
    return {"error": error, "message": "...", "code": code, "request_id": "r1"}


@pytest.mark.parametrize(("body", "says"), [
    (toolkit("internal_error", "internal_error"), "internal_error, code internal_error: HTTP 500 over REST"),
    (toolkit("internal_error", "contract_violation"), "internal_error, code contract_violation: HTTP 500 over REST"),
    (toolkit("unavailable", "unavailable"), "unavailable, code unavailable: HTTP 503 over REST"),
    ({"error": {"code": -32603, "message": "boom"}}, "error.code -32603"),
    ({"status": 500, "detail": "boom"}, "status 500"),
    ({"code": "INTERNAL_SERVER_ERROR"}, "code INTERNAL_SERVER_ERROR"),
    ({"message": "Unexpected error while searching"}, "it says unexpected error"),
    ("Internal error", "it says internal error"),
    ("MCP error -32602: Output validation error: Invalid structured content for tool x",
     "it says output validation error"),
    ("Error executing tool search: Internal server error", "it says internal server error"),
    ("Error executing tool search", "the SDK's text for a tool that raised"),
    ("Error executing tool outer: Error executing tool inner", "the SDK's text for a tool that raised"),
    ('Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: 1', "it holds a traceback"),
    ('Tool failed\nTraceback (most recent call last):\n  File "x.py", line 1', "it holds a traceback"),
    ("Error: Internal error", "it says internal error"),
    ("MCP error -32603: Error executing tool x: Internal server error", "it says internal server error"),
], ids=lambda value: value if isinstance(value, str) and len(value) < 40 else None)
def test_a_server_failure_is_told(body: Any, says: str) -> None:
    assert server_failure(body) == says


@pytest.mark.parametrize("body", [
    toolkit("not_found", "document_not_found"),
    toolkit("conflict", "mutation_id_reused"),
    toolkit("bad_request", "validation_failed"),
    toolkit("rate_limited", "rate_limited"),
    {"error": "not_found", "message": "no such entity"},
    {"status": 404, "message": "no such entity"},
    "Entity with name internal error not found",  # the input echoed, not the server's own words
    "Error executing tool search: the query is empty",  # a ToolError the tool raised on purpose
    "Access denied - path outside allowed directories",
    "Entity not found: internal error",  # a refusal's own prefix: what follows is the input
    "Invalid value for 'mode': unexpected error level",
    "the value 'Traceback (most recent call last)' is not allowed",  # not at the start of a line
    None,
], ids=repr)
def test_a_refusal_is_not(body: Any) -> None:
    assert server_failure(body) is None
