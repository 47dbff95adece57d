"""The text content of an MCP tool result, as its operation's manifest says (`mcp.text_content`,
read by contracts._policy and generated into OperationSpec.mcp_text_content):

- "json" (the default): the result's JSON as REST sends it, compact (json_answer.answer_bytes);
- "pretty": the same JSON indented by two spaces, non-ASCII as is (what JavaScript's
  `JSON.stringify(result, null, 2)` writes: the text many MCP servers answer, so a team replacing
  one can keep what its clients read);
- "handler": the text the handler set for this answer (`context.text`); a handler that set none gets
  the compact JSON, and a warning in the log naming it.

structuredContent is the result's JSON whatever the choice; the notes (McpSettings.notes and the
handler's RequestContext.notes) follow as text blocks of their own.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from evidencekit.contracts._spec import OperationSpec
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._json_answer import answer_bytes

log = logging.getLogger("evidencekit.mcp")


def result_text(spec: OperationSpec, data: Any, context: RequestContext) -> str:
    """The first text block of the operation's MCP result for `data` (its JSON data)."""
    mode = spec.mcp_text_content
    if mode == "pretty":
        return json.dumps(data, indent=2, ensure_ascii=False)
    if mode == "handler":
        if context.text is not None:
            return context.text
        log.warning("%s declares mcp.text_content \"handler\" but its handler set no context.text "
                    "(request %s): its result's JSON is sent as the text", spec.name, context.request_id)
    return answer_bytes(data).decode()
