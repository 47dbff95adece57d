"""collapse_text, the line-tidying every reader runs on every block, against its plain definition:
control characters count as whitespace, and runs of whitespace become one space."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evidencekit.server.evidence.parse.text import collapse_text

CONTROLS = [chr(code) for code in (*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20))]


def by_definition(value: str) -> str:
    return " ".join("".join(" " if ch in CONTROLS else ch for ch in value).split())


# letters and marks of several scripts, every kind of whitespace and every control character
CHARACTERS = st.one_of(st.characters(), st.sampled_from([*CONTROLS, " ", "\t", "\n", "\r", "\x85", "\xa0",
                                                          "\u2003", "\u3000", "é", "ü", "ש", "中"]))


@settings(max_examples=400, database=None)
@given(st.text(CHARACTERS, max_size=60))
def test_collapsed_text_is_its_plain_definition(value: str) -> None:
    assert collapse_text(value) == by_definition(value)


def test_a_control_character_between_accented_words_is_a_space() -> None:
    assert collapse_text("Grüße\x1aaus\x00\x00Köln\x0b") == "Grüße aus Köln"


# Lines that are nearly one line already: words with a single space between most of them (the
# shortcut's case), and now and then another separator, or a space at either end
WORDS = st.text(st.sampled_from(["a", "é", "中", "-", "\u200b", "\u00ad"]), min_size=1, max_size=4)
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\xa0", "\u2028", "\u3000", "\x1c", "\t", "\n", "\x85", "\x00"])


@settings(max_examples=400, database=None)
@given(st.lists(st.tuples(WORDS, SEPARATORS), max_size=8), st.sampled_from(["", " ", "\xa0"]), WORDS)
def test_a_nearly_collapsed_line_is_its_plain_definition(pairs: list[tuple[str, str]], edge: str, last: str) -> None:
    value = edge + "".join(word + separator for word, separator in pairs) + last + edge
    assert collapse_text(value) == by_definition(value)
