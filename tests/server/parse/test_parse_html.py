"""parse_html: main text, Markdown, metadata, tracks, login walls and the node limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidencekit.server.evidence.parse import HtmlExtract, Track, parse_html

DATA = Path(__file__).resolve().parents[2] / "data" / "parse"


def extract(name: str, **options: object) -> HtmlExtract:
    return parse_html((DATA / name).read_bytes(), **options)  # type: ignore[arg-type]


def html(body: str, head: str = "", attrs: str = "") -> bytes:
    return f"<!DOCTYPE html><html{attrs}><head>{head}</head><body>{body}</body></html>".encode()


def in_order(text: str, *parts: str) -> bool:
    positions = [text.find(part) for part in parts]
    return -1 not in positions and positions == sorted(positions)


# -- main text on realistic pages -------------------------------------------------------------


def test_blog_article_keeps_the_post_and_drops_the_furniture() -> None:
    result = extract("article_wordpress.html")
    text = result.text
    assert result.markdown.startswith("# Why Tide Pools Matter\n\nTwice a day the sea pulls back")
    assert "Why Tide Pools Matter" not in text  # the headline is the title, not the text
    assert in_order(
        text,
        "Twice a day the sea pulls back",
        "What lives there",
        "Limpets return to the same scar",
        "A tide pool is the ocean at a scale",
        "Check the tide tables before you go",
    )
    for furniture in (
        "cookies",  # cookie banner
        "Skip to content",  # skip link
        "Coastal Notes",  # masthead
        "Recent Posts",  # sidebar widgets
        "Counting gulls",
        "Share this",  # share buttons inside the content
        "Rockpooling with children",  # related posts inside the content
        "Posted on",  # entry footer
        "Previous post",  # post navigation
        "We found a blenny",  # comments
        "Leave a Reply",
        "Proudly powered",  # site footer
    ):
        assert furniture not in text


def test_news_page_without_semantic_tags() -> None:
    result = extract("news_divs.html")
    assert in_order(result.markdown, "# Stadtrat beschließt neue Radwege", "Nach monatelanger Debatte")
    assert in_order(
        result.text,
        "Nach monatelanger Debatte",
        "Die Entscheidung fiel mit 31 zu 12 Stimmen",
        "Oberbürgermeisterin Weber",
        "Umweltverbände begrüßten den Beschluss",
    )
    for furniture in ("Anzeige", "Lesen Sie auch", "Meistgelesen", "Neue Buslinie", "Newsletter",
                      "Impressum", "Eilmeldung", "Politik", "Teilen", "Verkehr"):  # fmt: skip
        assert furniture not in result.text


def test_docs_page_keeps_code_tables_and_lists_but_not_the_sidebar() -> None:
    result = extract("docs_page.html")
    assert "Table of Contents" not in result.text
    assert "modules" not in result.text
    assert "Copyright" not in result.text
    assert "¶" not in result.markdown  # permalink anchors
    assert result.markdown.startswith("# Configuration reference\n\nGauge reads its settings")
    assert '```python\nimport gauge\n\nconfig = gauge.load("gauge.toml")\n' in result.markdown
    assert "| Option | Type | Default |\n| --- | --- | --- |\n| `strict` | bool | false |" in result.markdown
    assert "| `log_format` | str \\| None | \"text\" |" in result.markdown
    assert "1. Copy the default file.\n2. Edit the values you need:\n   - keep comments short\n" in result.markdown
    assert "Option | Type | Default\nstrict | bool | false" in result.text


def test_forum_thread_keeps_every_post_in_order() -> None:
    posts = "".join(
        f'<div class="post"><div class="post-author"><a href="/u/{n}">user{n}</a></div>'
        f'<div class="post-body"><p>Post number {n} says something useful about the boiler, at length, honestly.</p></div>'
        f'<div class="signature">Sent from my phone {n}</div></div>'
        for n in range(1, 6)
    )
    body = f'<div id="header"><a href="/">Forum</a></div><h1>Boiler keeps losing pressure</h1><div class="thread">{posts}</div>'
    text = parse_html(html(body)).text
    assert in_order(text, *(f"Post number {n} says" for n in range(1, 6)))
    assert "Sent from my phone" not in text


def test_link_heavy_blocks_inside_the_content_are_dropped() -> None:
    links = "".join(f'<li><a href="/r/{n}">Another story number {n}</a></li>' for n in range(6))
    body = (
        "<article><h1>Main story</h1>"
        "<p>The first paragraph of the story is long enough to be read as content by anyone.</p>"
        f"<ul>{links}</ul>"
        "<ul><li>A list that belongs to the story</li><li>with a <a href='/x'>link</a> in it</li></ul>"
        "<p>The second paragraph closes the story with another sentence or two of text.</p></article>"
    )
    text = parse_html(html(body)).text
    assert "Another story number" not in text
    assert "A list that belongs to the story\nwith a link in it" in text


def test_headings_left_without_content_are_dropped() -> None:
    links = "".join(f'<li><a href="/r/{n}">Another story number {n}</a></li>' for n in range(6))
    body = (
        "<article><h1>Main story</h1><h2>Background</h2>"
        f"<p>{'The story is long enough to be read as content by anyone. ' * 4}</p>"
        f"<h2>More stories</h2><h3>Today</h3><ul>{links}</ul></article>"
    )
    markdown = parse_html(html(body)).markdown
    assert markdown.startswith("# Main story\n\n## Background\n\nThe story is long")
    assert markdown.endswith("read as content by anyone.")


def test_hidden_elements_are_not_text() -> None:
    body = (
        "<article><p>Visible paragraph with enough words to be the main content of the page.</p>"
        '<p hidden>Hidden by attribute.</p><div style="display: none">Hidden by style.</div>'
        '<span class="sr-only">Screen reader only.</span></article>'
    )
    assert parse_html(html(body)).text == "Visible paragraph with enough words to be the main content of the page."


def test_a_body_classed_content_keeps_its_text() -> None:
    body = "<div><p>Short page.</p><p>Second line of the short page.</p></div>"
    page = f'<html><body class="content sidebar-left comments-open">{body}</body></html>'.encode()
    assert parse_html(page).text == "Short page.\n\nSecond line of the short page."


def test_a_wrapper_named_like_furniture_does_not_hide_the_page() -> None:
    paragraphs = "<p>Paragraph of real content that is long enough to count for something.</p>" * 8
    page = f'<html><body><div class="sidebar-layout"><div class="col">{paragraphs}</div></div></body></html>'
    assert parse_html(page.encode()).text.count("Paragraph of real content") == 8


def test_listing_page_keeps_every_teaser() -> None:
    posts = "".join(
        f'<article class="post"><h2><a href="/p/{n}">Post title number {n}</a></h2><div class="entry-summary">'
        f"<p>Excerpt of post {n}, which is a couple of sentences long. It scores as a paragraph.</p></div></article>"
        for n in range(8)
    )
    body = f'<div id="header"><a href="/">Blog</a></div><main>{posts}<div class="pagination"><a href="/2">Older</a></div></main>'
    text = parse_html(html(body)).text
    assert in_order(text, *(f"Excerpt of post {n}," for n in range(8)))
    assert "Older" not in text


def test_a_comment_body_that_is_the_article_stays() -> None:
    body = (
        '<article class="post"><h1>A reader writes</h1><div class="comment-body">'
        "<p>This letter from a reader is the whole content of the page, and it is long enough.</p>"
        "<p>It has a second paragraph too, which continues the argument a little further.</p></div></article>"
        '<div id="comments"><p>Comments are closed, which is a sentence long enough to count.</p></div>'
    )
    text = parse_html(html(body)).text
    assert "This letter from a reader" in text
    assert "It has a second paragraph" in text
    assert "Comments are closed" not in text


def test_page_wrapped_in_one_form_still_has_text() -> None:
    paragraphs = "".join(f"<p>Paragraph {n} of a page that an old framework wrapped in a form element.</p>" for n in range(4))
    body = f'<form id="aspnetForm" method="post"><div class="page">{paragraphs}</div></form>'
    assert "Paragraph 3 of a page" in parse_html(html(body)).text


def test_character_references_are_decoded() -> None:
    body = "<p>caf&eacute; &amp; cr&#232;me &#x1F600; &lt;tag&gt; &hellip; a&nbsp;b</p>"
    assert parse_html(html(body)).text == "café & crème 😀 <tag> … a b"


# -- text layout --------------------------------------------------------------------------------


def test_text_layout_blank_line_between_blocks_one_line_per_item() -> None:
    body = (
        "<div><h2>  Heading\n  text </h2><p>First\n\t  paragraph.</p>"
        "<ul><li>one</li><li>two<ol><li>two.a</li></ol></li></ul><p>Line one<br>line two</p></div>"
    )
    assert parse_html(html(body)).text == "Heading text\n\nFirst paragraph.\n\none\ntwo\ntwo.a\n\nLine one\nline two"


def test_text_is_not_truncated() -> None:
    paragraphs = "".join(f"<p>Paragraph {n} " + "word " * 60 + "</p>" for n in range(200))
    text = parse_html(html(f"<article>{paragraphs}</article>")).text
    assert len(text) > 60_000
    assert text.endswith("word")


# -- markdown -----------------------------------------------------------------------------------


def test_markdown_headings_paragraphs_links_and_emphasis() -> None:
    body = (
        "<article><h1>Title</h1><p>Read <a href='../docs/intro.html'>the <em>intro</em></a>, "
        "then <strong>try it</strong>.</p><h3>Small</h3><p>Plain <code>a`b</code> end.</p></article>"
    )
    assert parse_html(html(body)).markdown == (
        "# Title\n\nRead [the *intro*](../docs/intro.html), then **try it**.\n\n### Small\n\nPlain ``a`b`` end."
    )


def test_markdown_nested_lists() -> None:
    body = "<ol start='3'><li>three<ul><li>a</li><li>b<ul><li>deep</li></ul></li></ul></li><li>four</li></ol>"
    assert parse_html(html(body)).markdown == "3. three\n   - a\n   - b\n     - deep\n4. four"


def test_markdown_fenced_code_keeps_whitespace_and_outgrows_backticks() -> None:
    body = '<pre class="language-md">line 1\n    indented\n```\nend</pre>'
    assert parse_html(html(body)).markdown == "````md\nline 1\n    indented\n```\nend\n````"


def test_code_blocks_keep_highlighted_spans_and_drop_copy_buttons() -> None:
    body = (
        '<div class="highlight highlight-source-js"><pre><button class="copy">Copy</button>'
        '<span class="token keyword">let</span> x = 1; <span class="token comment">// a comment</span><br>'
        '<span class="hljs-comment">/* another */</span></pre></div>'
    )
    result = parse_html(html(body))
    assert result.markdown == "```js\nlet x = 1; // a comment\n/* another */\n```"
    assert result.text == "let x = 1; // a comment\n/* another */"


def test_markdown_tables_with_header_colspan_and_pipes() -> None:
    body = (
        "<table><caption>Prices</caption><thead><tr><th>Item</th><th>Price</th><th>Note</th></tr></thead>"
        "<tbody><tr><td>Tea</td><td>2</td><td>a|b</td></tr><tr><td colspan=2>Total</td><td>2</td></tr></tbody></table>"
    )
    assert parse_html(html(body)).markdown == (
        "Prices\n\n| Item | Price | Note |\n| --- | --- | --- |\n| Tea | 2 | a\\|b |\n| Total |  | 2 |"
    )


def test_markdown_table_footer_comes_last_wherever_it_is_written() -> None:
    body = (
        "<table><tfoot><tr><td>Total</td><td>5</td></tr></tfoot><thead><tr><th>Item</th><th>Price</th></tr></thead>"
        "<tbody><tr><td>Tea</td><td>2</td></tr><tr><td>Cake</td><td>3</td></tr></tbody></table>"
    )
    result = parse_html(html(body))
    assert result.markdown == "| Item | Price |\n| --- | --- |\n| Tea | 2 |\n| Cake | 3 |\n| Total | 5 |"
    assert result.text == "Item | Price\nTea | 2\nCake | 3\nTotal | 5"


def test_cells_directly_in_a_table_are_a_row_of_their_own() -> None:
    body = "<p>Opening hours of the library:</p><table><td>Monday</td><td>9-17</td></table>"
    result = parse_html(html(body))
    assert result.text == "Opening hours of the library:\n\nMonday | 9-17"
    assert result.markdown.endswith("| Monday | 9-17 |\n| --- | --- |")
    body = "<table><tr><th>Day</th><th>Hours</th></tr><tbody><td>Friday</td><td>9-13</td></tbody></table>"
    assert parse_html(html(body)).markdown == "| Day | Hours |\n| --- | --- |\n| Friday | 9-13 |"


def test_a_heading_that_links_to_itself_is_a_plain_heading() -> None:
    body = (
        "<h2 id='usage'><a href='#usage'>Usage</a></h2><p>Run it.</p>"
        "<h3><a class='anchor' href='#opts'></a>Options <a href='#opts'>¶</a></h3><p>None yet.</p>"
        "<h3><a href='/elsewhere'>Linked elsewhere</a></h3><p>Kept.</p>"
    )
    assert parse_html(html(body)).markdown == (
        "## Usage\n\nRun it.\n\n### Options\n\nNone yet.\n\n### [Linked elsewhere](/elsewhere)\n\nKept."
    )


def test_relative_links_are_resolved_against_the_final_url_and_base_href() -> None:
    body = (
        "<p>See <a href='../guide/intro.html#start'>the guide</a>, <a href='?page=2'>page two</a>, "
        "<a href='#notes'>the notes</a>, <a href='//cdn.example.org/f.pdf'>the file</a> and "
        "<a href='https://other.example/x'>elsewhere</a>.</p>"
    )
    markdown = parse_html(html(body), url="https://docs.example.com/v2/api/ref.html").markdown
    assert markdown == (
        "See [the guide](https://docs.example.com/v2/guide/intro.html#start), "
        "[page two](https://docs.example.com/v2/api/ref.html?page=2), "
        "[the notes](https://docs.example.com/v2/api/ref.html#notes), [the file](https://cdn.example.org/f.pdf) and "
        "[elsewhere](https://other.example/x)."
    )
    based = parse_html(html("<p><a href='a.html'>A</a></p>", head="<base href='/root/'>"), url="https://s.example/x/y")
    assert based.markdown == "[A](https://s.example/root/a.html)"


def test_resolving_never_turns_a_link_into_a_script() -> None:
    body = "<p><a href='javascript:alert(1)'>x</a> and <a href='a.html'>y</a></p>"
    markdown = parse_html(html(body, head="<base href='javascript:alert(2)//'>"), url="https://s.example/").markdown
    assert markdown == "x and [y](https://s.example/a.html)"


def test_reference_page_sections_before_the_longest_are_kept() -> None:
    options = "".join(
        f"<dt><code>--option-{n}</code></dt><dd>Does thing number {n}, with care, and reports it.</dd>"
        for n in range(14)
    )
    body = (
        "<nav><a href='/'>Home</a></nav><div class='doc'>"
        "<section><h2>NAME</h2><p>tidy - clean a working folder</p></section>"
        "<section><h2>SYNOPSIS</h2><pre>tidy [--dry-run] [--keep PATTERN] FOLDER</pre></section>"
        "<section><h2>DESCRIPTION</h2><p>Removes build outputs from FOLDER. Files that match a keep pattern stay.</p>"
        "<p>With no options, everything the build wrote is removed.</p></section>"
        f"<section><h2>OPTIONS</h2><dl>{options}</dl></section>"
        "<section><h2>EXIT STATUS</h2><p>0 on success, 1 when a file could not be removed.</p></section></div>"
    )
    markdown = parse_html(html(body)).markdown
    assert in_order(
        markdown, "## NAME", "## SYNOPSIS", "tidy [--dry-run]", "## DESCRIPTION", "Removes build outputs",
        "## OPTIONS", "--option-13", "## EXIT STATUS", "0 on success",
    )
    assert "Home" not in markdown


def test_markdown_blockquote() -> None:
    body = "<blockquote><p>First.</p><p>Second <em>part</em>.</p></blockquote>"
    result = parse_html(html(body))
    assert result.markdown == "> First.\n>\n> Second *part*."
    assert result.text == "First.\n\nSecond part."


def test_markdown_link_targets_are_kept_as_written() -> None:
    body = "<p>See <a href='/a b'>spaced</a>, <a href='javascript:void(0)'>script</a> and <a href='#top'>anchor</a>.</p>"
    assert parse_html(html(body)).markdown == "See [spaced](</a b>), script and [anchor](#top)."


@pytest.mark.parametrize("href", ["JavaScript:alert(1)", "java\tscript:alert(1)", "\x01 javascript:alert(1)",
                                  "\u00a0javascript:alert(1)", "&#160;javascript:alert(1)", "\u3000javascript:x",
                                  "\u2028javascript:x", "\x85javascript:x",
                                  "java&#10;script:alert(1)", "data:text/html,<b>x</b>", "vbscript:msgbox",
                                  "file:///etc/passwd", "blob:https://example.com/1"])
def test_markdown_drops_links_that_are_not_web_or_mail(href: str) -> None:
    body = f"<p>Read <a href='{href}'>this</a> now.</p>"
    assert parse_html(html(body)).markdown == "Read this now."


@pytest.mark.parametrize(("href", "target"), [
    ("https://example.com/a", "https://example.com/a"), ("HTTP://example.com/", "HTTP://example.com/"),
    ("mailto:lab@example.com", "mailto:lab@example.com"), ("/docs/a", "/docs/a"), ("docs/a:b", "docs/a:b"),
    ("//example.com/x", "//example.com/x"), ("?page=2", "?page=2"), ("#top", "#top"),
    (" https://example.com/\tb ", "https://example.com/b"),
])
def test_markdown_keeps_web_mail_and_relative_links(href: str, target: str) -> None:
    body = f"<p>Read <a href='{href}'>this</a> now.</p>"
    assert parse_html(html(body)).markdown == f"Read [this]({target}) now."


def test_page_text_that_looks_like_markdown_links_or_html_stays_text() -> None:
    """Only the page's real links are live in the markdown get_documents serves."""
    body = ("<p>Read [the report](javascript:alert(1)) or &lt;img src=x onerror=alert(1)&gt; here, "
            "a <a href='/real'>real [link]</a> and <code>[x](y) &lt;b&gt;</code>.</p>")
    markdown = parse_html(html(body)).markdown
    assert markdown == ("Read \\[the report\\](javascript:alert(1)) or \\<img src=x onerror=alert(1)> here, "
                        "a [real \\[link\\]](/real) and `[x](y) <b>`.")
    assert parse_html(html(body)).text.startswith("Read [the report](javascript:alert(1)) or <img")


