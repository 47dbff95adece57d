"""Checks on one answer, and the one-line reproduction of the call that got it: shared by the
conformance plugin and the conformance gate (`evidencekit conformance`).

Each check returns what is wrong (a short sentence) or None. The error shape is the toolkit's
runtime's (`server/runtime/_errors.py`): `{error, message, code, request_id}`, plus `fields` when a
body does not match the contract.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from evidencekit.contracts._query import from_query, to_query
from evidencekit.contracts._validation import OperationValidator

ERROR_KEYS = ("error", "message", "code", "request_id")
_SHOWN = 300


def as_json(value: Any) -> str:
    """JSON text of `value`, non-ASCII as is unless it holds what no terminal can print (a lone
    surrogate, which generated strings may hold)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, default=str)
    return text


def shown(value: Any, limit: int = _SHOWN) -> str:
    """`value` as compact JSON (text as is), cut at `limit` characters."""
    text = as_json(value) if not isinstance(value, str) else value.encode("utf-8", "replace").decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def output_problem(validator: OperationValidator, data: Any) -> str | None:
    """What makes `data` fall outside a published output variant of the operation."""
    violations = validator.output_errors(data)
    return "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations) or None


def error_body_problem(body: Any) -> str | None:
    """Whether an error answer has the toolkit's error shape."""
    if not isinstance(body, dict):
        return f"the error body is not a JSON object with {', '.join(ERROR_KEYS)}: {shown(body)}"
    missing = [key for key in ERROR_KEYS if key not in body]
    return f"the error body lacks {', '.join(missing)}: {shown(body)}" if missing else None


def fields_problem(body: Any) -> str | None:
    """Whether a refusal of an invalid input names the failing fields."""
    fields = body.get("fields") if isinstance(body, dict) else None
    if isinstance(fields, list) and fields:
        return None
    return f"the refusal of an invalid input names no `fields`: {shown(body)}"


def placeholder(name: str, value: str) -> str:
    """A header as a reproduction shows it: the secret replaced by a shell variable
    (`Authorization: Bearer $TOKEN`, `X-Api-Key: $X_API_KEY`)."""
    scheme, _, rest = value.partition(" ")
    if name.lower() in ("authorization", "proxy-authorization") and rest and scheme.isalpha():
        return f"{name}: {scheme} $TOKEN"
    return f"{name}: ${re.sub(r'[^A-Za-z0-9]', '_', name).upper()}"


def curl(method: str, url: str, body: Any, *, secret: Mapping[str, str] | None = None,
         plain: Mapping[str, str] | None = None) -> str:
    """A one-line `curl` that repeats a JSON call; `secret` headers are shown as placeholders in
    double quotes (the shell fills them in), `plain` ones as they are."""
    headers = [*(f'-H "{placeholder(name, value)}"' for name, value in (secret or {}).items()),
               *(arg for name, value in (plain or {}).items() for arg in ("-H", shlex.quote(f"{name}: {value}")))]
    if method == "GET":  # the input in the query string, as the call sent it
        query = urlencode(request_input(method, body)["params"])
        return " ".join(["curl -s", shlex.quote(f"{url}?{query}" if query else url), *headers])
    parts = ["curl -s", "-X", shlex.quote(method), shlex.quote(url), *headers,
             "-H", shlex.quote("Content-Type: application/json"),
             "-d", shlex.quote(as_json(body))]
    return " ".join(parts)


def jsonrpc_call(tool: str, arguments: Any) -> str:
    """The JSON-RPC `tools/call` message that repeats an MCP call, on one line."""
    return as_json({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}})


def request_input(method: str, payload: Any) -> dict[str, Any]:
    """httpx's arguments for a REST call's input: a GET's in the query string (contracts._query), any
    other's as its JSON body (a GET input that is not an object, generated as invalid, goes as JSON
    text in a `_` parameter, for the server to refuse)."""
    if method != "GET":
        return {"content": json.dumps(payload)}
    if isinstance(payload, dict):
        return {"params": to_query(payload)}
    return {"params": [("_", json.dumps(payload))]}


def as_carried(method: str, payload: Any, schema: Mapping[str, Any]) -> Any:
    """The input a server reads from a REST call of `method`: a GET's query string holds text, so a
    mutation of a string property (an object there, say) arrives as a string again; any other
    method's body is the payload itself."""
    if method != "GET" or not isinstance(payload, dict):
        return payload
    return from_query(parse_qsl(urlencode(to_query(payload)), keep_blank_values=True), schema)
