"""Which part of a page is its main text: the patterns that cost precision or recall on news and
article pages (issue 20), each on a page written to show it."""

from __future__ import annotations

from evidencekit.server.evidence.parse import parse_html

SENTENCE = (
    "The river rose again this spring, and the village moved its market to the hill, where the old "
    "church has stood since the flood of 1910. "
)


def paragraphs(count: int, label: str = "Body") -> str:
    return "".join(f"<p>{label} paragraph {n}. {SENTENCE * 2}</p>" for n in range(count))


def page(body: str, title: str = "Flood Market") -> bytes:
    return f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def nav(count: int = 12) -> str:
    return "<ul class='top'>" + "".join(f'<li><a href="/s{n}">Section {n}</a></li>' for n in range(count)) + "</ul>"


def test_an_enclosing_article_is_not_taken_for_its_headline_dates_and_gallery() -> None:
    gallery = "".join(
        f'<div class="slide"><img src="/{n}.jpg"><p>Photo {n}: boats on the flooded square at dawn.</p></div>'
        for n in range(4)
    )
    body = (
        f"{nav()}<article><h1>Flood Market</h1><p class='standfirst'>The market moves uphill.</p>"
        "<time>12 March 2024, 09:14</time><p><a href='https://x.example/share?u=1'>https://x.example/share?u=1</a></p>"
        f"<div class='story-text'>{paragraphs(6)}</div>{gallery}</article>"
    )
    result = parse_html(page(body))
    assert result.text.count("Body paragraph") == 6
    for outside in ("Photo 1", "12 March 2024", "share?u=1", "Section 3"):
        assert outside not in result.text


def test_an_enclosing_article_with_real_content_outside_the_best_node_is_taken_whole() -> None:
    intro = "".join(f"<p>Intro paragraph {n}. {SENTENCE}</p>" for n in range(3))
    body = f"{nav()}<article><div class='intro'>{intro}</div><div class='story-text'>{paragraphs(6)}</div></article>"
    text = parse_html(page(body)).text
    assert text.count("Intro paragraph") == 3 and text.count("Body paragraph") == 6


def test_photo_captions_and_credits_outside_figcaption_are_not_text() -> None:
    photo = (
        '<div class="image-block"><img src="/a.jpg"><div class="image-caption">Boats moored by the church '
        'steps, seen from the bridge at dawn.</div><span class="photo-credit">Photo: Ana Lima / Agency</span></div>'
        '<p class="caption-text">The square under water, as the photographers saw it in the morning light.</p>'
        '<div class="copyright">© 2024 Example Media, all rights reserved.</div>'
    )
    body = f"<article>{paragraphs(3)}{photo}{paragraphs(3, 'Later')}</article>"
    text = parse_html(page(body)).text
    assert text.count("paragraph") == 6
    for caption in ("Boats moored", "Ana Lima", "The square under water", "Example Media"):
        assert caption not in text


def test_a_main_container_named_like_furniture_keeps_its_text_and_its_filtering() -> None:
    side = "".join(f'<li><a href="/t{n}">Archive month {n}</a></li>' for n in range(40))
    comments = "".join(f"<div class='comment'><p>Reader {n} says: {SENTENCE}</p></div>" for n in range(4))
    body = (
        f"<div id='sidebar'><ul>{side}</ul></div>"
        f"<div id='contentWithSidebar'><div id='post'>{paragraphs(5)}"
        f"<div class='share-buttons'><a href='/fb'>Share on Facebook</a> <a href='/tw'>Tweet this post</a></div>"
        f"<div class='author-bio'><p>Ana writes about rivers, {SENTENCE}</p></div>"
        f"<div class='newsletter-box'><p>Sign up for our weekly letter, {SENTENCE}</p></div>"
        f"<div id='comments'>{comments}</div></div></div>"
    )
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 5
    for furniture in ("Archive month", "Share on Facebook", "Ana writes", "Sign up", "Reader 2"):
        assert furniture not in text


def test_loose_text_between_line_breaks_beside_a_block_child_is_the_article() -> None:
    loose = "<br><br>".join(f"Loose paragraph {n}. {SENTENCE * 2}" for n in range(6))
    body = (
        f"<div class='top'>{nav(15)}</div><div class='story'>{loose}<div class='spacer'></div>"
        "<div class='sharerow'><a href='/s'>Share</a> <a href='/t'>Tweet</a></div></div>"
        "<div class='info'><p>About us, contact, and the terms of use for this site.</p>"
        "<p>All rights reserved by the publisher, who also runs other sites.</p></div>"
    )
    text = parse_html(page(body)).text
    assert text.count("Loose paragraph") == 6
    assert "Section 3" not in text


def test_a_link_inside_a_sentence_is_kept_even_in_its_own_span() -> None:
    sentence = (
        "<p>The council published <span class='inline-link'><a href='/report'>the full flood report</a></span>"
        " on Tuesday, and residents can read it at the library.</p>"
    )
    body = f"<article>{paragraphs(3)}{sentence}{paragraphs(2, 'Later')}</article>"
    result = parse_html(page(body))
    assert "The council published the full flood report on Tuesday" in result.text
    assert "[the full flood report](/report)" in result.markdown


def test_a_span_holding_several_links_is_still_a_box_of_links() -> None:
    tags = "<span class='topics'><a href='/a'>Rivers</a>, <a href='/b'>Markets</a>, <a href='/c'>Churches</a></span>"
    body = f"<article>{paragraphs(3)}<p>{tags}</p>{paragraphs(2, 'Later')}</article>"
    assert "Markets" not in parse_html(page(body)).text


def test_a_teaser_grid_beside_the_article_is_not_a_sibling_of_it() -> None:
    teasers = "".join(
        f"<div class='item'><h3><a href='/story/{n}'>Other story number {n}</a></h3>"
        f"<p>Summary of another story, {SENTENCE}</p></div>"
        for n in range(6)
    )
    body = f"<div class='wrap'><div class='story-text'>{paragraphs(3)}</div><div class='grid'>{teasers}</div></div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 3
    assert "Other story" not in text and "Summary of another story" not in text


def test_the_headline_is_in_the_markdown_not_in_the_text() -> None:
    result = parse_html(page(f"<article><h1>Flood Market</h1><h2>Why it moved</h2>{paragraphs(3)}</article>"))
    assert result.markdown.startswith("# Flood Market\n\n## Why it moved\n\nBody paragraph 0.")
    assert result.text.startswith("Why it moved\n\nBody paragraph 0.")


