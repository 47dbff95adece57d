"""Retrieved text is NFC: a page that spells a letter as its parts (e + a combining accent, a
Bengali vowel sign as two) reads, compares and is searched as the letter."""

from __future__ import annotations

import unicodedata

from evidencekit.server.evidence.parse import parse_html
from evidencekit.server.evidence.parse.captions import caption_lines
from evidencekit.server.evidence.parse.plain_text import parse_plain_text

DECOMPOSED = "Cafe\u0301 e\u0301te\u0301, \u0995\u09c7\u09be\u09a8"  # Café été, কোন with ো as ে + া
COMPOSED = unicodedata.normalize("NFC", DECOMPOSED)


def test_the_composed_form_differs() -> None:
    assert COMPOSED != DECOMPOSED and len(COMPOSED) < len(DECOMPOSED)


def test_a_page_with_decomposed_letters_reads_composed() -> None:
    page = (f"<html><head><title>{DECOMPOSED}</title><meta name='description' content='{DECOMPOSED}'></head>"
            f"<body><main><h1>{DECOMPOSED}</h1><p>{DECOMPOSED} and more words to make a paragraph.</p></main>"
            "</body></html>").encode()
    extract = parse_html(page)
    assert COMPOSED in extract.text and DECOMPOSED not in extract.text
    assert COMPOSED in extract.markdown
    assert extract.title == COMPOSED and extract.description == COMPOSED


def test_plain_text_and_captions_read_composed() -> None:
    assert parse_plain_text(DECOMPOSED.encode()) == COMPOSED
    assert caption_lines(f"WEBVTT\n\n00:00.000 --> 00:01.000\n{DECOMPOSED}\n".encode(), None)[3] == COMPOSED
