"""What the conformance plugin tests: a module of its own, so a conftest can import it before the
plugin loads (the plugin's asserts are then still rewritten by pytest)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Target:
    """Where the app under test answers, and the headers every call sends (its credential)."""

    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    mcp_path: str | None = "/mcp"
