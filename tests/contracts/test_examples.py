"""The published examples validate against the published schemas (all variants, format checking on)."""

from __future__ import annotations

import pytest

from evidencekit.codegen._views import examples_of
from evidencekit.contracts._loader import load_operations
from evidencekit.contracts._validation import OperationValidator
from tests.support import CONTRACTS_DIR

CASES = [
    (op, variant) for op in load_operations(CONTRACTS_DIR) for variant in op.manifest.get("examples", {})
]


@pytest.mark.parametrize(("op", "variant"), CASES, ids=[f"{op.name}-{v}" for op, v in CASES])
def test_published_example_is_valid(op, variant) -> None:
    example = examples_of(op, variant)
    arguments = example["input"]
    if variant == "mcp":  # the page shows a whole tools/call: name + arguments
        assert arguments["name"] == op.mcp["tool_name"]
        arguments = arguments["arguments"]
    validator = OperationValidator.of(op)
    assert validator.input_errors(arguments, variant) == []
    assert validator.output_errors(example["output"]) == []


def test_every_operation_has_an_example() -> None:
    assert {op.name for op, _ in CASES} == {op.name for op in load_operations(CONTRACTS_DIR)}