def test_a_second_copy_of_the_text_for_another_screen_is_written_once() -> None:
    copy = "".join(f"<p>Copy paragraph {n}. {SENTENCE}</p>" for n in range(4))
    credits = "<span>Photo: Agency</span>"
    body = (
        f"<article><section class='intro'><div class='text'>{copy}</div></section>"
        f"<div class='text'>{credits}{copy}{paragraphs(3)}</div></article>"
    )
    text = parse_html(page(body)).text
    assert text.count("Copy paragraph 2.") == 1 and text.count("Body paragraph") == 3


def test_a_refrain_or_a_single_repeated_paragraph_stays() -> None:
    chorus = f"<p>Refrain of the song, {SENTENCE}</p>"
    song = f"<article>{paragraphs(1, 'Verse')}{chorus}{paragraphs(1, 'Bridge')}{chorus}{chorus}</article>"
    assert parse_html(page(song)).text.count("Refrain of the song") == 3
    quote = f"<p>Quoted twice, {SENTENCE}</p>"
    body = f"<article><div>{paragraphs(2)}{quote}</div><h2>Later</h2><div>{paragraphs(2, 'Later')}{quote}</div></article>"
    assert parse_html(page(body)).text.count("Quoted twice") == 2


def test_an_aside_holding_most_of_the_page_is_its_content() -> None:
    slides = "".join(f"<li><h2>Slide {n}</h2><p>Slide text {n}. {SENTENCE}</p></li>" for n in range(6))
    body = (
        "<div class='top'><p>Log in</p><p>Join now!</p></div>"
        f"<div class='row'><aside class='rightColumn'><div class='slideshow'><ul>{slides}</ul></div></aside></div>"
    )
    assert parse_html(page(body)).text.count("Slide text") == 6
    sidebar = f"<aside><h3>About the author</h3><p>Short bio. {SENTENCE}</p></aside>"
    article = f"<article>{paragraphs(5)}</article>{sidebar}"
    assert "Short bio" not in parse_html(page(article)).text


def test_a_transcript_in_a_footer_that_holds_the_page_is_read() -> None:
    transcript = "".join(f"<p><strong>Joe:</strong> Line {n} of the transcript. {SENTENCE}</p>" for n in range(8))
    body = (
        "<div class='video'><h1>A vet and his dog</h1><p>Watch the video.</p></div>"
        f"<footer id='meta-data'><dl><dt>Transcript:</dt><dd><div>{transcript}</div></dd></dl></footer>"
    )
    assert parse_html(page(body)).text.count("of the transcript") == 8
    site_footer = f"<footer><p>About this site. {SENTENCE}</p></footer>"
    assert "About this site" not in parse_html(page(f"<article>{paragraphs(4)}</article>{site_footer}")).text


def test_a_short_page_is_shown_without_its_navigation() -> None:
    body = f"<div class='top'>{nav(20)}</div><div><p>Closed on Monday for the holiday; open again on Tuesday.</p></div>"
    text = parse_html(page(body)).text
    assert text == "Closed on Monday for the holiday; open again on Tuesday."
    only_links = parse_html(page(f"<div class='top'>{nav(20)}</div>")).text
    assert "Section 3" in only_links  # a page of links: the links are what there is


def test_a_long_comment_thread_is_never_taken_for_the_content() -> None:
    thread = "".join(f"<div class='c'><p>Reader {n} writes: {SENTENCE * 2}</p></div>" for n in range(12))
    for wrapper in ("<div id='comments'>{}</div>", "<div id='disqus_thread'>{}</div>", "<footer class='responses'>{}</footer>"):
        text = parse_html(page(f"<article>{paragraphs(2)}</article>" + wrapper.format(thread))).text
        assert text.count("Body paragraph") == 2 and "Reader 3" not in text, wrapper


def test_a_comment_section_named_in_one_word_inside_the_post_is_left_out() -> None:
    thread = "".join(f"<div class='c'><p>Reader {n} wrote: {SENTENCE}</p></div>" for n in range(5))
    for name in ("postcomments", "articleComments", "usercomments"):
        body = f"<div class='post-body'>{paragraphs(6)}<div class='{name}'><h3>Comments (5)</h3>{thread}</div></div>"
        text = parse_html(page(body)).text
        assert text.count("Body paragraph") == 6 and "Reader" not in text and "Comments (5)" not in text, name


def test_a_comment_section_named_in_one_word_that_begins_with_comments_is_left_out() -> None:
    # Longer than the post: it must be read as a discussion, not as a main container named like furniture
    thread = "".join(f"<div><p>{n} Reader {n}, 10/29/2012</p><p>{SENTENCE * 3}</p></div>" for n in range(10))
    for name in ("commentsblock", "commentsList", "commentsarea"):
        body = f"{nav()}<div id='content'><div class='entrybody'>{paragraphs(3)}</div><div class='{name}'>{thread}</div></div>"
        text = parse_html(page(body)).text
        assert text.count("Body paragraph") == 3 and "Reader" not in text, name
    intro = f"<div class='intro'><p>Intro. {SENTENCE * 5}</p></div>"
    for name in ("commentary", "commentsbody"):  # an opinion piece; a comment's own text
        body = f"{nav()}{intro}<div class='{name}'>{paragraphs(4)}</div>"
        assert parse_html(page(body)).text.count("Body paragraph") == 4, name


def test_a_block_in_the_marked_main_content_is_preferred_to_a_longer_notice_outside_it() -> None:
    # A video page: its description is short, and the site's old-browser notice in the page foot,
    # full of commas, outscores it
    description = ("<p>People from all over the world, from Idaho to Iceland, are coming to see the games, and a "
                   "couple from Idaho made a home movie about their trip. They are among the thousands making the "
                   "journey, by plane, train and car.</p>")
    notice = ("<div class='notice'><p>This page is best viewed in an up-to-date browser with style sheets, scripts "
              "and fonts enabled. While you can read it in your browser, you will not get the full experience, "
              "layout or media. Please upgrade your browser or enable style sheets, if you are able to.</p></div>")
    for marked in ("<main>{}</main>", "<div id='main-content'>{}</div>", "<div role='main'>{}</div>"):
        inner = marked.format(f"<h1>Coming to the games</h1><div class='player'><video src='/v.mp4'></video></div>{description}")
        text = parse_html(page(f"{nav()}<div class='wrap'>{inner}</div><div id='site-info'>{notice}</div>")).text
        assert "home movie" in text and "best viewed" not in text, marked
    # A best block that holds a small marked part (role=main on its lead only) keeps all of itself
    lead = "The lead, " * 40
    story = f"<div class='story'><div role='main'><p>{lead}{SENTENCE}</p></div>{paragraphs(5)}</div>"
    assert parse_html(page(f"{nav()}{story}")).text.count("Body paragraph") == 5
    # Unmarked (a <section>, as <main> unscored), the longer notice still wins: the rule needs the mark
    inner = f"<section><h1>Coming to the games</h1><div class='player'><video src='/v.mp4'></video></div>{description}</section>"
    assert "best viewed" in parse_html(page(f"{nav()}<div class='wrap'>{inner}</div><div id='site-info'>{notice}</div>")).text


