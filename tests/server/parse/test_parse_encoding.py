"""Bytes to text: HTTP charset, byte order mark, <meta>, detection; plain text cleanup."""

from __future__ import annotations

import codecs

import pytest

from evidencekit.server.evidence.parse import decode_html, decode_text, parse_html, parse_plain_text
from evidencekit.server.evidence.parse.encoding import codec_for

FRENCH = (
    "Le café crème coûte 3,50 € à la brasserie « Chez Hélène ». "
    "Où est la bibliothèque ? Derrière l'église, près du théâtre où l'on joue Molière. "
    "Les élèves étudient l'histoire française, la géographie et les mathématiques avec enthousiasme. "
    "Ça déçoit rarement : voilà pourquoi les habitués reviennent chaque été – “toujours”."
)
JAPANESE = (
    "東京都の天気は晴れです。明日は雨が降るでしょう。日本語の文章を正しく読み取れるかどうかを確かめます。"
    "駅前の本屋で新しい小説を買いました。週末は公園で散歩をする予定です。"
)


def page(text: str, head: str = "") -> str:
    return f"<html><head>{head}<title>t</title></head><body><p>{text}</p></body></html>"


# -- windows-1252 ---------------------------------------------------------------------------


def test_windows_1252_by_http_charset() -> None:
    body = page(FRENCH).encode("cp1252")
    assert FRENCH in decode_html(body, "windows-1252")
    assert parse_html(body, http_charset="windows-1252").text == FRENCH


def test_windows_1252_by_meta_charset() -> None:
    body = page(FRENCH, '<meta charset="windows-1252">').encode("cp1252")
    assert FRENCH in decode_html(body)


def test_latin1_label_reads_as_windows_1252_like_browsers() -> None:
    body = page("“curly” – 5 €").encode("cp1252")
    assert "“curly” – 5 €" in decode_html(body, "ISO-8859-1")


def test_windows_1252_by_detection_only() -> None:
    body = page(FRENCH).encode("cp1252")
    assert FRENCH in decode_html(body)
    assert FRENCH in decode_text(FRENCH.encode("cp1252"))


# -- Shift_JIS --------------------------------------------------------------------------------


def test_shift_jis_by_http_charset() -> None:
    body = page(JAPANESE).encode("shift_jis")
    assert parse_html(body, http_charset="Shift_JIS").text == JAPANESE


def test_shift_jis_by_meta_http_equiv() -> None:
    head = '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
    body = page(JAPANESE, head).encode("shift_jis")
    assert JAPANESE in decode_html(body)


def test_shift_jis_by_detection_only() -> None:
    assert JAPANESE in decode_html(page(JAPANESE).encode("shift_jis"))
    assert decode_text(JAPANESE.encode("shift_jis")) == JAPANESE


# -- UTF-16 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("codec", "bom"), [("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE)])
def test_utf16_with_bom(codec: str, bom: bytes) -> None:
    body = bom + page(FRENCH).encode(codec)
    text = decode_html(body)
    assert text.startswith("<html>")  # the BOM is not part of the text
    assert parse_html(body).text == FRENCH
    assert decode_text(bom + FRENCH.encode(codec)) == FRENCH


def test_utf16_declared_by_http_without_bom_is_little_endian() -> None:
    body = page(JAPANESE).encode("utf-16-le")
    assert parse_html(body, http_charset="UTF-16").text == JAPANESE
    assert decode_text(JAPANESE.encode("utf-16-le"), "utf-16") == JAPANESE


def test_utf16be_declared_by_http_without_bom() -> None:
    body = page(JAPANESE).encode("utf-16-be")
    assert parse_html(body, http_charset="utf-16be").text == JAPANESE


def test_utf16_without_bom_or_header_is_recognised_by_its_zero_bytes() -> None:
    assert decode_text(FRENCH.encode("utf-16-le")) == FRENCH
    assert decode_text(FRENCH.encode("utf-16-be")) == FRENCH


def test_meta_declaring_utf16_means_utf8() -> None:
    body = page("naïve", '<meta charset="utf-16">').encode("utf-8")
    assert "naïve" in decode_html(body)


# -- precedence and bogus labels ------------------------------------------------------------


def test_bogus_http_charset_falls_through_to_meta() -> None:
    body = page(FRENCH, '<meta charset="windows-1252">').encode("cp1252")
    assert FRENCH in decode_html(body, "x-klingon")
    assert FRENCH in decode_html(body, "base64")  # a codec, but not a text encoding


def test_bogus_meta_charset_falls_through_to_detection() -> None:
    body = page(JAPANESE, '<meta charset="no-such-charset">').encode("utf-8")
    assert JAPANESE in decode_html(body)


def test_http_charset_beats_meta() -> None:
    body = page("€", '<meta charset="utf-8">').encode("cp1252")
    assert "€" in decode_html(body, "windows-1252")


@pytest.mark.parametrize("declared", ["iso-8859-1", "gb2312", "windows-1251", "shift_jis"])
def test_valid_utf8_with_a_wrong_meta_charset_is_read_as_utf8(declared: str) -> None:
    # A page re-saved as UTF-8 that kept its old declaration: reading it as declared is mojibake.
    for text in (FRENCH, JAPANESE):
        body = page(text, f'<meta charset="{declared}">').encode("utf-8")
        assert parse_html(body).text == text


