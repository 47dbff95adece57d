"""The reader's fast paths against their plain definitions: each one is a shortcut a page's every
block or element goes through (measured in bench_parse), so each must give what the plain
definition gives, on every input."""

from __future__ import annotations

import html
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lxml import etree

from evidencekit.server.evidence.parse import bylines, encoding, html_meta
from evidencekit.server.evidence.parse.content import _sample, marked_main
from evidencekit.server.evidence.parse.encoding import _NOT_ASCII_BASED, decode_html, html_source
from evidencekit.server.evidence.parse.html_extract import parse_html
from evidencekit.server.evidence.parse.html_tree import _XHTML_HINT, _xhtml_hinted, load_tree
from evidencekit.server.evidence.parse.posts import grids
from evidencekit.server.evidence.parse.render import escape_text
from evidencekit.server.evidence.parse.text import collapse_text, looks_binary
from evidencekit.server.evidence.parse.whatwg_labels import LABELS

CONTROLS = [chr(code) for code in range(0x20)]
TEXT = st.one_of(st.characters(), st.sampled_from([*CONTROLS, "a", " ", "\n", "\ufffd", "é", "中", "[", "]", "<", "\\"]))


@settings(max_examples=300, database=None)
@given(st.one_of(st.text(TEXT, max_size=400), st.text(st.sampled_from([*CONTROLS, "a", " "]), max_size=400)),
       st.integers(0, 400))
def test_binary_text_is_its_plain_definition(value: str, padding: int) -> None:
    not_text = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\ufffd]")
    value = "x" * padding + value  # past 64 characters, and around the 2 % line

    def by_definition(text: str) -> bool:
        sample = text[:8192]
        return len(sample) >= 64 and sum(1 for ch in sample if not_text.match(ch)) > 0.02 * len(sample)

    assert looks_binary(value) == by_definition(value)


def test_a_long_ascii_page_with_three_percent_controls_is_binary_and_with_one_percent_is_not() -> None:
    assert looks_binary(("\x01" + "a" * 32) * 300)
    assert not looks_binary(("\x01" + "a" * 99) * 100)


@settings(max_examples=300, database=None)
@given(st.text(TEXT, max_size=80))
def test_escaped_markdown_is_its_plain_definition(value: str) -> None:
    escaped = "".join("\\" + ch if ch in "\\[]<" else ch for ch in value)
    assert escape_text(value) == escaped


@settings(max_examples=200, database=None)
@given(st.lists(st.text(st.sampled_from("ab, "), max_size=30), max_size=500))
@example(["a" * 3999, "b", "c"])
def test_a_scored_sample_is_the_pieces_up_to_4000_characters(pieces: list[str]) -> None:
    taken, size = [], 0
    for piece in pieces[:400]:
        taken.append(piece)
        size += len(piece)
        if size >= 4000:
            break
    assert _sample(iter(pieces)) == "".join(taken)


ATTRIBUTES = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["main-content", "MAIN_CONTENT", "mainContent", "main", "maincontents", "x", "main--content_"]),
    "role": st.sampled_from(["main", "Main", "navigation", ""]),
    "itemprop": st.sampled_from(["articleBody", "articlebody", "name"]),
    "class": st.sampled_from(["main", "content"]),
})


def _trees(children: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.tuples(st.sampled_from(["div", "main", "section"]), ATTRIBUTES, children).map(_element),
                    max_size=4)


def _element(parts: tuple[str, dict[str, str], list[str]]) -> str:
    tag, attributes, children = parts
    written = "".join(f' {name}="{value}"' for name, value in attributes.items())
    return f"<{tag}{written}>text{''.join(children)}</{tag}>"


@settings(max_examples=300, database=None)
@given(st.recursive(_trees(st.just([])), _trees, max_leaves=12))
def test_the_marked_main_content_is_its_plain_definition(elements: list[str]) -> None:
    body = load_tree(f"<html><body>{''.join(elements)}</body></html>").find("body")

    def marks(element: etree._Element) -> bool:
        identifier = (element.get("id") or "").lower().replace("-", "").replace("_", "")
        return (element.tag == "main" or element.get("role") == "main"
                or element.get("itemprop") == "articleBody" or identifier == "maincontent")

    assert marked_main(body) == [element for element in body.iterdescendants() if marks(element)]


_MONTHS_PLAIN = bylines._compile(lambda words: "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")")[0]
_DATE_PIECES = ["Jan", "jan.", "January", "Juni", "Jun", "mär", "März", "Mai", "mayo", "sept", "Sept.", "septembre",
                "ב-", "במרץ", "3", "03", "2024", ". ", ", ", " ", "de ", "th", "x", "\n"]


