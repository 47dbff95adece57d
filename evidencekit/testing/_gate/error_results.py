"""What an MCP `isError` result says went wrong: a refusal (the input, the caller's rights, the
state of things), or the server's own failure, which REST answers with a 5xx.

A toolkit server writes the REST error body as the result's text (server/runtime/_mcp.py,
`error_result`), and the body's `error` names the REST status (server/runtime/_errors.py): an
exception no handler expected is `internal_error` (code `internal_error`), an answer outside the
output contract `internal_error` too (code `contract_violation`), both HTTP 500 over REST; an
outage is `unavailable`, 503. Any other server is held to what its result says of itself: a JSON
body whose error, code or status names an internal error, or text that starts by saying so, after
no prefix but the SDKs' own (the official SDKs' words for a crash, or for an answer that fails the
tool's outputSchema), or a line that starts a Python traceback.
"""

from __future__ import annotations

import re
from typing import Any

from evidencekit.server.runtime._errors import ApiError
from evidencekit.testing._answers import ERROR_KEYS


def _toolkit_statuses() -> dict[str, int]:
    """The REST status of each `error` the toolkit's error tree writes."""
    found: dict[str, int] = {}
    pending: list[type[ApiError]] = [ApiError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.error, cls.status)
        pending += cls.__subclasses__()
    return found


_INTERNAL = {"internal", "internal_error", "internal_server_error", "server_error", "unexpected_error",
             "contract_violation", "output_validation_error"}
# a phrase at the start of the text, or after the prefixes the SDKs write before it ("MCP error
# -32603: ", "Error executing tool search: ", "Error: "); after any other ("Entity not found: internal
# error") it is the input or the refusal's own words
_SAYS = re.compile(r"^(?:(?:MCP error -?\d+|Error executing tool [^\s:]+|Error): )*"
                   r"(internal (?:server )?error|unexpected error|output validation error)\b", re.IGNORECASE)
# the official Python SDK's text for a crash: the tool's name and nothing of the exception
_SDK_CRASH = re.compile(r"^Error executing tool [^\s:]+(?:: Error executing tool [^\s:]+)*$")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\)", re.MULTILINE)  # at the start of a line


def server_failure(body: Any) -> str | None:
    """How an isError result's body (its first text, as JSON when it is JSON) says the server
    failed ("internal_error, code contract_violation: HTTP 500 over REST"), or None for a refusal."""
    if isinstance(body, dict):
        if all(key in body for key in ERROR_KEYS):  # the toolkit's error body
            status = _toolkit_statuses().get(str(body["error"]))
            if status is not None:
                return (f"{body['error']}, code {body['code']}: HTTP {status} over REST"
                        if status >= 500 else None)
        return _said_in_json(body)
    if isinstance(body, str):
        text = body.strip()
        found = _SAYS.match(text)
        if found:
            return f"it says {found[1].lower()}"
        if _SDK_CRASH.match(text):
            return "the SDK's text for a tool that raised"
        if _TRACEBACK.search(text):
            return "it holds a traceback"
    return None


def _said_in_json(body: dict[str, Any], depth: int = 0) -> str | None:
    for key in ("error", "code", "type", "status", "statusCode"):
        value = body.get(key)
        if isinstance(value, str) and re.sub(r"[\s-]+", "_", value.strip().lower()) in _INTERNAL:
            return f"{key} {value}"
        if isinstance(value, int) and not isinstance(value, bool) and (500 <= value < 600 or value == -32603):
            return f"{key} {value}"
        if isinstance(value, dict) and depth == 0:  # {"error": {"code": ..., "message": ...}}
            inner = _said_in_json(value, 1)
            if inner is not None:
                return f"{key}.{inner}"
    message = body.get("message")
    return server_failure(message) if isinstance(message, str) else None