# -- metadata -----------------------------------------------------------------------------------


def test_title_and_description_precedence() -> None:
    result = extract("article_wordpress.html")
    assert result.title == "Why Tide Pools Matter – Coastal Notes"
    assert result.description == "A short field guide to the life of tide pools."
    news = extract("news_divs.html")
    assert news.title == "Stadtrat beschließt neue Radwege | Tagesblatt"  # whitespace normalised
    assert news.description == "Der Stadtrat hat am Dienstag drei neue Radwege beschlossen."  # og: fallback


def test_empty_title_falls_back_to_og_title() -> None:
    head = '<title>  </title><meta property="og:title" content=" From  OG "><meta name="description" content="">'
    result = parse_html(html("<p>x</p>", head))
    assert result.title == "From OG"
    assert result.description is None


def test_svg_title_is_not_the_page_title() -> None:
    result = parse_html(html("<svg><title>icon</title></svg><p>x</p>"))
    assert result.title is None


@pytest.mark.parametrize(
    ("attrs", "head", "header", "expected"),
    [
        (' lang="en_US"', '<meta http-equiv="Content-Language" content="de">', "fr", "en-US"),
        ("", '<meta http-equiv="content-language" content="de-AT, en">', "fr", "de-AT"),
        ("", "", "fr-CA, en;q=0.5", "fr-CA"),
        (' lang="{{ page.lang }}"', "", "nl", "nl"),  # an unfilled template is not a language
        (' lang="x"', "", None, None),
        (' lang="zh-Hant-TW"', "", None, "zh-Hant-TW"),
        ("", "", None, None),
    ],
)
def test_language_precedence_and_validation(attrs: str, head: str, header: str | None, expected: str | None) -> None:
    assert parse_html(html("<p>x</p>", head, attrs), content_language=header).language == expected