@settings(max_examples=400, database=None)
@given(st.lists(st.sampled_from(_DATE_PIECES), max_size=12))
@example(["3", " ", "de ", "mayo", " ", "de ", "2024"])
@example(["Sept.", " ", "3", "th", ", ", "2024"])
def test_dates_read_with_the_month_trie_are_their_plain_definition(pieces: list[str]) -> None:
    """bylines' month names written as a trie match what the plain alternation (longest first) matches."""
    text = "".join(pieces)
    assert bylines._DATES.sub("#", text) == _MONTHS_PLAIN.sub("#", text)


_LEADS_PLAIN = re.compile(r"\W*(?:" + "|".join(re.escape(lead.split()[0]) for lead in sorted(bylines._LEADS, key=len, reverse=True))
                          + ")", re.IGNORECASE)
_LEAD_PIECES = ["By", "by ", "BY", "Von", "von", "Par", "par", "Autor", "autorin", "Author", "a", "A", "Ein", "Text",
                "texte", "rédigé", "RÉDIGÉ", "Story", "door", "—", " ", "-", "·", "\n", "Jane", "x", "3"]


@settings(max_examples=400, database=None)
@given(st.lists(st.sampled_from(_LEAD_PIECES), max_size=6))
def test_a_lead_found_by_the_trie_is_a_lead_the_plain_alternation_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert (bylines._LEAD_START.match(text) is None) == (_LEADS_PLAIN.match(text) is None)


@settings(max_examples=300, database=None)
@given(st.text(st.sampled_from(["0", "1", "9", "a", " ", "٣", "३", "３", "é", "²", "½"]), max_size=12))
def test_a_line_holds_a_digit_as_a_unicode_digit_search_finds(text: str) -> None:
    assert bylines._has_digit(text) == (bylines._DIGIT.search(text) is not None)


_WORDS_AROUND_DATES = ["Jan", "March", "März", "mayo", "septembre", "ב-", "במרץ", "min", "mins", "Minuten", "read",
                       "reading time", "Lesezeit", "ago", "vor", "Stunden", "uhr", "am", "p.m.", "h", "年", "月", "日",
                       "时", "分", "utc", "de ", "th", ". ", ", ", " ", ":", "-", "/", "x", "\n", "٣", "३", "３"]


@settings(max_examples=400, database=None)
@given(st.lists(st.sampled_from(_WORDS_AROUND_DATES), max_size=14))
def test_a_line_without_digits_holds_no_date_time_or_reading_time(pieces: list[str]) -> None:
    """is_byline_line skips the date and time patterns on a line without a digit: no pattern
    matches one (each holds a digit), whatever month names, minute words and units it holds."""
    text = "".join(pieces)
    if bylines._DIGIT.search(text) is None:
        assert bylines._DATES.search(text) is None and bylines._TIMES.search(text) is None, text


PIECES = st.one_of(st.text(st.sampled_from(["a", "é", " ", "\n", "\t", "\xa0", "\u2003", "\u3000", "\r"]), max_size=12),
                 st.text(st.sampled_from(["a", " ", "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f"]), max_size=12))


@st.composite
def bodies(draw: st.DrawFn) -> str:
    """Bodies of text pieces, whitespace of every kind among them, in paragraphs, scripts, styles,
    noscripts (scripts nested in some) and comments."""
    parts = []
    for _ in range(draw(st.integers(0, 8))):
        piece = draw(PIECES)
        kind = draw(st.sampled_from(["p", "script", "style", "noscript", "nested", "comment", "bare"]))
        parts.append({"p": f"<p>{piece}</p>", "script": f"<script>{piece}</script>", "style": f"<style>{piece}</style>",
                      "noscript": f"<noscript>{piece}</noscript>", "nested": f"<noscript><script>{piece}</script>{piece}</noscript>",
                      "comment": f"<!--{piece}-->{piece}", "bare": piece}[kind])
    return "<html><body>" + "".join(parts) + "</body></html>"


@settings(max_examples=300, database=None)
@given(bodies(), st.integers(-2, 2))
def test_the_page_text_bounds_answer_as_the_exact_lengths(markup: str, step: int) -> None:
    """find_content's tests of the page's text lengths, answered by bounds where they can, give what
    the lengths counted piece by piece give, at and around every length."""
    from evidencekit.server.evidence.parse.html_extract import _PageText, _text_lengths

    body = next(load_tree(markup).iter("body"))
    raw, total = _text_lengths(body)
    for limit in {raw + step, total + step, step}:
        assert _PageText(body).total_under(limit) == (total < limit), (markup, limit)
        assert _PageText(body).raw_at_most(limit) == (raw <= limit), (markup, limit)


