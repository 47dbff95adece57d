"""A GET's input in the query string: every input its contract accepts makes the round trip
unchanged (checked over generated inputs), and what a query cannot tell apart is refused up front."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

from evidencekit.contracts._query import from_query, query_problems, to_query
from evidencekit.contracts._validation import compile_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": 20},
        "limit": {"type": "integer", "minimum": -5, "maximum": 50},
        "ratio": {"type": "number"},
        "exact": {"type": "boolean"},
        "format": {"enum": ["hardcover", "paperback", "123", "true"]},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "years": {"type": "array", "items": {"$ref": "#/$defs/Year"}, "minItems": 1},
        "near": {"type": "object", "properties": {"lat": {"type": "number"}}, "additionalProperties": False},
    },
    "required": ["query"],
    "additionalProperties": False,
    "$defs": {"Year": {"type": "integer"}},
}


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=from_schema(SCHEMA))
def test_every_valid_input_makes_the_round_trip_through_a_real_query_string(data: dict[str, Any]) -> None:
    sent = urlencode(to_query(data))  # as httpx would put it in the URL
    assert from_query(parse_qsl(sent, keep_blank_values=True), SCHEMA) == data


def test_a_value_of_the_wrong_type_reaches_the_contract_check_as_the_string_it_is() -> None:
    read = from_query([("query", "x"), ("limit", "ten"), ("exact", "yes"), ("other", "1")], SCHEMA)
    assert read == {"query": "x", "limit": "ten", "exact": "yes", "other": "1"}
    errors = {error.json_path for error in compile_schema(SCHEMA).iter_errors(read)}
    assert {"$.limit", "$.exact"} <= errors


@pytest.mark.parametrize(("sub", "why"), [({"type": ["string", "integer"]}, "union"), ({"type": ["integer", "null"]}, "null"),
                                          ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "no type")])
def test_what_a_query_cannot_tell_apart_is_refused(sub: dict[str, Any], why: str) -> None:
    problems = query_problems({"type": "object", "properties": {"x": sub}})
    assert len(problems) == 1 and "'x'" in problems[0], why
    assert query_problems(SCHEMA) == []
