"""The plugin's input strategies: a recursive schema gets bounded, valid inputs instead of a crash."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from evidencekit.contracts._validation import compile_schema
from evidencekit.testing import inputs, mutations

TREE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "required": ["root"],
    "additionalProperties": False,
    "$defs": {"Node": {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "format": "uuid"},
        "children": {"type": "array", "maxItems": 2, "items": {"$ref": "#/$defs/Node"}}}}},
}
EXACT = compile_schema(TREE)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=inputs(TREE))
def test_a_recursive_schema_gets_valid_inputs_and_invalid_mutations(payload: Any) -> None:
    assert EXACT.is_valid(payload)
    changed = list(mutations(payload, TREE))
    assert changed and all(not EXACT.is_valid(bad) for bad in changed)


EVERY_CONSTRAINT: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "kind": {"enum": ["a", "b"]}, "version": {"const": 2}, "name": {"type": "string", "minLength": 2,
                                                                         "maxLength": 5, "pattern": "^[a-z]+$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 9, "multipleOf": 3},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "id": {"type": "string", "format": "uuid"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": True},
        "owner": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"],
                  "additionalProperties": False},
    },
    "required": ["kind"],
}
VALID = {"kind": "a", "version": 2, "name": "abc", "count": 3, "ratio": 0.5,
         "id": "0b0e2c4a-7b6a-4f5e-9d1c-2a3b4c5d6e7f", "tags": ["x"], "owner": {"email": "o@example.org"}}


def test_invalid_inputs_break_one_constraint_at_a_time_at_every_depth() -> None:
    validator = compile_schema(EVERY_CONSTRAINT)
    assert validator.is_valid(VALID)
    broken: set[tuple[str, str]] = set()
    for bad in mutations(VALID, EVERY_CONSTRAINT):
        errors = list(validator.iter_errors(bad))
        if len(errors) == 1:  # one constraint broken
            broken.add((errors[0].json_path, str(errors[0].validator)))
    assert broken >= {
        ("$.kind", "enum"), ("$.version", "const"), ("$.name", "type"), ("$.name", "minLength"),
        ("$.name", "maxLength"), ("$.name", "pattern"), ("$.count", "minimum"), ("$.count", "maximum"),
        ("$.count", "multipleOf"), ("$.ratio", "exclusiveMinimum"), ("$.ratio", "exclusiveMaximum"),
        ("$.id", "format"), ("$.tags", "minItems"), ("$.tags", "maxItems"), ("$.tags", "uniqueItems"),
        ("$.tags[0]", "type"), ("$.owner", "required"), ("$.owner", "additionalProperties"), ("$", "required"),
    }, sorted(broken)