TYPE_CHARS = st.sampled_from(list("applicationLDJSON/+-d ") + ["\t", "\n", "\r", "\xa0", "\x0b", "x"])
PLAIN_LD_JSON = etree.XPath(
    "//script[translate(normalize-space(@type), 'APLICTONJSD+', 'aplictonjsd+') = 'application/ld+json']")


@settings(max_examples=300, database=None)
@given(st.lists(st.one_of(st.none(), st.text(TYPE_CHARS, max_size=24),
                          st.sampled_from([" application/ld+json ", "APPLICATION/LD+JSON", "application/ld+json\t",
                                           "application/ld+ json", "\xa0application/ld+json", "application/ld+json\x0b"])),
                max_size=4))
def test_the_json_ld_scripts_are_the_ones_xpath_finds(types: list[str | None]) -> None:
    """A script is JSON-LD when its type, spaced and capitalised as XPath's normalize-space() and
    translate() read it, says so; found without an XPath testing each one."""
    from evidencekit.server.evidence.parse.json_ld import _ld_json_scripts

    scripts = "".join("<script>{}</script>" if kind is None else f"<script type='{html.escape(kind, quote=True)}'>{{}}</script>"
                      for kind in types)
    root = load_tree(f"<html><head>{scripts}</head><body><p>x</p><script type='application/ld+json'>{{}}</script></body></html>")
    assert _ld_json_scripts(root) == PLAIN_LD_JSON(root)


@settings(max_examples=200, database=None)
@given(st.lists(st.sampled_from(["<p>", "</p>", "<b>", "</b>", "<!-- c -->", "text ", "x" * 300, "&amp;", "<br>", "\n"]),
                max_size=30))
def test_an_elements_text_sample_is_the_sample_of_its_text_pieces(pieces: list[str]) -> None:
    """The walk's shortcut for an element without children (its own text) gives what sampling its
    text pieces gives, for every element of the page."""
    from evidencekit.server.evidence.parse.content import _text_sample

    root = load_tree("<html><body><div>" + "".join(pieces) + "</div></body></html>")
    for element in root.iter(etree.Element):
        assert _text_sample(element) == _sample(element.itertext())


_SOURCE_PIECES = ["<p>", "</p>", "<html>", "<body>", "text ", "é", "中", "\u00a0", "\u3000", "\x1c", "\x00", " ", "\n",
                  "\ufffd", "\x01", "<?xml version='1.0'?>", '<html xmlns="http://www.w3.org/1999/xhtml">',
                  "<div/>", "&nbsp;", "<![CDATA[x]]>", '<meta charset="iso-8859-1">', '<meta charset="utf-16">',
                  "\x1b$B", "\x1b(B", "$B", "\n" * 70]


def decoded_as_before(body: bytes, charset: str | None) -> str:
    """decode_html before html_source: every page decoded, whatever its codec."""
    bom = encoding.bom_codec(body)
    if bom:
        return encoding._decode(body, bom)
    declared = encoding._utf8_beats(encoding.codec_for(charset) or encoding.declared_codec(body), body)
    return encoding._readable(body, declared or encoding.detected_codec(body), declared is not None)


@settings(max_examples=400, database=None)
@given(st.lists(st.sampled_from(_SOURCE_PIECES), max_size=30),
       st.sampled_from(["utf-8", "latin-1", "utf-16-le"]),
       st.none() | st.sampled_from(["utf-8", "windows-1252", "utf-16", "iso-2022-jp"]), st.binary(max_size=3))
@example(["\x1c", "<p>", "text "], "utf-8", None, b"")
@example(["\u00a0", "<p>", "text ", "\u3000"], "utf-8", None, b"")
@example([" ", "\x00", " ", "<p>", "text "], "utf-8", None, b"")
@example(["<p>", "text ", "\x1b$B", "$B", "\x1b(B"], "utf-8", None, b"")
@example(["<p>", "text ", "\n" * 70, "\x1c", "\n" * 70], "utf-8", None, b"")
def test_a_pages_bytes_parse_as_its_decoded_text_did(pieces: list[str], codec: str, charset: str | None,
                                                        junk: bytes) -> None:
    body = "".join(pieces).encode(codec, "replace") + junk
    before = decoded_as_before(body, charset)
    source = html_source(body, charset)

    def tree(root: etree._Element) -> bytes:
        return etree.tostring(root, method="c14n") if isinstance(root.tag, str) else b""

    assert decode_html(body, charset) == before
    assert tree(load_tree(source)) == tree(load_tree(before))
    assert source == before or (source is body and body.decode("utf-8") == before)