@pytest.mark.parametrize("entity", [False, True])
def test_xhtml_with_xml_declaration_and_namespaces(entity: bool) -> None:
    page = (DATA / "page.xhtml").read_bytes()
    if entity:  # not well-formed XML any more: read by the HTML parser
        page = page.replace(b"parfois pendant", b"parfois&nbsp;pendant")
    result = parse_html(page)
    assert result.title == "Les phares du Saint-Laurent"
    assert result.description == "Petite histoire des phares du fleuve."
    assert result.language == "fr-CA"  # from xml:lang
    assert in_order(
        result.text,
        "Le premier phare du fleuve fut allumé en 1809 sur l’île Verte.",
        "navires <enfin> jusqu’à Québec.",  # after the self-closed <div/>, character references decoded
        "Les gardiens vivaient sur place",
        "Un passage en CDATA reste du texte : a < b & c.",
    )
    assert "icône" not in result.text
    assert "Accueil" not in result.text


# -- tracks -------------------------------------------------------------------------------------


def test_tracks_in_document_order_with_kind_srclang_label_default() -> None:
    body = (
        '<video src="talk.mp4"><track src="/subs/talk.en.vtt" kind="Captions" srclang="en" label=" English  CC " default>'
        '<track src="talk.de.vtt" kind="subtitles" srclang="de_DE"><track src="chapters.vtt" kind="chapters">'
        '<track kind="captions" srclang="fr"></video>'
        '<audio><track src="https://cdn.example/a.vtt" srclang="es"></audio>'
        '<track src="orphan.vtt" kind="captions">'
    )
    assert parse_html(html(body)).tracks == (
        Track(src="/subs/talk.en.vtt", kind="captions", srclang="en", label="English CC", default=True),
        Track(src="talk.de.vtt", kind="subtitles", srclang="de-DE", label=None, default=False),
        Track(src="chapters.vtt", kind="chapters", srclang=None, label=None, default=False),
        Track(src="https://cdn.example/a.vtt", kind="subtitles", srclang="es", label=None, default=False),
    )


