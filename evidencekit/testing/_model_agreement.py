"""Do the generated models agree with their contract? A differential check any project can run.

Instances the contract (jsonschema) accepts are generated with hypothesis-jsonschema; each must be
accepted by the model and dumped back as the same data (a model that rejects a valid payload, or
drops or changes part of it, disagrees). Mutations the contract refuses are counted as refused by
the model or not: the models may be looser than the contract (codegen._model_schema), since the
contract check runs first on every surface.

Agreement is reported per construct the schema uses, so a gap points at the keyword behind it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel, ValidationError

from evidencekit.contracts._schema_walk import DATA, SCHEMA_MAPS
from evidencekit.contracts._validation import compile_schema
from evidencekit.contracts._wire import parse

_DATA = DATA | {"required", "dependentRequired"}
_NOTED = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "patternProperties", "prefixItems",
                    "contains", "propertyNames", "dependentSchemas", "dependentRequired", "dependencies",
                    "unevaluatedProperties", "unevaluatedItems", "additionalItems", "const", "enum", "pattern",
                    "uniqueItems", "multipleOf", "minProperties", "maxProperties"})


def constructs(schema: Any) -> set[str]:
    """The constructs a schema uses, as the agreement table names them."""
    found: set[str] = set()
    _walk(schema, found)
    return found


def _walk(node: Any, found: set[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, found)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _NOTED:
            found.add(key)
        if key == "$ref":
            found.add("$ref")
        elif key == "format":
            found.add(f"format:{value}")
        elif key == "type" and isinstance(value, list):
            found.add("type list" + (" with null" if "null" in value else ""))
        elif key == "items" and isinstance(value, list):
            found.add("items (tuple)")
        elif key == "additionalProperties":
            found.add("additionalProperties: false" if value is False else "additionalProperties: schema"
                      if isinstance(value, dict) else "additionalProperties: true")
        if key in SCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _walk(sub, found)
        elif key not in _DATA:
            _walk(value, found)
    if ("properties" in node or node.get("type") == "object") and "additionalProperties" not in node:
        found.add("open object")


@dataclass
class Agreement:
    valid: int = 0  # instances the contract accepts
    agreed: int = 0  # ... that the model accepted and dumped back unchanged
    invalid: int = 0  # mutations the contract refuses
    refused: int = 0  # ... that the model refused as well
    disagreements: list[str] = field(default_factory=list)  # the first few, for the report

    def add(self, other: Agreement) -> None:
        self.valid += other.valid
        self.agreed += other.agreed
        self.invalid += other.invalid
        self.refused += other.refused
        self.disagreements += other.disagreements[: max(0, 5 - len(self.disagreements))]


def _dump(model: type[BaseModel], payload: Any) -> Any:
    return parse(model, json.dumps(payload)).model_dump(mode="json", by_alias=True, exclude_unset=True)


def examples(strategy: Any, count: int) -> list[Any]:
    """`count` draws of a hypothesis strategy, reproducibly (derandomized)."""
    drawn: list[Any] = []

    @settings(max_examples=count, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


def agreement(schema: Mapping[str, Any], model: type[BaseModel], instances: list[Any],
              mutations: Callable[[Any, Mapping[str, Any]], Iterator[Any]] | None = None) -> Agreement:
    """How far `model` agrees with `schema` on `instances` (and on their mutations)."""
    contract = compile_schema(dict(schema))
    result = Agreement()
    for instance in instances:
        if not contract.is_valid(instance):
            continue  # the generator's mistake, not the model's
        result.valid += 1
        try:
            dumped = _dump(model, instance)
        except ValidationError as exc:
            result.disagreements.append(f"rejects {json.dumps(instance)[:160]}: {exc.errors()[0]['msg']}")
            continue
        if dumped == instance:
            result.agreed += 1
        else:
            result.disagreements.append(f"changes {json.dumps(instance)[:160]} into {json.dumps(dumped)[:160]}")
        for mutated in (mutations(instance, schema) if mutations else ()):
            if contract.is_valid(mutated):
                continue
            result.invalid += 1
            try:
                _dump(model, mutated)
            except ValidationError:
                result.refused += 1
    return result
