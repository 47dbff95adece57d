"""The article body a page declares in its JSON-LD: read when the page itself shows much less."""

from __future__ import annotations

import json

from evidencekit.server.evidence.parse import parse_html
from evidencekit.server.evidence.parse.html_tree import load_tree
from evidencekit.server.evidence.parse.json_ld import declared_body

SENTENCE = (
    "The river rose again this spring, and the village moved its market to the hill, where the old "
    "church has stood since the flood of 1910. "
)
PARAGRAPHS = [f"Paragraph {n}. {SENTENCE * 2}" for n in range(6)]
TEASER = "<div class='paywall'><h1>Flood Market</h1><p>The market moves uphill. Subscribe to read on.</p></div>"


def page(ld: object, body: str = TEASER, raw: str | None = None) -> bytes:
    script = raw if raw is not None else json.dumps(ld)
    return (
        "<!DOCTYPE html><html><head><title>Flood Market</title>"
        f"<script type='application/ld+json'>{script}</script></head><body>{body}</body></html>"
    ).encode()


def test_a_teaser_page_reads_as_the_article_body_its_json_ld_declares() -> None:
    article = {"@context": "https://schema.org", "@type": "NewsArticle", "articleBody": "\n\n".join(PARAGRAPHS)}
    result = parse_html(page(article))
    assert result.text.split("\n\n") == [text.strip() for text in PARAGRAPHS]
    assert "Subscribe" not in result.text and "Paragraph 5." in result.markdown


def test_a_body_given_as_markup_inside_a_graph_is_read_as_markup() -> None:
    markup = "".join(f"<p>{text}</p>" for text in PARAGRAPHS) + "<ul><li>Stalls: 40</li></ul>"
    graph = {"@context": "https://schema.org", "articleBody": " ",  # (a blank body nearer the top is none)
             "@graph": [{"@type": "WebPage"}, [{"@type": "Article", "articleBody": markup}]]}
    result = parse_html(page(graph))
    assert result.text.count("Paragraph") == 6 and "- Stalls: 40" in result.markdown and "<p>" not in result.text


def test_a_body_of_escaped_markup_or_inline_markup_is_read_as_markup() -> None:
    escaped = "".join(f"&lt;p&gt;{text}&lt;/p&gt;" for text in PARAGRAPHS)
    inline = "\n\n".join(f"<strong>Part</strong> {text} <em>quoted</em>" for text in PARAGRAPHS)
    for body in (escaped, inline):
        result = parse_html(page({"@type": "Article", "articleBody": body}))
        assert result.text.count("Paragraph") == 6 and "<" not in result.text and "&lt;" not in result.text
        assert len(result.text.split("\n\n")) == 6


def test_the_page_text_stays_when_it_is_as_long_as_the_declared_body_or_that_is_a_summary() -> None:
    full = "".join(f"<p>Shown {n}. {SENTENCE * 2}</p>" for n in range(6))
    article = {"@type": "Article", "articleBody": "\n\n".join(PARAGRAPHS)}
    assert parse_html(page(article, body=f"<article>{full}</article>")).text.count("Shown") == 6
    summary = {"@type": "Article", "articleBody": "The market moves uphill, for good this time."}
    shown = parse_html(page(summary, body=f"<article><p>Shown. {SENTENCE}</p></article>")).text
    assert shown.startswith("Shown.")


def test_a_declared_body_heavy_with_markup_is_measured_by_its_text() -> None:
    # Its HTML is twice the page's text, its text a third of it: the page's text stays
    attributes = " ".join(f"data-tracking-{n}='section-{n}'" for n in range(12))
    markup = "".join(f"<p {attributes}>Short part {n}.</p>" for n in range(8))
    full = "".join(f"<p>Shown {n}. {SENTENCE}</p>" for n in range(3))
    text = parse_html(page({"@type": "Article", "articleBody": markup}, body=f"<article>{full}</article>")).text
    assert text.count("Shown") == 3 and "Short part" not in text


def test_json_ld_that_cannot_be_read_is_passed_over() -> None:
    for raw in ("{\"articleBody\": ", "[" * 100_000 + "\"articleBody\"", "{\"articleBody\": 12}", "<!-- articleBody -->"):
        result = parse_html(page(None, raw=raw))
        assert "market moves uphill" in result.text
    assert declared_body(load_tree("<html><body><p>no scripts</p></body></html>")) is None


def test_the_type_attribute_is_read_as_browsers_read_it() -> None:
    article = json.dumps({"articleBody": "\n\n".join(PARAGRAPHS)})
    markup = f"<html><head><script type=' Application/LD+JSON '>{article}</script></head><body>{TEASER}</body></html>"
    assert parse_html(markup.encode()).text.count("Paragraph") == 6
