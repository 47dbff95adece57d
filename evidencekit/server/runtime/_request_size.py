"""How large a request may be, decided in one place for every surface.

An operation takes requests up to its spec's `max_request_bytes` (the manifest's, else the
project's `max_request_bytes` in [tool.evidencekit.codegen], else
contracts._policy.DEFAULT_MAX_REQUEST_BYTES): over REST its body (or, for a GET, its query as JSON),
over MCP its arguments as compact JSON, as a GET's query is (`json_input`: one measure for an input
not sent as JSON text). `operation_limit` is that limit, held by the operation's
pipeline (_pipeline.py: checked there, after who calls and before what the caller may do; REST also
reads its body with it), and `SizeLimit.check` the one refusal all of them answer with (413 over
HTTP, an isError result over MCP, the same message).
`/mcp` reads a message whole before it knows the tool: it takes up to the largest tool's limit and
MCP_ENVELOPE_BYTES (`mcp_message_limit`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from evidencekit.contracts._policy import DEFAULT_MAX_REQUEST_BYTES
from evidencekit.contracts._spec import OperationSpec
from evidencekit.server.runtime._errors import PayloadTooLarge

# The JSON-RPC envelope around a tool's arguments (method, id, names): room for it on /mcp
MCP_ENVELOPE_BYTES = 4096


@dataclass(frozen=True)
class SizeLimit:
    """At most `limit` bytes of what `what` names ("the request to add_book")."""

    limit: int
    what: str
    why: str = ""  # what sets the limit, said after it

    def check(self, size: int) -> None:
        """PayloadTooLarge when `size` is past the limit."""
        if size > self.limit:
            raise self.refusal()

    def refusal(self) -> PayloadTooLarge:
        return PayloadTooLarge(f"{self.what} is larger than {self.limit} bytes{self.why}")


DEFAULT_LIMIT = SizeLimit(DEFAULT_MAX_REQUEST_BYTES, "the request body")


def operation_limit(spec: OperationSpec) -> SizeLimit:
    """The operation's limit, the same on every surface."""
    return SizeLimit(spec.max_request_bytes, f"the request to {spec.name}",
                     ", the most this operation takes (its max_request_bytes)")


def mcp_message_limit(specs: Iterable[OperationSpec]) -> SizeLimit:
    """The largest /mcp message taken: the largest tool's arguments and the envelope around them
    (each tool's own limit is then checked on its arguments)."""
    largest = max((spec.max_request_bytes for spec in specs), default=DEFAULT_MAX_REQUEST_BYTES)
    return SizeLimit(largest + MCP_ENVELOPE_BYTES, "an MCP message",
                     f" (the largest tool's max_request_bytes, {largest}, and {MCP_ENVELOPE_BYTES} bytes of envelope)")


def json_input(data: Any) -> tuple[bytes | str, int]:
    """An input that was not sent as JSON text (MCP arguments, a GET's query) as JSON text for the
    typed model to parse, and its size: compact UTF-8, as MCP arguments are sent."""
    try:
        raw = orjson.dumps(data)
        if b"null" not in raw:  # orjson writes NaN and infinities as null: those go the slow way
            return raw, len(raw)
    except TypeError:  # beyond orjson (an integer past 64 bits, a lone surrogate)
        pass
    return json.dumps(data), len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"))
