"""contracts.lock.json: the hash of every operation's contract, pinned.

A contract change without a lock update fails `codegen check` (and `generate` refuses to run)
until someone reviews it (`codegen diff`) and accepts it (`codegen lock`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from evidencekit.contracts.loader import LOCK_NAME, Operation, canonical_json

LOCK_COMMENT = "Pinned contract hashes. Update with `evidencekit codegen lock` after reviewing `evidencekit codegen diff`."


def file_digest(value: Any) -> str:
    """A contract file's digest: sha256 over its RFC 8785 canonical JSON, so reformatting changes nothing."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def lock_document(operations: list[Operation]) -> dict[str, Any]:
    return {
        "comment": LOCK_COMMENT,
        "operations": {
            op.name: {
                "contract_hash": op.contract_hash,
                "sha256": op.sha256,
                "files": {rel: file_digest(op.document[rel]) for rel in sorted(op.document)},
            }
            for op in operations
        },
    }


def render_lock(operations: list[Operation]) -> str:
    return json.dumps(lock_document(operations), indent=2, sort_keys=False) + "\n"


def lock_problems(operations: list[Operation], root: Path) -> list[str]:
    """Why the lock does not match the contracts (empty when it does)."""
    path = root / LOCK_NAME
    if not path.exists():
        return [f"{path} is missing: run `evidencekit codegen lock`"]
    try:
        locked = json.loads(path.read_text(encoding="utf-8")).get("operations", {})
    except (json.JSONDecodeError, AttributeError) as exc:
        return [f"{path} is not a valid lock file ({exc}): run `evidencekit codegen lock`"]
    problems = []
    current = {op.name: op for op in operations}
    for name in sorted(set(locked) - set(current)):
        problems.append(f"contracts/{name} is locked but no longer exists")
    for name, op in current.items():
        entry = locked.get(name)
        if entry is None:
            problems.append(f"contracts/{name} ({op.contract_hash}) is not in the lock")
        elif entry.get("sha256") != op.sha256:
            changed = [
                rel for rel in sorted(set(entry.get("files", {})) | set(op.document))
                if entry.get("files", {}).get(rel) != (file_digest(op.document[rel]) if rel in op.document else None)
            ]
            problems.append(
                f"contracts/{name} changed: locked {entry.get('contract_hash')}, now {op.contract_hash}"
                f" (files: {', '.join(changed) or 'canonical content'})"
            )
    if not problems and path.read_text(encoding="utf-8") != render_lock(operations):
        problems.append(f"{path} is not in its canonical form: run `evidencekit codegen lock`")
    return problems


def write_lock(operations: list[Operation], root: Path) -> bool:
    path = root / LOCK_NAME
    text = render_lock(operations)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True
