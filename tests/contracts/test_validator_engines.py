"""jsonschema-rs (the fast verdict) and Python jsonschema (the explanation) must agree on every
payload: generated valid ones, their mutations, and format edge cases."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from evidencekit.contracts._ecma_regex import compile_ecma, to_python, with_python_patterns
from evidencekit.contracts._loader import load_operations
from evidencekit.contracts._validation import compile_fast, compile_schema
from tests.codegen.test_differential import mutations
from tests.support import CONTRACTS_DIR

SCHEMAS = [
    (f"{op.name}-{variant.name}-{direction}", schema)
    for op in load_operations(CONTRACTS_DIR)
    for variant in op.variants.values()
    for direction, schema in (("input", variant.input_schema), ("output", variant.output_schema))
]


@pytest.mark.parametrize(("label", "schema"), SCHEMAS, ids=[label for label, _ in SCHEMAS])
def test_same_verdict_on_generated_payloads_and_their_mutations(label: str, schema: dict[str, Any]) -> None:
    slow, fast = compile_schema(schema), compile_fast(schema)

    @settings(max_examples=15, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(from_schema(with_python_patterns(schema, end=r"\Z"), custom_formats={"uuid": st.uuids().map(str)}))
    def run(payload: Any) -> None:
        assert fast.is_valid(payload) and slow.is_valid(payload)
        for description, _, invalid in mutations(schema, payload):
            assert fast.is_valid(invalid) == slow.is_valid(invalid), description

    run()


EDGE_CASES = {
    "date-time": ["2099-01-15T09:00:00Z", "2099-01-15T09:00:00.123456+05:30", "2099-01-15t09:00:00z",
                  "2099-02-29T00:00:00Z", "2096-02-29T00:00:00Z", "2099-01-15T23:59:60Z", "2099-01-15T09:00Z",
                  "2099-01-15 09:00:00Z", "2099-01-15T09:00:00", "2099-13-01T00:00:00Z", "", "2099-01-15T09:00:00+24:00"],
    "uri": ["https://example.com/a?b=c#d", "urn:isbn:0451450523", "a:b", "/relative", "no scheme",
            "https://example.com/with space", "http://[::1]:80/", "https://exa mple.com", "mailto:x@y.z",
            "https://example.com/%zz", "", "HTTPS://EXAMPLE.COM"],
    "uuid": ["40000000-0000-4000-8000-000000000001", "40000000000040008000000000000001",
             "{40000000-0000-4000-8000-000000000001}", "urn:uuid:40000000-0000-4000-8000-000000000001",
             "40000000-0000-4000-8000-00000000000g", "", "4000000-00000-4000-8000-000000000001"],
}
DIALECTS = ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", sorted(EDGE_CASES))
def test_same_verdict_on_format_edge_cases(dialect: str, fmt: str) -> None:
    schema = {"$schema": dialect, "type": "string", "format": fmt}
    slow, fast = compile_schema(schema), compile_fast(schema)
    disagreements = [value for value in EDGE_CASES[fmt] if fast.is_valid(value) != slow.is_valid(value)]
    assert disagreements == []


# Characters where Python's `re` and ECMA-262 disagree on \s or \d (found by the test above:
# U+001C passed jsonschema-rs but failed Python's `[^/\s]`).
PATTERN_EDGE_CHARACTERS = ["\x1c", "\x1f", "\x85", "\ufeff", "\xa0", "\u2028", "\u3000", "\u200b", "\u0663", " ", "a", "7"]


@pytest.mark.parametrize("character", PATTERN_EDGE_CHARACTERS, ids=[f"U+{ord(c):04X}" for c in PATTERN_EDGE_CHARACTERS])
@pytest.mark.parametrize("pattern", [r"^documents/[^/\s]+(?:/\S*)?$", r"^\d{4}-\w+\W?\D?$"])
def test_patterns_read_as_ecma_262_in_both_engines(pattern: str, character: str) -> None:
    schema = {"$schema": DIALECTS[0], "type": "string", "pattern": pattern}
    slow, fast = compile_schema(schema), compile_fast(schema)
    for value in (f"documents/a{character}b", f"documents/x/{character}", f"{character}999-a", f"2024-{character}",
                  f"2024-a{character}", f"2024-a!{character}"):
        assert slow.is_valid(value) == fast.is_valid(value), repr(value)


def test_class_escapes_are_translated_and_a_leading_bracket_kept() -> None:
    assert to_python(r"[^/\s]\d") == "[^/\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff][0-9]"
    assert to_python(r"[]\\\]]\.") == r"[]\\\]]\."


CLASS_CHARACTERS = [*PATTERN_EDGE_CHARACTERS, "b", "-", "_", "!", "\t", "\u0300"]


@pytest.mark.parametrize("pattern", [r"^[\S]$", r"^[a-c\S]$", r"^[^a\S]$", r"^[\W\d]$", r"^[^\W_]$", r"^[^\S\D]$",
                                     r"^[^x\D]$", r"^[\s\S]$", r"^[^\s\S]$"])
def test_negated_escapes_inside_classes_read_as_ecma_262(pattern: str) -> None:
    """\\S, \\D and \\W inside a character class (once refused) match what ECMA-262 and jsonschema-rs match."""
    schema = {"$schema": DIALECTS[0], "type": "string", "pattern": pattern}
    slow, fast = compile_schema(schema), compile_fast(schema)
    disagreements = [c for c in CLASS_CHARACTERS if slow.is_valid(c) != fast.is_valid(c)]
    assert disagreements == []


UNICODE_CHARACTERS = [*CLASS_CHARACTERS, "A", "é", "α", "Ω", "ß", "\x00", "\x7f", "\U0001f600", "\u0663", "中", "\u00ad"]


@pytest.mark.parametrize("pattern", [
    r"^\p{Cc}$", r"^[^\p{Cc}]+$", r"^\P{L}$", r"^[a\P{L}]$", r"^[^a\P{L}]$", r"^\p{Lu}\p{gc=Ll}*$",
    r"^[\p{L}\p{N}_-]+$", r"^\p{Letter}$", r"^\p{Script=Greek}$", r"^\p{sc=Han}$", r"^\p{Alphabetic}$",
    r"^\u{1F600}$", r"^[\u{1F600}a]$", r"^\cJ?\p{Cf}?$",
])
def test_unicode_property_escapes_read_as_ecma_262(pattern: str) -> None:
    """\\p{...} (refused once: Python's `re` has no Unicode properties) is accepted by the loader's
    schema check and matches what jsonschema-rs (ECMA-262 with the u flag) matches."""
    schema = {"$schema": DIALECTS[0], "type": "string", "pattern": pattern}
    slow, fast = compile_schema(schema), compile_fast(schema)
    disagreements = [c for c in UNICODE_CHARACTERS if slow.is_valid(c) != fast.is_valid(c)]
    assert disagreements == []
    assert any(slow.is_valid(c) for c in UNICODE_CHARACTERS)  # the pattern matches something here


def test_named_groups_and_an_unknown_property() -> None:
    assert compile_ecma(to_python(r"^(?<year>\d{4})-\k<year>$")).match("2024-2024")
    with pytest.raises(re.error, match=r"unknown Unicode property \\p\{Nonsense\}"):
        to_python(r"\p{Nonsense}")


def test_an_unknown_format_is_an_annotation_in_both_engines() -> None:
    schema = {"$schema": DIALECTS[0], "type": "string", "format": "simple-template"}
    slow, fast = compile_schema(schema), compile_fast(schema)
    assert slow.is_valid("{{ anything }}") and fast.is_valid("{{ anything }}")


def test_an_end_anchor_inside_an_alternative_ends_the_string() -> None:
    """ECMA-262's `$` is the end; Python's also matches before a last newline: the gate drew
    get_documents' name "documents/0\\n" from `^documents/...$|^https?://...$`, which both validators
    refuse. No input drawn for such a pattern ends with a newline now."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    from evidencekit.testing._strategies import inputs

    pattern = r"^documents/[^/\s]+(?:/\S*)?$|^https?://[^/\s]+(?:/\S*)?$"
    assert compile_ecma(pattern).search("documents/0\n") is None
    schema = {"type": "array", "items": {"type": "string", "pattern": pattern}}
    with pytest.raises(NoSuchExample):
        find(inputs(schema), lambda names: any(name.endswith("\n") for name in names),
             settings=settings(max_examples=500, database=None, deadline=None))
