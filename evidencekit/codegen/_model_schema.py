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
  `unevaluatedProperties`) are left out of the model: it accepts more than the contract. So is
  OpenAPI's `discriminator` annotation, and a constraint that applies to no declared type
  (`minLength` on an array: JSON Schema ignores it, the generator would enforce it). OpenAPI's
  `format: int32|int64` is the contract check's too (it checks the range; the model takes any
  number there).
* A `default` that is not a value of its schema, or whose schema is a union or a reference, is
  not the field's default in the model (the generator would give the field a default of another
  type). A `type` list with constraints is spelled as the equivalent `anyOf`, and an `anyOf` of a
  constrained scalar and null as the equivalent type list (not loosenings: the same schema, in the
  spelling the generator types best).

`tests/codegen/test_model_corpus.py` holds the models to this over real-world schemas: every
instance the contract accepts, the model accepts and dumps back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from evidencekit.contracts._loader import resolve_pointer

_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions"})  # name -> subschema
_SUBSCHEMAS = frozenset({"items", "additionalProperties", "additionalItems", "prefixItems", "allOf", "anyOf", "oneOf"})
_LEFT_OUT = ("if", "then", "else", "dependentSchemas", "dependentRequired", "not", "contains", "propertyNames",
             "unevaluatedItems", "unevaluatedProperties", "patternProperties",
             # OpenAPI's annotation, not JSON Schema: the generator would make a tagged union of it, which
             # refuses a payload without the tag that the schema's oneOf accepts
             "discriminator")


# Constraints that apply to one kind of value only (JSON Schema ignores them on others; the model
# generator would apply them to whatever type the schema has: `minLength: 1` on an array)
_APPLIES_TO = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "array": ("minItems", "maxItems", "uniqueItems"),
    "object": ("minProperties", "maxProperties"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}


def _inapplicable(schema: dict[str, Any]) -> list[str]:
    """Keywords of `schema` that cannot apply to any type it declares."""
    declared = schema.get("type")
    types = {declared} if isinstance(declared, str) else set(declared) if isinstance(declared, list) else None
    if types is None:
        return []
    kinds = {"number" if kind == "integer" else kind for kind in types}
    return [key for kind, keys in _APPLIES_TO.items() if kind not in kinds for key in keys if key in schema]


@dataclass(frozen=True)
class Loosening:
    construct: str  # the keyword
    location: str  # JSON pointer of the schema holding it ("#/properties/labels")

    def __str__(self) -> str:
        if self.construct == "default":
            effect = ("the field has no default in the model (not a value of its schema, or of a union or "
                      "reference type)")
            return f"default at {self.location}: {effect}"
        if self.construct.startswith("format int"):
            return (f"{self.construct} at {self.location}: the model takes any number there; the contract check "
                    "enforces the range (contracts._validation.INT_RANGES)")
        if self.construct.startswith("inapplicable "):
            effect = "it constrains no value of the declared type; left out of the model"
        elif self.construct == "patternProperties":
            effect = "the model accepts any extra property"
        elif self.construct == "dependencies":
            effect = "its schema-valued entries are left out of the model"
        else:
            effect = "left out of the model"
        return f"{self.construct} at {self.location}: {effect}; the contract check enforces it"


def _pointer(parts: tuple[str, ...]) -> str:
    return "#" + "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def _is_object(schema: Any, root: Any, depth: int = 0) -> bool:
    """Whether `schema` describes an object: by its type or properties, or those of an allOf member."""
    if not isinstance(schema, dict) or depth > 8:
        return False
    declared = schema.get("type")
    if declared == "object" or (isinstance(declared, list) and "object" in declared) or "properties" in schema:
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        try:
            return _is_object(resolve_pointer(root, ref), root, depth + 1)
        except ValueError:
            return False
    return any(_is_object(member, root, depth + 1) for member in schema.get("allOf") or [])


def _closed_member(schema: dict[str, Any], root: Any) -> bool:
    """An allOf member closes the object (the generator merges it so): leave it closed."""
    for member in schema.get("allOf") or []:
        if isinstance(member, dict) and isinstance(member.get("$ref"), str) and member["$ref"].startswith("#"):
            try:
                member = resolve_pointer(root, member["$ref"])
            except ValueError:
                continue
        if isinstance(member, dict) and member.get("additionalProperties") is False:
            return True
    return False


def model_schema(schema: Any) -> tuple[Any, list[Loosening]]:
    """`schema` as the model generator should read it, and what was loosened where."""
    found: list[Loosening] = []
    return _loosen(schema, (), found, _Root(schema)), found


_ANNOTATIONS = frozenset({"title", "description", "examples", "$comment", "deprecated", "readOnly", "writeOnly"})


