"""Read the published contracts: one folder per operation, a manifest, schemas per variant.

A folder holds `manifest.json`, one input and one output schema per published variant
(`<variant>.input.schema.json`, `<variant>.output.schema.json`) and `examples/`.
The contract of an operation is every JSON file in its folder; its hash is sha256 over
the RFC 8785 canonical JSON of `{relative path: parsed file}`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
import rfc8785

from evidencekit.contracts._ecma_regex import check_schema
from evidencekit.contracts._manifest_check import manifest_problems
from evidencekit.contracts._schema_walk import DATA

_PACKAGE_DIR = Path(__file__).resolve().parent
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
    except RecursionError:  # the decoder recurses per level
        raise ContractError(path, "invalid JSON: nested too deeply to read") from None


_SAFE_INTEGER = 2**53 - 1


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON of `value`, for hashing. RFC 8785 numbers are IEEE doubles, so an
    integer beyond 2^53 - 1 (a schema's `maximum: 9223372036854775807`) has no exact canonical form:
    it is hashed as its decimal text instead, so every such value still hashes apart from its
    neighbours (and the same as that text would: no schema relies on the difference)."""
    return rfc8785.dumps(_exact(value))


def _exact(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) > _SAFE_INTEGER:
        return str(value)
    if isinstance(value, dict):
        return {key: _exact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_exact(item) for item in value]
    return value


def short_hash(hex_digest: str) -> str:
    """The form the published pages use: `sha256:` + 16 hex digits."""
    return f"sha256:{hex_digest[:16]}"


# Any contract hash's form (short_hash): what `X-Contract-Hash` may hold
CONTRACT_HASH_PATTERN = "^sha256:[0-9a-f]{16}$"


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
        return hashlib.sha256(canonical_json(self.document)).hexdigest()

    @property
    def contract_hash(self) -> str:
        return short_hash(self.sha256)




