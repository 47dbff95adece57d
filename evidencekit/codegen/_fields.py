"""Flatten a JSON Schema into the field table the published pages show.

One row per field and per anyOf branch, in schema order: path, branch label, type, whether it
is required within its parent, and its constraints rendered as `keyword: JSON value`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# The order the published pages list constraints in.
CONSTRAINT_ORDER = (
    "format", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
    "additionalProperties",
)


@dataclass(frozen=True)
class FieldRow:
    path: str
    branch: str  # "" or "anyOf 1", "anyOf 1 / anyOf 2", ...
    type: str
    required: bool
    constraints: tuple[str, ...]


def _type_of(schema: Any) -> str:
    if isinstance(schema, bool):  # true admits anything, false nothing
        return "any" if schema else "never"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(_type_of(branch) for branch in schema[key])
    declared = schema.get("type")
    if isinstance(declared, list):
        return " | ".join(declared)
    if declared:
        return str(declared)
    if "const" in schema:
        return type(schema["const"]).__name__
    return "any"


def _constraints(schema: Any) -> tuple[str, ...]:
    if not isinstance(schema, dict):
        return ()
    rendered = []
    for key in CONSTRAINT_ORDER:
        if key in schema and not isinstance(schema[key], dict):
            rendered.append(f"{key}: {json.dumps(schema[key], separators=(',', ':'), ensure_ascii=False)}")
    return tuple(rendered)


def _child(path: str, name: str) -> str:
    return name if path == "$" else f"{path}.{name}"


def _walk(schema: Any, path: str, branch: str, required: bool) -> Iterator[FieldRow]:
    yield FieldRow(path, branch, _type_of(schema), required, _constraints(schema))
    if not isinstance(schema, dict):
        return
    for key in ("anyOf", "oneOf"):
        for index, sub in enumerate(schema.get(key, []), start=1):
            label = f"{key} {index}" if not branch else f"{branch} / {key} {index}"
            yield from _walk(sub, path, label, required)
    required_names = set(schema.get("required", []))
    for name, sub in schema.get("properties", {}).items():
        yield from _walk(sub, _child(path, name), branch, name in required_names)
    items = schema.get("items")
    if isinstance(items, (dict, bool)):
        yield from _walk(items, f"{path}[]", branch, False)


def field_rows(schema: dict[str, Any]) -> list[FieldRow]:
    return list(_walk(schema, "$", "", True))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(schema: dict[str, Any]) -> str:
    lines = ["| Field / variant | Type / required | Constraints |", "|---|---|---|"]
    for row in field_rows(schema):
        field = f"`{row.path}`" + (f" {row.branch}" if row.branch else "")
        kind = f"`{_cell(row.type)}` {'required' if row.required else 'optional'}"
        constraints = " ".join(f"`{_cell(c)}`" for c in row.constraints) or "—"
        lines.append(f"| {field} | {kind} | {constraints} |")
    return "\n".join(lines) + "\n"
