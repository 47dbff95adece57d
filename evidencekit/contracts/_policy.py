"""What an operation's manifest declares besides its schemas, names and auth, read in one place: the
generator (codegen/_views.py writes it into the generated OperationSpec), the runtime (the spec's
defaults), the lock and the differ (codegen/_policy_diff.py) and the conformance gate all read it here.

- `max_request_bytes`: the largest request the operation takes (the manifest's, else the project's
  `max_request_bytes` in [tool.evidencekit.codegen], else DEFAULT_MAX_REQUEST_BYTES);
- `rest.success_statuses`: the statuses a REST answer may come with; answers are sent with the first
  (DEFAULT_SUCCESS_STATUS when none is declared), the one OpenAPI publishes;
- `mcp.text_content`: what an MCP result's text content is (MCP_TEXT_CONTENT: the result's compact
  JSON by default, the same JSON indented, or the handler's own text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_MAX_REQUEST_BYTES = 64 * 1024  # a project's `max_request_bytes` when it sets none
DEFAULT_SUCCESS_STATUS = 200
# An MCP result's text content: "json", the result's JSON as REST sends it (compact); "pretty", the
# same JSON indented by two spaces (what JSON.stringify(result, null, 2) writes, as many MCP servers
# answer); "handler", the text the handler sets (RequestContext.text)
MCP_TEXT_CONTENT = ("json", "pretty", "handler")
DEFAULT_MCP_TEXT_CONTENT = "json"


def _table(manifest: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    found = manifest.get(key)
    return found if isinstance(found, Mapping) else {}


def request_limit(manifest: Mapping[str, Any], default: int = DEFAULT_MAX_REQUEST_BYTES) -> int:
    """The largest request the operation takes: its manifest's `max_request_bytes`, else `default`
    (the project's)."""
    value = manifest.get("max_request_bytes", default)
    return value if type(value) is int else default


def success_statuses(manifest: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The statuses the manifest declares for REST answers (DEFAULT_SUCCESS_STATUS alone when it
    declares none); None when the operation is not served over REST."""
    rest = manifest.get("rest")
    if not isinstance(rest, Mapping):
        return None
    declared = rest.get("success_statuses") or [DEFAULT_SUCCESS_STATUS]
    return tuple(int(status) for status in declared)


def success_status(manifest: Mapping[str, Any]) -> int | None:
    """The status a REST answer is sent with, and the one OpenAPI publishes: the first declared."""
    statuses = success_statuses(manifest)
    return None if statuses is None else statuses[0]


def mcp_text_content(manifest: Mapping[str, Any]) -> str:
    """What the operation's MCP result carries as text content (one of MCP_TEXT_CONTENT)."""
    value = _table(manifest, "mcp").get("text_content", DEFAULT_MCP_TEXT_CONTENT)
    return value if value in MCP_TEXT_CONTENT else DEFAULT_MCP_TEXT_CONTENT
