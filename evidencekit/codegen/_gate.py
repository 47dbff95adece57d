"""The breaking-change gate, like `buf breaking`.

`lock` accepts a compatible change at once (and records the earlier hash as one whose clients the
new contract still serves); it refuses a change that breaks clients unless acknowledged:
`--accept-breaking --reason TEXT` records the reason in the lock, and the operation's manifest
must carry a higher major `version` than the locked one. A change whose locked version cannot be
found in git counts as breaking: nobody can tell.

`check --against REF` compares the contracts with those at a git ref (default: the merge base
with main) and fails on every break since then that the lock does not acknowledge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evidencekit.codegen._breaking import (
    Compatibility,
    Finding,
    declared_version,
    major,
    operation_findings,
)
from evidencekit.codegen._lock import History, history_of, read_lock
from evidencekit.codegen._locked import contracts_at, earlier_versions, locked_operation
from evidencekit.contracts._loader import Operation
from evidencekit.contracts._policy import DEFAULT_MAX_REQUEST_BYTES, request_limit

ACCEPT_HINT = ("to accept it: raise the major `version` in the operation's manifest.json, then run "
               "`evidencekit codegen lock --accept-breaking --reason \"why clients must move\"`")


@dataclass
class LockDecision:
    lines: list[str] = field(default_factory=list)  # what changed since the lock, per operation
    refused: list[str] = field(default_factory=list)  # why the lock cannot be written (empty: it can)
    breaking: int = 0
    history: History = field(default_factory=dict)
    retired: dict[str, Any] = field(default_factory=dict)


def _unique(hashes: list[str]) -> list[str]:
    return list(dict.fromkeys(hashes))


def decide(operations: list[Operation], root: Path, reason: str | None,
           compatibility: Compatibility | None = None,
           default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> LockDecision:
    """What `lock` may record for `operations`, given the lock now under `root` (`default_limit`:
    the project's `max_request_bytes`, which the lock records per operation)."""
    document = read_lock(root)
    locked: dict[str, Any] = document["operations"]
    history, retired = history_of(document)
    decision = LockDecision(history=history, retired=retired)
    current = {op.name for op in operations}
    for name in sorted(set(locked) - current):
        decision.lines.append(f"contracts/{name}: operation removed; BREAKING: breaks its clients")
        decision.breaking += 1
        if reason is None:
            decision.refused.append(f"contracts/{name}: removing an operation breaks its clients")
        else:
            decision.retired[name] = {"contract_hash": locked[name].get("contract_hash"), "reason": reason}
        decision.history.pop(name, None)
    for op in operations:
        entry = locked.get(op.name)
        if entry is None:
            decision.lines.append(f"contracts/{op.name}: new operation")
            decision.history[op.name] = {"compatible_with": [], "breaking_changes": []}
            decision.retired.pop(op.name, None)
        elif (entry.get("sha256") != op.sha256
              or entry.get("max_request_bytes", request_limit(op.manifest, default_limit))
              != request_limit(op.manifest, default_limit)):
            _decide_change(op, entry, reason, decision, compatibility or Compatibility(), default_limit)
    return decision


def _decide_change(op: Operation, entry: dict[str, Any], reason: str | None, decision: LockDecision,
                   compatibility: Compatibility, default_limit: int) -> None:
    before = op if entry.get("sha256") == op.sha256 else locked_operation(op, entry.get("files", {}))
    label = f"contracts/{op.name}"
    if before is None:
        findings = [Finding("lock", "BREAKING  its locked version is not in git history, so nobody can tell "
                                    "what changed (compare with `evidencekit codegen diff OLD NEW`)", True)]
    else:
        was_limit = entry.get("max_request_bytes")
        limits = (was_limit if isinstance(was_limit, int) else request_limit(before.manifest, default_limit),
                  request_limit(op.manifest, default_limit))
        findings = operation_findings(before, op, compatibility, limits)
        if compatibility.transitive:
            findings += transitive_findings(op, before, decision.history.get(op.name, {}), compatibility)
    breaks = [finding for finding in findings if finding.breaking]
    decision.lines += [f"{label}: {finding}" for finding in findings] or [f"{label}: changed, nothing clients use"]
    decision.breaking += len(breaks)
    record = decision.history.setdefault(op.name, {"compatible_with": [], "breaking_changes": []})
    if not breaks:
        if entry.get("contract_hash") != op.contract_hash:
            record["compatible_with"] = _unique([*record["compatible_with"], str(entry.get("contract_hash"))])
        return
    was, version = str(entry.get("version", "1")), declared_version(op)
    if reason is None:
        decision.refused.append(f"{label}: {len(breaks)} breaking change{'s' if len(breaks) > 1 else ''}")
    elif major(version) <= major(was):
        decision.refused.append(f"{label}: a breaking change needs a higher major version: the lock has "
                                f"{was!r}, manifest.json says {version!r}")
    else:
        record["compatible_with"] = []  # old clients of every earlier hash may break now
        record["breaking_changes"] = [*record["breaking_changes"], {
            "from": entry.get("contract_hash"), "to": op.contract_hash, "version": version, "reason": reason,
            "changes": [f"{finding.where}: {finding.line}" for finding in breaks],
        }]


def transitive_findings(op: Operation, compared: Operation, history: dict[str, Any],
                        compatibility: Compatibility) -> list[Finding]:
    """`_transitive` modes: the operation against every committed version since the last
    acknowledged break (besides `compared`, already judged), each finding naming the version."""
    breaks = history.get("breaking_changes") or []
    until = str(breaks[-1].get("to")) if breaks else None
    found: list[Finding] = []
    for earlier in earlier_versions(op, until):
        if earlier.contract_hash in (op.contract_hash, compared.contract_hash):
            continue
        for finding in operation_findings(earlier, op, compatibility):
            if finding.breaking:
                found.append(Finding(f"{finding.where} against {earlier.contract_hash}", finding.line, True))
    return found


@dataclass
class Verdict:
    lines: list[str] = field(default_factory=list)  # one per break: acknowledged or not
    unacknowledged: int = 0
    acknowledged: int = 0
    compared: int = 0  # operations changed since the ref


def against(operations: list[Operation], root: Path, ref: str,
            compatibility: Compatibility | None = None,
            default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> Verdict | None:
    """Every break between the contracts at `ref` and now, each acknowledged by the lock or not;
    None when `ref` is not a commit here. The request limits then are those the lock at `ref`
    recorded (else its manifests', with today's project default)."""
    found = contracts_at(ref, root)
    if found is None:
        return None
    old_operations, old_lock = found
    old_history, old_retired = history_of(old_lock)
    new_history, new_retired = history_of(read_lock(root))
    current = {op.name: op for op in operations}
    verdict = Verdict()
    for old in old_operations:
        now = current.get(old.name)
        if now is None:
            verdict.compared += 1
            why = new_retired.get(old.name, {}).get("reason") if old.name not in old_retired else None
            _record(verdict, f"contracts/{old.name}: operation removed; BREAKING: breaks its clients", why)
            continue
        recorded_limit = old_lock.get("operations", {}).get(old.name, {}).get("max_request_bytes")
        limits = (recorded_limit if isinstance(recorded_limit, int) else request_limit(old.manifest, default_limit),
                  request_limit(now.manifest, default_limit))
        if now.sha256 == old.sha256 and limits[0] == limits[1]:
            continue
        verdict.compared += 1
        chosen = compatibility or Compatibility()
        breaks = [finding for finding in operation_findings(old, now, chosen, limits) if finding.breaking]
        if chosen.transitive:
            breaks += transitive_findings(now, old, new_history.get(now.name, {}), chosen)
        if not breaks:
            continue
        recorded = [entry for entry in new_history.get(now.name, {}).get("breaking_changes", [])
                    if entry not in old_history.get(old.name, {}).get("breaking_changes", [])]
        bumped = major(declared_version(now)) > major(declared_version(old))
        reason = "; ".join(str(entry.get("reason")) for entry in recorded) if recorded and bumped else None
        for finding in breaks:
            _record(verdict, f"contracts/{now.name}: {finding}", reason)
    return verdict


def _record(verdict: Verdict, line: str, reason: str | None) -> None:
    if reason is None:
        verdict.unacknowledged += 1
        verdict.lines.append(f"{line} [NOT ACKNOWLEDGED]")
    else:
        verdict.acknowledged += 1
        verdict.lines.append(f"{line} [acknowledged: {reason}]")
