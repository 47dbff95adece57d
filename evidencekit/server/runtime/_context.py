"""What a handler knows about the call it serves, whichever surface it came in on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RequestContext:
    request_id: str
    surface: str  # "rest" or "mcp"
    headers: Mapping[str, str] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    principal: Any = None  # what the service's Auth made of the caller's credential, or None
    # what this answer means beyond its JSON (the next step): text an MCP result carries after the
    # service's notes (McpSettings.notes), and REST an X-Note header each (contracts/_notes.py)
    notes: list[str] = field(default_factory=list)
    # the text content of this answer's MCP result, for an operation whose manifest says
    # `"mcp": {"text_content": "handler"}` (_mcp_text.py); read for no other operation, nor over REST
    text: str | None = None