def _nullable_scalar(node: dict[str, Any]) -> dict[str, Any]:
    """`{"anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}]}` as
    `{"type": ["string", "null"], "maxLength": 200}`: the same schema, which the generator types as
    `Annotated[str | None, Field(max_length=200)]` instead of a `RootModel` wrapper class whose
    instances (`Title(root='...')`) users would have to unwrap."""
    members = node.get("anyOf")
    if not isinstance(members, list) or len(members) != 2 or any(
            key in node for key in ("type", "oneOf", "allOf", "$ref", "enum", "const")):
        return node
    nulls = [m for m in members if m == {"type": "null"}]
    scalars = [m for m in members if isinstance(m, dict) and m.get("type") in ("string", "integer", "number", "boolean")]
    if len(nulls) != 1 or len(scalars) != 1:
        return node
    scalar = scalars[0]
    kind = scalar["type"]
    applies = set(_APPLIES_TO.get("number" if kind == "integer" else kind, ()))
    if any(key not in applies | _ANNOTATIONS | {"type"} for key in scalar):
        return node  # a member with its own composition, enum, $ref...: kept as written
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    constraints = {key: value for key, value in scalar.items() if key in applies}
    return {**rest, "type": [kind, "null"], **constraints}


def _split_types(node: dict[str, Any]) -> dict[str, Any]:
    """`{"type": ["integer", "string"], "minimum": 0}` as `anyOf` of one branch per type, each with the
    constraints that apply to it: the same schema, which the generator types as a union of
    constrained types (for the list form it writes `conint(...) | str`, which no type checker reads)."""
    declared = node.get("type")
    if not isinstance(declared, list) or len([t for t in declared if t != "null"]) < 2 or any(
            key in node for key in ("anyOf", "oneOf")):
        return node
    constrained = {key for keys in _APPLIES_TO.values() for key in keys if key in node}
    if not constrained:
        return node
    branches = []
    for kind in declared:
        applies = _APPLIES_TO.get("number" if kind == "integer" else kind, ())
        branches.append({"type": kind, **{key: node[key] for key in applies if key in node}})
    rest = {key: value for key, value in node.items() if key != "type" and key not in constrained}
    return {**rest, "anyOf": branches}


class _Root:
    """The schema being loosened, and its validator (compiled once, when a default needs checking)."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema

    @cached_property
    def validator(self) -> Any:
        from evidencekit.contracts._validation import compile_schema

        return compile_schema(self.schema if isinstance(self.schema, dict) else {})


def _typed_default(node: dict[str, Any], root: _Root) -> bool:
    """Whether the model can carry the schema's `default` as the default of its field: a value of the
    schema, of a type that is no union or reference (the generator would type those as models)."""
    if any(key in node for key in ("anyOf", "oneOf", "allOf", "$ref")) or isinstance(node.get("type"), list):
        return False
    try:
        return bool(root.validator.evolve(schema=node).is_valid(node["default"]))
    except Exception:  # a schema the validator cannot compile here: leave the default out
        return False


def _loosen(node: Any, where: tuple[str, ...], found: list[Loosening], root: _Root) -> Any:
    if isinstance(node, list):
        return [_loosen(item, (*where, str(index)), found, root) for index, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    if "default" in node and not _typed_default(node, root):
        found.append(Loosening("default", _pointer(where)))
        node = {key: value for key, value in node.items() if key != "default"}
    node = _split_types(_nullable_scalar(node))
    if node.get("format") in ("int32", "int64"):  # OpenAPI's integer ranges: the contract check's
        found.append(Loosening(f"format {node['format']}", _pointer(where)))
        node = {key: value for key, value in node.items() if key != "format"}
    out: dict[str, Any] = {}
    inapplicable = _inapplicable(node)
    for key in inapplicable:
        found.append(Loosening(f"inapplicable {key}", _pointer(where)))
    for key, value in node.items():
        if key in inapplicable:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _loosen(sub, (*where, key, name), found, root) for name, sub in value.items()}
        elif key in _LEFT_OUT:
            found.append(Loosening(key, _pointer(where)))
        elif key == "dependencies" and isinstance(value, dict):
            lists = {name: names for name, names in value.items() if isinstance(names, list)}
            if len(lists) < len(value):
                found.append(Loosening(key, _pointer(where)))
            if lists:
                out[key] = lists
        elif key in _SUBSCHEMAS:
            out[key] = _loosen(value, (*where, key), found, root)
        else:  # data, annotations, unknown keywords: as they are
            out[key] = value
    if "patternProperties" in node and node.get("additionalProperties") is not True:
        out["additionalProperties"] = True
    elif ("additionalProperties" not in node and "$ref" not in node  # a $ref's target is loosened where it is
          and _is_object(node, root.schema) and not _closed_member(node, root.schema)):
        out["additionalProperties"] = True  # open: unknown properties are kept, not dropped
    return out
