"""The published examples of an operation, as payloads, and whether they satisfy their schemas.

A page may show an MCP example as the whole `tools/call` message (`{"name": tool, "arguments":
{...}}`): its payload is the arguments. An example is part of the contract: one that its own
variant's schema refuses would teach clients the wrong thing (and ship in the OpenAPI document).
"""

from __future__ import annotations

from typing import Any

from evidencekit.contracts._loader import Operation, read_json
from evidencekit.contracts._validation import compile_schema


def arguments_of(value: Any, schema: Any) -> Any:
    """The payload of an example input: itself when the schema takes it, else the arguments of the
    `tools/call` message it is (a page may show an MCP example so)."""
    wrapper = isinstance(value, dict) and set(value) == {"name", "arguments"} and isinstance(value["arguments"], dict)
    if wrapper and not compile_schema(schema).is_valid(value):
        return value["arguments"]
    return value


def example_payloads(op: Operation, variant: str) -> dict[str, Any]:
    """`{"input": ..., "output": ...}` of the variant's published example (empty when it has none)."""
    files = op.manifest.get("examples", {}).get(variant) or {}
    found = {key: read_json(op.folder / rel) for key, rel in files.items()}
    if "input" in found and variant in op.variants:
        found["input"] = arguments_of(found["input"], op.variants[variant].input_schema)
    return found


def example_problems(op: Operation) -> list[str]:
    """Every way the published examples break their own variant's schemas (empty when none)."""
    problems = []
    for variant, files in (op.manifest.get("examples") or {}).items():
        schemas = op.variants.get(variant)
        if schemas is None:
            problems.append(f"{op.name}: examples name the variant {variant!r}, which the manifest does not have")
            continue
        payloads = example_payloads(op, variant)
        for direction, schema in (("input", schemas.input_schema), ("output", schemas.output_schema)):
            if direction not in payloads:
                continue
            for error in compile_schema(schema).iter_errors(payloads[direction]):
                problems.append(f"{op.name}/{files[direction]}: {error.json_path}: {error.message[:200]} "
                                f"(against {getattr(schemas, f'{direction}_file')})")
    return problems
