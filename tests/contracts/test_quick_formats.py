"""The quick check (uuid and date-time as patterns, no call into Python) passes only what the exact
check passes; it passes the forms the service writes, so status answers take it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidencekit.contracts._validation import _formats_as_patterns, compile_fast, compile_quick
from tests.contracts.test_validator_engines import DIALECTS, EDGE_CASES

# Near misses as well as hits: other digits, lowercase, spaces, leap seconds, Feb 29, year 0,
# 24:00 offsets, trailing newlines, braces and urn prefixes
_NEAR_DATE_TIME = (r"[0-9０]{4}-(0[0-9]|1[0-3])-([0-3][0-9])[Tt ]([0-2][0-9]):[0-6][0-9]:[0-6][0-9]"
                   r"(\.[0-9]{0,4})?([Zz]|[+-][0-2][0-9]:[0-6][0-9])?\n?")
_NEAR_UUID = r"(\{|urn:uuid:)?[0-9a-gA-G]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{3,5}-?[0-9a-fA-F_]{11,13}\}?\n?"


_ODD = "gG-_:Tt Zz.+０9\n"


@st.composite
def _one_off(draw: st.DrawFn, fmt: str) -> str:
    """A value the format accepts with one character changed, inserted or removed, or wrapped."""
    if fmt == "uuid":
        value = str(draw(st.uuids()))
        value = value.upper() if draw(st.booleans()) else value
    else:
        moment = draw(st.datetimes(timezones=st.timezones()))
        value = moment.isoformat().replace("+00:00", "Z") if moment.tzinfo else moment.isoformat()
    position = draw(st.integers(0, len(value)))
    odd = draw(st.sampled_from(_ODD))
    change = draw(st.sampled_from(["replace", "insert", "remove", "wrap", "none"]))
    if change == "replace" and position < len(value):
        return value[:position] + odd + value[position + 1:]
    if change == "insert":
        return value[:position] + odd + value[position:]
    if change == "remove":
        return value[:position] + value[position + 1:]
    if change == "wrap":
        return draw(st.sampled_from(["{%s}", "urn:uuid:%s", "%s\n", " %s"])) % value
    return value


def _both(fmt: str, dialect: str) -> tuple[Any, Any]:
    schema = {"$schema": dialect, "type": "string", "format": fmt}
    return compile_quick(schema), compile_fast(schema)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("fmt", "near"), [("date-time", _NEAR_DATE_TIME), ("uuid", _NEAR_UUID)])
def test_what_the_quick_check_passes_the_exact_check_passes(fmt: str, near: str, dialect: str) -> None:
    quick, exact = _both(fmt, dialect)
    for value in EDGE_CASES[fmt]:
        assert not quick.is_valid(value) or exact.is_valid(value), value

    @settings(max_examples=600, deadline=None, database=None)
    @given(_one_off(fmt) | st.from_regex(near, fullmatch=True) | st.text(max_size=40))
    def run(value: str) -> None:
        assert not quick.is_valid(value) or exact.is_valid(value), value

    run()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_forms_the_service_writes_take_the_quick_check(dialect: str) -> None:
    quick_time, _ = _both("date-time", dialect)
    quick_uuid, _ = _both("uuid", dialect)
    for value in ("2026-12-01T08:45:04.068690Z", "2026-12-01T08:45:04Z", "2024-12-31T23:59:59+05:30"):
        assert quick_time.is_valid(value), value
    for value in ("0190d4a2-1111-7000-8000-000000000001", "9F1C0E4A-5B6D-4E7F-8A9B-0C1D2E3F4A5B"):
        assert quick_uuid.is_valid(value), value
    # refused quickly, left to the exact check (which accepts them): the verdict is that check's
    assert not quick_time.is_valid("2024-02-29T00:00:00Z") and not quick_time.is_valid("2026-12-01t08:45:04z")


def test_only_the_format_keyword_is_rewritten_never_a_property_or_data() -> None:
    schema = {"type": "object", "properties": {"format": {"type": "string", "format": "uuid"},
                                               "when": {"format": "date-time", "pattern": "Z$",
                                                        "allOf": [{"minLength": 1}]}},
              "const": {"format": "uuid"}, "default": {"format": "date-time"}, "examples": [{"format": "uuid"}]}
    rewritten = _formats_as_patterns(schema)
    uuid_field, when = rewritten["properties"]["format"], rewritten["properties"]["when"]
    assert "format" not in uuid_field and len(uuid_field["allOf"]) == 1 and "pattern" in uuid_field["allOf"][0]
    assert when["pattern"] == "Z$" and when["allOf"][0] == {"minLength": 1} and "pattern" in when["allOf"][1]
    assert rewritten["const"] == {"format": "uuid"} and rewritten["default"] == {"format": "date-time"}
    assert rewritten["examples"] == [{"format": "uuid"}]
    assert schema["properties"]["format"] == {"type": "string", "format": "uuid"}  # the original is left alone
