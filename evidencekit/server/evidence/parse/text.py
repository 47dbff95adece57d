"""Small text helpers shared by the HTML, plain-text and caption readers."""

from __future__ import annotations

import re
import unicodedata

_LANGUAGE_TAG = re.compile(r"[a-zA-Z]{2,8}(?:-[a-zA-Z0-9]{1,8})*")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f]")  # C0 controls except \t and \n (\r is normalised first)


_CONTROLS_AS_SPACE = {code: " " for code in (*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20))}


def collapse_text(value: str) -> str:
    """Text for one line of output: control characters (even from character references) count
    as whitespace, and runs of whitespace become one space."""
    if value.isprintable() and "  " not in value and value[:1] != " " and value[-1:] != " ":
        # (already one line: printable text holds no whitespace but the space, as every other
        # whitespace character is a control or a separator; most lines come so, and the split
        # makes an object a word)
        return value
    collapsed = " ".join(value.split())
    # split() already takes \t \n \v \f \r and \x1c-\x1f for whitespace; the C0 controls left are
    # unprintable, and isprintable() rules them out at a third of a regex search's cost (a dict
    # lookup a character, translate(), costs 5x the split and join on accented text)
    if collapsed.isprintable() or _CONTROLS.search(collapsed) is None:
        return collapsed
    return " ".join(collapsed.translate(_CONTROLS_AS_SPACE).split())


def nfc(value: str) -> str:
    """Unicode NFC: one code point where a page spelled a letter as its parts (e + U+0301, Bengali
    vowel signs decomposed), so the text compares, searches and counts as readers see it."""
    return value if value.isascii() else unicodedata.normalize("NFC", value)


def nfc_or_none(value: str | None) -> str | None:
    return None if value is None else nfc(value)


def normalize_newlines(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n")


def remove_controls(value: str) -> str:
    """Drop NUL and the other C0 control characters except tab and line feed."""
    return _CONTROLS.sub("", value)


def normalize_language(value: str | None) -> str | None:
    """A declared language tag, normalised ("en_US" -> "en-US"), or None when it is not a plausible tag."""
    if value is None:
        return None
    tag = value.strip().replace("_", "-")
    if len(tag) > 35 or not _LANGUAGE_TAG.fullmatch(tag):
        return None
    return tag


def first_language(header: str | None) -> str | None:
    """The first tag of a Content-Language value such as "de-DE, en"."""
    if not header:
        return None
    return normalize_language(header.split(",", 1)[0])


BINARY_SAMPLE = 8192
# Characters no text document holds in number: C0 controls other than tab, newlines and form feed,
# and the replacement character a decoder writes for bytes it cannot read.
# ESC (\x1b) is left out: coloured terminal logs are text.
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\ufffd]")
_TEXT_BYTES = bytes(code for code in range(256) if not _NOT_TEXT.match(chr(code)))


def looks_binary(text: str) -> bool:
    """True when decoded text is not text at all (an image or an archive served as text/html):
    more than 2% of its first 8,192 characters are controls or replacement characters."""
    sample = text[:BINARY_SAMPLE]
    if len(sample) < 64:
        return False
    if sample.isascii():  # (counted in bytes: a deleting translate() runs at memory speed, a regex does not)
        found = len(sample.encode("ascii").translate(None, _TEXT_BYTES))
    else:
        found = len(_NOT_TEXT.findall(sample))
    return found > 0.02 * len(sample)
