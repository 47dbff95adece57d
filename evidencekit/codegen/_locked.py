"""Earlier versions of the contracts, from git: the version the lock pinned (found by the digest it
recorded for each file) and the version at any git ref (`check --against REF`)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from evidencekit.codegen._lock import file_digest
from evidencekit.contracts._loader import (
    LOCK_NAME,
    MANIFEST_NAME,
    ContractError,
    Operation,
    load_operation,
    load_operations,
)

_HISTORY = 200  # commits searched per file


def git(folder: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def locked_version(path: Path, digest: str) -> Any:
    """The JSON of `path` whose canonical digest is `digest` (lock.file_digest), from git's index or
    the file's recent history; None when it is not there."""
    listed = git(path.parent, "log", f"-n{_HISTORY}", "--format=%H", "--", path.name)
    revisions = [""] + (listed.decode().split() if listed else [])  # "" is the index
    for revision in revisions:
        content = git(path.parent, "show", f"{revision}:./{path.name}")
        if content is None:
            continue
        try:
            value = json.loads(content)
        except ValueError:
            continue
        if file_digest(value) == digest:
            return value
    return None


def _materialised(files: dict[str, Any], load: Any) -> Any:
    """Write `files` (relative path -> JSON) to a scratch folder and load them from there."""
    with tempfile.TemporaryDirectory(prefix="evidencekit-locked-") as scratch:
        for rel, value in files.items():
            target = Path(scratch, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(value), encoding="utf-8")
        loaded = load(Path(scratch))
        for operation in loaded if isinstance(loaded, list) else [loaded]:
            _ = operation.document  # read now: the scratch folder goes away
        return loaded


def locked_operation(operation: Operation, files: dict[str, str]) -> Operation | None:
    """The operation as the lock pinned it (`files`: relative path -> digest), rebuilt from git;
    None when a file it needs is not in git's index or history."""
    wanted: dict[str, Any] = {}
    manifest_digest = files.get(MANIFEST_NAME)
    if manifest_digest is None:
        return None
    manifest = locked_version(operation.folder / MANIFEST_NAME, manifest_digest)
    if not isinstance(manifest, dict):
        return None
    wanted[MANIFEST_NAME] = manifest
    for variant in (manifest.get("variants") or {}).values():
        for rel in (variant.get("input"), variant.get("output")):
            if not isinstance(rel, str) or rel not in files:
                return None
            value = locked_version(operation.folder / rel, files[rel])
            if value is None:
                return None
            wanted[rel] = value
    try:
        found: Operation = _materialised(wanted, lambda folder: load_operation(folder, named_by_folder=False, strict=False))
    except ContractError:
        return None
    return found


def merge_base(folder: Path, branches: tuple[str, ...] = ("main", "origin/main", "master", "origin/master")) -> str | None:
    """The commit where HEAD left the main branch (HEAD itself on main)."""
    for branch in branches:
        found = git(folder, "merge-base", "HEAD", branch)
        if found:
            return found.decode().strip()
    return None


def contracts_at(ref: str, contracts: Path) -> tuple[list[Operation], dict[str, Any]] | None:
    """The operations and the lock document in `contracts` as of git `ref` (([], {}) when the folder
    did not exist then); None when `ref` is not a commit of this repository."""
    if git(contracts, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") is None:
        return None
    listed = git(contracts, "ls-tree", "-r", "--name-only", ref, "--", ".")
    files: dict[str, Any] = {}
    for rel in (listed or b"").decode().splitlines():
        if not rel.endswith(".json"):
            continue
        content = git(contracts, "show", f"{ref}:./{rel}")
        try:
            files[rel] = json.loads(content or b"")
        except ValueError:
            continue
    lock = files.pop(LOCK_NAME, {"operations": {}})
    if not any(rel.endswith("/" + MANIFEST_NAME) for rel in files):
        return [], lock
    operations: list[Operation] = _materialised(files, lambda folder: load_operations(folder, strict=False))
    return operations, lock


def earlier_versions(operation: Operation, until: str | None = None) -> list[Operation]:
    """Every committed version of the operation's folder, newest first, one per contract hash, back
    to (and with) the version whose hash is `until` (the last acknowledged break's), or as far as
    git history goes."""
    folder = operation.folder
    listed = git(folder, "log", f"-n{_HISTORY}", "--format=%H", "--", ".")
    versions: list[Operation] = []
    seen: set[str] = set()
    for commit in (listed or b"").decode().split():
        names = git(folder, "ls-tree", "-r", "--name-only", commit, "--", ".")
        files: dict[str, Any] = {}
        for rel in (names or b"").decode().splitlines():
            content = git(folder, "show", f"{commit}:./{rel}") if rel.endswith(".json") else None
            try:
                files[rel] = json.loads(content or b"")
            except ValueError:
                continue
        if MANIFEST_NAME not in files:
            continue
        try:
            version: Operation = _materialised(files, lambda path: load_operation(path, named_by_folder=False, strict=False))
        except ContractError:
            continue
        if version.contract_hash not in seen:
            seen.add(version.contract_hash)
            versions.append(version)
        if version.contract_hash == until:
            break
    return versions
