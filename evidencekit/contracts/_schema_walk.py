"""Walking a JSON Schema by its keywords: which values hold subschemas, which hold data.

A property may be called `default` or `enum`; only the keyword's position tells a schema from data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Keywords whose value maps names to subschemas
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
# Keywords whose value is data (an instance), never a schema
DATA = frozenset({"const", "enum", "default", "examples", "example"})


def each_subschema(schema: dict[str, Any], change: Callable[[Any], Any],
                   data: frozenset[str] = DATA) -> dict[str, Any]:
    """A copy of `schema` with `change` applied to the value of every keyword that may hold schemas
    (each entry of a schema map; lists and single schemas whole); `data` keywords are kept as they are."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: change(sub) for name, sub in value.items()}
        elif key in data:
            out[key] = value
        else:
            out[key] = change(value)
    return out
