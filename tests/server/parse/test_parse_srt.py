"""parse_subrip and sniff_captions."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from evidencekit.server.evidence.parse import (
    CaptionError,
    CaptionExtract,
    Cue,
    parse_subrip,
    sniff_captions,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "parse"


def srt(*blocks: str) -> bytes:
    return "\n\n".join(blocks).encode("utf-8") + b"\n"


def texts(result: CaptionExtract) -> list[str]:
    return [cue.text for cue in result.cues]


def test_a_broken_file_is_read_and_its_bad_blocks_counted() -> None:
    result = parse_subrip((DATA / "broken.srt").read_bytes())
    assert result.format == "subrip"
    assert result.language is None
    assert result.cues == (
        Cue(1_000, 3_500, "Hello there,\nfriend."),
        Cue(4_000, 5_000, "Top of the screen & above"),
        Cue(11_000, 12_000, "If a < b then b > a."),
        Cue(13_000, 14_500, "No blank line before this cue."),
    )
    # end before start, a letter in a timestamp, no text once tags are gone, a stray line
    assert result.invalid_cues == 4


def test_plain_cues() -> None:
    result = parse_subrip(srt("1\n00:00:01,000 --> 00:00:02,500\nHello", "2\n01:02:03,004 --> 01:02:04,000\nTwo\nlines"))
    assert result.cues == (Cue(1_000, 2_500, "Hello"), Cue(3_723_004, 3_724_000, "Two\nlines"))
    assert result.invalid_cues == 0


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("<i>italic</i> and <b>bold</b> and <u>under</u>", "italic and bold and under"),
        ('<font color="#ff0000" face="Arial">red</font>', "red"),
        ("{\\an8}on top", "on top"),
        ("{\\pos(10,20)}{\\an1}placed", "placed"),
        ("Tom &amp; Jerry &eacute;t&eacute;", "Tom & Jerry été"),
        ("5 < 6 and 7 > 3", "5 < 6 and 7 > 3"),
    ],
)
def test_formatting_is_stripped_and_references_decoded(payload: str, expected: str) -> None:
    assert texts(parse_subrip(srt(f"1\n00:00:01,000 --> 00:00:02,000\n{payload}"))) == [expected]


def test_crlf_bom_and_dot_separators() -> None:
    body = codecs.BOM_UTF8 + b"1\r\n00:00:01.000 --> 00:00:02.000\r\nHi\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nYou\r\n"
    assert texts(parse_subrip(body)) == ["Hi", "You"]


def test_cue_without_an_index_line() -> None:
    assert texts(parse_subrip(srt("00:00:01,000 --> 00:00:02,000\nno index"))) == ["no index"]


def test_position_after_the_timing_is_ignored() -> None:
    result = parse_subrip(srt("1\n00:00:01,000 --> 00:00:02,000 X1:100 X2:200 Y1:10 Y2:20\nplaced"))
    assert result.cues == (Cue(1_000, 2_000, "placed"),)


def test_missing_blank_line_between_cues() -> None:
    result = parse_subrip(b"1\n00:00:01,000 --> 00:00:02,000\nfirst\n2\n00:00:03,000 --> 00:00:04,000\nsecond\n")
    assert texts(result) == ["first", "second"]
    assert result.invalid_cues == 0


@pytest.mark.parametrize(
    "block",
    [
        "3\n00:00:05,000 --> 00:00:05,000\nzero length",
        "3\n00:00:06,000 --> 00:00:05,000\nbackwards",
        "3\n --> 00:00:05,000\nno start",
        "3\n00:00:aa,000 --> 00:00:05,000\nletters",
        "3\n00:00:04,000 -> 00:00:05,000\nbroken arrow",
        "3\n00:00:04,000 --> 00:00:05,000\n<i> </i>",
        "3\n00:00:04,000 --> 00:00:05,000",
        "text that belongs to no cue",
    ],
)
def test_blocks_that_yield_no_cue_are_counted(block: str) -> None:
    result = parse_subrip(srt("1\n00:00:01,000 --> 00:00:02,000\nok", block, "9\n00:00:07,000 --> 00:00:08,000\nstill ok"))
    assert texts(result) == ["ok", "still ok"]
    assert result.invalid_cues == 1


@pytest.mark.parametrize("body", [b"", b"Just some text\n\nwith paragraphs\n", b"<html><body>page</body></html>"])
def test_no_timing_line_at_all_is_a_caption_error(body: bytes) -> None:
    with pytest.raises(CaptionError):
        parse_subrip(body)


def test_encodings_by_http_charset_and_bom() -> None:
    text = "1\n00:00:01,000 --> 00:00:02,000\nÇa va très bien, merci.\n"
    assert texts(parse_subrip(text.encode("cp1252"), "windows-1252")) == ["Ça va très bien, merci."]
    assert texts(parse_subrip(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))) == ["Ça va très bien, merci."]


# -- sniffing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"WEBVTT\n\n00:01.000 --> 00:02.000\nhi\n", "webvtt"),
        (b"\xef\xbb\xbfWEBVTT - title\n", "webvtt"),
        (b"WEBVTT", "webvtt"),
        (b"\n\n1\r\n00:00:01,000 --> 00:00:02,000\r\nhi\r\n", "subrip"),
        (codecs.BOM_UTF16_LE + "1\n00:00:01,000 --> 00:00:02,000\nhi\n".encode("utf-16-le"), "subrip"),
        (b"1\nnot a timing line\n", None),
        (b"00:00:01,000 --> 00:00:02,000\nno index\n", None),
        (b"WEBVTTX\n", None),
        (b"<!DOCTYPE html><html></html>", None),
        (b"", None),
    ],
)
def test_sniff_captions(body: bytes, expected: str | None) -> None:
    assert sniff_captions(body) == expected


def test_sniffed_files_parse() -> None:
    assert sniff_captions((DATA / "broken.srt").read_bytes()) == "subrip"
    assert sniff_captions((DATA / "tour.vtt").read_bytes()) == "webvtt"
