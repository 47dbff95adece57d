"""What a manifest change means for clients: the names they call an operation by are its interface.

A renamed MCP tool, a moved REST route or a renamed generated module breaks whoever uses the old
name; titles, descriptions and sources change nothing a client depends on. Auth, the request
limit, the REST success status and the MCP annotations are judged by policy_diff.
"""

from __future__ import annotations

from typing import Any

# (what, how to read it from a manifest); a change of any of these breaks the clients using it
_NAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("MCP tool name", ("mcp", "tool_name")),
    ("REST method", ("rest", "method")),
    ("REST path", ("rest", "path")),
    ("python_name (generated module and class names)", ("python_name",)),
)


def _get(manifest: dict[str, Any], keys: tuple[str, ...]) -> Any:
    value: Any = manifest
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def manifest_changes(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[bool, str]]:
    """(breaking, what changed) for each change of the manifest that matters, then the rest by key."""
    changes: list[tuple[bool, str]] = []
    for label, keys in _NAMES:
        was, now = _get(old, keys), _get(new, keys)
        if was == now:
            continue
        if now is None:
            changes.append((True, f"{label} {was!r} removed"))
        elif was is None:
            changes.append((False, f"{label} {now!r} added"))
        else:
            changes.append((True, f"{label} {was!r} -> {now!r}"))
    others = sorted(key for key in (set(old) | set(new)) - {"python_name", "auth", "max_request_bytes"}
                    if _without_names(old, key) != _without_names(new, key))
    if others:
        changes.append((False, f"also changed: {', '.join(others)} (nothing clients call it by)"))
    return changes


def _without_names(manifest: dict[str, Any], key: str) -> Any:
    """manifest[key] less what is compared elsewhere (the MCP tool name and annotations, the REST
    method, path and success statuses, the variant each surface serves, the MCP text content)."""
    value = manifest.get(key)
    if key not in ("mcp", "rest") or not isinstance(value, dict):
        return value
    compared = ("tool_name", "method", "path", "success_statuses", "annotations", "variant", "text_content")
    return {name: part for name, part in value.items() if name not in compared}
