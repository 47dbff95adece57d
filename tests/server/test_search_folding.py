"""The index's folding and word splitting (search_text.fold and words) against their plain
definitions: a character at a time, as the module's docstring states them. The service runs a
faster form (regex classes looked up in one step), which must give the same words for any text,
or stored pages would stop matching the queries folded the same way."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from evidencekit.server.evidence import search_text

PAGES = Path(__file__).resolve().parent.parent / "data" / "relevance"


def plain_fold(text: str) -> str:
    """Case folded, NFKD; a combining mark dropped when the last non-combining character before it
    is Latin, Greek, Cyrillic, Hebrew or Arabic (below U+0900) or Latin/Greek extended; then NFC."""
    kept, base = [], " "
    for char in unicodedata.normalize("NFKD", text.casefold()):
        if not unicodedata.combining(char):
            base = char
        elif base < "\u0900" or "\u1e00" <= base <= "\u1fff":
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def plain_word_list(text: str) -> list[str]:
    """Runs of letters, digits and combining marks (Unicode category M), "_" excluded."""
    words, current = [], []
    for char in text:
        if (char.isalnum() or re.fullmatch(r"\w", char) or unicodedata.category(char)[0] == "M") and char != "_":
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


# letters with accents, Indic marks, kana, Hangul, Hebrew points, astral letters and marks
# (Gothic, musical symbols' combining marks, variation selectors), "_" and compatibility forms
TRICKY = ("aeé\u0301\u0308ßİ\u0130ǅ\u01c5ﬀ\ufb00ｆ\uff46क\u093fि\u094dパハ\u309a가\u1100\u1161"
          "שָׁלוֹם\u05b8_-· \n\t\U00010330\U0001d165\U0001d16d\U000e0100\u0300\u1e9b\u1f00\u0345")


texts = st.text(alphabet=st.one_of(st.sampled_from(TRICKY), st.characters(codec="utf-8")), max_size=60)


@settings(max_examples=400, deadline=None)
@given(texts)
@example("\u0301leading mark")
@example("क\u0301\u0302")  # marks after a base that keeps them: all kept
@example("e\u0301\u0302x")  # marks after an accent base: all dropped
@example("\U00010330\u0301 a\u0301")  # astral text takes the other regexes
def test_folding_is_its_plain_definition(text: str) -> None:
    assert search_text.fold(text) == plain_fold(text)


@settings(max_examples=400, deadline=None)
@given(texts)
@example("snake_case word")
@example("a\U0001d165b \U00010330x")
def test_words_are_runs_of_letters_digits_and_marks(text: str) -> None:
    assert search_text._word_list(text) == plain_word_list(text)


def test_stored_pages_of_every_language_fold_and_split_as_defined() -> None:
    for pages in sorted(PAGES.glob("*.pages.txt")):
        text = pages.read_text(encoding="utf-8")[:40_000]
        folded = search_text.fold(text)
        assert folded == plain_fold(text), pages.name
        assert search_text._word_list(folded) == plain_word_list(folded), pages.name


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["the", "rive", "Été", "中文", "x1"]), max_size=1400),
       st.sampled_from([" ", "\n", ", "]))
@example(["the"] * 257 + ["rive"] * 3, " ")
def test_a_word_past_its_256th_place_is_held_by_the_place_holder(chosen: list[str], between: str) -> None:
    """The index text, words past MAX_PLACES included, against its plain definition: a word's
    257th occurrence and later ones become PLACE_HOLDER, every other word stays where it is."""
    expected, seen = [], {}
    for word in plain_word_list(plain_fold(between.join(chosen))):
        for piece in ([word[at:at + 2] for at in range(len(word) - 1)] + [word[-1]] if word == "中文" else [word]):
            seen[piece] = seen.get(piece, 0) + 1
            expected.append(piece if seen[piece] <= search_text.MAX_PLACES else search_text.PLACE_HOLDER)
    assert search_text.words(between.join(chosen)) == " ".join(expected)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["the", "and", "der", "und", "le", "et", "zzz", "של"]), max_size=60))
def test_a_pages_languages_are_counted_word_by_word(words: list[str]) -> None:
    from evidencekit.server.evidence import search_forms

    shown = {language: sum(1 for word in words if language in search_forms._SHOWN_BY.get(word, ()))
             for language in search_forms.LANGUAGES}
    most = max(shown.values(), default=0)
    expected = search_forms.LANGUAGES if most < 3 else tuple(
        language for language in search_forms.LANGUAGES if shown[language] * 2 >= most)
    assert search_forms.page_languages(words) == expected
