"""An answer's bytes: orjson's where it writes them, the same bytes pydantic-core's to_json writes."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import PydanticSerializationError, to_json

from evidencekit.server.runtime._json_answer import answer_bytes

# JSON data as a handler's answer holds it: any text (control characters, U+2028, astral
# characters), 64-bit integers, finite floats, nesting
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
_SCALARS = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
            | st.floats(allow_nan=False, allow_infinity=False) | _TEXT)
_DATA = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5),
                     max_leaves=30)


@settings(max_examples=400)
@given(_DATA)
def test_the_same_bytes_as_pydantic_core(data: object) -> None:
    assert answer_bytes(data) == to_json(data)
    assert json.loads(answer_bytes(data)) == data


def test_what_orjson_refuses_is_written_by_pydantic_core() -> None:
    for data in ({"n": 2**64}, {"n": -(2**63) - 1}, {1: "key not a string"}):
        assert answer_bytes(data) == to_json(data)
    with pytest.raises(PydanticSerializationError, match="surrogates not allowed"):  # as to_json refuses it
        answer_bytes({"text": "a\ud800b"})


def test_a_page_of_text_and_every_escape() -> None:
    text = "".join(chr(code) for code in range(0x80)) + "\u2028\u2029é中\U0001f600" + "prose " * 1000
    data = {"retrieval": {"result": {"text": text, "segments": []}, "evidence": None}}
    assert answer_bytes(data) == to_json(data)
    assert json.loads(answer_bytes(data))["retrieval"]["result"]["text"] == text


def test_a_non_finite_float_is_written_as_json_null() -> None:
    assert json.loads(answer_bytes({"x": math.nan, "y": math.inf})) == {"x": None, "y": None}
