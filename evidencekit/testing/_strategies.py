"""Inputs generated from a contract's schemas: valid ones (hypothesis-jsonschema, recursion bounded)
and mutations of them that the schema forbids. The conformance plugin and the conformance gate
(`evidencekit conformance`) draw from these same strategies."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from evidencekit.contracts._ecma_regex import with_python_patterns
from evidencekit.contracts._loader import resolve_pointer
from evidencekit.contracts._schema_walk import each_subschema

__all__ = ["inputs", "mutated_inputs", "mutations"]

_MAX_REF_DEPTH = 3
# Keywords that say nothing of validity; a published schema may spell one wrong (`examples: "3.15"`)
_ANNOTATIONS = frozenset({"examples", "example", "$comment", "description", "title", "deprecated",
                          "readOnly", "writeOnly"})


def _bounded(schema: Any, root: Mapping[str, Any], cut: list[str], depth: int = 0) -> Any:
    """`schema` with its local $refs inlined and its annotations left out, recursion cut at
    _MAX_REF_DEPTH (the cut branch accepts anything, and each cut $ref is added to `cut`)."""
    if isinstance(schema, list):
        return [_bounded(item, root, cut, depth) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
        if depth >= _MAX_REF_DEPTH:
            cut.append(schema["$ref"])
            return {}
        target = _bounded(resolve_pointer(root, schema["$ref"]), root, cut, depth + 1)
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        return {"allOf": [target, _bounded(rest, root, cut, depth)]} if rest else target
    kept = {key: value for key, value in schema.items() if key not in _ANNOTATIONS}
    return each_subschema(kept, lambda value: _bounded(value, root, cut, depth))


def inputs(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Valid inputs of `schema`; a recursive schema through a bounded copy, filtered by the real one."""
    from hypothesis_jsonschema import from_schema  # imported late: it reads hypothesis's storage

    cut: list[str] = []
    bounded = _bounded(dict(schema), schema, cut)
    bounded.pop("$defs", None)
    bounded.pop("definitions", None)
    # patterns are ECMA-262: spelled for Python's `re`, which hypothesis-jsonschema draws strings with
    strategy = from_schema(with_python_patterns(bounded, end=r"\Z"),
                           custom_formats={"uuid": st.uuids(version=4).map(str)})
    if not cut:  # inlining is exact: only a cut branch accepts more than the schema
        return strategy
    from evidencekit.contracts._validation import compile_schema

    exact = compile_schema(dict(schema))
    return strategy.filter(exact.is_valid)


_OTHER_TYPE: dict[str, Any] = {"string": 12345, "integer": 1.5, "number": "12", "boolean": "true",
                              "object": [], "array": {}, "null": 0}
_MAX_DEPTH = 4


