"""How a GET operation carries its input: the top-level properties of its input object as query
parameters, read back by the type each property's schema declares.

- a string, integer, number or boolean property is one parameter (`?limit=5&exact=true`);
- an array of those is the parameter repeated (`?tag=a&tag=b`, OpenAPI's form style, exploded);
- an object, or an array of objects, is one parameter holding its JSON text.

A value that does not read as its declared type is passed on as the string it is, so the contract
check names the field that is wrong. What cannot be told apart in a query (a union of scalar types:
is `?x=1` the string or the integer?; null, which a query cannot hold) is refused when generating
(`query_problems`), so every input the contract accepts makes the same round trip.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from evidencekit.contracts._loader import resolve_pointer

SCALARS = ("string", "integer", "number", "boolean")
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _resolved(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and depth < 16:
        schema, depth = resolve_pointer(root, schema["$ref"]), depth + 1
    return schema


def kind_of(schema: Any, root: Mapping[str, Any]) -> str | None:
    """What a property is in a query: a scalar type, `array:<scalar>`, `json`; None when it cannot
    be carried (a union of scalar types, null, a schema without a type)."""
    schema = _resolved(schema, root)
    if not isinstance(schema, Mapping):
        return None
    declared = schema.get("type")
    if declared is None and "enum" in schema and all(isinstance(value, str) for value in schema["enum"]):
        return "string"
    if declared is None and "const" in schema and isinstance(schema["const"], str):
        return "string"
    if not isinstance(declared, str) or declared == "null":
        return None
    if declared in SCALARS:
        return declared
    if declared == "object":
        return "json"
    if declared == "array":
        item = kind_of(schema.get("items"), root)
        if item in SCALARS:
            return f"array:{item}"
        return "json" if item == "json" else None
    return None


def query_problems(schema: Mapping[str, Any]) -> list[str]:
    """Why an input schema cannot be a GET's query string (empty when it can)."""
    root = _resolved(schema, schema)
    if not isinstance(root, Mapping) or root.get("type") != "object":
        return ["the input is not an object: a query string holds an object's properties"]
    return [f"property {name!r}: not one type a query can tell apart (a string, integer, number or boolean, an "
            "array of one of those, or an object; no null, no union of types)"
            for name, sub in (root.get("properties") or {}).items() if kind_of(sub, schema) is None]


def to_query(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Input data as query parameters (the client's side)."""
    pairs: list[tuple[str, str]] = []
    for name, value in data.items():
        if isinstance(value, list) and all(_scalar(item) for item in value):
            pairs += [(name, _text(item)) for item in value]
        elif _scalar(value):
            pairs.append((name, _text(value)))
        else:
            pairs.append((name, json.dumps(value, ensure_ascii=False)))
    return pairs


def from_query(pairs: Iterable[tuple[str, str]], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters as the input data they stand for (the server's side)."""
    root = _resolved(schema, schema)
    properties = root.get("properties", {}) if isinstance(root, Mapping) else {}
    values: dict[str, list[str]] = {}
    for name, value in pairs:
        values.setdefault(name, []).append(value)
    data: dict[str, Any] = {}
    for name, given in values.items():
        kind = kind_of(properties[name], schema) if name in properties else None
        if kind is not None and kind.startswith("array:"):
            data[name] = [_read(value, kind[len("array:"):]) for value in given]
        elif kind is not None and len(given) == 1:
            data[name] = _read(given[0], kind)
        else:  # unknown, or repeated where one value goes: as they came, for the contract check to name
            data[name] = given[0] if len(given) == 1 else given
    return data


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _read(value: str, kind: str) -> Any:
    if kind == "integer" and _INTEGER.fullmatch(value):
        return int(value)
    if kind == "number" and _NUMBER.fullmatch(value):
        number = float(value)
        return int(value) if _INTEGER.fullmatch(value) else number
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    if kind == "json":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