def test_sections_whose_ids_are_made_from_their_headings_are_not_read_as_furniture() -> None:
    # A docs generator gives every section the slug of its heading: "sharing-..." and "related-..."
    # there name the subject, not a share bar or related stories
    def section(title: str, label: str) -> str:
        slug = title.lower().replace(" ", "-").replace(":", "")
        return f"<div class='section' id='{slug}'><h2>{title}<a class='headerlink' href='#{slug}'>¶</a></h2>{paragraphs(2, label)}</div>"

    doc = "".join(
        section(title, label)
        for title, label in (("Setting up", "Setup"), ("Sharing with a single developer", "Sharing"),
                             ("Related work: other tools", "Related"), ("Comments", "Remarks"))
    )
    text = parse_html(page(f"{nav()}<div class='document'><h1>Evolve</h1>{doc}</div>")).text
    for label in ("Setup", "Sharing", "Related", "Remarks"):
        assert text.count(f"{label} paragraph") == 2, label
    # Named so by the section around it only, and with a generator's duplicate suffix
    inner = (f"<div class='section' id='sharing-with-a-single-developer-1'><h2>Sharing with a single developer</h2>"
             f"{paragraphs(2, 'Inner')}</div>")
    doc = f"<div class='section' id='evolve-shared-history'><h1>Evolve: shared history</h1>{paragraphs(2)}{inner}</div>"
    assert parse_html(page(f"{nav()}{doc}")).text.count("Inner paragraph") == 2
    # Two furniture sections named after their headings do not vouch for each other
    thread = "".join(f"<div class='c'><p>Reader {n} writes: {SENTENCE * 2}</p></div>" for n in range(6))
    related = "".join(f"<p><a href='/s/{n}'>Another story number {n}</a> {SENTENCE}</p>" for n in range(2))
    body = (f"<div id='content'><h2>Flood Market</h2>{paragraphs(2)}<div id='comments'><h2>Comments</h2>{thread}</div>"
            f"<div id='related'><h2>Related</h2>{related}</div></div>")
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 2 and "Reader" not in text
    # A lone comment section named after its heading, in the post's box, stays out
    thread = "".join(f"<div class='c'><p>Reader {n} writes: {SENTENCE * 2}</p></div>" for n in range(6))
    body = f"<div id='content'><h2>Flood Market</h2>{paragraphs(2)}<div id='comments'><h2>Comments</h2>{thread}</div></div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 2 and "Reader" not in text


def test_plain_blocks_built_alike_by_a_template_are_read_together() -> None:
    # An old newspaper page: each story in <div><center><table>, no class anywhere; the best story
    # alone was the content, the page's other stories left out
    def story(n: int, count: int) -> str:
        return f"<div><center><table><tr><td><b>Story {n}</b>{paragraphs(count, f'Story {n}')}</td></tr></table></center></div>"

    body = f"<div><center><table><tr><td>Thursday, January 3</td></tr></table></center></div>{story(1, 6)}{story(2, 3)}{story(3, 4)}"
    text = parse_html(page(body)).text
    assert all(text.count(f"Story {n} paragraph") == count for n, count in ((1, 6), (2, 3), (3, 4)))


def test_a_post_in_a_layout_cell_full_of_links_is_not_dropped_with_them() -> None:
    # An old blog host: one table cell holds the site's long link lists and, in a <font>, the post;
    # two thirds of the cell's text is links, yet 2,000 characters outside them are a post
    links = "".join(f"<a href='/job/{n}'>Jobs and careers listing number {n}</a><br>" for n in range(60))
    plain = "The river rose again this spring and the village moved its market up to the hill by the old church. "
    post = "<font>" + "".join(f"I had started working there in October {n}. {plain}<br><br>" for n in range(14)) + "</font>"
    notice = "<p>Site news: the archive moves to a new server next week.</p>"
    body = f"{notice}<table><tr><td><div>{links}</div><b>Make Money with a Job Blog</b><br>{post}<div>{links}</div></td></tr></table>"
    text = parse_html(page(body)).text
    assert text.count("I had started working") == 14 and "listing number" not in text


def test_prose_set_in_heading_type_is_written_as_paragraphs() -> None:
    # An old page sets its paragraphs in <h4> for the type size: one after another, each "heading"
    # had nothing but another heading of its rank under it and was dropped as an empty section
    prose = "".join(f"<h4>Step {n}. {SENTENCE * 3}</h4><p>" for n in range(4))
    result = parse_html(page(f"<h1>Care of trees</h1><h3>The new stand</h3><i>(the inventor)</i><p>{prose}"))
    assert result.text.count("Step") == 4
    assert "\n\nStep 0. The river" in result.markdown and "# Step" not in result.markdown
    assert "### The new stand" in result.markdown  # a short heading stays one


def test_a_section_whose_first_heading_was_dropped_does_not_break_the_sibling_check() -> None:
    sections = "".join(
        f"<section class='part'><h2 class='sr-only'>Hidden {n}</h2><p>Part {n}. {SENTENCE}</p></section>" for n in range(2)
    )
    body = f"<div class='doc'>{sections}<section class='part'><h2>Main</h2>{paragraphs(5)}</section></div>"
    assert parse_html(page(body)).text.count("Body paragraph") == 5  # and no KeyError


def test_headings_that_link_to_their_own_anchors_are_not_teasers() -> None:
    def section(n: int, count: int) -> str:
        return (f"<div class='section'><h3 id='a{n}'><a href='#a{n}'>Part {n} heading</a></h3>{paragraphs(count, f'S{n}')}"
                f"<h3 id='b{n}'><a href='#b{n}'>Part {n} more</a></h3><p>More of part {n}. {SENTENCE}</p></div>")

    text = parse_html(page(f"<div class='body'>{section(1, 4)}{section(2, 2)}</div>")).text
    assert text.count("S1 paragraph") == 4 and text.count("S2 paragraph") == 2


