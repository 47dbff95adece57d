"""The plugin's input strategies: a recursive schema gets bounded, valid inputs instead of a crash."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from evidencekit.contracts.validation import compile_schema
from evidencekit.testing.conformance import inputs, mutations

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