def _where(path: Iterable[str | int]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


def resolve_pointer(root: Any, ref: str) -> Any:
    """What a local `$ref` points at in `root`: a JSON pointer ("#/$defs/Name") or a plain-name
    fragment ("#name": a 2020-12 `$anchor`/`$dynamicAnchor`, a draft-07 `$id: "#name"`); ValueError
    when nothing."""
    fragment = unquote(ref[1:]) if ref.startswith("#") else None
    if fragment and not fragment.startswith("/"):
        found = _anchored(root, fragment)
        if found is None:
            raise ValueError(f"cannot resolve $ref {ref!r}: no $anchor {fragment!r}")
        return found
    node: Any = root
    for token in filter(None, unquote(ref[1:]).split("/")):
        token = token.replace("~1", "/").replace("~0", "~")
        try:
            node = node[int(token)] if isinstance(node, list) else node[token]
        except (KeyError, IndexError, ValueError, TypeError):
            raise ValueError(f"cannot resolve $ref {ref!r}") from None
    return node


def _anchored(node: Any, name: str) -> Any:
    if isinstance(node, list):
        return next((found for item in node if (found := _anchored(item, name)) is not None), None)
    if not isinstance(node, dict):
        return None
    if name in (node.get("$anchor"), node.get("$dynamicAnchor")) or node.get("$id") == f"#{name}":
        return node
    return next((found for key, value in node.items() if key not in DATA
                 and (found := _anchored(value, name)) is not None), None)


def _check_manifest(manifest: Any, manifest_path: Path, strict: bool = True) -> None:
    """ContractError with one line per problem, each naming the file (manifest_check)."""
    problems = manifest_problems(manifest, strict=strict)
    if problems:
        raise ContractError(manifest_path, f"\n{manifest_path}: ".join(problems))


def _local_refs(node: Any, trail: tuple[str | int, ...] = ()) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref, trail
        for key, value in node.items():
            yield from _local_refs(value, (*trail, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _local_refs(value, (*trail, index))


def _check_schema(schema: Any, path: Path) -> None:
    """A schema the generators and validators can use: valid for its draft, every $ref local and present."""
    if not isinstance(schema, dict):
        raise ContractError(path, "schema must be a JSON object")
    try:
        check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ContractError(path, f"not a valid JSON Schema at {exc.json_path}: {exc.message}") from None
    for ref, trail in _local_refs(schema):
        if not ref.startswith("#"):
            raise ContractError(path, f"{_where(trail)}: $ref {ref!r} is not local; contracts must be self-contained")
        try:
            resolve_pointer(schema, ref)
        except ValueError:
            raise ContractError(path, f"{_where(trail)}: $ref {ref!r} points at nothing in this schema") from None


def load_operation(folder: Path, *, named_by_folder: bool = True, strict: bool = True) -> Operation:
    """One operation folder. In a contracts folder each operation's folder bears its name; a copy
    elsewhere (an old version to diff against) may be named anything (`named_by_folder=False`).
    A version from history is read with `strict=False`: manifest keys the schema no longer knows are
    tolerated, so that it can still be compared with the current one."""
    manifest_path = folder / MANIFEST_NAME
    manifest = read_json(manifest_path)
    _check_manifest(manifest, manifest_path, strict)
    if named_by_folder and manifest["operation"] != folder.name:
        raise ContractError(manifest_path, f"operation {manifest['operation']!r} != folder {folder.name!r}")
    variants = {}
    for name, files in manifest["variants"].items():
        schemas = []
        for key in ("input", "output"):
            path = folder / files[key]
            schema = read_json(path)
            _check_schema(schema, path)
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
    return Operation(manifest["operation"], folder, manifest, variants)


# Paths every generated app serves itself (server/runtime/_app.py: /mcp, /openapi.json, /docs and
# what is beneath it, /healthz), always: an operation there would be shadowed by the runtime's route
RESERVED_PATHS = {"/mcp": "MCP (Streamable HTTP)", "/openapi.json": "the OpenAPI document",
                  "/docs": "the interactive documentation", "/healthz": "the health check"}
RESERVED_PREFIXES = ("/docs/",)


def reserved_path(path: str) -> str | None:
    """What the runtime serves at `path` when it is one of its own, else None."""
    if path in RESERVED_PATHS:
        return RESERVED_PATHS[path]
    return next((RESERVED_PATHS[prefix.rstrip("/")] for prefix in RESERVED_PREFIXES if path.startswith(prefix)),
                None)


def check_rest_path(path: str, where: Path | str) -> None:
    """ContractError when an operation's REST `path` is one the runtime serves itself."""
    served = reserved_path(path)
    if served is not None:
        own = ", ".join([*RESERVED_PATHS, *(prefix + "..." for prefix in RESERVED_PREFIXES)])
        raise ContractError(where, f"rest.path {path!r} is reserved: every generated app serves {served} there "
                                   f"(its own paths: {own}); pick another path for this operation")


def load_operations(root: Path, *, strict: bool = True) -> list[Operation]:
    """All operations under `root`, sorted by name (the order every generated file uses). The
    current contracts only: a version from history (load_operation) may hold what is refused now
    (`strict=False` tolerates its unknown manifest keys)."""
    operations = [load_operation(path.parent, strict=strict) for path in sorted(root.glob(f"*/{MANIFEST_NAME}"))]
    if not operations:
        raise ContractError(root, f"no contracts here (expected <operation>/{MANIFEST_NAME} folders)")
    for op in operations:
        if op.rest:
            check_rest_path(str(op.rest["path"]), op.folder / MANIFEST_NAME)
    _check_unique(operations)
    return operations


def _check_unique(operations: list[Operation]) -> None:
    """Names the generated code and the surfaces key on: two operations must never share one."""
    keys: dict[str, Callable[[Operation], object]] = {
        "python_name": lambda op: op.python_name,
        "mcp.tool_name": lambda op: op.mcp and op.mcp["tool_name"],
        "rest method and path": lambda op: op.rest and (op.rest["method"], op.rest["path"]),
    }
    for label, key in keys.items():
        seen: dict[object, str] = {}
        for op in operations:
            value = key(op)
            if not value:
                continue
            if value in seen:
                raise ContractError(op.folder / MANIFEST_NAME,
                                    f"{label} {value!r} is also used by {seen[value]}; each must be unique")
            seen[value] = op.name
