"""Property tests: every reader is total, and its results keep their invariants, on random bytes
and on valid pages and caption files mutated by byte flips, cuts, deletions and inserted junk."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type information

from evidencekit.server.evidence.parse import (
    CaptionError,
    CaptionExtract,
    HtmlExtract,
    Track,
    decode_html,
    decode_text,
    parse_html,
    parse_plain_text,
    parse_subrip,
    parse_webvtt,
    sniff_captions,
)
from evidencekit.server.evidence.parse.html_tree import load_tree

DATA = Path(__file__).resolve().parents[2] / "data" / "parse"
LANGUAGE = re.compile(r"[a-zA-Z]{2,8}(?:-[a-zA-Z0-9]{1,8})*")
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f]")
JUNK = [
    b"<", b">", b"</div>", b"<p>", b"<table><tr><td>", b"<pre>", b"<li>", b"<a href='x'>", b"-->",
    b"<!--", b"\r", b"\r\n", b"\x00", b"&", b"&#x110000;", b"&#0;", b"&nbsp", b"<![CDATA[", b"<?xml ",
    b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b"\xe9", b"\x82\xa0", b"<script>", b"<svg>", b"<track src=a>",
    b"<video>", b"<input type=password>", b"<html lang='en_US'>", b"WEBVTT", b"NOTE ", b"<v ", b"<rt>",
    b"00:00:01.000 --> 00:00:00.500\n", b"00:01.000 --> 00:02.000\n", b"99:99:99,999 --> ", b"\n\n",
    b"1\n", b"{\\an8}", b"<i>", b"</b>",
]  # fmt: skip
RELAXED = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def mutated(seed: bytes) -> st.SearchStrategy[bytes]:
    size = len(seed)
    edit: st.SearchStrategy[tuple[str, int, int | bytes]] = st.one_of(
        st.tuples(st.just("flip"), st.integers(0, size - 1), st.integers(1, 255)),
        st.tuples(st.just("cut"), st.integers(0, size), st.just(0)),
        st.tuples(st.just("delete"), st.integers(0, size), st.integers(1, 200)),
        st.tuples(st.just("insert"), st.integers(0, size), st.sampled_from(JUNK) | st.binary(max_size=24)),
    )

    def apply(edits: list[tuple[str, int, int | bytes]]) -> bytes:
        data = bytearray(seed)
        for kind, at, value in edits:
            at = min(at, len(data))
            if isinstance(value, bytes):
                data[at:at] = value
            elif kind == "flip" and at < len(data):
                data[at] ^= value
            elif kind == "cut":
                del data[at:]
            elif kind == "delete":
                del data[at : at + value]
        return bytes(data)

    return st.lists(edit, min_size=1, max_size=10).map(apply)


def seed(name: str) -> bytes:
    return (DATA / name).read_bytes()


HTML_SEEDS = st.sampled_from(["article_wordpress.html", "news_divs.html", "docs_page.html", "login.html", "page.xhtml"])
CHARSETS = st.sampled_from([None, "utf-8", "windows-1252", "shift_jis", "utf-16", "utf-16be", "x-bogus", "base64", ""])


def check_html(result: HtmlExtract) -> None:
    assert isinstance(result.text, str) and isinstance(result.markdown, str)
    assert "\r" not in result.text and not CONTROLS.search(result.text)
    assert result.text == result.text.strip("\n")
    assert all(line == line.rstrip() for line in result.text.split("\n"))
    for value in (result.title, result.description):
        assert value is None or (value and value == " ".join(value.split()))
    assert result.language is None or (len(result.language) <= 35 and LANGUAGE.fullmatch(result.language))
    assert all(isinstance(track, Track) and track.src and track.kind == track.kind.lower() for track in result.tracks)
    assert isinstance(result.nodes_limited, bool) and isinstance(result.login_wall, bool)


def check_captions(result: CaptionExtract) -> None:
    assert result.invalid_cues >= 0
    for cue in result.cues:
        assert 0 <= cue.start_ms < cue.end_ms
        assert cue.text and cue.text == cue.text.strip()
        assert not CONTROLS.search(cue.text)
    assert result.language is None or (len(result.language) <= 35 and LANGUAGE.fullmatch(result.language))


# -- HTML and text ----------------------------------------------------------------------------


@RELAXED
@given(st.binary(max_size=2_000), CHARSETS, st.none() | st.text(max_size=20))
def test_parse_html_on_random_bytes(body: bytes, charset: str | None, language: str | None) -> None:
    check_html(parse_html(body, http_charset=charset, content_language=language))


@RELAXED
@given(st.data(), CHARSETS)
def test_parse_html_on_mutated_pages(data: st.DataObject, charset: str | None) -> None:
    body = data.draw(mutated(seed(data.draw(HTML_SEEDS))))
    check_html(parse_html(body, http_charset=charset, content_language="de-DE"))


@RELAXED
@given(st.integers(0, 300), st.integers(1, 120), st.sampled_from(["<p>x</p>", "<div><span>y</span></div>", "<li>z"]))
def test_nodes_limited_means_more_elements_than_allowed(count: int, max_nodes: int, unit: str) -> None:
    body = f"<html><body><div>{unit * count}</div></body></html>".encode()
    elements = sum(1 for _ in load_tree(decode_html(body)).iter(etree.Element))
    result = parse_html(body, max_nodes=max_nodes)
    assert result.nodes_limited == (elements > max_nodes)
    check_html(result)


@RELAXED
@given(st.binary(max_size=3_000), CHARSETS)
def test_decoders_and_plain_text_on_random_bytes(body: bytes, charset: str | None) -> None:
    assert isinstance(decode_html(body, charset), str)
    assert isinstance(decode_text(body, charset), str)
    text = parse_plain_text(body, charset)
    assert not CONTROLS.search(text)
    assert all(line == line.rstrip() for line in text.split("\n"))


# -- captions ---------------------------------------------------------------------------------


def parse_or_refuse(parser: object, body: bytes) -> None:
    try:
        result = parser(body)  # type: ignore[operator]
    except CaptionError:
        return
    check_captions(result)


@RELAXED
@given(st.binary(max_size=2_000))
def test_caption_readers_on_random_bytes(body: bytes) -> None:
    parse_or_refuse(parse_webvtt, body)
    parse_or_refuse(parse_subrip, body)
    parse_or_refuse(parse_webvtt, b"WEBVTT\n\n" + body)
    parse_or_refuse(parse_subrip, b"1\n00:00:01,000 --> 00:00:02,000\nx\n\n" + body)
    assert sniff_captions(body) in (None, "webvtt", "subrip")


@RELAXED
@given(mutated(seed("tour.vtt")), st.none() | st.just("utf-8"))
def test_parse_webvtt_on_mutated_files(body: bytes, charset: str | None) -> None:
    parse_or_refuse(lambda b: parse_webvtt(b, charset), body)


@RELAXED
@given(mutated(seed("broken.srt")), st.none() | st.just("windows-1252"))
def test_parse_subrip_on_mutated_files(body: bytes, charset: str | None) -> None:
    parse_or_refuse(lambda b: parse_subrip(b, charset), body)


@RELAXED
@given(st.lists(st.sampled_from(JUNK), max_size=40).map(b"".join))
def test_readers_on_junk_sequences(body: bytes) -> None:
    check_html(parse_html(body))
    parse_or_refuse(parse_webvtt, body)
    parse_or_refuse(parse_subrip, body)
