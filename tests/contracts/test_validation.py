from __future__ import annotations

import copy
import json

from tests.support import CONTRACTS_DIR, validator_named

RETRIEVE = "sosoapi_research_evidence_retrieve"
EXAMPLE = json.loads((CONTRACTS_DIR / RETRIEVE / "examples" / "rest.output.json").read_text())


def test_request_errors_name_every_failing_field() -> None:
    errors = validator_named(RETRIEVE).input_errors(
        {"url": "not a uri", "kind": "video", "workspace_id": "nope", "surplus": 1}, "rest"
    )
    assert {(e.path, e.keyword) for e in errors} == {
        ("$.url", "format"),
        ("$.kind", "enum"),
        ("$.workspace_id", "format"),
        ("$.workspace_id", "pattern"),
        ("$.mutation_id", "required"),
        ("$.surplus", "additionalProperties"),
    }


def test_mcp_variant_has_no_uuid_pattern_but_checks_the_format() -> None:
    payload = {"url": "https://example.com/a", "kind": "url_text",
               "workspace_id": "11111111-1111-0111-0111-111111111111",  # a uuid, but not version 1-8
               "mutation_id": "40000000-0000-4000-8000-000000000001"}
    validator = validator_named(RETRIEVE)
    assert validator.input_errors(payload, "mcp") == []
    assert [e.keyword for e in validator.input_errors(payload, "rest")] == ["pattern"]


def test_response_errors_descend_into_the_right_anyof_branch() -> None:
    bad = copy.deepcopy(EXAMPLE)
    bad["retrieval"]["result"]["title"] = ""
    bad["retrieval"]["result"]["provenance"]["language"] = "x"
    bad["retrieval"]["result"]["surprise"] = True
    errors = validator_named(RETRIEVE).output_errors(bad)
    by_variant = {(e.variant, e.path, e.keyword) for e in errors}
    assert ("mcp", "$.retrieval.result.title", "minLength") in by_variant
    assert ("rest", "$.retrieval.result.title", "minLength") in by_variant
    assert ("mcp", "$.retrieval.result.provenance.language", "pattern") in by_variant
    # Only the MCP variant forbids unknown properties.
    assert ("mcp", "$.retrieval.result.surprise", "additionalProperties") in by_variant
    assert not any(v == "rest" and k == "additionalProperties" for v, _, k in by_variant)


def test_messages_do_not_echo_large_values() -> None:
    errors = validator_named(RETRIEVE).input_errors(
        {"url": "https://e.com/" + "a" * 5000, "kind": "url_text",
         "workspace_id": "11111111-1111-4111-8111-111111111111",
         "mutation_id": "40000000-0000-4000-8000-000000000001"}, "rest")
    assert [(e.path, e.message) for e in errors] == [("$.url", "is longer than 2048 characters")]


def test_the_formats_the_contracts_use_are_really_checked() -> None:
    from evidencekit.contracts._validation import _FORMAT_CHECKER

    assert {"uuid", "uri", "date-time"} <= set(_FORMAT_CHECKER.checkers)
    assert not _FORMAT_CHECKER.conforms("2099-02-30T00:00:00Z", "date-time")
    assert not _FORMAT_CHECKER.conforms("no scheme", "uri")
    assert not _FORMAT_CHECKER.conforms("40000000-0000-4000-8000-00000000000", "uuid")


def test_inputs_are_checked_against_every_variant() -> None:
    payload = {"url": "https://example.com/a", "kind": "url_text",
               "workspace_id": "11111111-1111-0111-0111-111111111111",
               "mutation_id": "40000000-0000-4000-8000-000000000001"}
    errors = validator_named(RETRIEVE).input_errors(payload)  # the MCP variant alone accepts it
    assert [(e.path, e.keyword, e.variant) for e in errors] == [("$.workspace_id", "pattern", "rest")]


def test_a_value_that_is_no_uuid_is_told_so_with_an_example_not_the_pattern() -> None:
    """An invalid workspace_id or mutation_id once printed the contract's 150-character regex."""
    errors = validator_named(RETRIEVE).input_errors(
        {"url": "https://example.com/a", "kind": "url_text", "workspace_id": "nope", "mutation_id": "my-first-run"})
    assert {(e.path, e.message) for e in errors} == {
        (path, "must be a UUID such as 3f2c9a4e-8b1d-4c6e-9f0a-1b2c3d4e5f60")
        for path in ("$.workspace_id", "$.mutation_id")}
    # a UUID refused only by the version digits of the REST pattern keeps the pattern: it says why
    version_zero = validator_named(RETRIEVE).input_errors(
        {"url": "https://example.com/a", "kind": "url_text", "workspace_id": "11111111-1111-0111-0111-111111111111",
         "mutation_id": "40000000-0000-4000-8000-000000000001"}, "rest")
    assert [e.message.startswith("does not match the pattern ^(") for e in version_zero] == [True]


def test_any_contract_with_a_uuid_pattern_gets_the_uuid_wording() -> None:
    """Not only this service's: a hand-written or generated UUID pattern reads the same, other patterns do not."""
    from dataclasses import dataclass, field

    from evidencekit.contracts._validation import OperationValidator

    @dataclass
    class Variant:
        input_schema: dict[str, object]
        output_schema: dict[str, object] = field(default_factory=dict)

    schema = {"type": "object", "properties": {
        "lower": {"type": "string", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"},
        "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{8}$"}}}
    errors = OperationValidator("other_team", {"v": Variant(schema)}).input_errors({"lower": "x-1", "code": "abc"})
    assert {e.path: e.message for e in errors} == {
        "$.lower": "must be a UUID such as 3f2c9a4e-8b1d-4c6e-9f0a-1b2c3d4e5f60",
        "$.code": "does not match the pattern ^[A-Z]{3}-[0-9]{8}$"}
    assert OperationValidator("other_team", {"v": Variant(schema)}).input_errors(
        {"lower": "3f2c9a4e-8b1d-4c6e-9f0a-1b2c3d4e5f60", "code": "ABC-12345678"}) == []
