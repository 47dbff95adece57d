"""Tests for codegen._schema_diff: every change kind, classified in both data directions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidencekit.codegen._schema_diff import KINDS, Change, Direction, diff_schemas, format_changes

UUID = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"


def obj(props: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required), **extra}


STR = {"type": "string"}
INT = {"type": "integer"}
NULL = {"type": "null"}
REQ, RESP = "request", "response"

# (id, direction, old, new, expected {(kind, breaking)})
CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], set[tuple[str, bool]]]] = [
    ("identical-request", REQ, obj({"a": STR}, ("a",)), obj({"a": STR}, ("a",)), set()),
    ("identical-response", RESP, obj({"a": STR}), obj({"a": STR}), set()),
    ("removed-prop-open-request", REQ, obj({"a": STR, "b": INT}), obj({"a": STR}),
     {("property_removed", False)}),
    ("removed-prop-closed-request", REQ,
     obj({"a": STR, "b": INT}, additionalProperties=False),
     obj({"a": STR}, additionalProperties=False), {("property_removed", True)}),
    ("removed-prop-response", RESP, obj({"a": STR, "b": INT}), obj({"a": STR}),
     {("property_removed", True)}),
    ("new-required-request-prop", REQ, obj({"a": STR}), obj({"a": STR, "b": INT}, ("b",)),
     {("required_added", True)}),
    ("new-required-response-prop", RESP, obj({"a": STR}), obj({"a": STR, "b": INT}, ("b",)),
     {("required_added", False)}),
    # a closed response now carries a property clients generated from it reject (extra="forbid")
    ("new-required-response-prop-closed", RESP, obj({"a": STR}, additionalProperties=False),
     obj({"a": STR, "b": INT}, ("b",), additionalProperties=False), {("required_added", True)}),
    ("anyOf-reordered-same-meaning", RESP, obj({"v": {"anyOf": [STR, INT, obj({"x": STR})]}}),
     obj({"v": {"anyOf": [obj({"x": STR}), INT, STR]}}), set()),
    ("anyOf-reordered-and-one-changed", REQ, {"anyOf": [obj({"x": STR}), {"type": "string", "maxLength": 9}]},
     {"anyOf": [{"type": "string", "maxLength": 5}, obj({"x": STR})]}, {("constraint_tightened", True)}),
    # {"b": "x"} was a valid request: an open object admitted any value under an undeclared name
    ("new-optional-request-prop", REQ, obj({"a": STR}), obj({"a": STR, "b": INT}),
     {("property_added", True)}),
    ("new-optional-request-prop-as-open-values-were", REQ, obj({"a": STR}, additionalProperties=INT),
     obj({"a": STR, "b": {"type": "integer", "minimum": 0}}, additionalProperties=INT),
     {("property_added", True)}),
    ("new-optional-request-prop-wider", REQ, obj({"a": STR}, additionalProperties=INT),
     obj({"a": STR, "b": {"type": "number"}}, additionalProperties=INT), {("property_added", False)}),
    ("new-optional-response-prop-open", RESP, obj({"a": STR}), obj({"a": STR, "b": INT}),
     {("property_added", False)}),
    ("new-optional-response-prop-closed", RESP, obj({"a": STR}, additionalProperties=False),
     obj({"a": STR, "b": INT}, additionalProperties=False), {("property_added", True)}),
    ("optional-to-required-request", REQ, obj({"a": STR}), obj({"a": STR}, ("a",)),
     {("required_added", True)}),
    ("required-to-optional-request", REQ, obj({"a": STR}, ("a",)), obj({"a": STR}),
     {("required_removed", False)}),
    ("required-to-optional-response", RESP, obj({"a": STR}, ("a",)), obj({"a": STR}),
     {("required_removed", True)}),
    ("narrowed-request-enum", REQ, {"enum": ["a", "b", "c"]}, {"enum": ["a", "c"]},
     {("enum_value_removed", True)}),
    ("narrowed-response-enum", RESP, {"enum": ["a", "b"]}, {"enum": ["a"]},
     {("enum_value_removed", False)}),
    ("widened-response-enum", RESP, {"enum": ["a"]}, {"enum": ["a", "b"]},
     {("enum_value_added", True)}),
    ("widened-request-enum", REQ, {"enum": ["a"]}, {"enum": ["a", "b"]},
     {("enum_value_added", False)}),
    ("enum-swapped-value", REQ, {"enum": ["a", "b"]}, {"enum": ["a", "c"]},
     {("enum_value_added", False), ("enum_value_removed", True)}),
    ("type-change-request", REQ, STR, INT, {("type_changed", True)}),
    ("type-change-response", RESP, STR, INT, {("type_changed", True)}),
    ("type-widened-request", REQ, INT, {"type": "number"}, {("type_changed", False)}),
    ("type-widened-response", RESP, INT, {"type": "number"}, {("type_changed", True)}),
    ("type-narrowed-response", RESP, {"type": ["string", "integer"]}, STR,
     {("type_changed", False)}),
    ("type-narrowed-request", REQ, {"type": ["string", "integer"]}, STR, {("type_changed", True)}),
    ("maxLength-tightened-request", REQ, {"type": "string", "maxLength": 64},
     {"type": "string", "maxLength": 32}, {("constraint_tightened", True)}),
    ("pattern-added-request", REQ, STR, {"type": "string", "pattern": UUID},
     {("constraint_tightened", True)}),
    ("maximum-lowered-request", REQ, {"type": "integer", "maximum": 100},
     {"type": "integer", "maximum": 10}, {("constraint_tightened", True)}),
    ("minimum-added-response", RESP, INT, {"type": "integer", "minimum": 0},
     {("constraint_tightened", False)}),
    ("maximum-raised-response", RESP, {"type": "integer", "maximum": 10},
     {"type": "integer", "maximum": 100}, {("constraint_loosened", True)}),
    ("minLength-removed-response", RESP, {"type": "string", "minLength": 1}, STR,
     {("constraint_loosened", True)}),
    ("maxItems-raised-request", REQ, {"type": "array", "maxItems": 5},
     {"type": "array", "maxItems": 50}, {("constraint_loosened", False)}),
    ("multipleOf-stricter-request", REQ, {"type": "number", "multipleOf": 0.5},
     {"type": "number", "multipleOf": 1.5}, {("constraint_tightened", True)}),
    ("pattern-changed-request", REQ, {"type": "string", "pattern": "^a"},
     {"type": "string", "pattern": "^b"}, {("constraint_tightened", True)}),
    ("pattern-changed-response", RESP, {"type": "string", "pattern": "^a"},
     {"type": "string", "pattern": "^b"}, {("constraint_loosened", True)}),
    ("format-removed-response", RESP, {"type": "string", "format": "uuid"}, STR,
     {("constraint_loosened", True)}),
    ("const-added-request", REQ, STR, {"type": "string", "const": "v1"},
     {("constraint_tightened", True)}),
    ("nullable-added-anyOf-response", RESP, STR, {"anyOf": [STR, NULL]},
     {("nullable_added", True)}),
    ("nullable-added-type-list-request", REQ, STR, {"type": ["string", "null"]},
     {("nullable_added", False)}),
    ("nullable-added-oneOf-keeps-inner", REQ, {"type": "string", "maxLength": 10},
     {"oneOf": [{"type": "string", "maxLength": 5}, NULL]},
     {("nullable_added", False), ("constraint_tightened", True)}),
    ("nullable-removed-request", REQ, {"type": ["integer", "null"]}, INT,
     {("nullable_removed", True)}),
    ("nullable-removed-enum-response", RESP, {"enum": ["a", None]}, {"enum": ["a"]},
     {("nullable_removed", False)}),
    ("additional-props-false-request", REQ, obj({"a": STR}),
     obj({"a": STR}, additionalProperties=False), {("additional_properties_tightened", True)}),
    ("additional-props-false-response", RESP, obj({"a": STR}),
     obj({"a": STR}, additionalProperties=False), {("additional_properties_tightened", False)}),
    ("additional-props-opened-response", RESP, obj({"a": STR}, additionalProperties=False),
     obj({"a": STR}, additionalProperties=True), {("additional_properties_loosened", True)}),
    ("additional-props-opened-request", REQ, obj({"a": STR}, additionalProperties=False),
     obj({"a": STR}), {("additional_properties_loosened", False)}),
    ("nested-anyOf-items-request", REQ,
     obj({"hits": {"type": "array", "items": {"anyOf": [obj({"id": STR}), INT]}}}),
     obj({"hits": {"type": "array", "items": {"anyOf": [
         obj({"id": {"type": "string", "maxLength": 8}}), INT]}}}),
     {("constraint_tightened", True)}),
    ("anyOf-branch-added-response", RESP, {"anyOf": [obj({"a": STR}), INT]},
     {"anyOf": [obj({"a": STR}), INT, {"type": "boolean"}]}, {("type_changed", True)}),
    ("annotation-only-request", REQ, {"type": "string", "description": "old"},
     {"type": "string", "description": "new"}, {("annotation_changed", False)}),
    ("annotation-only-response", RESP, obj({"a": {**STR, "default": "x"}}),
     obj({"a": {**STR, "default": "y"}}), {("annotation_changed", False)}),
    ("dialect-only", RESP, {"$schema": DRAFT7, **STR}, {"$schema": DRAFT2020, **STR},
     {("schema_dialect_changed", False)}),
    ("ref-target-changed", REQ,
     {"$defs": {"Id": STR}, **obj({"id": {"$ref": "#/$defs/Id"}})},
     {"definitions": {"Id": {"type": "string", "maxLength": 3}},
      **obj({"id": {"$ref": "#/definitions/Id"}})},
     {("constraint_tightened", True)}),
    # changes reached only through a $ref inside a keyword that holds a subschema
    ("ref-in-patternProperties-request", REQ,
     {"$defs": {"X": STR}, "type": "object", "patternProperties": {"^x-": {"$ref": "#/$defs/X"}}},
     {"$defs": {"X": {"type": "string", "maxLength": 3}}, "type": "object",
      "patternProperties": {"^x-": {"$ref": "#/$defs/X"}}},
     {("constraint_tightened", True)}),
    ("ref-in-then-response", RESP,
     {"$defs": {"X": {"enum": ["a"]}}, "if": obj({"k": {"const": 1}}, ("k",)), "then": obj({"v": {"$ref": "#/$defs/X"}})},
     {"$defs": {"X": {"enum": ["a", "b"]}}, "if": obj({"k": {"const": 1}}, ("k",)), "then": obj({"v": {"$ref": "#/$defs/X"}})},
     {("enum_value_added", True)}),
    ("ref-in-dependentSchemas-request", REQ,
     {"$defs": {"X": obj({"b": STR})}, "dependentSchemas": {"a": {"$ref": "#/$defs/X"}}},
     {"$defs": {"X": obj({"b": STR}, ("b",))}, "dependentSchemas": {"a": {"$ref": "#/$defs/X"}}},
     {("required_added", True)}),
    ("ref-in-prefixItems-request", REQ,
     {"$defs": {"X": INT}, "type": "array", "prefixItems": [{"$ref": "#/$defs/X"}]},
     {"$defs": {"X": {"type": "integer", "maximum": 9}}, "type": "array", "prefixItems": [{"$ref": "#/$defs/X"}]},
     {("constraint_tightened", True)}),
    ("ref-in-contains-request", REQ,
     {"$defs": {"X": INT}, "type": "array", "contains": {"$ref": "#/$defs/X"}},
     {"$defs": {"X": {"type": "integer", "minimum": 1}}, "type": "array", "contains": {"$ref": "#/$defs/X"}},
     {("constraint_tightened", True)}),
    ("ref-in-propertyNames-response", RESP,
     {"$defs": {"N": {"type": "string", "maxLength": 3}}, "type": "object", "propertyNames": {"$ref": "#/$defs/N"}},
     {"$defs": {"N": {"type": "string", "maxLength": 9}}, "type": "object", "propertyNames": {"$ref": "#/$defs/N"}},
     {("constraint_loosened", True)}),
    # `not` turns a change around: its inner schema accepting less makes the whole accept more
    ("ref-in-not-request", REQ,
     {"$defs": {"X": {"enum": ["a", "b"]}}, "not": {"$ref": "#/$defs/X"}},
     {"$defs": {"X": {"enum": ["a"]}}, "not": {"$ref": "#/$defs/X"}},
     {("constraint_loosened", False)}),
    ("ref-in-not-response", RESP,
     {"$defs": {"X": {"enum": ["a", "b"]}}, "not": {"$ref": "#/$defs/X"}},
     {"$defs": {"X": {"enum": ["a"]}}, "not": {"$ref": "#/$defs/X"}},
     {("constraint_loosened", True)}),
    ("if-changed", REQ, {"if": obj({"k": {"const": 1}}, ("k",)), "then": obj({}, ("v",))},
     {"if": obj({"k": {"const": 2}}, ("k",)), "then": obj({}, ("v",))},
     {("constraint_tightened", True)}),
    ("patternProperties-opens-closed-response", RESP, obj({"a": STR}, additionalProperties=False),
     obj({"a": STR}, additionalProperties=False, patternProperties={"^x-": STR}),
     {("constraint_loosened", True)}),
    ("patternProperties-added-open-request", REQ, obj({"a": STR}),
     obj({"a": STR}, patternProperties={"^x-": STR}), {("constraint_tightened", True)}),
    ("dependentRequired-added-request", REQ, obj({"a": STR, "b": STR}),
     obj({"a": STR, "b": STR}, dependentRequired={"a": ["b"]}), {("constraint_tightened", True)}),
    ("unknown-keyword-through-ref", REQ,
     {"$defs": {"X": STR}, "x-unmodelled": 1, "contentSchema": {"$ref": "#/$defs/X"}},
     {"$defs": {"X": INT}, "x-unmodelled": 1, "contentSchema": {"$ref": "#/$defs/X"}},
     {("constraint_tightened", True)}),
]


@pytest.mark.parametrize(
    ("direction", "old", "new", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_change_table(
    direction: Any, old: dict[str, Any], new: dict[str, Any], expected: set[tuple[str, bool]]
) -> None:
    changes = diff_schemas(old, new, direction)
    assert {(c.kind, c.breaking) for c in changes} == expected
    assert len(changes) == len(expected)  # one change each, no duplicates


def test_table_covers_every_kind() -> None:
    assert {kind for *_, expected in CASES for kind, _ in expected} == set(KINDS)


def test_nested_change_path_and_detail() -> None:
    old = obj({"retrieval": obj({"result": obj({"status": {"enum": ["ok", "failed"]}})})})
    new = obj({"retrieval": obj({"result": obj({"status": {"enum": ["ok", "failed", "gone"]}})})})
    (change,) = diff_schemas(old, new, "response")
    assert change == Change("$.retrieval.result.status", "enum_value_added", True, 'enum values added: "gone"',
                            "breaks old clients: an answer may now hold what the old schema refuses")


def test_every_breaking_change_says_why_for_its_side() -> None:
    closed = obj({"a": STR}, additionalProperties=False)
    (added,) = diff_schemas(closed, {**closed, "properties": {"a": STR, "b": STR}}, "response")
    assert added.line() == (
        "BREAKING  property_added  $.b: optional property added; the old schema admitted false under its name "
        '(constraint_loosened: schema false -> {"type": "string"}); breaks old clients: their schema refuses some '
        "values of it (unknown properties rejected, or held to additionalProperties or patternProperties), so an "
        "answer carrying one fails their validation")
    (tightened,) = diff_schemas(STR, {"type": "string", "maxLength": 3}, "request")
    assert tightened.why == "breaks old clients: a request valid under the old schema may now be refused"
    (removed,) = diff_schemas(obj({"a": STR, "b": STR}), obj({"a": STR}), "response")
    assert removed.why == "breaks old clients: an answer may now hold what the old schema refuses"  # {"b": 1}
    (dropped,) = diff_schemas(obj({"a": STR, "b": STR}), obj({"a": STR}), "response", "lenient")
    assert dropped.why == "breaks old clients: answers may no longer carry what they read"
    assert all(not c.why for c in diff_schemas(STR, {"type": "string", "maxLength": 3}, "response"))


def test_paths_for_items_and_branches() -> None:
    old = obj({"hits": {"type": "array", "items": {"anyOf": [obj({"id": STR}), INT]}}})
    new = obj({"hits": {"type": "array", "items": {"anyOf": [obj({"id": INT}), INT]}}})
    assert [c.path for c in diff_schemas(old, new, "request")] == ["$.hits[]<anyOf 0>.id"]


def test_variant_styles_mcp_vs_rest() -> None:
    """The same operation published as draft-07 (closed object) and 2020-12 (uuid patterns)."""
    props = {"id": STR, "query": STR, "limit": INT}
    mcp = {"$schema": DRAFT7, **obj(props, ("id", "query"), additionalProperties=False)}
    rest_props = {**props, "id": {"type": "string", "pattern": UUID}}
    rest = {"$schema": DRAFT2020, **obj(rest_props, ("id", "query"))}
    request = diff_schemas(mcp, rest, "request")
    assert {(c.path, c.kind, c.breaking) for c in request} == {
        ("$", "schema_dialect_changed", False),
        ("$", "additional_properties_loosened", False),
        ("$.id", "constraint_tightened", True),
    }
    response = diff_schemas(mcp, rest, "response")
    assert {(c.kind, c.breaking) for c in response} == {
        ("schema_dialect_changed", False),
        ("additional_properties_loosened", True),
        ("constraint_tightened", False),
    }


@pytest.mark.parametrize("direction", ["request", "response"])
def test_annotations_never_break(direction: Any) -> None:
    old = {"type": "string", "title": "A", "description": "old", "deprecated": False}
    new = {"type": "string", "title": "B", "description": "new", "examples": ["x"], "x-doc": 1}
    changes = diff_schemas(old, new, direction)
    assert sorted(c.detail.split()[0] for c in changes) == [
        "deprecated", "description", "examples", "title", "x-doc"]
    assert {(c.kind, c.breaking) for c in changes} == {("annotation_changed", False)}


def test_undecidable_change_says_so() -> None:
    old, new = {"type": "string", "format": "uuid"}, {"type": "string", "format": "uri"}
    for direction in ("request", "response"):
        (change,) = diff_schemas(old, new, direction)  # type: ignore[arg-type]
        assert change.breaking and "undecidable" in change.detail


def test_recursive_schema_terminates() -> None:
    def tree(leaf: dict[str, Any]) -> dict[str, Any]:
        node = obj({"value": leaf, "children": {"type": "array", "items": {"$ref": "#"}},
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, NULL]}})
        return {"$defs": {"Node": node}, "$ref": "#/$defs/Node"}

    changes = diff_schemas(tree(STR), tree(INT), "request")
    assert {(c.path, c.kind) for c in changes} == {("$.value", "type_changed")}


def test_format_changes() -> None:
    old = obj({"a": STR, "b": {"enum": ["x"]}})
    new = obj({"a": STR, "b": {"enum": ["x", "y"]}, "c": INT}, ("c",))
    assert format_changes(diff_schemas(old, new, "request")) == (
        'ok        enum_value_added  $.b: enum values added: "y"\n'
        "BREAKING  required_added  $.c: new required property; "
        "breaks old clients: a request valid under the old schema may now be refused\n"
        "2 changes, 1 breaking"
    )
    assert format_changes([]) == "no changes"


def test_unknown_direction_rejected() -> None:
    with pytest.raises(ValueError, match="direction"):
        diff_schemas(STR, STR, "both")  # type: ignore[arg-type]


_leaf = st.sampled_from([STR, INT, NULL, {"type": ["string", "null"]}, {"enum": ["a", None]},
                         {"type": "string", "maxLength": 3, "pattern": "^x"}, True, False])
_schemas = st.recursive(_leaf, lambda inner: st.one_of(
    st.builds(lambda p: obj(p, tuple(sorted(p))[:1]), st.dictionaries(st.sampled_from("abc"), inner)),
    st.builds(lambda i: {"type": "array", "items": i}, inner),
    st.builds(lambda bs: {"anyOf": bs}, st.lists(inner, min_size=1, max_size=3)),
), max_leaves=8)


@settings(database=None, deadline=None, max_examples=150)
@given(_schemas, st.sampled_from(["request", "response"]))
def test_identical_schemas_have_no_changes(schema: Any, direction: Any) -> None:
    assert diff_schemas(schema, schema, direction) == []


@settings(database=None, deadline=None, max_examples=150)
@given(_schemas, _schemas)
def test_direction_changes_only_verdicts(old: Any, new: Any) -> None:
    request, response = diff_schemas(old, new, "request"), diff_schemas(old, new, "response")
    assert {c.kind for c in request + response} <= set(KINDS)
    assert len(request) == len(response)  # the direction changes verdicts, never what is found


def _replace_one(schema: Any, data: st.DataObject) -> Any:
    """The schema with one subschema (picked by hypothesis) swapped for another one."""
    if not isinstance(schema, dict) or data.draw(st.booleans(), label="swap here"):
        return data.draw(_schemas, label="replacement")
    children: list[tuple[str, Any]] = [("items", None)] if "items" in schema else []
    children += [("properties", name) for name in schema.get("properties", {})]
    children += [("anyOf", i) for i in range(len(schema.get("anyOf", [])))]
    if not children:
        return data.draw(_schemas, label="replacement")
    key, index = data.draw(st.sampled_from(children), label="child")
    copy = {**schema}
    if index is None:
        copy[key] = _replace_one(schema[key], data)
    else:
        holder = dict(schema[key]) if isinstance(schema[key], dict) else list(schema[key])
        holder[index] = _replace_one(holder[index], data)
        copy[key] = holder
    return copy


@settings(database=None, deadline=None, max_examples=300)
@given(_schemas, st.data())
def test_a_change_called_compatible_keeps_old_payloads_valid(old: Any, data: st.DataObject) -> None:
    """Soundness of the gate: when no request change is breaking, what old clients could send
    is still accepted; when no response change is breaking, what the server now sends was valid before."""
    from hypothesis_jsonschema import from_schema
    from jsonschema import Draft202012Validator

    new = _replace_one(old, data)
    checks: tuple[tuple[Direction, Any, Any], ...] = (("request", old, new), ("response", new, old))
    for direction, source, target in checks:
        if any(c.breaking for c in diff_schemas(old, new, direction)):
            continue
        if source is False:
            continue
        instance = data.draw(from_schema(source), label=f"{direction} payload")
        assert Draft202012Validator(target).is_valid(instance), (direction, source, target, instance)


S2020 = {"$schema": DRAFT2020}
NUM = {"type": "number"}
# (id, old, new, breaking for requests, breaking for responses) under the default, semantic policy:
# the classes an independent corpus found called wrongly (unsound, or over-strict)
CLASSES: list[tuple[str, dict[str, Any], dict[str, Any], bool, bool]] = [
    # a typed property added to an open object: {"bar": null} was a valid request
    ("typed-property-added-open", {"properties": {"foo": {}}}, {"properties": {"foo": {}, "bar": NUM}}, True, False),
    # where additionalProperties constrained the name already: {"bar": ""} was valid, {"bar": 0} was not
    ("property-added-under-additionalProperties", {"additionalProperties": STR},
     {"properties": {"bar": NUM}, "additionalProperties": STR}, True, True),
    ("property-added-under-unevaluatedProperties", {**S2020, "unevaluatedProperties": STR},
     {**S2020, "properties": {"bar": NUM}, "unevaluatedProperties": STR}, True, True),
    # additionalProperties beside it evaluates every property: unevaluatedProperties governs none
    # now, and {"a": 1} is valid (the oracle's find, 2026-12-05)
    ("additionalProperties-added-beside-unevaluatedProperties", {**S2020, "unevaluatedProperties": STR},
     {**S2020, "unevaluatedProperties": STR, "additionalProperties": True}, False, True),
    # the third position falls to unevaluatedItems: ["a", 1, 1] is refused now
    ("prefixItems-dropped-under-unevaluatedItems",
     {**S2020, "prefixItems": [STR, INT, INT], "unevaluatedItems": STR},
     {**S2020, "prefixItems": [STR, INT], "unevaluatedItems": STR}, True, True),
    # rewrites that change nothing
    ("singleton-oneOf-to-allOf", {"oneOf": [STR]}, {"allOf": [STR]}, False, False),
    ("allOf-branch-duplicated", {"allOf": [STR, {"maxLength": 3}]},
     {"allOf": [STR, {"maxLength": 3}, {"maxLength": 3}]}, False, False),
    ("allOf-to-anyOf-of-equal-branches", {"allOf": [STR, STR]}, {"anyOf": [STR, STR]}, False, False),
    ("type-wrapped-in-allOf", STR, {"allOf": [STR]}, False, False),
    ("removed-property-still-admitted-by-a-pattern",
     {"properties": {"x-a": STR}, "patternProperties": {"^x-": STR}, "additionalProperties": False},
     {"patternProperties": {"^x-": STR}, "additionalProperties": False}, False, False),
    ("removed-property-whose-schema-was-false", {"properties": {"a": False}, "additionalProperties": False},
     {"additionalProperties": False}, False, False),
    ("null-to-nullable-number", NULL, {"oneOf": [NUM, NULL]}, False, True),
    ("minContains-lowered", {"type": "array", "contains": INT, "minContains": 2},
     {"type": "array", "contains": INT, "minContains": 1}, False, True),
    ("maxContains-lowered", {"type": "array", "contains": INT, "maxContains": 3},
     {"type": "array", "contains": INT, "maxContains": 2}, True, False),
    # oneOf [X, null] is not "X or null" when X admits null too
    ("oneOf-null-beside-a-branch-admitting-null", {"oneOf": [NUM, NULL]}, {"oneOf": [{}, NULL]}, True, True),
]


@pytest.mark.parametrize(("old", "new", "breaks_requests", "breaks_responses"),
                         [pytest.param(*case[1:], id=case[0]) for case in CLASSES])
def test_the_verdict_on_each_class_is_sound_and_no_stricter(old: dict[str, Any], new: dict[str, Any],
                                                             breaks_requests: bool, breaks_responses: bool) -> None:
    for direction, expected in (("request", breaks_requests), ("response", breaks_responses)):
        changes = diff_schemas(old, new, direction)  # type: ignore[arg-type]
        assert any(c.breaking for c in changes) == expected, (direction, [c.line() for c in changes])


def test_lenient_differs_exactly_in_its_stated_assumption() -> None:
    """lenient: old clients send only declared properties (an added one breaks no request) and read
    the ones declared (a dropped one breaks answers); every verdict it changes says so."""
    open_old, open_new = {"properties": {"foo": {}}}, {"properties": {"foo": {}, "bar": NUM}}
    (added,) = diff_schemas(open_old, open_new, "request", "lenient")
    assert not added.breaking and "lenient: assumes old clients send only the properties" in added.detail
    closed_old = {"properties": {"a": STR, "b": STR}, "additionalProperties": False}
    closed_new = {"properties": {"a": STR}, "additionalProperties": False}
    assert not any(c.breaking for c in diff_schemas(closed_old, closed_new, "response"))
    (dropped,) = diff_schemas(closed_old, closed_new, "response", "lenient")
    assert dropped.breaking and "lenient: assumes old clients read" in dropped.detail
    for name, old, new, *_ in CLASSES:  # elsewhere the two policies agree
        for direction in ("request", "response"):
            semantic, lenient = (diff_schemas(old, new, direction, policy)  # type: ignore[arg-type]
                                 for policy in ("semantic", "lenient"))
            if not any("lenient:" in c.detail for c in lenient):
                assert [c.line() for c in semantic] == [c.line() for c in lenient], name


@pytest.mark.parametrize(("old", "new", "loosened"), [
    ("^documents/[^/\\s]+$", "^documents/[^/\\s]+$|^https?://[^/\\s]+$", True),  # an alternative added
    ("^a$|^b$|^c$", "^c$|^a$", False),  # one removed (order does not matter)
    ("^(?:a|b)$", "^(?:a|b)$|^[|]$", True),  # | inside a group or a class is no top-level alternative
])
def test_a_pattern_that_gains_or_loses_alternatives_is_loosened_or_tightened(old: str, new: str,
                                                                             loosened: bool) -> None:
    """Every string an alternative matches, the pattern matches: a pattern holding all of the old
    one's alternatives admits all it admitted (compatible for a request, breaking for an answer)."""
    request = diff_schemas({"type": "string", "pattern": old}, {"type": "string", "pattern": new}, "request")
    response = diff_schemas({"type": "string", "pattern": old}, {"type": "string", "pattern": new}, "response")
    kind = "constraint_loosened" if loosened else "constraint_tightened"
    assert [(c.kind, c.breaking) for c in request] == [(kind, not loosened)]
    assert [(c.kind, c.breaking) for c in response] == [(kind, loosened)]
    assert "undecidable" not in request[0].detail


@pytest.mark.parametrize(("old", "new"), [
    ("^a$", "^b$"),  # neither holds the other's alternatives
    ("(a)\\1", "(b)|(a)\\1"),  # the backreference now names another group
    ("^a$|^b$", "^a$|^c$"),
])
def test_other_pattern_changes_stay_undecidable(old: str, new: str) -> None:
    (change,) = diff_schemas({"type": "string", "pattern": old}, {"type": "string", "pattern": new}, "request")
    assert change.breaking and "undecidable" in change.detail