def test_a_long_related_block_is_never_read_as_the_content() -> None:
    cards = "".join(f"<div class='card'><h3><a href='/s/{n}'>Story {n}</a></h3><p>Summary {n}. {SENTENCE}</p></div>"
                    for n in range(30))
    body = f"<article><p>Brief. {SENTENCE}</p><p>Second. {SENTENCE}</p></article><section class='related'>{cards}</section>"
    text = parse_html(page(body)).text
    assert "Brief." in text and "Summary 3." not in text


def test_an_aside_stays_out_when_class_rules_are_set_aside() -> None:
    sidebar = f"<aside><p>Sidebar note. {SENTENCE}</p></aside>"
    body = f"<div class='comments-wrapper'>{paragraphs(8)}</div><p>Short post.</p>{sidebar}"
    assert "Sidebar note" not in parse_html(page(body)).text


def test_a_page_whose_only_text_is_its_headline_keeps_it_as_text() -> None:
    result = parse_html(page("<main><h1>Back soon: down for maintenance</h1></main>", title="Example"))
    assert result.text == "Back soon: down for maintenance"
    assert result.markdown == "# Back soon: down for maintenance"


def test_an_element_left_out_for_its_tag_or_role_that_wraps_the_page_is_read_as_a_container() -> None:
    # Parsers make an unclosed <header>, <noscript> or <nav> hold the rest of the page; a page-wide
    # ASP.NET <form> or a role=complementary wrapper holds it by design. Before, nothing was read.
    lines = "<br>".join(f"Body line {n}. {SENTENCE}" for n in range(6))
    wrappers = {
        "unclosed header": f"<header><div class='logo'>Flood News</div><div>{paragraphs(5)}</div>",
        "unclosed header with the site's links": f"<header>{nav(150)}<div>{paragraphs(5)}</div>{nav(150)}",
        "unclosed noscript": f"<noscript><img src='/pixel.gif'><div>{paragraphs(5)}</div>",
        "unclosed nav": f"<nav><a href='/'>Home</a><div>{paragraphs(5)}</div>",
        "page-wide form": (
            "<form id='aspnetForm' action='/page'><div class='page'><div id='top'>Flood News</div>"
            f"<div id='body'><div>{lines}</div></div><div id='bottom'>Imprint</div></div></form>"
        ),
        "complementary role": f"<div role='complementary'><div>{paragraphs(5)}</div></div>",
    }
    for shape, body in wrappers.items():
        text = parse_html(page(body)).text
        assert text.count("Body paragraph") + text.count("Body line") in (5, 6), shape


def test_a_form_holding_a_table_layout_article_beside_a_box_of_headlines_is_read() -> None:
    # An old table layout: the article is a table row per paragraph (no <p> for the form to be read
    # by) inside the page's <form>, beside a box of linked headlines three to four times shorter.
    # The form was read only past four times what was kept outside it, links counted: the headlines
    # were the text.
    headlines = "".join(f"<tr><td><a href='/n{n}'>Markets close lower on day {n} as the banks fall and traders "
                        "wait for the rate decision</a></td></tr>" for n in range(7))
    rows = "".join(f"<tr><td>Body paragraph {n}. {SENTENCE}</td></tr><tr><td height=5>&nbsp;</td></tr>"
                   for n in range(14))
    body = (f"<table width=780><tr><td valign=top><table>{headlines}</table></td><td valign=top>"
            f"<form name='headfrm' method='post'><table><tr><td><table>{rows}</table></td></tr></table></form>"
            "</td></tr></table>")
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 14
    assert "Markets close" not in text


def test_a_short_list_that_wins_on_its_class_name_gives_way_to_the_article() -> None:
    # A landing page's box of truncated headlines, named like content ("tabContent latestBlog"),
    # outscored an article in an old table layout five times its length (one paragraph of lines).
    lead = "The council met on Friday to hear the plan for the new bridge over the river "
    latest = "".join(f"<p>Market news, part {n}, traders sa...</p>" for n in range(10))
    lines = "<br><br>".join(f"Body line {n}. {lead}and the road to the station" for n in range(16))
    body = (f"<div class='tabContent latestBlog'>{latest}</div><table><tr><td><table><tr><td>"
            f"<table class='story'><tr><td>{lines}</td></tr></table></td></tr></table></td></tr></table>")
    text = parse_html(page(body)).text
    assert text.count("Body line") == 16
    assert "Market news" not in text


def test_a_real_sidebar_stays_out_when_the_article_beside_it_is_short() -> None:
    sidebar = "".join(f"<p>Sidebar note {n}. {SENTENCE}</p>" for n in range(6))
    body = f"<article>{paragraphs(1)}</article><div role='complementary'>{sidebar}</div>"
    text = parse_html(page(body)).text
    assert "Body paragraph 0" in text
    assert "Sidebar note" not in text


def test_the_lead_paragraph_styled_apart_from_the_body_is_kept() -> None:
    lead = "The village market moves to the hill for the summer, after the third flood in five years."
    body = (
        f"{nav()}<article><header><h1>Flood Market</h1><p class='article-lead'>{lead}</p>"
        "<div class='byline'>By Ana Lima, 12 March</div></header>"
        f"<div class='article-body'>{paragraphs(6)}</div></article>"
    )
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 6
    assert text.index(lead) < text.index("Body paragraph 0")
    assert "Ana Lima" not in text and "Section 3" not in text


def test_a_short_lead_right_under_the_headline_is_kept() -> None:
    """A standfirst of one short sentence (under the 80 characters a lead elsewhere needs) is known
    by its place, right under the <h1>: it was dropped with the header (issue 56, "block too
    narrow"). In <header> or in a plain box beside the body; with a byline after it or not."""
    lead = "The market moves uphill for the summer, the council decided."
    for header in (f"<header><h1>Flood Market</h1><p class='lead'>{lead}</p></header>",
                   f"<div class='intro'><h1>Flood Market</h1><div class='x-3'>{lead}</div>"
                   "<div class='byline'>By Ana Lima, 12 March</div></div>"):
        text = parse_html(page(f"{nav()}<article>{header}<div class='article-body'>{paragraphs(6)}</div></article>")).text
        assert text.startswith(lead + "\n\n") and text.count("Body paragraph") == 6, text[:200]
        assert "Ana Lima" not in text