def test_media_fallback_text_is_not_content() -> None:
    body = "<p>Watch the talk below, it explains everything in twenty minutes.</p><video>Your browser does not support video.</video>"
    assert "browser" not in parse_html(html(body)).text


# -- login walls --------------------------------------------------------------------------------


def test_login_page_is_a_login_wall() -> None:
    result = extract("login.html")
    assert result.login_wall
    assert result.text == "You need an account to read this report."
    assert result.markdown == "# Sign in to continue\n\nYou need an account to read this report."


def test_article_with_a_login_box_is_not_a_login_wall() -> None:
    login = '<div class="account"><form><input name="u"><input type="password" name="p"><button>Log in</button></form></div>'
    page = (DATA / "article_wordpress.html").read_bytes().replace(b"<main", login.encode() + b"<main", 1)
    result = parse_html(page)
    assert not result.login_wall
    assert "Twice a day" in result.text
    assert not extract("article_wordpress.html").login_wall


def test_teaser_behind_a_password_form_is_a_login_wall() -> None:
    body = (
        "<article><h1>Exclusive report</h1><p>The first lines of the story are free to read.</p></article>"
        '<form action="/login"><input type="email"><input type="password"><button>Subscribe or log in</button></form>'
    )
    assert parse_html(html(body)).login_wall


