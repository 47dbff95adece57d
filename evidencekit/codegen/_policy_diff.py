"""What a client relies on besides the schemas and the names: who may call (the manifest's `auth`),
how large a request may be (`max_request_bytes`, the manifest's or the project's), which status a
REST answer comes with (the first of `rest.success_statuses`), what an MCP tool promises (its
annotations' hints) and what its result's text content is (`mcp.text_content`). Each is read from
the manifest as the runtime reads it (evidencekit.contracts._policy).

Each change says whom it breaks: old clients of the new server (a tightening: auth added, a limit
lowered, a promise dropped) or new clients of old servers (a loosening: auth removed, a limit
raised, a promise added); the compatibility mode decides which of the two count (_breaking.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evidencekit.contracts._policy import mcp_text_content, success_status, success_statuses


@dataclass(frozen=True)
class PolicyChange:
    what: str
    old_clients: str | None = None  # why old clients of the new server break (None: they do not)
    new_clients: str | None = None  # why new clients of old servers break (None: they do not)


def limit_changes(old: int, new: int) -> list[PolicyChange]:
    if new < old:
        return [PolicyChange(f"max_request_bytes {old:,} -> {new:,}",
                             old_clients=f"a request of {new + 1:,} to {old:,} bytes is now refused (413)")]
    if new > old:
        return [PolicyChange(f"max_request_bytes {old:,} -> {new:,}",
                             new_clients=f"an old server refuses a request of {old + 1:,} to {new:,} bytes (413)")]
    return []


def _table(value: dict[str, Any], key: str) -> dict[str, Any]:
    found = value.get(key)
    return found if isinstance(found, dict) else {}


def _auth(manifest: dict[str, Any]) -> tuple[str | None, str | None, tuple[str, ...]]:
    auth = _table(manifest, "auth")
    kinds = auth.get("credential_kinds") or ()
    return auth.get("capability") or None, auth.get("minimum_role") or None, tuple(kinds)


def auth_changes(old_manifest: dict[str, Any], new_manifest: dict[str, Any]) -> list[PolicyChange]:
    """The caller's requirement, as the runtime enforces it (an `auth` with none of capability,
    minimum_role, credential_kinds is public)."""
    old, new = _auth(old_manifest), _auth(new_manifest)
    if old == new:
        return []
    if not any(old):
        return [PolicyChange("auth added", old_clients="a call without a credential is now refused (401)")]
    if not any(new):
        return [PolicyChange("auth removed: the operation is public",
                             new_clients="an old server refuses a call without a credential (401)")]
    changes = []
    for label, was, now in (("capability", old[0], new[0]), ("minimum_role", old[1], new[1])):
        if was == now:
            continue
        if was is None:
            changes.append(PolicyChange(f"auth {label} {now!r} added",
                                        old_clients=f"a caller without {now!r} is now refused (403)"))
        elif now is None:
            changes.append(PolicyChange(f"auth {label} {was!r} removed",
                                        new_clients=f"an old server refuses a caller without {was!r} (403)"))
        else:
            why = " (the order of roles is the Auth's: the toolkit cannot tell raised from lowered)" \
                if label == "minimum_role" else ""
            changes.append(PolicyChange(f"auth {label} {was!r} -> {now!r}",
                                        old_clients=f"a caller with {was!r} but not {now!r} may now be refused "
                                                    f"(403){why}",
                                        new_clients=f"an old server asks for {was!r}"))
    changes += _kind_changes(old[2], new[2])
    return changes


def _kind_changes(old: tuple[str, ...], new: tuple[str, ...]) -> list[PolicyChange]:
    """Credential kinds: none listed takes every kind."""
    if set(old) == set(new):
        return []
    if not new:
        return [PolicyChange(f"auth credential_kinds {list(old)} -> any",
                             new_clients="an old server refuses other kinds of credential (403)")]
    if not old:
        return [PolicyChange(f"auth credential_kinds any -> {list(new)}",
                             old_clients="a credential of another kind is now refused (403)")]
    changes = []
    removed, added = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    if removed:
        changes.append(PolicyChange(f"auth credential_kinds {', '.join(removed)} removed",
                                    old_clients=f"a {removed[0]} credential is now refused (403)"))
    if added:
        changes.append(PolicyChange(f"auth credential_kinds {', '.join(added)} added",
                                    new_clients=f"an old server refuses a {added[0]} credential (403)"))
    return changes


def status_changes(old_manifest: dict[str, Any], new_manifest: dict[str, Any]) -> list[PolicyChange]:
    """Only the status sent counts: the OpenAPI document publishes it alone, and a client generated
    from it may accept no other 2xx (the toolkit's own client accepts any); statuses listed after
    it change nothing sent."""
    old, new = success_status(old_manifest), success_status(new_manifest)
    if old is None or new is None:
        return []
    if old == new:
        # as declared, an absent list being the default's (None and [200] are the same statuses)
        listed = [list(success_statuses(manifest) or ()) for manifest in (old_manifest, new_manifest)]
        return [] if listed[0] == listed[1] else [
            PolicyChange(f"REST success_statuses {listed[0]} -> {listed[1]} (answers still sent with {new})")]
    return [PolicyChange(f"REST success status {old} -> {new}",
                         old_clients=f"a client that expects {old} (the status OpenAPI publishes) gets {new}",
                         new_clients=f"an old server answers {old}")]


# an MCP tool's promises, each read from its annotations as the MCP spec defaults them
_PROMISES: tuple[tuple[str, str, str], ...] = (
    ("read-only (readOnlyHint)", "a client that runs read-only tools without asking now runs one that writes",
     "an old server's tool writes"),
    ("not destructive (destructiveHint)", "a client that runs non-destructive tools without asking now runs one "
                                          "that may destroy", "an old server's tool may destroy"),
    ("idempotent (idempotentHint)", "a client that retries idempotent calls may now repeat a write",
     "an old server's tool is not idempotent"),
    ("closed world (openWorldHint)", "a client that trusts closed-world tools now runs one that reaches outside",
     "an old server's tool reaches outside"),
)


def _promises(manifest: dict[str, Any]) -> tuple[bool, bool, bool, bool]:
    hints = _table(_table(manifest, "mcp"), "annotations")
    read_only = hints.get("readOnlyHint") is True
    return (read_only, read_only or hints.get("destructiveHint") is False,
            read_only or hints.get("idempotentHint") is True, hints.get("openWorldHint") is False)


def hint_changes(old_manifest: dict[str, Any], new_manifest: dict[str, Any]) -> list[PolicyChange]:
    """A promise the tool no longer makes breaks clients that acted on it; one it now makes breaks
    new clients of old servers, whose tool does not keep it."""
    if not (isinstance(old_manifest.get("mcp"), dict) and isinstance(new_manifest.get("mcp"), dict)):
        return []
    changes = []
    for (label, dropped, made), was, now in zip(_PROMISES, _promises(old_manifest), _promises(new_manifest),
                                                strict=True):
        if was and not now:
            changes.append(PolicyChange(f"MCP tool no longer {label}", old_clients=dropped))
        elif now and not was:
            changes.append(PolicyChange(f"MCP tool now {label}", new_clients=made))
    if not changes and _table(old_manifest["mcp"], "annotations") != _table(new_manifest["mcp"], "annotations"):
        changes.append(PolicyChange("MCP annotations changed, no promise with them"))
    return changes


def text_content_changes(old_manifest: dict[str, Any], new_manifest: dict[str, Any]) -> list[PolicyChange]:
    """An MCP result's text content (`mcp.text_content`): the result's JSON, compact or indented, is the
    same value for a client that parses it; the handler's own text is not JSON a client can parse."""
    if not (isinstance(old_manifest.get("mcp"), dict) and isinstance(new_manifest.get("mcp"), dict)):
        return []
    old, new = mcp_text_content(old_manifest), mcp_text_content(new_manifest)
    if old == new:
        return []
    what = f"MCP text content {old} -> {new}"
    if "handler" not in (old, new):
        return [PolicyChange(what + " (the same JSON, laid out otherwise)")]
    if new == "handler":
        return [PolicyChange(what, old_clients="a client that reads the result's JSON from its text content now "
                                               "gets the handler's text", new_clients="an old server's text content "
                                                                                     "is the result's JSON")]
    return [PolicyChange(what, old_clients="a client that reads the handler's text now gets the result's JSON",
                         new_clients="an old server's text content is the handler's text")]


# manifest keys (top level, or (surface, key)) whose changes are judged here
COMPARED = ("auth", "max_request_bytes", ("rest", "success_statuses"), ("mcp", "annotations"),
            ("mcp", "text_content"))


def policy_changes(old_manifest: dict[str, Any], new_manifest: dict[str, Any],
                   old_limit: int, new_limit: int) -> list[PolicyChange]:
    """Every change of what clients rely on besides schemas and names (`old_limit`, `new_limit`:
    the effective request limits, from request_limit)."""
    return [*auth_changes(old_manifest, new_manifest), *limit_changes(old_limit, new_limit),
            *status_changes(old_manifest, new_manifest), *hint_changes(old_manifest, new_manifest),
            *text_content_changes(old_manifest, new_manifest)]