def test_a_lead_named_teaser_right_under_the_headline_is_kept() -> None:
    """German sites name the lead "article-teaser" ("Vorspann"); a teaser elsewhere is another
    story's card and stays out."""
    lead = ("Der Markt zieht für den Sommer auf den Hügel, nach dem dritten Hochwasser in fünf Jahren, "
            "beschloss der Gemeinderat.")
    other = ("<div class='teaser'><a href='/bruecke'><h3>Brücke gesperrt</h3><p>Die Brücke bleibt sechs Wochen "
             "lang gesperrt, teilte die Stadt mit.</p></a></div>")
    body = (f"{nav()}<div class='intro'><h1>Hochwassermarkt</h1><div class='article-teaser'>{lead}</div></div>"
            f"<main>{paragraphs(6)}{other}</main>")
    text = parse_html(page(body)).text
    assert text.startswith(lead + "\n\n") and text.count("Body paragraph") == 6, text[:200]
    assert "Brücke" not in text


def test_a_byline_date_or_fragment_under_the_headline_is_not_a_short_lead() -> None:
    for under in ("By Ana Lima and Tom Berg, 12 March 2024", "Updated 12 March 2024, 09:14 CET",
                  "Market, floods and the hill above the river", "<a href='/m'>The market moves uphill, the council decided.</a>"):
        body = (f"{nav()}<article><header><h1>Flood Market</h1><p>{under}</p></header>"
                f"<div class='article-body'>{paragraphs(6)}</div></article>")
        text = parse_html(page(body)).text
        assert text.startswith("Body paragraph 0"), (under, text[:120])


def test_a_site_description_above_posts_that_open_with_their_own_headings_is_not_a_lead() -> None:
    about = "A diary of the river, the market and the church on the hill, written since the flood of 2010."
    posts = "".join(f"<div class='post'><h3>Post {n}</h3>{paragraphs(2, f'Post {n}')}</div>" for n in range(3))
    body = f"<div class='head'><h1>River Diary</h1><p>{about}</p></div><div class='posts'>{posts}</div>"
    text = parse_html(page(body)).text
    assert "Post 2 paragraph 1" in text
    assert about not in text


def test_an_article_the_page_marks_as_its_body_is_read_inside_a_wrapper_named_like_furniture() -> None:
    for marked in ("<div itemprop='articleBody'>{}</div>", "<main>{}</main>", "<div role='main'>{}</div>",
                   "<div id='main-content'>{}</div>", "<div id='mainContent'>{}</div>"):
        body = (
            f"{nav()}<div class='box'><p>Gartner's report on the market, and why it matters to you. {SENTENCE}</p></div>"
            f"<div class='share_wrapper'><div class='article'>{marked.format(paragraphs(6))}</div></div>"
        )
        assert parse_html(page(body)).text.count("Body paragraph") == 6, marked


def test_the_main_content_id_is_read_inside_a_layout_table_named_like_navigation() -> None:
    # An old press-release page: the skip link's target, <td id="main-content">, sits in a layout
    # table with the id "secondary-navigation"; only a short title box outside it was read.
    body = (
        "<table id='main-title'><tr><td><p>Press release from the Friends of the River, spring 1997 edition</p>"
        "<p>Issued by the press office in London for the papers of the morning, with the river's news</p>"
        "</td></tr></table>"
        f"<table id='secondary-navigation'><tr><td>{nav(4)}</td><td id='main-content'>{paragraphs(6)}</td></tr></table>"
    )
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 6 and "Section 2" not in text


def test_a_post_named_like_furniture_is_read_even_when_its_larger_comment_section_is_too() -> None:
    thread = "".join(f"<div class='c'><p>Reader {n} wrote: {SENTENCE * 2}</p></div>" for n in range(20))
    body = (
        f"<div id='main'><div class='post-meta'>{paragraphs(6)}</div>"
        f"<div id='comment_tpl'>{thread}</div><div id='sidebar'>{paragraphs(2, 'Side')}</div></div>"
    )
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 6 and "Reader" not in text and "Side paragraph" not in text


def test_a_wrapper_named_like_an_ad_that_holds_nearly_the_whole_page_is_read() -> None:
    notice = f"<div class='notice'><p>Follow us for updates on the flood and the market. {SENTENCE}</p></div>"
    body = f"{notice}<div class='ad-wallpaper'><div id='doc'><div class='post-content'>{paragraphs(16)}</div></div></div>"
    assert parse_html(page(body)).text.count("Body paragraph") == 16
    comments = f"{notice}<div id='comments'>{paragraphs(12, 'Reader')}</div>"  # never a wrapper
    assert "Reader paragraph" not in parse_html(page(comments)).text


def test_a_short_post_is_not_outweighed_by_its_long_comment_thread() -> None:
    post = (
        "<div id='post-7' class='hentry post author-admin category-uncategorized'><h2>At the market</h2>"
        "<div class='entry-content'><p>Inspired by the spring collection: the shirt is vintage, the bag and "
        "the shoes are new, and the hat came from the market on the hill.</p></div></div>"
    )
    comments = "".join(
        f"<li class='comment'><a href='https://reader{n}.example/'>Reader {n}</a> <a href='#c{n}'>2 May</a>"
        f"<p>Such a lovely look, and what a place for it! {SENTENCE}</p></li>"
        for n in range(40)
    )
    body = f"<div id='content'>{post}<div id='comments'><h3>40 Comments</h3><ol>{comments}</ol></div></div>"
    text = parse_html(page(body)).text
    assert "the shirt is vintage" in text and "Reader 3" not in text and "lovely look" not in text


def test_a_page_the_parser_left_in_head_is_read() -> None:
    # An unknown element in <head> ends it for browsers; libxml2 keeps the rest of the page there.
    html = (
        "<!DOCTYPE html><html><head><title>Flood Market</title><mbox><table><tr><td>"
        f"{paragraphs(4)}</td></tr></table></html>"
    ).encode()
    assert parse_html(html).text.count("Body paragraph") == 4


def test_a_container_named_like_furniture_inside_another_is_read_too() -> None:
    article = f"<div id='content_byline'>By Ana Lima<div id='content_article'>{paragraphs(14)}</div>"  # unclosed
    body = (
        f"<div id='header_bc'>{nav()}<p>Find: Society, People, The Market.</p></div>"
        f"<div id='content_area' class='content_inner_nav'><h1>Flood Market</h1>"
        f"<div class='box'><p>About the market. {SENTENCE * 4}</p></div>{article}</div>"
    )
    assert parse_html(page(body)).text.count("Body paragraph") == 14


