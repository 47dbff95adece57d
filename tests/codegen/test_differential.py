"""Differential tests: the contract (jsonschema) and the generated models agree on generated payloads.

Valid payloads come from hypothesis-jsonschema over every published schema; each must be accepted
by the contract validator and by the model, parsed as it is on the wire (contracts._wire.parse). Invalid mutations of them must be rejected by both,
except the one documented gap below, which the test pins so that it cannot grow unnoticed.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema.protocols import Validator
from pydantic import BaseModel, ValidationError

from evidencekit.contracts._ecma_regex import with_python_patterns
from evidencekit.contracts._loader import load_operations
from evidencekit.contracts._validation import compile_schema
from evidencekit.contracts._wire import parse
from evidencekit.server.generated.operations import OPERATIONS_BY_NAME
from tests.support import CONTRACTS_DIR

CUSTOM_FORMATS = {"uuid": st.uuids().map(str)}

# The models cannot express these keywords; the jsonschema validation, which runs first on every
# surface, enforces them. (datamodel-code-generator also drops `pattern` on date-time fields.)
MODEL_GAPS = {"format": {"uri"}}

CASES = [
    (op.name, variant.name, direction, schema)
    for op in load_operations(CONTRACTS_DIR)
    for variant in op.variants.values()
    for direction, schema in (("input", variant.input_schema), ("output", variant.output_schema))
]


def model_for(operation: str, direction: str) -> type[BaseModel]:
    spec = OPERATIONS_BY_NAME[operation]
    return spec.input_model if direction == "input" else spec.output_model


def accepts(model: type[BaseModel], payload: Any) -> bool:
    try:
        parse(model, json.dumps(payload))
    except ValidationError:
        return False
    return True


def _objects(schema: dict[str, Any], value: Any, path: tuple[Any, ...] = ()):
    """(path, object value, object schema) for every object in the payload, following anyOf."""
    if isinstance(value, dict) and "properties" in schema:
        yield path, value, schema
        for name, sub in schema["properties"].items():
            if name in value:
                yield from _objects(sub, value[name], path + (name,))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _objects(schema["items"], item, path + (index,))
    for branch in schema.get("anyOf", []):
        if branch.get("type") == "object" and isinstance(value, dict):
            yield from _objects(branch, value, path)


def _set(payload: Any, path: tuple[Any, ...], value: Any) -> Any:
    result = copy.deepcopy(payload)
    target = result
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return result


def _drop(payload: Any, path: tuple[Any, ...]) -> Any:
    result = copy.deepcopy(payload)
    target = result
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return result


def mutations(schema: dict[str, Any], payload: Any):
    """(description, keyword, invalid payload) built from one valid payload."""
    for path, value, obj_schema in _objects(schema, payload):
        for name in obj_schema.get("required", []):
            yield f"drop {path + (name,)}", "required", _drop(payload, path + (name,))
        if obj_schema.get("additionalProperties") is False:
            yield f"extra key at {path}", "additionalProperties", _set(payload, path + ("zz_unknown",), 1)
        for name, prop in obj_schema["properties"].items():
            if name not in value:
                continue
            where = path + (name,)
            if "anyOf" not in prop and prop.get("type") != "null":
                yield f"null at {where}", "type", _set(payload, where, None)
            kind = prop.get("type")
            if kind == "string":
                yield f"number at {where}", "type", _set(payload, where, 12345)
                if "enum" in prop:
                    yield f"enum at {where}", "enum", _set(payload, where, "zz-not-a-member")
                if "maxLength" in prop:
                    yield f"too long at {where}", "maxLength", _set(payload, where, "a" * (prop["maxLength"] + 1))
                if prop.get("format") in ("uuid", "uri"):
                    yield f"format at {where}", "format:" + prop["format"], _set(payload, where, "not a valid value")
            elif kind == "array":
                yield f"object at {where}", "type", _set(payload, where, {"a": 1})
                if "maxItems" in prop and value[name]:
                    too_many = value[name] * (prop["maxItems"] + 1)
                    yield f"too many at {where}", "maxItems", _set(payload, where, too_many[: prop["maxItems"] + 1])
            elif kind == "integer":
                yield f"string at {where}", "type", _set(payload, where, "1")
                if "maximum" in prop:
                    yield f"too big at {where}", "maximum", _set(payload, where, prop["maximum"] + 1)


def _is_gap(keyword: str) -> bool:
    name, _, fmt = keyword.partition(":")
    return fmt in MODEL_GAPS.get(name, set())


@cache
def model_validator(operation: str, direction: str) -> Validator:
    """A validator of the schema the model was generated from (the operation's strictest variant)."""
    op = next(o for o in load_operations(CONTRACTS_DIR) if o.name == operation)
    return compile_schema(op.model_variant.input_schema if direction == "input" else op.model_variant.output_schema)


def check_pair(operation: str, direction: str, schema: dict[str, Any], payload: Any,
               generated_from: Validator | None = None) -> None:
    generated_from = generated_from or compile_schema(schema)
    assert generated_from.is_valid(payload), "hypothesis-jsonschema produced an invalid payload"
    # A payload of another variant is compared where it is also valid under the model's variant
    # (a REST response with extra properties is refused by the MCP variant, and so by the model).
    validator = model_validator(operation, direction)
    model = model_for(operation, direction)
    if not validator.is_valid(payload):
        assert not accepts(model, payload)
        return
    assert accepts(model, payload), f"model rejects a contract-valid payload: {payload!r}"
    for description, keyword, invalid in mutations(schema, payload):
        if validator.is_valid(invalid):
            continue  # e.g. an array repeated within its limits; nothing to compare
        if _is_gap(keyword):
            assert accepts(model, invalid), f"gap closed, update MODEL_GAPS: {description}"
            continue
        assert not accepts(model, invalid), f"model accepts what the contract rejects: {description}"


@pytest.mark.parametrize(("operation", "variant", "direction", "schema"), CASES,
                         ids=[f"{o}-{v}-{d}" for o, v, d, _ in CASES])
def test_contract_and_models_agree(operation: str, variant: str, direction: str, schema: dict[str, Any]) -> None:
    examples = 40 if direction == "input" else 15

    # Shrinking payloads of the large output schemas takes minutes; a failing example is shown unshrunk.
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if direction == "input" else [])

    @settings(max_examples=examples, deadline=None, database=None, phases=phases,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(from_schema(with_python_patterns(schema, end=r"\Z"), custom_formats=CUSTOM_FORMATS))  # see with_python_patterns
    def run(payload: Any) -> None:
        check_pair(operation, direction, schema, payload, generated_from)

    generated_from = compile_schema(schema)

    run()


def test_the_mutations_reach_every_kind_of_keyword() -> None:
    op = OPERATIONS_BY_NAME["sosoapi_research_evidence_retrieve"]
    schema = next(o for o in load_operations(CONTRACTS_DIR) if o.name == op.name).variants["mcp"].output_schema
    from tests.support import example_output

    payload = example_output(op.name)
    payload["retrieval"]["result"]["segments"] = [{"start_ms": 0, "end_ms": 10, "text": "a"}]
    keywords = {keyword for _, keyword, _ in mutations(schema, payload)}
    assert {"required", "additionalProperties", "type", "enum", "maxLength", "maxItems", "maximum",
            "format:uuid"} <= keywords
    check_pair(op.name, "output", schema, payload)


@pytest.mark.parametrize("character", ["\x85", "\x1c", "\ufeff", "\xa0", "\u2028", "\u180e", "\u3000", "x"])
def test_models_read_patterns_as_the_contract_does(character: str) -> None:
    """Found by the test above: pydantic's regex engine counts U+0085 as `\\s` and ECMA-262 does not,
    so the model refused `documents/\\x85`, which the contract accepts."""
    contract = compile_schema(next(o for o in load_operations(CONTRACTS_DIR) if o.name == "get_documents").model_variant.input_schema)
    for name in (f"documents/{character}", f"documents/a/{character}", f"documents/{character}/a"):
        payload = {"names": [name]}
        assert accepts(model_for("get_documents", "input"), payload) == contract.is_valid(payload), repr(name)