def mutations(payload: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """Inputs that differ from a valid one in one way the schema forbids (the caller checks each):
    a required property removed, an undeclared one added to a closed object, a value replaced by an
    object of another shape; then, at every depth, one constraint broken at a time: enum, const,
    type, minimum/maximum (exclusive too), multipleOf, pattern, format, min/maxLength,
    min/maxItems, uniqueItems, a nested required property removed."""
    if not isinstance(payload, dict):
        yield {"not": "the declared type"}
        return
    for name in schema.get("required", []):
        yield {key: value for key, value in payload.items() if key != name}
    if schema.get("additionalProperties") is False:
        yield {**payload, "unexpected_property": True}
    for name in schema.get("properties", {}):
        yield {**payload, name: {"unexpected": ["structure"]}}
    for path, broken in _broken(payload, schema, schema, 0):
        yield _replaced(payload, path, broken)


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of `value` with the part at `path` (keys and indexes) replaced; `_DROP` removes it."""
    if not path:
        return new
    step, rest = path[0], path[1:]
    if isinstance(value, dict) and not rest:
        return {key: item for key, item in value.items() if key != step} if new is _DROP else {**value, step: new}
    if isinstance(value, dict):
        inner = _replaced(value[step], rest, new)
        return {key: item for key, item in value.items() if key != step} if inner is _DROP \
            else {**value, step: inner}
    items = list(value)
    inner = _replaced(items[step], rest, new)
    return items[:step] + items[step + 1:] if inner is _DROP else [*items[:step], inner, *items[step + 1:]]


_DROP = object()


def _resolved(schema: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(8):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#")):
            return schema
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        schema = {**resolve_pointer(root, schema["$ref"]), **rest}
    return schema


def _broken(value: Any, schema: Any, root: Mapping[str, Any], depth: int) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, value) pairs: `value` put at `path` breaks one constraint of the subschema there."""
    schema = _resolved(schema, root)
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return
    for broken in _broken_here(value, schema):
        yield (), broken
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        if depth:  # the top level's were mutated above
            for name in schema.get("required", []):
                if name in value:
                    yield (name,), _DROP
            if schema.get("additionalProperties") is False:
                yield ("unexpected_property",), True
        for name, sub in properties.items():
            if name in value:
                for path, broken in _broken(value[name], sub, root, depth + 1):
                    yield (name, *path), broken
    elif isinstance(value, list) and value:
        items = schema.get("items")
        prefix: list[Any] = list(schema.get("prefixItems") or (items if isinstance(items, list) else []))
        rest = items if isinstance(items, dict) else None
        for index, item in enumerate(value[:3]):
            sub = prefix[index] if index < len(prefix) else rest
            if sub is not None:
                for path, broken in _broken(item, sub, root, depth + 1):
                    yield (index, *path), broken


def _another(item: Any, index: int) -> Any:
    """An item like `item` and unlike it (so that uniqueItems is not what refuses the longer array)."""
    if isinstance(item, str):
        return f"{item}{index + 1}"
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        return item + index + 1
    return item


def _broken_here(value: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """Values for this place that break one of the subschema's own constraints."""
    if "enum" in schema:
        strings = all(isinstance(option, str) for option in schema["enum"])
        yield "not-one-of-the-enum" if strings else 987654321
    if "const" in schema:
        const = schema["const"]
        yield const + "-not" if isinstance(const, str) else (const + 1 if type(const) in (int, float) else "not-const")
    declared = schema.get("type")
    if isinstance(declared, str) and declared in _OTHER_TYPE:
        yield _OTHER_TYPE[declared]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        step = schema.get("multipleOf")
        for key, below in (("minimum", True), ("maximum", False)):
            bound = schema.get(key)
            if not isinstance(bound, (int, float)) or isinstance(bound, bool):
                continue
            if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
                multiple = step * (math.floor(bound / step) if below else math.ceil(bound / step))
                yield multiple if (multiple < bound if below else multiple > bound) else multiple + (-step if below else step)
            else:
                yield bound - 1 if below else bound + 1
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            if type(schema.get(key)) in (int, float):
                yield schema[key]
        if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
            yield value + 1 if isinstance(step, int) and step > 1 else value + step / 2
    if isinstance(value, str):
        if isinstance(schema.get("minLength"), int) and schema["minLength"] > 0:
            yield value[: schema["minLength"] - 1]
        if isinstance(schema.get("maxLength"), int):
            yield value.ljust(schema["maxLength"] + 1, "x")
        if "pattern" in schema:  # of the same length, so that only the pattern refuses one
            size = max(len(value), 1)
            yield from (" " * size, "!" * size, "0" * size, value.swapcase(), "not matching the pattern")
        if "format" in schema:
            yield f"not-a-{schema['format']}"
    if isinstance(value, list):
        if isinstance(schema.get("minItems"), int) and schema["minItems"] > 0:
            yield value[: schema["minItems"] - 1]
        if isinstance(schema.get("maxItems"), int) and value:
            yield value + [_another(value[-1], index) for index in range(schema["maxItems"] + 1 - len(value))]
        if schema.get("uniqueItems") and value:
            yield [*value, value[0]]


def mutated_inputs(valid: st.SearchStrategy[Any], schema: Mapping[str, Any],
                   invalid: Callable[[Any], bool]) -> st.SearchStrategy[Any]:
    """One mutation of one valid input per example, among those `invalid` confirms (a mutation the
    schema still accepts is no invalid input). Shrinks towards a small input and the first mutation."""

    def one_of(payload: Any) -> st.SearchStrategy[Any]:
        found = [bad for bad in mutations(payload, schema) if invalid(bad)]
        return st.sampled_from(found) if found else st.nothing()

    return valid.flatmap(one_of)
