"""Whether a change of one operation's contract breaks its clients: every finding, one line each.

`diff` prints these for two folders, `lock` before it accepts a change (refusing a breaking one
unless acknowledged), and `check --against REF` for every operation changed since REF.

A break is acknowledged by a reason recorded in the lock and a higher major `version` in the
operation's manifest (a manifest without `version` is version 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from evidencekit.codegen._manifest_diff import manifest_changes
from evidencekit.codegen._policy_diff import PolicyChange, policy_changes
from evidencekit.codegen._schema_diff import POLICIES, Direction, Policy, diff_schemas
from evidencekit.contracts._loader import Operation
from evidencekit.contracts._policy import DEFAULT_MAX_REQUEST_BYTES, request_limit


@dataclass(frozen=True)
class Finding:
    where: str  # "manifest", "mcp input (request)", "operation", "variant rest"
    line: str  # "BREAKING  kind  $.path: detail; why" or "ok  ..."
    breaking: bool

    def __str__(self) -> str:
        return f"{self.where}: {self.line}"


def _line(breaking: bool, text: str) -> str:
    return f"{'BREAKING' if breaking else 'ok':<10}{text}"


MODES = ("backward", "forward", "full")
_FORWARD_WHY = {"request": "breaks new clients of old servers: a request the new schema admits is refused by "
                           "an old server",
                "response": "breaks new clients of old servers: an old server's answer fails the new schema"}


@dataclass(frozen=True)
class Compatibility:
    """What "compatible" means for a project (`[tool.evidencekit.codegen]` `compatibility` and
    `compatibility_mode`): the policy the schema differ reads properties with (`semantic`: sound;
    `lenient`: clients send and read only declared properties), and whose clients must keep working:
    `backward` (old clients against the new server), `forward` (new clients against old servers),
    `full` (both); `transitive` against every version since the last acknowledged break, not only
    the locked one."""

    policy: Policy = "semantic"
    mode: str = "backward"
    transitive: bool = False

    @classmethod
    def parse(cls, policy: str, mode: str) -> Compatibility:
        """From the config's two strings; ValueError naming what is accepted."""
        if policy not in POLICIES:
            raise ValueError(f"compatibility must be one of {', '.join(POLICIES)}, not {policy!r}")
        base, transitive = mode.removesuffix("_transitive"), mode.endswith("_transitive")
        if base not in MODES:
            raise ValueError(f"compatibility_mode must be one of {', '.join(MODES)}, each optionally with "
                             f"_transitive, not {mode!r}")
        return cls(policy, base, transitive)  # type: ignore[arg-type]

    @property
    def mode_name(self) -> str:
        return f"{self.mode}{'_transitive' if self.transitive else ''}"

    def __str__(self) -> str:
        return f"{self.policy}, {self.mode_name}"


def schema_findings(label: str, old: Any, new: Any, direction: Direction,
                    compatibility: Compatibility = Compatibility()) -> list[Finding]:
    """One schema's findings under the mode: backward reads `direction` as is; forward turns it
    around (what new clients send must reach old servers, what old servers answer must satisfy new
    clients); full does both."""
    findings: list[Finding] = []
    seen: set[str] = set()
    if compatibility.mode in ("backward", "full"):
        for change in diff_schemas(old, new, direction, compatibility.policy):
            findings.append(Finding(f"{label} ({direction})", change.line(), change.breaking))
            seen.add(change.line())
    if compatibility.mode in ("forward", "full"):
        turned: Direction = "response" if direction == "request" else "request"
        for change in diff_schemas(old, new, turned, compatibility.policy):
            line = change.line() if not change.breaking else replace(change, why=_FORWARD_WHY[direction]).line()
            if change.breaking or compatibility.mode == "forward":
                findings.append(Finding(f"{label} ({direction}, forward)", line, change.breaking))
    return findings


def policy_finding(change: PolicyChange, compatibility: Compatibility) -> Finding:
    """A policy change, breaking for the side the mode guards: old clients (backward), new clients
    of old servers (forward), or either (full)."""
    why = []
    if change.old_clients and compatibility.mode in ("backward", "full"):
        why.append(f"breaks old clients: {change.old_clients}")
    if change.new_clients and compatibility.mode in ("forward", "full"):
        why.append(f"breaks new clients of old servers: {change.new_clients}")
    return Finding("policy", _line(bool(why), "; ".join([change.what, *why])), bool(why))


def _surface_findings(before: Operation, after: Operation, compatibility: Compatibility) -> list[Finding]:
    """A surface (REST, MCP) that now serves another variant: its clients meet the other schemas."""
    findings: list[Finding] = []
    for surface in ("rest", "mcp"):
        was, now = (before.manifest.get(surface) or {}).get("variant"), (after.manifest.get(surface) or {}).get("variant")
        if was is None or now is None or was == now or was not in before.variants or now not in after.variants:
            continue
        label = f"{surface} surface ({was} -> {now})"
        findings += schema_findings(f"{label} input", before.variants[was].input_schema,
                                    after.variants[now].input_schema, "request", compatibility)
        findings += schema_findings(f"{label} output", before.variants[was].output_schema,
                                    after.variants[now].output_schema, "response", compatibility)
    return findings


def operation_findings(before: Operation, after: Operation,
                       compatibility: Compatibility = Compatibility(),
                       limits: tuple[int, int] | None = None) -> list[Finding]:
    """Every change from `before` to `after` clients could notice, classified (schemas by direction,
    under the project's compatibility). `limits`: the largest request each takes, when the project's
    default is known (else each manifest's, or the default)."""
    findings: list[Finding] = []
    if before.name != after.name:
        findings.append(Finding("operation", _line(True, f"renamed {before.name!r} -> {after.name!r}; "
                                                         "breaks old clients: they call it by its name"), True))
    for bad, what in manifest_changes(before.manifest, after.manifest):
        why = "; breaks old clients: they call the operation by it" if bad else ""
        findings.append(Finding("manifest", _line(bad, what + why), bad))
    old_limit, new_limit = limits or (request_limit(before.manifest, DEFAULT_MAX_REQUEST_BYTES),
                                      request_limit(after.manifest, DEFAULT_MAX_REQUEST_BYTES))
    findings += [policy_finding(change, compatibility)
                 for change in policy_changes(before.manifest, after.manifest, old_limit, new_limit)]
    findings += _surface_findings(before, after, compatibility)
    for name in sorted(set(before.variants) | set(after.variants)):
        if name not in after.variants:
            findings.append(Finding(f"variant {name}", _line(True, "removed; breaks old clients of this variant"), True))
            continue
        if name not in before.variants:
            findings.append(Finding(f"variant {name}", _line(False, "added"), False))
            continue
        was, now = before.variants[name], after.variants[name]
        findings += schema_findings(f"{name} input", was.input_schema, now.input_schema, "request", compatibility)
        findings += schema_findings(f"{name} output", was.output_schema, now.output_schema, "response",
                                    compatibility)
    return findings


_MAJOR = re.compile(r"\s*v?(\d+)")


def declared_version(operation: Operation) -> str:
    return str(operation.manifest.get("version", "1"))


def major(version: str) -> int:
    """The leading number of a version ("2.1" -> 2); 1 when there is none."""
    found = _MAJOR.match(version)
    return int(found.group(1)) if found else 1