def test_an_ascii_or_utf8_page_is_parsed_from_its_own_bytes() -> None:
    for body in (b"<html><body><p>plain text</p></body></html>",
                 "<html><body><p>naïve café 中文</p></body></html>".encode()):
        assert html_source(body) is body  # no decoding and encoding again
        assert html_source(body, "windows-1252") is body  # (valid UTF-8 with non-ASCII beats the label)
    assert html_source(b"<p>" + b"\x01" * 200 + b"</p>") == "<p>" + "\x01" * 200 + "</p>"  # binary: the text
    assert isinstance(html_source("<p>naïve</p>".encode("latin-1")), str)  # not UTF-8: the text
    assert html_source(bytearray(b"<p>plain text</p>")) == b"<p>plain text</p>"  # (read as bytes)
    assert parse_html(memoryview(b"<html><body><p>plain text</p></body></html>")).text == "plain text"
    assert decode_html(memoryview(b"<p>plain text</p>")) == "<p>plain text</p>"


def test_every_codec_a_label_names_or_detection_answers_reads_ascii_as_ascii_but_the_ones_html_source_decodes() -> None:
    every_ascii_byte = bytes(range(128))
    detected = {*encoding._WEB_CODECS, *encoding._DETECTED_AS.values()}
    for codec in {codec for codec in LABELS.values() if codec} | detected:
        if not codec.startswith(_NOT_ASCII_BASED):
            assert every_ascii_byte.decode(codec) == every_ascii_byte.decode("ascii"), codec


@settings(max_examples=300, database=None)
@given(st.lists(st.sampled_from(["<html", " xmlns", "=", '"http://www.w3.org/1999/xhtml"', "'", " ", "\n", "<?xml",
                                 "<?XML", "XMLNS", ">", "lang=en", "<!DOCTYPE html>", "x"]), max_size=16))
@example(["<!DOCTYPE html>", "<html", " ", "lang=en", " xmlns", "=", '"http://www.w3.org/1999/xhtml"'])
@example([" ", "<?xml"])
def test_the_xhtml_hint_is_its_pattern(pieces: list[str]) -> None:
    head = "".join(pieces)
    assert _xhtml_hinted(head) == (_XHTML_HINT.search(head) is not None)


@settings(max_examples=200, database=None)
@given(st.recursive(st.sampled_from(["x", "<!-- c -->", "<br>"]),
                    lambda inner: st.lists(inner, max_size=5).map(lambda parts: "<div>" + "".join(parts) + "</div>"),
                    max_leaves=30))
def test_the_grids_are_the_elements_with_three_child_elements(markup: str) -> None:
    """Below the node: three child elements. The node itself is asked len(), which counts comments
    too, as grids always has (its own rule, not the XPath's)."""
    body = next(load_tree(f"<html><body>{markup}</body></html>").iter("body"))
    elements = [e for e in body.iterdescendants() if isinstance(e.tag, str)]
    expected = [e for e in elements if sum(1 for child in e if isinstance(child.tag, str)) >= 3]
    assert grids(body) == ([body] if len(body) >= 3 else []) + expected


@settings(max_examples=300, database=None)
@given(st.lists(st.sampled_from(["<title>a</title>", "<title></title>", "<title> b </title>", "<svg>", "</svg>",
                                 "<svg><title>icon</title></svg>", "<head>", "</head>", "<body>", "<div>", "</div>",
                                 '<meta property="og:title" content="og">', "<p>x</p>"]), max_size=12))
@example(["<head>", "<svg><title>icon</title></svg>", "<title>a</title>", "</head>"])
def test_the_pages_title_is_its_first_title_outside_an_svg(pieces: list[str]) -> None:
    root = load_tree("<html>" + "".join(pieces) + "</html>")
    svg_titles = {title for svg in root.iter("svg") for title in svg.iter("title")}
    texts = [collapse_text("".join(t.itertext())) for t in root.iter("title") if t not in svg_titles]
    og = [collapse_text(m.get("content")) for m in root.iter("meta") if m.get("property") == "og:title"]
    assert html_meta.title(root) == next((text for text in [*texts, *og] if text), None)
