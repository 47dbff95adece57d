"""Read the published contracts: one folder per operation, a manifest, schemas per variant.

A folder holds `manifest.json`, one input and one output schema per published variant
(`<variant>.input.schema.json`, `<variant>.output.schema.json`) and `examples/`.
The contract of an operation is every JSON file in its folder; its hash is sha256 over
the RFC 8785 canonical JSON of `{relative path: parsed file}`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import rfc8785

CONTRACTS_DIR = Path(__file__).resolve().parent
LOCK_NAME = "contracts.lock.json"
MANIFEST_NAME = "manifest.json"


class ContractError(Exception):
    """A contract file is missing or malformed; `path` says which one."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.message = message


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContractError(path, "file not found") from None
    except json.JSONDecodeError as exc:
        raise ContractError(path, f"invalid JSON: {exc}") from None


def short_hash(hex_digest: str) -> str:
    """The form the published pages use: `sha256:` + 16 hex digits."""
    return f"sha256:{hex_digest[:16]}"


@dataclass(frozen=True)
class Variant:
    """One published form of an operation's schemas (e.g. the MCP page or the REST page)."""

    name: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    input_file: str
    output_file: str
    source: str = ""


@dataclass(frozen=True)
class Operation:
    name: str
    folder: Path
    manifest: dict[str, Any]
    variants: dict[str, Variant] = field(default_factory=dict)

    @property
    def python_name(self) -> str:
        return str(self.manifest["python_name"])

    @property
    def class_prefix(self) -> str:
        return "".join(part.capitalize() for part in self.python_name.split("_"))

    @property
    def title(self) -> str:
        return str(self.manifest["title"]["en"])

    @property
    def description(self) -> str:
        return str(self.manifest["description"]["en"])

    @property
    def mcp(self) -> dict[str, Any] | None:
        return self.manifest.get("mcp")

    @property
    def rest(self) -> dict[str, Any] | None:
        return self.manifest.get("rest")

    @property
    def model_variant(self) -> Variant:
        """The variant the typed models are generated from (the strictest published one)."""
        return self.variants[self.manifest["model_variant"]]

    @property
    def rest_variant(self) -> Variant | None:
        rest = self.rest
        return None if rest is None else self.variants[rest["variant"]]

    @property
    def mcp_variant(self) -> Variant | None:
        mcp = self.mcp
        return None if mcp is None else self.variants[mcp["variant"]]

    @cached_property
    def document(self) -> dict[str, Any]:
        """Every JSON file of the operation, keyed by its path relative to the folder."""
        return {
            path.relative_to(self.folder).as_posix(): read_json(path)
            for path in sorted(self.folder.rglob("*.json"))
        }

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(rfc8785.dumps(self.document)).hexdigest()

    @property
    def contract_hash(self) -> str:
        return short_hash(self.sha256)


REQUIRED_MANIFEST_KEYS = ("operation", "python_name", "title", "description", "variants", "model_variant")


def load_operation(folder: Path) -> Operation:
    manifest_path = folder / MANIFEST_NAME
    manifest = read_json(manifest_path)
    if not isinstance(manifest, dict):
        raise ContractError(manifest_path, "manifest must be a JSON object")
    missing = [key for key in REQUIRED_MANIFEST_KEYS if key not in manifest]
    if missing:
        raise ContractError(manifest_path, f"missing keys: {', '.join(missing)}")
    if manifest["operation"] != folder.name:
        raise ContractError(manifest_path, f"operation {manifest['operation']!r} != folder {folder.name!r}")
    variants = {}
    for name, files in manifest["variants"].items():
        schemas = []
        for key in ("input", "output"):
            path = folder / files[key]
            schema = read_json(path)
            if not isinstance(schema, dict):
                raise ContractError(path, "schema must be a JSON object")
            schemas.append(schema)
        variants[name] = Variant(
            name, schemas[0], schemas[1], files["input"], files["output"], files.get("source", "")
        )
    for key in ("model_variant",):
        if manifest[key] not in variants:
            raise ContractError(manifest_path, f"{key} {manifest[key]!r} is not a variant")
    for surface in ("mcp", "rest"):
        spec = manifest.get(surface)
        if spec is not None and spec.get("variant") not in variants:
            raise ContractError(manifest_path, f"{surface}.variant {spec.get('variant')!r} is not a variant")
    return Operation(folder.name, folder, manifest, variants)


def load_operations(root: Path = CONTRACTS_DIR) -> list[Operation]:
    """All operations under `root`, sorted by name (the order every generated file uses)."""
    return [
        load_operation(path.parent) for path in sorted(root.glob(f"*/{MANIFEST_NAME}"))
    ]