def test_a_page_builders_text_widgets_are_content_and_sidebar_widgets_are_not() -> None:
    def text_widget(n: int) -> str:
        return (
            f"<div class='elementor-element elementor-widget elementor-widget-text-editor'>"
            f"<div class='elementor-widget-container'><h2>Part {n}</h2>{paragraphs(2, f'Part {n}')}</div></div>"
        )

    recent = "".join(f"<li><a href='/p{n}'>Older post {n}</a></li>" for n in range(6))
    sidebar = (
        f"<div class='widget widget_recent_entries'><ul>{recent}</ul></div>"
        f"<div class='widget widget_text'><p>About me. {SENTENCE}</p><p>Contact. {SENTENCE}</p></div>"
    )
    body = f"<div class='elementor-section'>{''.join(text_widget(n) for n in range(4))}</div><div class='col'>{sidebar}</div>"
    text = parse_html(page(body)).text
    assert all(text.count(f"Part {n} paragraph") == 2 for n in range(4))
    assert "Older post" not in text and "About me" not in text


def test_a_region_named_for_its_place_above_the_footer_is_not_the_footer() -> None:
    intro = f"<div class='intro'><p>Intro. {SENTENCE * 4}</p></div>"
    body = f"{nav()}{intro}<div class='above-footer'><div class='entry'>{paragraphs(6)}</div></div><div class='footer'>Imprint</div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 6 and "Imprint" not in text


def test_a_grid_of_teasers_inside_the_article_is_left_out() -> None:
    cards = "".join(f"<div class='card'><h3><a href='/s/{n}'>Story {n}</a></h3><p>Summary {n}. {SENTENCE}</p></div>" for n in range(3))
    body = f"<article><h1>Flood Market</h1>{paragraphs(4)}<div class='box'>{cards}</div>{paragraphs(3, 'Later')}</article>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 4 and text.count("Later paragraph") == 3
    assert "Summary" not in text and "Story 1" not in text


def test_teasers_that_are_the_page_and_sections_that_link_away_stay() -> None:
    cards = "".join(f"<div class='card'><h3><a href='/s/{n}'>Story {n}</a></h3><p>Summary {n}. {SENTENCE}</p></div>" for n in range(8))
    index = parse_html(page(f"<main><h1>All stories</h1><div class='grid'>{cards}</div></main>")).text
    assert index.count("Summary") == 8  # an index page: the teasers are its content
    sections = "".join(f"<section><h2><a href='/api/{n}'>Module {n}</a></h2>{paragraphs(3, f'M{n}')}</section>" for n in range(3))
    docs = parse_html(page(f"<main><h1>API</h1><div class='doc'>{sections}</div></main>")).text
    assert all(docs.count(f"M{n} paragraph") == 3 for n in range(3))


def test_of_stacked_articles_the_first_is_the_pages_own() -> None:
    first = f"<article class='story'><h1>Flood Market</h1>{paragraphs(5)}</article>"
    next_story = f"<article class='story next'><h2>Bridge Repairs</h2>{paragraphs(9, 'Next')}</article>"
    text = parse_html(page(f"{nav()}<main>{first}{next_story}</main>")).text
    assert text.count("Body paragraph") == 5 and "Next paragraph" not in text
    posts = "".join(f"<article class='post'><h2>Post {n}</h2>{paragraphs(3, f'Post {n}')}</article>" for n in range(4))
    blog = parse_html(page(f"<main>{posts}</main>")).text  # a blog's page of posts stays whole
    assert all(blog.count(f"Post {n} paragraph") == 3 for n in range(4))


def test_a_dialog_or_a_closed_noscript_notice_is_not_read_as_the_page_of_an_app_shell() -> None:
    privacy = "We and our partners store and access information on a device, such as cookies. " * 6
    dialog = f"<div id='app'></div><div role='dialog' class='consent'><p>{privacy}</p></div><script src='/app.js'></script>"
    notice = "This site needs JavaScript. Please enable it in your browser and reload the page, or call us. " * 3
    noscript = f"<noscript><div class='nojs'><p>{notice}</p></div></noscript><div id='root'></div><script src='/a.js'></script>"
    for body in (dialog, noscript):
        result = parse_html(page(body))
        assert result.text == "" and result.script_shell


def test_a_discussion_page_of_a_title_and_a_thread_is_read_as_its_thread() -> None:
    thread = "".join(f"<div class='c'><p>Reader {n}: {SENTENCE}</p></div>" for n in range(10))
    body = f"<h1>Pump after the flood</h1><p class='meta'>120 points by alice</p><div id='comments'>{thread}</div>"
    assert parse_html(page(body)).text.count("Reader") == 10


def test_furniture_placed_below_the_post_is_still_furniture() -> None:
    boxes = "<div class='below-post-share'>Share this story with friends</div><div class='below-content-newsletter'>Sign up now</div>"
    text = parse_html(page(f"<article>{paragraphs(4)}{boxes}</article>")).text
    assert text.count("Body paragraph") == 4 and "Share this" not in text and "Sign up" not in text


def test_answers_in_articles_are_not_stacked_stories() -> None:
    question = f"<div class='question'><h1>Pump keeps running</h1><p>My pump keeps running. {SENTENCE}</p></div>"
    answers = f"<div id='answers'><article>{paragraphs(2, 'Answer 1')}</article><article>{paragraphs(5, 'Answer 2')}</article></div>"
    text = parse_html(page(f"<main>{question}{answers}</main>")).text
    assert text.count("Answer 1 paragraph") == 2 and text.count("Answer 2 paragraph") == 5


def test_a_landing_page_of_linked_sections_is_its_content() -> None:
    def section(name: str, items: list[str]) -> str:
        return f"<section><h2>{name}</h2>" + "".join(
            f"<h3><a href='/docs/{item}'>{item}</a></h3><p>How to {item} the pump controller.</p>" for item in items
        ) + "</section>"

    body = (f"<main><h1>Pump docs</h1><p>This guide explains the pump controller. {SENTENCE}</p>"
            f"{section('Start', ['install', 'configure'])}{section('Run', ['schedule', 'monitor', 'log'])}</main>")
    text = parse_html(page(body)).text
    assert all(f"How to {item}" in text for item in ("install", "configure", "schedule", "monitor", "log"))


def test_the_lead_search_ends_at_the_headline() -> None:
    notice = ("<div class='announcement'><p>Our shop is closed on Monday for the holiday. Orders placed after Friday "
              "noon ship on Tuesday.</p></div>")
    post = f"<div class='post'><div class='entry-header'><h1>Flood Market</h1><span>12 May</span></div><div class='entry-content'>{paragraphs(6)}</div></div>"
    text = parse_html(page(f"<div class='site'>{notice}<div class='site-content'>{post}</div></div>")).text
    assert text.count("Body paragraph") == 6 and "shop is closed" not in text


