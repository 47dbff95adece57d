"""OpenAPI's `format: int32|int64` is checked as the range it names, by every engine of the contract
check alike (an answer with an id of 2^70 under `format: int64` was sent: neither engine knew it)."""

from __future__ import annotations

from typing import Any

import pytest

from evidencekit.codegen._model_schema import model_schema
from evidencekit.contracts._validation import (
    INT_RANGES,
    compile_fast,
    compile_quick,
    compile_schema,
)


def verdicts(schema: dict[str, Any], value: object) -> tuple[bool, bool, bool]:
    """(jsonschema-rs exact, jsonschema-rs quick, python-jsonschema) on `value`."""
    return (compile_fast(schema).is_valid(value), compile_quick(schema).is_valid(value),
            compile_schema(schema).is_valid(value))


@pytest.mark.parametrize("fmt", sorted(INT_RANGES))
def test_each_engine_holds_the_range_to_the_unit(fmt: str) -> None:
    low, high = INT_RANGES[fmt]
    for schema in ({"type": "integer", "format": fmt},
                   {"type": "object", "properties": {"id": {"type": "integer", "format": fmt}}}):
        wrap = (lambda v: v) if "properties" not in schema else (lambda v: {"id": v})
        for value in (0, low, high, -1, 7):
            assert verdicts(schema, wrap(value)) == (True, True, True), (schema, value)
        for value in (low - 1, high + 1, 2**70, -(2**70)):
            assert verdicts(schema, wrap(value)) == (False, False, False), (schema, value)


def test_the_range_applies_to_numbers_only_and_keeps_the_schemas_own_bounds() -> None:
    assert verdicts({"format": "int32"}, "not a number") == (True, True, True)  # a format is about numbers
    assert verdicts({"format": "int32"}, 2.0**40) == (False, False, False)
    bounded = {"type": "integer", "format": "int64", "minimum": 10}
    assert verdicts(bounded, 9) == (False, False, False) and verdicts(bounded, 10) == (True, True, True)


def test_the_python_engine_says_which_range() -> None:
    from evidencekit.contracts._validation import _field_errors

    validator = compile_schema({"type": "object", "properties": {"id": {"format": "int64"}}})
    errors = _field_errors(validator.iter_errors({"id": 2**70}), "")
    assert [(error.path, error.message) for error in errors] == [("$.id", "is outside the int64 range")]


def test_the_model_note_says_who_enforces_the_range() -> None:
    _, loosenings = model_schema({"type": "object", "properties": {"id": {"type": "integer", "format": "int64"}}})
    assert [str(item) for item in loosenings] == [
        "format int64 at #/properties/id: the model takes any number there; the contract check enforces the range "
        "(contracts._validation.INT_RANGES)"]