def test_valid_utf8_beats_a_stale_http_charset_too() -> None:
    body = page(JAPANESE).encode("utf-8")
    assert parse_html(body, http_charset="ISO-8859-1").text == JAPANESE
    assert decode_text(JAPANESE.encode("utf-8"), "gb2312") == JAPANESE


def test_a_declared_legacy_charset_stands_when_the_bytes_are_not_utf8() -> None:
    body = page(FRENCH, '<meta charset="iso-8859-1">').encode("cp1252")
    assert parse_html(body).text == FRENCH
    body = page(JAPANESE, '<meta charset="gb2312">').encode("gb18030")
    assert parse_html(body).text == JAPANESE


def test_byte_order_mark_beats_http_charset() -> None:
    # As in browsers: a BOM cannot be there by accident, a stale Content-Type can.
    body = codecs.BOM_UTF8 + page("Grüße").encode("utf-8")
    assert "Grüße" in decode_html(body, "windows-1252")


def test_meta_after_the_first_4_kib_is_not_read() -> None:
    filler = "<!-- " + "x" * 5000 + " -->"
    body = (filler + page("x", '<meta charset="koi8-r">')).encode("ascii")
    assert decode_html(body).startswith("<!--")


def test_xml_declaration_names_the_encoding() -> None:
    body = ('<?xml version="1.0" encoding="windows-1252"?>' + page(FRENCH)).encode("cp1252")
    assert FRENCH in decode_html(body)


def test_decode_text_does_not_read_meta_declarations() -> None:
    body = '<meta charset="koi8-r"> Grüße'.encode()
    assert decode_text(body) == '<meta charset="koi8-r"> Grüße'


def test_undecodable_bytes_are_replaced_not_raised() -> None:
    assert decode_html(b"<p>caf\xe9 \xff\xfe</p>", "utf-8") == "<p>caf\ufffd \ufffd\ufffd</p>"


# -- plain text -----------------------------------------------------------------------------


def test_plain_text_is_kept_as_it_is_apart_from_newlines_and_controls() -> None:
    body = b"Title\r\n\r\n  indented line  \r\nold mac line\rtab\there\x00\x07 end   \n"
    assert parse_plain_text(body) == "Title\n\n  indented line\nold mac line\ntab\there end\n"


def test_plain_text_uses_the_http_charset() -> None:
    assert parse_plain_text("Größe: 5 €".encode("cp1252"), "windows-1252") == "Größe: 5 €"


def test_a_legacy_page_ascii_for_its_first_64_kib_keeps_its_declared_charset() -> None:
    script = "<script>" + "var x = 1;\n" * 7000 + "</script>"
    body = page(FRENCH, f'<meta charset="windows-1252">{script}').encode("cp1252")
    assert parse_html(body).text == FRENCH


def test_a_page_its_charset_header_cannot_read_is_read_by_detection() -> None:
    body = page(JAPANESE * 3).encode("shift_jis")  # served as charset=utf-8: mostly replacement characters
    result = parse_html(body, http_charset="utf-8")
    assert not result.binary and result.text == JAPANESE * 3


def test_coloured_terminal_logs_are_text() -> None:
    log = "".join(f"\x1b[32mINFO\x1b[0m step {n} done\n" for n in range(200)).encode()
    assert "step 199 done" in parse_plain_text(log)
    from evidencekit.server.evidence.parse.text import looks_binary

    assert not looks_binary(log.decode())


def _whatwg_labels() -> set[str]:
    from evidencekit.server.evidence.parse.whatwg_labels import LABELS

    return set(LABELS)


def test_every_label_of_the_standard_reads_with_a_codec_of_its_own_kind() -> None:
    import codecs

    from evidencekit.server.evidence.parse.whatwg_labels import LABELS

    for label, codec in LABELS.items():
        if codec is None:  # the standard's "replacement" labels: never decoded
            assert codec_for(label) is None
            continue
        assert codec_for(label) == codec
        assert codec_for(f"  {label.upper()}\t") == codec  # ASCII whitespace and case do not matter
        assert getattr(codecs.lookup(codec), "_is_text_encoding", True)


def test_no_python_codec_outside_the_standard_is_honoured() -> None:
    """The oracle: every name Python's codec registry knows (aliases and modules) that the WHATWG
    standard does not list picks no decoder; those bodies are read by detection."""
    import encodings
    import pkgutil
    from encodings.aliases import aliases

    names = set(aliases) | set(aliases.values()) | {m.name for m in pkgutil.iter_modules(encodings.__path__)}
    names |= {name.replace("_", "-") for name in names}
    outside = sorted(names - _whatwg_labels())
    assert {"punycode", "idna", "undefined", "base64", "rot13", "utf-7", "zlib", "hex"} <= set(outside)
    assert [name for name in outside if codec_for(name) is not None] == []


@pytest.mark.parametrize("label", ["punycode", "idna", "undefined", "rot13", "utf-7", "base64", "x-unknown"])
def test_a_charset_that_is_no_web_text_encoding_is_ignored_in_the_header_and_in_meta(label: str) -> None:
    body = ("x-" + "a" * 20_000).encode()  # punycode would decode this, in time quadratic in its length
    assert decode_text(body, label) == body.decode()
    assert parse_html(page(FRENCH, f'<meta charset="{label}">').encode("utf-8"), http_charset=label).text == FRENCH
