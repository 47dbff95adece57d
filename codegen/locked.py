"""What changed since the lock, classified: the locked version of each schema file and manifest is
found in git history by the digest the lock pinned for it, and compared with the file now (schemas
direction-aware; manifests by the names clients call the operation by).

`lock` prints this before accepting a change; `generate` and `check` print it when they refuse.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from evidencekit.codegen.lock import file_digest
from evidencekit.codegen.manifest_diff import manifest_changes
from evidencekit.codegen.schema_diff import diff_schemas, format_changes
from evidencekit.contracts.loader import LOCK_NAME, MANIFEST_NAME, Operation

_HISTORY = 200  # commits searched per file


def _git(folder: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def locked_version(path: Path, digest: str) -> Any:
    """The JSON of `path` whose canonical digest is `digest` (lock.file_digest), from git's index or
    the file's recent history; None when it is not there."""
    listed = _git(path.parent, "log", f"-n{_HISTORY}", "--format=%H", "--", path.name)
    revisions = [""] + (listed.decode().split() if listed else [])  # "" is the index
    for revision in revisions:
        content = _git(path.parent, "show", f"{revision}:./{path.name}")
        if content is None:
            continue
        try:
            value = json.loads(content)
        except ValueError:
            continue
        if file_digest(value) == digest:
            return value
    return None


def _locked_files(root: Path) -> dict[str, dict[str, str]]:
    try:
        locked = json.loads((root / LOCK_NAME).read_text(encoding="utf-8")).get("operations", {})
        return {name: dict(entry.get("files", {})) for name, entry in locked.items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _direction(rel: str) -> str | None:
    if rel.endswith(".input.schema.json"):
        return "request"
    if rel.endswith(".output.schema.json"):
        return "response"
    return None


MISMATCH_NOTE = ("the contract hash changes with any change: clients generated from the locked contract raise "
                 "ContractMismatch on answers from a server generated from this one (or warn, with "
                 "on_contract_mismatch=\"warn\"); regenerate both")


def change_report(operations: list[Operation], root: Path) -> tuple[list[str], int]:
    """Lines describing every change since the lock that clients can notice, and how many break them."""
    locked_files = _locked_files(root)
    lines: list[str] = []
    breaking = 0
    for name in sorted(set(locked_files) - {op.name for op in operations}):
        lines.append(f"contracts/{name}: operation removed, BREAKING for its clients")
        breaking += 1
    for op in operations:
        if op.name not in locked_files:
            lines.append(f"contracts/{op.name}: new operation")
            continue
        before = locked_files[op.name]
        for rel in sorted(set(before) | set(op.document)):
            now = file_digest(op.document[rel]) if rel in op.document else None
            if before.get(rel) == now:
                continue
            found, count = _file_changes(op, rel, before.get(rel), now)
            lines += found
            breaking += count
    return lines, breaking


def _file_changes(op: Operation, rel: str, locked: str | None, now: str | None) -> tuple[list[str], int]:
    direction = _direction(rel)
    if direction is None and rel != MANIFEST_NAME:
        return [], 0  # examples: documentation, not the interface
    label = f"contracts/{op.name}/{rel}" + (f" ({direction})" if direction else "")
    if now is None:
        return [f"{label}: removed, BREAKING for clients of this variant"], 1
    if locked is None:
        return [f"{label}: new"], 0
    old = locked_version(op.folder / rel, locked)
    if old is None:
        return [f"{label}: changed; its locked version is not in git history, compare it with "
                "`evidencekit codegen diff OLD NEW`"], 0
    if direction is None:
        found = manifest_changes(old, op.document[rel])
        return [f"{label}:", *(f"  {'BREAKING' if bad else 'ok':<10}{what}" for bad, what in found)], sum(
            bad for bad, _ in found)
    changes = diff_schemas(old, op.document[rel], direction)  # type: ignore[arg-type]
    return [f"{label}:", *("  " + line for line in format_changes(changes).splitlines())], sum(
        change.breaking for change in changes)