# -- limits and odd input -----------------------------------------------------------------------


def test_node_limit_uses_only_the_first_elements() -> None:
    items = "".join(f"<p>item {n}</p>" for n in range(100_000))
    result = parse_html(html(f"<div>{items}</div>"))
    assert result.nodes_limited
    assert "item 0" in result.text
    assert "item 49990" in result.text
    assert "item 50000" not in result.text
    assert "item 99999" not in result.text


def test_node_limit_not_reached() -> None:
    result = parse_html(html("<div><p>one</p><p>two</p></div>"), max_nodes=6)
    assert not result.nodes_limited
    assert result.text == "one\n\ntwo"
    limited = parse_html(html("<div><p>one</p><p>two</p></div>"), max_nodes=5)
    assert limited.nodes_limited
    assert limited.text == "one"


def test_navigation_before_the_article_does_not_use_up_the_node_limit() -> None:
    menu = "".join(f"<li><a href='/c/{n}'>Category {n}</a></li>" for n in range(800))
    article = "".join(f"<p>Article paragraph {n}, long enough to be read as part of the story.</p>" for n in range(30))
    body = f"<nav><ul>{menu}</ul></nav><ul class='mega-menu'>{menu}</ul><script>x()</script>{article}"
    result = parse_html(html(body), max_nodes=1500)
    assert not result.nodes_limited  # furniture went first: the whole article fit
    assert result.text.count("Article paragraph") == 30 and "Category" not in result.text
    crowded = parse_html(html(f"<div>{menu}</div>{article}"), max_nodes=1500)
    assert crowded.nodes_limited  # links in plain <div>s may be content: they still count


