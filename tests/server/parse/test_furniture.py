"""Real content that furniture rules must not take for furniture (issue 56): closed panels of tabs
and accordions, galleries whose captions are the text, page builders' widgets, opinion pieces
named "comment", wrappers a parser made of unclosed tags. Each page also holds real furniture of
the same kind, which stays out."""

from __future__ import annotations

from evidencekit.server.evidence.parse import parse_html

SENTENCE = (
    "The river rose again this spring, and the village moved its market to the hill, where the old "
    "church has stood since the flood of 1910. "
)
ANSWER = "Yes, the lot behind the church is free on market days, and it fills by nine."


def paragraphs(count: int, label: str = "Body") -> str:
    return "".join(f"<p>{label} paragraph {n}. {SENTENCE * 2}</p>" for n in range(count))


def page(body: str) -> bytes:
    return f"<!DOCTYPE html><html><head><title>Flood Market</title></head><body>{body}</body></html>".encode()


NAV = "<ul class='top'>" + "".join(f'<li><a href="/s{n}">Section {n}</a></li>' for n in range(12)) + "</ul>"


def test_closed_accordion_panels_are_text_with_their_questions() -> None:
    faq = "".join(
        f'<h3><button aria-expanded="false" aria-controls="faq{n}">Question {n}: can I park there?</button></h3>'
        f'<div id="faq{n}" hidden><p>Answer {n}. {ANSWER}</p></div>'
        for n in range(4)
    )
    # Hidden too, but no control opens it and nothing names it a panel: a notice a script shows
    notice = "<div style='display:none'><p>Your browser is out of date, please update it to read on.</p></div>"
    # Opened by a control, but named as the menu it is
    menu = (
        '<button aria-controls="mobile-menu" aria-expanded="false">Menu</button>'
        '<div id="mobile-menu" class="mobile-menu" hidden><p>Markets, churches and rivers of the valley.</p></div>'
    )
    text = parse_html(page(f"{NAV}{menu}<main><h1>Market FAQ</h1>{paragraphs(2)}{faq}{notice}</main>")).text
    for n in range(4):
        assert f"Question {n}: can I park there?" in text
        assert f"Answer {n}. {ANSWER}" in text
    assert "out of date" not in text and "Markets, churches" not in text


def test_tab_panels_hidden_by_style_or_class_are_text() -> None:
    tabs = (
        '<ul class="tabs" role="tablist"><li><a role="tab" href="#details">Details</a></li>'
        '<li><a role="tab" href="#care">Care</a></li><li><a role="tab" href="#delivery">Delivery</a></li></ul>'
        f'<div class="tab-pane active" id="details"><p>Details: a copper kettle of 1.5 litres. {SENTENCE}</p></div>'
        f'<div class="tab-pane hidden" id="care"><p>Care: rinse it with vinegar once a month. {SENTENCE}</p></div>'
        f'<div role="tabpanel" id="delivery" style="display: none"><p>Delivery: three days to the valley. {SENTENCE}</p></div>'
    )
    # A class that hides a block which is no panel: a price the shop no longer shows
    old = "<p class='hidden'>Was 49 euros until the spring sale ended.</p>"
    text = parse_html(page(f"{NAV}<div class='product'><h1>Kettle</h1>{paragraphs(1)}{old}{tabs}</div>")).text
    for kept in ("Details: a copper kettle", "Care: rinse it", "Delivery: three days"):
        assert kept in text
    assert "Was 49 euros" not in text


def test_an_accordion_whose_tablist_holds_its_panels_is_text_and_a_strip_of_tabs_is_not() -> None:
    accordion = '<div class="guide-steps" role="tablist">' + "".join(
        f'<h3 role="tab" id="step{n}">Step {n}</h3>'
        f'<div role="tabpanel" aria-labelledby="step{n}"><p>Step {n} text. {SENTENCE}</p></div>'
        for n in range(4)
    ) + "</div>"
    strip = '<div role="tablist"><span role="tab">Overview</span> <span role="tab">Reviews (12)</span></div>'
    text = parse_html(page(f"{NAV}<div class='content'><h1>Guide</h1>{strip}{paragraphs(1)}{accordion}</div>")).text
    for n in range(4):
        assert f"Step {n} text." in text
    assert "Reviews (12)" not in text


