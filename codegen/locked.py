"""What changed since the lock, classified: the locked version of each schema file is found in git
history by the digest the lock pinned for it, and compared direction-aware with the file now.

`lock` prints this before accepting a change; `generate` and `check` print it when they refuse.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from contracts.loader import LOCK_NAME, Operation

from .schema_diff import diff_schemas, format_changes

_HISTORY = 200  # commits searched per file


def _git(folder: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def locked_text(path: Path, digest: str) -> bytes | None:
    """The content of `path` whose sha256 is `digest`: from git's index or the file's recent history."""
    listed = _git(path.parent, "log", f"-n{_HISTORY}", "--format=%H", "--", path.name)
    revisions = [""] + (listed.decode().split() if listed else [])  # "" is the index
    for revision in revisions:
        content = _git(path.parent, "show", f"{revision}:./{path.name}")
        if content is not None and hashlib.sha256(content).hexdigest() == digest:
            return content
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


def change_report(operations: list[Operation], root: Path) -> tuple[list[str], int]:
    """Lines describing every schema change since the lock, and how many changes are breaking."""
    locked_files = _locked_files(root)
    lines: list[str] = []
    breaking = 0
    for op in operations:
        before = locked_files.get(op.name, {})
        for rel in sorted(set(before) | set(op.document)):
            direction = _direction(rel)
            path = op.folder / rel
            now = hashlib.sha256(path.read_bytes()).hexdigest() if rel in op.document else None
            if direction is None or before.get(rel) == now:
                continue
            label = f"contracts/{op.name}/{rel} ({direction})"
            if now is None:
                lines.append(f"{label}: removed, BREAKING for clients of this variant")
                breaking += 1
                continue
            if rel not in before:
                lines.append(f"{label}: new")
                continue
            old_text = locked_text(path, before[rel])
            if old_text is None:
                lines.append(f"{label}: changed; its locked version is not in git history, compare it with "
                             "`python -m codegen diff OLD NEW`")
                continue
            old: Any = json.loads(old_text)
            changes = diff_schemas(old, op.document[rel], direction)  # type: ignore[arg-type]
            breaking += sum(change.breaking for change in changes)
            lines.append(f"{label}:")
            lines += ["  " + line for line in format_changes(changes).splitlines()]
    return lines, breaking
