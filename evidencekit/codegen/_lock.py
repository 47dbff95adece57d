"""contracts.lock.json: the hash of every operation's contract, pinned, with its history.

A contract change without a lock update fails `codegen check` (and `generate` refuses to run)
until someone reviews it and accepts it (`codegen lock`; a breaking change only with
`--accept-breaking --reason`, see codegen._gate). Per operation the lock also records:

* `compatible_with`: the earlier contract hashes whose clients this contract still serves
  (every change since was compatible both ways); the server answers those clients instead of
  refusing them with 412, telling them a newer contract exists.
* `breaking_changes`: each acknowledged break, with its reason and the version it came with.
* `max_request_bytes`: the largest request it takes (its manifest's, else the project's): a limit
  moved since the lock, in the manifest or in pyproject.toml, is a change `lock` judges like any other.

Operations removed by an acknowledged break are kept under `retired`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from evidencekit.contracts._loader import LOCK_NAME, Operation, canonical_json
from evidencekit.contracts._policy import DEFAULT_MAX_REQUEST_BYTES, request_limit

LOCK_COMMENT = "Pinned contract hashes. Update with `evidencekit codegen lock` after reviewing `evidencekit codegen diff`."

History = dict[str, dict[str, Any]]  # operation -> {"compatible_with": [...], "breaking_changes": [...]}


def file_digest(value: Any) -> str:
    """A contract file's digest: sha256 over its RFC 8785 canonical JSON, so reformatting changes nothing."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def read_lock(root: Path) -> dict[str, Any]:
    """The lock document under `root`; an empty one when it is missing or unreadable."""
    try:
        document = json.loads((root / LOCK_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"operations": {}}
    return document if isinstance(document, dict) and isinstance(document.get("operations"), dict) else {
        "operations": {}}


def history_of(document: dict[str, Any]) -> tuple[History, dict[str, Any]]:
    """(per-operation history, retired operations) as a lock document records them."""
    history = {
        name: {"compatible_with": list(entry.get("compatible_with", [])),
               "breaking_changes": list(entry.get("breaking_changes", []))}
        for name, entry in document.get("operations", {}).items() if isinstance(entry, dict)
    }
    return history, dict(document.get("retired", {}))


def lock_document(operations: list[Operation], history: History | None = None,
                  retired: dict[str, Any] | None = None,
                  default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> dict[str, Any]:
    history = history or {}
    document: dict[str, Any] = {
        "comment": LOCK_COMMENT,
        "operations": {
            op.name: {
                "contract_hash": op.contract_hash,
                "version": str(op.manifest.get("version", "1")),
                "max_request_bytes": request_limit(op.manifest, default_limit),
                "sha256": op.sha256,
                "files": {rel: file_digest(op.document[rel]) for rel in sorted(op.document)},
                "compatible_with": history.get(op.name, {}).get("compatible_with", []),
                "breaking_changes": history.get(op.name, {}).get("breaking_changes", []),
            }
            for op in operations
        },
    }
    if retired:
        document["retired"] = {name: retired[name] for name in sorted(retired)}
    return document


def render_lock(operations: list[Operation], history: History | None = None,
                retired: dict[str, Any] | None = None, default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> str:
    return json.dumps(lock_document(operations, history, retired, default_limit), indent=2, sort_keys=False) + "\n"


def compatible_hashes(root: Path) -> dict[str, list[str]]:
    """operation -> the earlier hashes whose clients its current contract serves (from the lock)."""
    return {name: entry["compatible_with"] for name, entry in history_of(read_lock(root))[0].items()}


def lock_problems(operations: list[Operation], root: Path,
                  default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> list[str]:
    """Why the lock does not match the contracts (empty when it does); `default_limit`: the
    project's `max_request_bytes`."""
    path = root / LOCK_NAME
    if not path.exists():
        return [f"{path} is missing: run `evidencekit codegen lock`"]
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        locked = document.get("operations", {})
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
        elif entry.get("max_request_bytes", request_limit(op.manifest, default_limit)) != request_limit(
                op.manifest, default_limit):
            problems.append(f"contracts/{name}: max_request_bytes locked {entry.get('max_request_bytes')}, now "
                            f"{request_limit(op.manifest, default_limit)} (the project's max_request_bytes)")
    if not problems and path.read_text(encoding="utf-8") != render_lock(operations, *history_of(document),
                                                                         default_limit):
        unrecorded = [name for name in sorted(current) if "max_request_bytes" not in locked.get(name, {})]
        if unrecorded:  # a lock an earlier evidencekit wrote: nothing changed but what the lock records
            problems.append(f"{path} records no max_request_bytes for {', '.join(unrecorded)} (a lock written by "
                            "an earlier evidencekit; the lock now records each operation's request limit, so "
                            "that lowering it is judged breaking): run `evidencekit codegen lock` once and commit it")
        else:
            problems.append(f"{path} is not in its canonical form: run `evidencekit codegen lock`")
    return problems


def write_lock(operations: list[Operation], root: Path, history: History | None = None,
               retired: dict[str, Any] | None = None, default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> bool:
    path = root / LOCK_NAME
    text = render_lock(operations, history, retired, default_limit)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True
