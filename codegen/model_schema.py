"""The schema the model generator is given: the contract, with each construct a typed model cannot
state exactly loosened by one documented rule, every loosening reported with the construct and
its location.

The models are never stricter than the contract: the jsonschema check of the raw contract runs
before any model on every surface and enforces what the models leave out. The rules:

* An object that does not close itself (no `additionalProperties`) is open: its model keeps
  unknown properties (pydantic `extra="allow"`) instead of dropping them.
* `patternProperties`: the model accepts any other property (the patterns are the check's).
* Conditional and negative constraints (`if`/`then`/`else`, `dependentSchemas`, schema-valued
  `dependencies`, `dependentRequired`, `not`, `contains`, `propertyNames`, `unevaluatedItems`,
  `unevaluatedProperties`) are left out of the model: it accepts more than the contract.

`tests/codegen/test_model_corpus.py` holds the models to this over real-world schemas: every
instance the contract accepts, the model accepts and dumps back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions"})  # name -> subschema
_SUBSCHEMAS = frozenset({"items", "additionalProperties", "additionalItems", "prefixItems", "allOf", "anyOf", "oneOf"})
_LEFT_OUT = ("if", "then", "else", "dependentSchemas", "dependentRequired", "not", "contains", "propertyNames",
             "unevaluatedItems", "unevaluatedProperties", "patternProperties")


@dataclass(frozen=True)
class Loosening:
    construct: str  # the keyword
    location: str  # JSON pointer of the schema holding it ("#/properties/labels")

    def __str__(self) -> str:
        if self.construct == "patternProperties":
            effect = "the model accepts any extra property"
        elif self.construct == "dependencies":
            effect = "its schema-valued entries are left out of the model"
        else:
            effect = "left out of the model"
        return f"{self.construct} at {self.location}: {effect}; the contract check enforces it"


def _pointer(parts: tuple[str, ...]) -> str:
    return "#" + "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def _is_object(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    return declared == "object" or (isinstance(declared, list) and "object" in declared) or "properties" in schema


def model_schema(schema: Any) -> tuple[Any, list[Loosening]]:
    """`schema` as the model generator should read it, and what was loosened where."""
    found: list[Loosening] = []
    return _loosen(schema, (), found), found


def _loosen(node: Any, where: tuple[str, ...], found: list[Loosening]) -> Any:
    if isinstance(node, list):
        return [_loosen(item, (*where, str(index)), found) for index, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _loosen(sub, (*where, key, name), found) for name, sub in value.items()}
        elif key in _LEFT_OUT:
            found.append(Loosening(key, _pointer(where)))
        elif key == "dependencies" and isinstance(value, dict):
            lists = {name: names for name, names in value.items() if isinstance(names, list)}
            if len(lists) < len(value):
                found.append(Loosening(key, _pointer(where)))
            if lists:
                out[key] = lists
        elif key in _SUBSCHEMAS:
            out[key] = _loosen(value, (*where, key), found)
        else:  # data, annotations, unknown keywords: as they are
            out[key] = value
    if "patternProperties" in node and node.get("additionalProperties") is not True:
        out["additionalProperties"] = True
    elif _is_object(node) and "additionalProperties" not in node:
        out["additionalProperties"] = True  # open: unknown properties are kept, not dropped
    return out
