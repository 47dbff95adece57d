"""parse_webvtt: one test per WebVTT feature, invalid cues counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidencekit.server.evidence.parse import CaptionError, CaptionExtract, Cue, parse_webvtt

DATA = Path(__file__).resolve().parents[2] / "data" / "parse"


def vtt(*blocks: str, header: str = "WEBVTT") -> bytes:
    return "\n\n".join([header, *blocks]).encode("utf-8") + b"\n"


def texts(result: CaptionExtract) -> list[str]:
    return [cue.text for cue in result.cues]


def test_a_realistic_file_with_every_feature() -> None:
    result = parse_webvtt((DATA / "tour.vtt").read_bytes())
    assert result.format == "webvtt"
    assert result.language == "en-GB"
    assert result.cues == (
        Cue(1_000, 4_000, "Welcome aboard & mind the gap."),
        Cue(4_500, 7_250, "The harbour was built in 1842,\nrebuilt in 1910."),
        Cue(8_000, 10_000, "港 means harbour port"),
        Cue(10_000, 12_000, "Look left\u00a0…\u200e"),
        Cue(363_600_000, 363_602_000, "A hundred and one hours in."),
    )
    assert result.invalid_cues == 2  # the zero-length cue and the "->" block


# -- signature and header ---------------------------------------------------------------------


def test_utf8_byte_order_mark() -> None:
    assert texts(parse_webvtt(b"\xef\xbb\xbf" + vtt("00:01.000 --> 00:02.000\nhi"))) == ["hi"]


@pytest.mark.parametrize("header", ["WEBVTT", "WEBVTT - Some title", "WEBVTT\tTabbed title"])
def test_header_line_with_optional_text(header: str) -> None:
    assert texts(parse_webvtt(vtt("00:01.000 --> 00:02.000\nhi", header=header))) == ["hi"]


@pytest.mark.parametrize("body", [b"", b"WEBVTTX\n\n00:01.000 --> 00:02.000\nhi\n", b"1\n00:00:01,000 --> 00:00:02,000\nhi\n",
                                  b" WEBVTT\n", b"<html>WEBVTT</html>", b"webvtt\n"])  # fmt: skip
def test_no_signature_is_a_caption_error(body: bytes) -> None:
    with pytest.raises(CaptionError):
        parse_webvtt(body)


def test_signature_only_is_an_empty_file() -> None:
    assert parse_webvtt(b"WEBVTT\n") == CaptionExtract(format="webvtt", cues=(), invalid_cues=0, language=None)


@pytest.mark.parametrize(
    ("line", "expected"),
    [("Language: de", "de"), ("language:en_US", "en-US"), ("Language: not a language", None), ("Kind: captions", None)],
)
def test_language_header_metadata(line: str, expected: str | None) -> None:
    assert parse_webvtt(vtt("00:01.000 --> 00:02.000\nhi", header=f"WEBVTT\n{line}")).language == expected


def test_header_metadata_is_not_a_cue() -> None:
    result = parse_webvtt(vtt("00:01.000 --> 00:02.000\nhi", header="WEBVTT\nKind: captions\nLanguage: de"))
    assert texts(result) == ["hi"]
    assert result.invalid_cues == 0


# -- blocks -----------------------------------------------------------------------------------


def test_note_style_and_region_blocks_are_skipped_not_counted() -> None:
    result = parse_webvtt(
        vtt(
            "STYLE\n::cue { color: lime }",
            "REGION\nid:fred width:40%",
            "NOTE\nThis is a comment\nover two lines",
            "NOTE single line comment",
            "00:01.000 --> 00:02.000\nhi",
        )
    )
    assert texts(result) == ["hi"]
    assert result.invalid_cues == 0


def test_cue_identifiers_are_not_text() -> None:
    result = parse_webvtt(vtt("intro\n00:01.000 --> 00:02.000\nhi", "42\n00:02.000 --> 00:03.000\nthere"))
    assert texts(result) == ["hi", "there"]


def test_timestamps_with_and_without_hours() -> None:
    result = parse_webvtt(
        vtt("00:01.500 --> 01:02.250\na", "01:00:00.000 --> 01:00:01.001\nb", "123:00:00.000 --> 123:00:00.100\nc")
    )
    assert [(c.start_ms, c.end_ms) for c in result.cues] == [
        (1_500, 62_250),
        (3_600_000, 3_601_001),
        (442_800_000, 442_800_100),
    ]


def test_cue_settings_after_the_timing_are_ignored() -> None:
    result = parse_webvtt(vtt("00:01.000 --> 00:02.000 align:start line:0 position:10% size:50% vertical:rl\nhi"))
    assert result.cues == (Cue(1_000, 2_000, "hi"),)


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_line_endings(newline: str) -> None:
    body = newline.join(["WEBVTT", "", "00:01.000 --> 00:02.000", "line one", "line two", "", "00:03.000 --> 00:04.000", "next", ""])
    assert texts(parse_webvtt(body.encode())) == ["line one\nline two", "next"]


def test_a_timing_line_without_a_blank_line_before_it_starts_a_new_cue() -> None:
    result = parse_webvtt(vtt("00:01.000 --> 00:02.000\nfirst\n00:02.000 --> 00:03.000\nsecond"))
    assert texts(result) == ["first", "second"]


# -- cue text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("<v Roger Bingham>We are in New York City</v>", "We are in New York City"),
        ("<v.loud.first Esme>It's a blue apple tree!", "It's a blue apple tree!"),
        ("<c.yellow.bg_blue>coloured</c> text", "coloured text"),
        ("<i>italic</i> <b>bold</b> <u>underline</u>", "italic bold underline"),
        ("<ruby>漢字<rt>かんじ</rt></ruby>を読む", "漢字を読む"),
        ("<ruby>東<rt>とう</ruby>京", "東京"),
        ("<lang en-GB>colour</lang> and <lang fr>couleur</lang>", "colour and couleur"),
        ("Never <00:00:01.500>drink <00:01.750>liquid nitrogen.", "Never drink liquid nitrogen."),
    ],
)
def test_tags_are_stripped(payload: str, expected: str) -> None:
    assert texts(parse_webvtt(vtt(f"00:01.000 --> 00:02.000\n{payload}"))) == [expected]


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("fish &amp; chips", "fish & chips"),
        ("&lt;not a tag&gt;", "<not a tag>"),
        ("a&nbsp;b", "a\u00a0b"),
        ("&lrm;left&rlm;", "\u200eleft\u200f"),
        ("&#65;&#x42;&#x1F600;", "AB😀"),
        ("&hellip; &eacute; &check;", "… é ✓"),
    ],
)
def test_character_references_are_decoded(payload: str, expected: str) -> None:
    assert texts(parse_webvtt(vtt(f"00:01.000 --> 00:02.000\n{payload}"))) == [expected]


def test_lines_joined_and_surrounding_whitespace_stripped() -> None:
    assert texts(parse_webvtt(vtt("00:01.000 --> 00:02.000\n   first line  \n\tsecond line\t"))) == ["first line\nsecond line"]


# -- invalid cues -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [
        "00:01.000 --> 00:01.000\nends where it starts",
        "00:02.000 --> 00:01.000\nends before it starts",
        "00:01,000 --> 00:02,000\ncomma decimal",
        "00:61.000 --> 00:62.000\nseconds out of range",
        "1:2.000 --> 1:3.000\nshort fields",
        "00:01.000 --> \nno end",
        "00:01.000 -> 00:02.000\nbroken arrow",
        "00:01.000 --> 00:02.000\n<i></i>",
        "just some text\nwithout a timing line",
        "00:01.000 --> 00:02.000",
    ],
)
def test_unreadable_cue_blocks_are_counted(block: str) -> None:
    result = parse_webvtt(vtt("00:00.000 --> 00:00.500\nok", block, "00:05.000 --> 00:06.000\nstill ok"))
    assert texts(result) == ["ok", "still ok"]
    assert result.invalid_cues == 1


def test_a_timestamp_past_the_contracts_largest_integer_is_an_invalid_cue() -> None:
    """Cue times are JSON integers of at most 2^53 - 1 ms (the contract); later ones cannot be kept."""
    result = parse_webvtt(vtt("00:01.000 --> 00:02.000\nKept", "999999999999:00:00.000 --> 999999999999:00:01.000\nToo late",
                              "2501999792:58:00.000 --> 2501999792:59:00.991\nLast representable"))
    assert texts(result) == ["Kept", "Last representable"] and result.invalid_cues == 1
    assert result.cues[-1].end_ms == 2**53 - 1