def test_a_gallery_slides_text_in_a_block_named_caption_is_content_and_a_photo_caption_is_not() -> None:
    slide = f"<div class='slide'><img src='/1.jpg'><div class='caption' id='slide-content'>{paragraphs(3)}</div></div>"
    photo = "<figure class='photo'><img src='/2.jpg'><div class='caption'>Boats on the square at dawn, seen from the bridge.</div></figure>"
    intro = f"<p>Intro. {SENTENCE * 4}</p>"
    text = parse_html(page(f"{nav()}<article><h1>Flood Market</h1>{intro}{slide}{photo}</article>")).text
    assert text.count("Body paragraph") == 3 and "Boats on the square" not in text


def test_a_post_held_in_broken_caption_markup_is_content_and_a_short_attribution_is_not() -> None:
    # A theme's caption shortcode left open: the caption's attribution span holds the whole post,
    # as loose lines, and the post follows again as paragraphs
    loose = "".join(f"Part {n}. {SENTENCE * 2}\n\n" for n in range(4))
    caption = (
        "<div class='feat-image-with-caption'><p class='wp-caption-text'>Our reporters on the market. "
        f"<span class='wp-caption-text attribution'>({loose})</span></p></div>"
    )
    credit = "<p><img src='/b.jpg'><span class='photo-attribution'>(Ana Lima / Example Agency)</span></p>"
    body = f"{nav()}<div class='entry-content'>{caption}{paragraphs(4)}{credit}</div>"
    text = parse_html(page(body)).text
    assert text.count("Part 3.") == 1 and text.count("Body paragraph") == 4
    assert "Ana Lima" not in text
    # Long only in links or in a script, a credits block is still one
    linked = "".join(f"Photo {n}: <a href='/p/{n}'>Photographer number {n}</a>, Example Agency. " for n in range(16))
    scripted = f"<script>var credits = '{'x' * 900}';</script>Photo: Ana Lima"
    for inner in (linked, scripted):
        body = f"{nav()}<div class='entry-content'>{paragraphs(4)}<div class='photo-credits'>{inner}</div></div>"
        text = parse_html(page(body)).text
        assert text.count("Body paragraph") == 4 and "Photographer" not in text and "Ana Lima" not in text


def test_a_thread_of_comment_boxes_inside_the_posts_box_is_left_out() -> None:
    # An old blog theme: post and comments as siblings in one box, each comment a "comments-body"
    # (a name kept elsewhere, as a page's text may be one comment)
    comments = "".join(
        f"<div class='comments-body'><p>Reader {n} writes: {SENTENCE * 3}</p><p>Posted by reader {n}</p></div>"
        for n in range(12)
    )
    post = f"<div class='blog'><div class='blogbody'><h2>Flood Market</h2>{paragraphs(3)}</div><div class='comments-head'>Comments</div>{comments}</div>"
    text = parse_html(page(f"{nav()}{post}")).text
    assert text.count("Body paragraph") == 3 and "Reader" not in text
    # A discussion page with no post of its own beside the thread: the thread is the text, also
    # when its opening line is longer than a title (but under the 200 characters of a post)
    thread = f"<div class='blog'><h2>Flood Market: your views</h2>{comments}</div>"
    assert parse_html(page(f"{nav()}{thread}")).text.count("Reader") == 12
    opening = "<p>" + "Tell us what the move uphill means for your stall, your street and your town. " * 2 + "</p>"
    thread = f"<div class='blog'><h2>Your views</h2>{opening}{comments}</div>"
    assert parse_html(page(f"{nav()}{thread}")).text.count("Reader") == 12
    # Only comments count: a paper's "discussion" sections and posts marked "has-comments" stay
    sections = "".join(f"<section id='{name}'><h2>{name}</h2>{paragraphs(3, name)}</section>"
                       for name in ("results-and-discussion", "general-discussion"))
    text = parse_html(page(f"<article><h1>Study</h1><p>Intro. {SENTENCE * 2}</p>{sections}</article>")).text
    assert text.count("discussion paragraph") == 6
    posts = "".join(f"<div class='post has-comments'>{paragraphs(2, f'Post {n}')}</div>" for n in range(3))
    text = parse_html(page(f"<div class='blog'><p>About this blog. {SENTENCE * 2}</p>{posts}</div>")).text
    assert all(text.count(f"Post {n} paragraph") == 2 for n in range(3))
    # A press release pasted from a word processor names paragraphs "MsoCommentText": not comments
    styled = "".join(f"<p class='MsoCommentText'>Note {n}. {SENTENCE}</p>" for n in range(3))
    assert parse_html(page(f"<div class='release'>{paragraphs(3)}{styled}</div>")).text.count("Note") == 3


def test_a_posts_tag_and_category_classes_do_not_make_it_furniture() -> None:
    intro = f"<div class='intro'><p>About this blog. {SENTENCE * 4}</p></div>"
    post = f"<div class='post-7 post type-post hentry tag-tax-credits category-social author-admin'>{paragraphs(5)}</div>"
    text = parse_html(page(f"{nav()}<div id='content'>{intro}{post}</div>")).text
    assert text.count("Body paragraph") == 5
    assert "Share" not in parse_html(page(f"<article>{paragraphs(3)}<div class='tag-share'>Share</div></article>")).text


def test_a_list_without_items_that_indents_text_keeps_its_text() -> None:
    # Old pages indent a whole transcript with <ul> (no <li>): its loose text and paragraphs are the page.
    loose = "".join(f"Speaker {n}: {SENTENCE}<br>" for n in range(8))
    body = f"<div id='text'><ul>{loose}<p>Closing remarks. {SENTENCE}</p></ul></div>"
    text = parse_html(page(body)).text
    assert text.count("Speaker") == 8 and "Closing remarks" in text


ABOUT = ("<p>Our clinic opened in 1998 in the old mill by the river. We treat sports injuries, back pain and "
         "long-term conditions, and we work with the hospital's physiotherapy team on recovery after surgery.</p>"
         "<p>Appointments are available on weekdays from eight to six, and on Saturday mornings.</p>")
CARDS = {
    "testimonials": "".join(
        f"<div class='testimonial'><p>“The team was wonderful, friendly and professional, and I felt better after "
        f"only three visits. I recommend them to everyone, truly the best clinic in town!” — Patient {n}</p></div>"
        for n in range(5)),
    "reviews": "".join(
        f"<article class='review'><h3>Review {n}</h3><p>Great value, quick, clean, kind staff, parking nearby, "
        f"easy booking, would come again, five stars from me and my family, thank you!</p></article>"
        for n in range(6)),
    "faq": "".join(
        f"<div class='faq-item'><h3>Question {n}: how long does a session take, and what do I bring?</h3>"
        f"<p>About forty-five minutes; bring comfortable clothes, your referral, if any, and your medicines.</p></div>"
        for n in range(6)),
}


