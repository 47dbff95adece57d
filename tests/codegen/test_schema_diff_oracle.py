"""The breaking-change differ against an oracle: a compatible verdict claims that no instance
separates the two schemas (for requests: valid before, refused now; for responses: valid now,
refused before). Pairs are generated per construct the differ reads (a schema, then one or two
edits of it), and for every compatible verdict a search looks for a separating instance: a pool of
values built from both schemas (their property names, enum values and bounds, each combined with
plain JSON values) and instances hypothesis-jsonschema draws from the schema that must be
covered. A hit is confirmed with python-jsonschema before it fails the test.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidencekit.codegen._schema_diff import POLICIES, diff_schemas
from evidencekit.contracts._validation import compile_schema

DIALECT = "https://json-schema.org/draft/2020-12/schema"
NAMES = ("a", "b", "c")
PLAIN: tuple[Any, ...] = (None, True, 0, 1, -1, 2, 7, 1.5, "", "a", "bb", "xyz", [], [1], ["a", "a"], {},
                          {"a": 1})

# --- the pairs -------------------------------------------------------------------------------

LEAVES: list[Any] = [
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
    {"type": ["string", "null"]}, {"type": ["integer", "string"]}, {}, True, False,
    {"type": "string", "maxLength": 2}, {"type": "string", "minLength": 1}, {"enum": ["a", "bb"]},
    {"enum": ["a", None]}, {"const": 1}, {"type": "integer", "minimum": 0}, {"type": "integer", "maximum": 2},
    {"type": "number", "exclusiveMinimum": 0}, {"type": "integer", "multipleOf": 2},
    {"anyOf": [{"type": "string"}, {"type": "null"}]}, {"oneOf": [{"type": "integer"}]},
    {"allOf": [{"type": "integer"}]}, {"allOf": [{"type": "integer"}, {"minimum": 0}]},
    {"oneOf": [{"type": "number"}, {"type": "null"}]}, {"not": {"type": "string"}},
]


def leaves() -> st.SearchStrategy[Any]:
    return st.sampled_from(LEAVES).map(copy.deepcopy)


@st.composite
def objects(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3))
    schema: dict[str, Any] = {"type": "object", "properties": {name: draw(leaves()) for name in names}}
    required = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    if required:
        schema["required"] = required
    rest = draw(st.sampled_from(["absent", "true", "false", "leaf", "pattern", "unevaluated"]))
    if rest == "true":
        schema["additionalProperties"] = True
    elif rest == "false":
        schema["additionalProperties"] = False
    elif rest == "leaf":
        schema["additionalProperties"] = draw(leaves())
    elif rest == "pattern":
        schema["patternProperties"] = {"^b": draw(leaves())}
        if draw(st.booleans()):
            schema["additionalProperties"] = False
    elif rest == "unevaluated":
        schema["unevaluatedProperties"] = draw(st.sampled_from([False, {"type": "string"}]))
    return schema


@st.composite
def arrays(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array"}
    shape = draw(st.sampled_from(["items", "prefix+items", "prefix+unevaluated", "prefix", "contains"]))
    if shape.startswith("prefix"):
        schema["prefixItems"] = draw(st.lists(leaves(), min_size=1, max_size=3))
    if shape in ("items", "prefix+items"):
        schema["items"] = draw(leaves())
    if shape == "prefix+unevaluated":
        schema["unevaluatedItems"] = draw(st.sampled_from([False, {"type": "string"}, {"type": "integer"}]))
    if shape == "contains":
        schema["contains"] = draw(leaves())
        if draw(st.booleans()):
            schema["minContains"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            schema["maxContains"] = draw(st.integers(1, 2))
    for key, values in (("minItems", (0, 1, 2)), ("maxItems", (1, 2, 3)), ("uniqueItems", (True,))):
        if draw(st.integers(0, 3)) == 0:
            schema[key] = draw(st.sampled_from(values))
    return schema


def schemas() -> st.SearchStrategy[Any]:
    return st.one_of(leaves(), objects(), arrays())


def _subschema_slots(schema: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Where a subschema sits in `schema`: paths of keys and indexes."""
    yield path
    if not isinstance(schema, dict):
        return
    for key in ("properties", "patternProperties"):
        for name in schema.get(key) or {}:
            yield from _subschema_slots(schema[key][name], (*path, key, name))
    for key in ("additionalProperties", "unevaluatedProperties", "items", "unevaluatedItems", "contains", "not"):
        if key in schema:
            yield from _subschema_slots(schema[key], (*path, key))
    for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
        for index, item in enumerate(schema.get(key) or []):
            yield from _subschema_slots(item, (*path, key, index))


