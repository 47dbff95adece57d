"""Inputs generated from a contract's schemas: valid ones (hypothesis-jsonschema, recursion bounded)
and mutations of them that the schema forbids. The conformance plugin and the conformance gate
(`evidencekit conformance`) draw from these same strategies."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from evidencekit.contracts.ecma_regex import with_python_patterns
from evidencekit.contracts.loader import resolve_pointer
from evidencekit.contracts.schema_walk import each_subschema

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
    strategy = from_schema(with_python_patterns(bounded),
                           custom_formats={"uuid": st.uuids(version=4).map(str)})
    if not cut:  # inlining is exact: only a cut branch accepts more than the schema
        return strategy
    from evidencekit.contracts.validation import compile_schema

    exact = compile_schema(dict(schema))
    return strategy.filter(exact.is_valid)


def mutations(payload: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """Inputs that differ from a valid one in one way the schema forbids (the caller checks)."""
    if not isinstance(payload, dict):
        yield {"not": "the declared type"}
        return
    for name in schema.get("required", []):
        yield {key: value for key, value in payload.items() if key != name}
    if schema.get("additionalProperties") is False:
        yield {**payload, "unexpected_property": True}
    for name in schema.get("properties", {}):
        yield {**payload, name: {"unexpected": ["structure"]}}


def mutated_inputs(valid: st.SearchStrategy[Any], schema: Mapping[str, Any],
                   invalid: Callable[[Any], bool]) -> st.SearchStrategy[Any]:
    """One mutation of one valid input per example, among those `invalid` confirms (a mutation the
    schema still accepts is no invalid input). Shrinks towards a small input and the first mutation."""

    def one_of(payload: Any) -> st.SearchStrategy[Any]:
        found = [bad for bad in mutations(payload, schema) if invalid(bad)]
        return st.sampled_from(found) if found else st.nothing()

    return valid.flatmap(one_of)