def test_a_short_text_the_page_marks_as_main_wins_over_cards_outside_it() -> None:
    """A practice's short "about us" in <main> beside its patients' quotes, reviews or FAQ entries:
    each card repeats the commas the score counts, so together they outscored the text, and the
    page read as its testimonials. The text the page marks as main is the page; the cards are not."""
    for name, cards in CARDS.items():
        body = f"{nav()}<main><h1>About us</h1>{ABOUT}</main><section class='{name}'><h2>More</h2>{cards}</section>"
        text = parse_html(page(body)).text
        assert "Our clinic opened in 1998" in text and "Saturday mornings" in text, name
        assert "Patient" not in text and "Review 1" not in text and "Question 1" not in text, name


def test_cards_inside_the_marked_main_content_stay_with_it() -> None:
    body = f"{nav()}<main><h1>About us</h1>{ABOUT}<section class='t'>{CARDS['testimonials']}</section></main>"
    text = parse_html(page(body)).text
    assert "Our clinic opened in 1998" in text and "Patient 4" in text


STANDFIRST = ("The council has approved a new bridge across the river, the first in forty years, after a decade "
              "of debate about its cost and its place.")
REPORT = "".join(f"<p>Paragraph {n} of the report: the bridge will carry cyclists and pedestrians, and buses at peak "
                 f"hours, according to the plans published on Monday by the council.</p>" for n in range(6))


def test_a_standfirst_in_the_articles_own_header_is_kept() -> None:
    """An article's <header> (its <h1> and standfirst) in a plain <div>, not a sectioning element,
    went with the site's headers: the lead was lost."""
    body = (f"<header class='site'>{nav(6)}</header><div class='article'><header class='article-header'>"
            f"<h1>A new bridge</h1><p class='standfirst'>{STANDFIRST}</p></header>"
            f"<div class='article-body'>{REPORT}</div></div>")
    text = parse_html(page(body)).text
    assert STANDFIRST in text and "Paragraph 5 of the report" in text
    assert text.index(STANDFIRST) < text.index("Paragraph 0 of the report")


def test_a_site_header_with_a_headline_and_its_navigation_stays_out() -> None:
    tagline = "Independent news from the river towns since 1887, written by the people who live there and read it."
    for header in (f"<header><h1>The River Times</h1><p>{tagline}</p><nav>{nav(6)}</nav></header>",  # navigation
                   "<header><h1>The River Times</h1><p>Since 1887</p></header>"):  # no prose
        body = f"{header}<div class='article'><h2>A new bridge</h2>{REPORT}</div>"
        text = parse_html(page(body)).text
        assert "Paragraph 5 of the report" in text and "The River Times" not in text and tagline not in text


def test_a_page_of_thousands_of_unlike_blocks_beside_a_marked_main_is_read_in_linear_work(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Whether the best block outside <main> is a set of cards was asked of each of its children,
    each comparing itself with all its siblings: 11.6 s for 3,000 blocks. Counted, not timed: the
    sibling comparisons stay a few per block."""
    from evidencekit.server.evidence.parse import content

    compared = 0
    alike = content._alike

    def counted(node, sibling):  # type: ignore[no-untyped-def]
        nonlocal compared
        compared += 1
        return alike(node, sibling)

    monkeypatch.setattr(content, "_alike", counted)
    blocks = "".join(f"<div class='b{n}'><p>Block {n}, with words, commas, and more words to read.</p></div>"
                     for n in range(2000))
    text = parse_html(page(f"<main>{ABOUT}</main><section>{blocks}</section>")).text
    assert "Block 1999" in text  # (2,000 unlike blocks are no cards: the longer text wins, as before)
    assert compared < 20 * 2000, compared


HERO = ("Syncly is a note app for teams that work offline, on trains, planes and in the field, and want "
        "their notes in step.")
FEATURES = "".join(f"<section class='feature'><h2>Feature {n}</h2>{paragraphs(1, f'Feature {n}')}</section>"
                   for n in range(3))


def test_a_hero_under_the_headline_is_kept_over_feature_sections() -> None:
    """A landing page's hero, the page's headline and a paragraph in its <header>, stands over
    feature sections that open with their own headings: the paragraph is the page's lead."""
    for hero in (f"<header class='hero'><h1>Syncly keeps your notes everywhere</h1><p>{HERO}</p>"
                 "<a href='/signup'>Start free</a></header>",
                 f"<header><div class='hero-inner'><h1>Syncly keeps your notes everywhere</h1><p>{HERO}</p></div></header>"):
        body = f"{nav()}{hero}<main>{FEATURES}</main><footer><p>© Syncly</p></footer>"
        text = parse_html(page(body, "Syncly")).text
        assert text.startswith(HERO), (hero, text[:200])
        assert text.count("Feature 2 paragraph 0") == 1


def test_a_description_over_posts_or_a_sign_up_is_not_a_hero() -> None:
    """What stands under a site's name over posts (their titles link to them, or they are
    <article>s) or over a newsletter's sign-up form is the site's, not the page's lead."""
    about = "A diary of the river, the market and the church on the hill, written since the flood of 2010."
    linked = "".join(f"<div class='x-{n}'><h2><a href='/p/{n}'>Post {n}</a></h2>{paragraphs(2, f'Post {n}')}</div>"
                     for n in range(3))
    articles = "".join(f"<article><h2>Post {n}</h2>{paragraphs(2, f'Post {n}')}</article>" for n in range(3))
    for posts in (linked, articles):
        body = f"<header><h1>River Diary</h1><p>{about}</p></header><main>{posts}</main>"
        text = parse_html(page(body)).text
        assert "Post 2 paragraph 1" in text and about not in text, posts[:60]
    sign_up = ("<div class='side'><h1>River Diary</h1><p>Subscribe to the weekly letter about the river, the market and "
               "the town.</p><form><input type='email' name='email'><button>Join</button></form></div>")
    features = "".join(f"<div class='s-{n}'><h2>Part {n}</h2>{paragraphs(2, f'Part {n}')}</div>" for n in range(3))
    text = parse_html(page(f"{sign_up}<div class='parts'>{features}</div>")).text
    assert "Part 2 paragraph 1" in text and "Subscribe to the weekly letter" not in text