@pytest.mark.parametrize("http_charset", [None, "utf-8", "iso-8859-1", "shift_jis"])
def test_binary_bytes_served_as_html_are_not_text(http_charset: str | None) -> None:
    import random

    for seed in range(5):
        body = random.Random(seed).randbytes(20_000)
        result = parse_html(body, http_charset=http_charset)
        assert result.binary and result.text == "" and result.markdown == ""


def test_text_with_a_few_control_characters_is_still_text() -> None:
    result = parse_html(html("<p>Tab\tform feed\x0c and one stray \x01 control in a long enough paragraph.</p>" * 3))
    assert not result.binary and "stray" in result.text


@pytest.mark.parametrize("shell", [
    "<noscript>You need to enable JavaScript to run this app.</noscript><div id='root'></div><script src='/m.js'></script>",
    "<div id='__next'></div><script>render()</script>",
    "<app-root></app-root><script src='/main.js'></script>",
    "<div id='app' data-v-app></div><script type='module' src='/a.js'></script>",
])
def test_a_script_shell_is_recognised(shell: str) -> None:
    result = parse_html(html(shell, head="<title>App</title>"))
    assert result.text == "" and result.script_shell and result.title == "App"


def test_a_page_with_text_or_without_scripts_is_not_a_script_shell() -> None:
    assert not parse_html(html("<div id='root'><p>Server-rendered text.</p></div><script>hydrate()</script>")).script_shell
    assert not parse_html(html("<div id='root'></div>", head="<title>Empty</title>")).script_shell