def test_a_hidden_media_tab_with_its_photo_caption_stays_out() -> None:
    media = (
        '<div id="media"><div id="photos" class="tabPanel" style="display:none"><img src="/p.jpg">'
        "<p>The mayor on the church steps, 4 March 2024 (Photo: Agency)</p></div></div>"
    )
    text = parse_html(page(f"{NAV}<div class='story'><h1>Flood</h1>{paragraphs(4)}{media}</div>")).text
    assert text.count("Body paragraph") == 4
    assert "The mayor on the church steps" not in text


def figures(count: int, label: str) -> str:
    return "".join(
        f'<figure><img src="/{label}{n}.jpg"><figcaption>{label} {n}. {SENTENCE * 2}</figcaption></figure>'
        for n in range(count)
    )


def test_a_gallery_told_in_its_captions_is_read_as_its_text() -> None:
    body = f"{NAV}<article><h1>Ten stops on the river</h1><p>Our pick for the summer.</p>{figures(5, 'Stop')}</article>"
    text = parse_html(page(body)).text
    for n in range(5):
        assert f"Stop {n}. {SENTENCE * 2}".strip() in text
    assert "Section 3" not in text


def test_photo_captions_beside_a_story_of_its_own_stay_out() -> None:
    body = f"{NAV}<article><h1>Flood</h1>{paragraphs(6)}{figures(5, 'Photo')}</article>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 6
    assert "Photo 1." not in text


def test_an_unclosed_header_and_an_unclosed_nav_in_it_do_not_swallow_the_story() -> None:
    links = "".join(f"<a href='/s{n}'>Section {n}</a> " for n in range(8))
    # Neither the <header> nor the <nav> is closed: the parser puts the story inside both
    body = f"<header><div class='logo'>Valley Post</div><nav>{links}<div class='story'><h1>Flood</h1>{paragraphs(5)}</div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 5
    assert "Section 3" not in text and "Valley Post" not in text


def test_a_closed_header_beside_the_story_stays_out() -> None:
    links = "".join(f"<a href='/s{n}'>Section {n}</a> " for n in range(8))
    blurb = "<p>The Valley Post has reported on the river towns since 1921, every morning but Sunday.</p>"
    body = f"<header><div class='logo'>Valley Post</div>{blurb}<nav>{links}</nav></header><div class='story'>{paragraphs(5)}</div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 5
    assert "since 1921" not in text and "Section 3" not in text


def test_a_page_builders_text_widgets_of_one_paragraph_each_are_the_text() -> None:
    widgets = "".join(
        f'<div class="elementor-element elementor-widget elementor-widget-text-editor">'
        f'<div class="elementor-widget-container"><p>Widget {n}. {SENTENCE * 2}</p></div></div>'
        for n in range(4)
    )
    menu = (
        '<div class="elementor-element elementor-widget elementor-widget-nav-menu"><div class="elementor-widget-container">'
        + "".join(f"<a href='/m{n}'>Menu entry {n}</a> " for n in range(6)) + "</div></div>"
    )
    # A blog's sidebar text widget ("widget widget_text") in a column its theme does not name
    about = f"<div class='col-4'><div class='widget widget_text'><p>About me: I write on rivers, {SENTENCE}</p></div></div>"
    body = f"{NAV}<div class='elementor elementor-12'>{menu}{widgets}</div>{about}"
    text = parse_html(page(body)).text
    for n in range(4):
        assert f"Widget {n}." in text
    assert "Menu entry 2" not in text and "About me" not in text