def _get(schema: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        schema = schema[step]
    return schema


def _put(schema: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(schema, path[:-1])[path[-1]] = value
    return schema


@st.composite
def edited(draw: st.DrawFn, schema: Any) -> Any:
    """`schema` with one edit somewhere: a subschema replaced, wrapped or given a keyword; a property
    added, removed or (not) required; the object opened or closed; an array's positions changed."""
    schema = copy.deepcopy(schema)
    slot = draw(st.sampled_from(list(_subschema_slots(schema))))
    target = _get(schema, slot)
    edits = ["replace", "wrap_allOf", "wrap_anyOf", "nullable"] if isinstance(target, dict) else ["replace"]
    if isinstance(target, dict) and target.get("type") == "object":
        edits += ["add_property", "remove_property", "toggle_required", "additional", "pattern"]
    if isinstance(target, dict) and target.get("type") == "array":
        edits += ["prefix_drop", "prefix_add", "rest", "contains_bounds"]
    if isinstance(target, dict) and target.get("type") in ("integer", "number", "string"):
        edits += ["bound"]
    if isinstance(target, dict) and "enum" in target:
        edits += ["enum_add", "enum_drop"]
    edit = draw(st.sampled_from(edits))
    if edit == "replace":
        return _put(schema, slot, draw(leaves()))
    if edit == "wrap_allOf":
        return _put(schema, slot, {"allOf": [target]})
    if edit == "wrap_anyOf":
        return _put(schema, slot, {"anyOf": [target]})
    if edit == "nullable":
        return _put(schema, slot, {"anyOf": [target, {"type": "null"}]})
    assert isinstance(target, dict)
    properties = target.get("properties", {})
    if edit == "add_property":
        target["properties"] = {**properties, draw(st.sampled_from(NAMES)): draw(leaves())}
    elif edit == "remove_property" and properties:
        name = draw(st.sampled_from(sorted(properties)))
        del properties[name]
        if draw(st.booleans()) and name in target.get("required", []):
            target["required"].remove(name)
    elif edit == "toggle_required":
        name = draw(st.sampled_from(NAMES))
        required = target.setdefault("required", [])
        if name in required:
            required.remove(name)
        else:
            required.append(name)
    elif edit == "additional":
        choice = draw(st.sampled_from(["absent", True, False, "leaf"]))
        target.pop("additionalProperties", None)
        if choice != "absent":
            target["additionalProperties"] = draw(leaves()) if choice == "leaf" else choice
    elif edit == "pattern":
        target["patternProperties"] = {"^b": draw(leaves())}
    elif edit == "prefix_drop" and target.get("prefixItems"):
        target["prefixItems"].pop()
        if not target["prefixItems"]:
            del target["prefixItems"]
    elif edit == "prefix_add":
        target.setdefault("prefixItems", []).append(draw(leaves()))
    elif edit == "rest":
        key = draw(st.sampled_from(["items", "unevaluatedItems"]))
        target.pop("items", None)
        target.pop("unevaluatedItems", None)
        target[key] = draw(st.sampled_from([False, {"type": "string"}, {}, {"type": "integer"}]))
    elif edit == "contains_bounds":
        target.setdefault("contains", {"type": "integer"})
        target[draw(st.sampled_from(["minContains", "maxContains"]))] = draw(st.integers(0, 2))
    elif edit == "bound":
        key = draw(st.sampled_from(["minimum", "maximum", "minLength", "maxLength", "multipleOf"]))
        target[key] = draw(st.integers(1, 3))
    elif edit == "enum_add":
        target["enum"] = [*target["enum"], draw(st.sampled_from(PLAIN))]
    elif edit == "enum_drop" and len(target["enum"]) > 1:
        target["enum"] = target["enum"][1:]
    return schema


@st.composite
def pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    old = draw(schemas())
    new = draw(edited(old))
    if draw(st.booleans()):
        new = draw(edited(new))
    return _rooted(old), _rooted(new)


def _rooted(schema: Any) -> Any:
    return {"$schema": DIALECT, **schema} if isinstance(schema, dict) else schema


# --- the search ------------------------------------------------------------------------------

def _constants(schema: Any, found: list[Any]) -> None:
    """Values a schema names (enum, const, bounds and their neighbours, property names)."""
    if isinstance(schema, list):
        for item in schema:
            _constants(item, found)
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key == "enum" and isinstance(value, list):
            found += value
        elif key == "const":
            found.append(value)
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") and isinstance(value, int):
            found += [value - 1, value, value + 1]
        elif key in ("minLength", "maxLength") and isinstance(value, int):
            found += ["x" * max(value - 1, 0), "x" * value, "x" * (value + 1)]
        else:
            _constants(value, found)


def candidates(*schemas_: Any) -> list[Any]:
    found: list[Any] = []
    for schema in schemas_:
        _constants(schema, found)
    values = list({json.dumps(v, sort_keys=True): v for v in [*found, *PLAIN]}.values())
    few = values[:12]
    names = [*NAMES, "bb", "zz"]
    objects_ = [{name: value} for name in names for value in values]
    objects_ += [dict(zip(chosen, combo, strict=True)) for chosen in itertools.combinations(names, 2)
                 for combo in itertools.product(few, repeat=2)]
    objects_ += [{"a": x, "b": y, "c": z} for x, y, z in itertools.product(few[:6], repeat=3)]
    arrays_ = [list(combo) for size in (1, 2) for combo in itertools.product(values, repeat=size)]
    arrays_ += [list(combo) for combo in itertools.product([0, 1, 1.5, "a", None, True, "bb"], repeat=3)]
    arrays_ += [[value] for value in values] + [[value, value] for value in values]
    nested = [{name: inner} for name in NAMES for inner in [*few, *arrays_[:20], *objects_[:20]]]
    return values + objects_ + arrays_ + nested


def separating(source: Any, target: Any, pool: list[Any]) -> list[Any]:
    """An instance `source` accepts and `target` refuses (confirmed by python-jsonschema), in a
    list (the instance may be null); none found: empty."""
    accepts, refuses = (jsonschema_rs.validator_for(s) for s in (source, target))
    for instance in pool:
        if accepts.is_valid(instance) and not refuses.is_valid(instance) and confirmed(source, target, instance):
            return [instance]
    return []


def confirmed(source: Any, target: Any, instance: Any) -> bool:
    """python-jsonschema agrees: `source` accepts the instance and `target` refuses it."""
    return bool(compile_schema(_as_dict(source)).is_valid(instance)
                and not compile_schema(_as_dict(target)).is_valid(instance))


def _as_dict(schema: Any) -> dict[str, Any]:
    return schema if isinstance(schema, dict) else ({} if schema else {"not": {}})


def _drawn(data: st.DataObject, schema: Any) -> list[Any]:
    """A few instances hypothesis-jsonschema draws from `schema` (none when it cannot)."""
    from hypothesis_jsonschema import from_schema

    try:
        strategy = from_schema(_as_dict(schema))
        return [data.draw(strategy) for _ in range(3)]
    except Exception:  # noqa: BLE001 - a schema it cannot draw from (unsatisfiable, or unsupported)
        return []


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=400, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(pair=pairs(), data=st.data())
def test_a_compatible_verdict_has_no_separating_instance(pair: tuple[Any, Any], data: st.DataObject,
                                                         policy: str) -> None:
    old, new = pair
    pool: list[Any] | None = None
    for direction, source, target in (("request", old, new), ("response", new, old)):
        changes = diff_schemas(old, new, direction, policy)  # type: ignore[arg-type]
        if any(change.breaking for change in changes):
            continue
        if policy == "lenient" and any("lenient:" in change.detail for change in changes):
            continue  # decided by the stated assumption, not by instances
        pool = pool if pool is not None else candidates(old, new)
        found = separating(source, target, [*_drawn(data, source), *pool])
        assert not found, (
            f"{direction}: called compatible, but {json.dumps(found[0])} is valid under the "
            f"{'old' if direction == 'request' else 'new'} schema and not the other\n"
            f"old: {json.dumps(old)}\nnew: {json.dumps(new)}\n" + "\n".join(c.line() for c in changes))