def test_deep_nesting_does_not_overflow() -> None:
    depth = 1_500  # beyond Python's recursion limit; lxml itself stops reading at 2,048 levels
    body = "<div>" * depth + "<p>deep text</p>" + "</div>" * depth
    assert "deep text" in parse_html(html(body)).text


@pytest.mark.parametrize("body", [b"", b"   ", b"\x00\x00", b"\xff\xfe", b"<", b"<html>", b"<!-- only a comment -->", b"plain words"])
def test_odd_input_gives_an_extract(body: bytes) -> None:
    result = parse_html(body)
    assert isinstance(result.text, str)
    assert result.tracks == ()
    assert not result.nodes_limited


def test_pruning_never_removes_the_body_itself() -> None:
    items = "".join(f"<p>item {n}</p>" for n in range(300))
    result = parse_html(f"<html><body role='form'><nav>{'<a>x</a>' * 300}</nav>{items}</body></html>".encode(),
                        max_nodes=400)
    assert "item 299" in result.text


def test_a_pages_tree_is_freed_when_parse_html_returns() -> None:
    """parse_html leaves no reference cycle behind: the page's tree (tens of MB for a large page)
    is freed as it returns, not whenever the garbage collector next runs. Recursive closures held
    it so (a closure calling itself and its cell make a cycle, and the closure held the measure
    of every element)."""
    import gc

    pages = [path.read_bytes() for path in sorted(DATA.glob("*.html"))]
    pages.append(html("<article><h1>Rates</h1><p class='byline'>By Jane Doe<br>5 min read</p>"
                      "<p>The new rates, as the council set them in March, apply from May.</p>" * 3 +
                      "<table><tfoot><tr><td>Total</td><td>9</td></tr></tfoot><thead><tr><th>Zone</th><th>Rate"
                      "</th></tr></thead><tbody><tr><td>A</td><td>4</td></tr></tbody><tr><td>B</td><td>5</td></tr>"
                      "</table></article>"))
    assert len(pages) >= 5
    parse_html(pages[-1])  # the first call compiles and caches what every call shares
    gc.collect()
    gc.disable()
    try:
        for page in pages:
            parse_html(page)
        assert gc.collect() == 0
    finally:
        gc.enable()
