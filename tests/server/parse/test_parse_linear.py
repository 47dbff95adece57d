"""Every parser of fetched content takes time in proportion to its input, whatever it repeats.

Each parser is fed adversarial repetitions of every token its grammar knows, at one size and at
four times that size, in the same run: a ratio to a linear baseline, not a clock bound. Quadratic
work shows as a ratio near 16; linear as about 4.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evidencekit.server.evidence.parse import (
    CaptionError,
    parse_html,
    parse_plain_text,
    parse_subrip,
    parse_webvtt,
    sniff_captions,
)
from tests.support import alternating_cpu_seconds

VTT = [b"<rt ", b"<rt>", b"</rt>", b"<ruby>", b"<c.", b"<v ", b"<", b">", b"00:00.000 --> 00:01.000\n", b"-->",
       b"\n", b"\n\n", b"NOTE ", b"&amp;", b"&", b"<b>", b"STYLE\n", b"00:", b" ", b"\r"]
SRT = [b"1\n00:00:00,000 --> 00:00:01,000\n", b"{\\", b"<i>", b"<", b"-->", b"\n", b"\n\n", b"0", b"0:0:0,0 ",
       b"&", b"\r\n"]
HTML = [b"<![CDATA[", b"]]>", b"<div ", b"<div>", b"</div>", b"<p>", b"<a href='", b"<!--", b"-->", b"<script>",
        b"<html xmlns='http://www.w3.org/1999/xhtml'", b"<?xml ", b"<meta charset=", b"<table><tr><td>",
        b"<ul><li>", b"<pre>", b"&nbsp;", b"&#", b"<", b">", b"<br/>", b"<h1>", b"<rt ", b"<svg><title>x",
        b"<video><track kind='captions' srclang='en' src='x.vtt'>", b"<track src='x.vtt'>", b"<base href='/'>",
        # what the main-text rules of issue 41 walk: wrappers left out for their tag or role, page
        # builders' widgets, stacked articles, linked headings, furniture-named containers
        b"<noscript><div>a ", b"<form><div>a ", b"<header><div>a ", b"<div role='complementary'>a ",
        b"<div class='x-widget'><p>a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k</p>",
        b"<article><p>a ", b"<h3><a href='/x'>a</a></h3><p>b ", b"<div class='ad-wrap'><p>a ",
        b"<div class='post-meta'><p>a ", b"<main>a ", b"<header><template>a ", b"<div role='search'><template>a ",
        # and this stop's: comment boxes in the content, caption-named text, sections named after
        # their headings, a marked main content, JSON-LD article bodies
        b"<div class='comments-body'>a ", b"<div class='caption attribution'>a b c d e f ",
        b"<div id='sharing-x'><h2>Sharing x</h2></div>", b"<div id='share-x'><h2>Other</h2></div>",
        b"<div id='main-content'>a ",
        b"<script type='application/ld+json'>{\"articleBody\": [\"a\", {\"articleBody\": \"a b c\"}]}</script>"]
TEXT = [b"\r", b"\n", b"\x00", b"a ", b"\xff", b"\r\n", b"\xe2\x80"]
SIZE = 20_000  # bytes at the smaller size


def quietly(parse: Callable[[bytes], object]) -> Callable[[bytes], object]:
    def run(body: bytes) -> object:
        try:
            return parse(body)
        except CaptionError:  # refusing a body is an answer too: it must come as quickly
            return None
    return run


PARSERS = {"webvtt": (quietly(parse_webvtt), b"WEBVTT\n\n00:00.000 --> 00:01.000\n", VTT),  # in a cue
           "subrip": (quietly(parse_subrip), b"1\n00:00:00,000 --> 00:00:01,000\n", SRT),
           "html": (parse_html, b"", HTML), "plain_text": (parse_plain_text, b"", TEXT),
           "sniff_captions": (sniff_captions, b"", [*VTT, *SRT])}
CASES = [pytest.param(parse, head, token, id=f"{name}-{token!r}")
         for name, (parse, head, tokens) in PARSERS.items() for token in tokens]


@pytest.mark.parametrize(("parse", "head", "token"), CASES)
def test_a_repeated_token_costs_time_in_proportion(parse: Callable[[bytes], object], head: bytes, token: bytes) -> None:
    copies = SIZE // len(token) + 1
    small, large = alternating_cpu_seconds(parse, head + token * copies, head + token * (4 * copies))
    assert large / max(small, 1e-4) < 8, f"{token!r}: {small * 1000:.1f} ms, 4x: {large * 1000:.1f} ms"


def _pruned_navigation(n: int) -> bytes:  # over the node limit: every removed <nav> leaves its tail
    return b"<html><body><div>" + b"<nav></nav>tail text " * n + b"</div></body></html>"


def _nested_mount_points(n: int) -> bytes:  # look-alike app roots nested in dropped navigation, text at the bottom
    return b"<html><body><script></script><nav>" + b"<div id='app'>" * (n // 10) + b"x</nav></body></html>"


def _loose_text_over_inline_children(n: int) -> bytes:  # nested loose-text containers over many inline children
    return b"<html><body>" + b"<span><p>p</p>loose text, " * (n // 100) + b"<b>bold</b>" * n + b"</body></html>"


STRUCTURES = {"pruned-navigation": (lambda body: parse_html(body, max_nodes=200), _pruned_navigation),
              "nested-mount-points": (parse_html, _nested_mount_points),
              "loose-text": (parse_html, _loose_text_over_inline_children)}


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_a_repeated_structure_costs_time_in_proportion(name: str) -> None:
    parse, build = STRUCTURES[name]
    small, large = alternating_cpu_seconds(parse, build(3000), build(12000))
    assert large / max(small, 1e-4) < 8, f"{name}: {small * 1000:.1f} ms, 4x: {large * 1000:.1f} ms"