SIDE_COLUMN = "<div class='col'>" + "".join(f"<p>Side {n}. {SENTENCE}</p>" for n in range(2)) + "</div>"


def test_an_opinion_piece_named_comment_is_the_text_and_readers_comments_are_not() -> None:
    readers = "".join(f"<div class='comment'><p>Reader {n} says: {SENTENCE}</p></div>" for n in range(3))
    for name in ("content content--comment", "tonal tonal--tone-comment"):
        body = f"{NAV}<div class='wrap'><div class='{name}'><h1>Why the market must stay</h1>{paragraphs(3)}</div>{SIDE_COLUMN}</div>"
        text = parse_html(page(body + f"<div id='comments'>{readers}</div>")).text
        assert text.count("Body paragraph") == 3, name
        assert "Reader 1 says" not in text


def test_a_block_named_free_of_furniture_is_the_text_and_an_ad_slot_is_not() -> None:
    ad = f"<div class='ad-slot'><p>Advertisement: the best kettles of the year, {SENTENCE}</p></div>"
    body = f"{NAV}<div class='wrap'><div class='story ad-free'>{paragraphs(3)}{ad}</div>{SIDE_COLUMN}</div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 3
    assert "best kettles" not in text


def test_a_page_hidden_until_a_script_shows_it_is_read() -> None:
    body = f"<div id='page' style='display: none'>{NAV}<div class='story'><h1>Flood</h1>{paragraphs(5)}</div></div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 5
    assert "Section 3" not in text


def test_a_hidden_box_of_prose_beside_a_shown_story_stays_out() -> None:
    terms = f"<div class='terms' style='display:none'>{paragraphs(3, 'Terms')}</div>"
    text = parse_html(page(f"{NAV}<div class='story'>{paragraphs(5)}</div>{terms}")).text
    assert text.count("Body paragraph") == 5
    assert "Terms paragraph" not in text


def test_a_slideshows_text_in_a_box_named_caption_is_read_and_photo_captions_are_not() -> None:
    strip = "<div class='slides'>" + "".join(f"<img src='/s{n}.jpg'>" for n in range(6)) + "</div>"
    # The slide's text stands apart from the strip of photos, under the slide's title
    slide = f"<div class='slide-info'><h3>At dawn</h3><div class='caption' id='slide-content'><p>Slide text. {SENTENCE * 3}</p></div></div>"
    photo = (
        "<div class='image-block'><img src='/a.jpg'><div class='image-caption'><p>Boats moored by the church "
        "steps, seen from the bridge at dawn on the fourth of March.</p></div></div>"
    )
    line = "<p class='caption'>Harry talks to Lois, whose market stall the river took, about moving up the hill.</p>"
    body = f"{NAV}<div class='gallery'><h1>Flood in pictures</h1>{strip}{slide}{photo}{line}</div>"
    text = parse_html(page(body)).text
    assert "Slide text." in text
    assert "Boats moored" not in text and "Harry talks" not in text


def test_an_article_wrapped_in_a_widget_is_the_text_and_sidebar_widgets_are_not() -> None:
    article = f"<div class='so-panel widget widget_text'><div class='textwidget'>{paragraphs(5)}</div></div>"
    about = f"<div class='widget widget_text'><p>About me: I write on rivers, {SENTENCE}</p><p>Write to me, {SENTENCE}</p></div>"
    recent = "<div class='widget recent_posts'><ul>" + "".join(
        f"<li><h4><a href='/p{n}'>Older post {n}</a></h4><p>Summary {n}: {SENTENCE}</p></li>" for n in range(3)
    ) + "</ul></div>"
    # Text of the site's own beside it, enough that the article is not most of the page
    notes = "<div class='notes'>" + "".join(f"<p>Note {n}. {SENTENCE}</p>" for n in range(4)) + "</div>"
    body = f"{NAV}<div class='wrap'>{article}{notes}</div><div class='col-4'>{about}{recent}</div>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 5
    assert "About me" not in text and "Summary 1" not in text
