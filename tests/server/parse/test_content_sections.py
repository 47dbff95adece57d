"""Content the chosen block leaves out when it is too narrow, or the renderer when a block looks
like boilerplate by its shape (issue 56): a product's, a recipe's or a landing page's other
sections beside the best one, link-only paragraphs and lists that are the text's own, and a lone
heading at the text's start or end. Each with the boilerplate of that shape that stays out."""

from __future__ import annotations

import pytest

from evidencekit.server.evidence.parse import parse_html


def page(body: str, title: str = "Oak Table") -> bytes:
    return f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}</body></html>".encode()


NAV = "<ul class='top'>" + "".join(f'<li><a href="/s{n}">Section {n}</a></li>' for n in range(12)) + "</ul>"

DESCRIPTION = (
    "<p>Our dining table is made from solid European oak, oiled by hand in our workshop, and seats six "
    "people comfortably, or eight when the two leaves are pulled out.</p>"
    "<p>The legs are set in from the corners, so chairs slide in at every side, and the top is finished "
    "with a hard wax oil that lets the grain show, resists stains, and can be renewed at home.</p>"
)
DETAILS = (
    "<ul><li>Solid oak, FSC certified</li><li>Hard wax oil finish</li><li>Two extension leaves</li>"
    "<li>Made in Bavaria</li></ul>"
)
DIMENSIONS = (
    "<table><tr><th>Length</th><td>180 cm, 240 cm extended</td></tr><tr><th>Width</th><td>90 cm</td></tr>"
    "<tr><th>Height</th><td>75 cm</td></tr></table>"
)


def product(after: str = "") -> bytes:
    return page(
        f"{NAV}<div class='pdp'><h1>Oak dining table</h1>"
        f"<div class='pdp-description'><h2>Description</h2>{DESCRIPTION}</div>"
        f"<div class='pdp-details'><h2>Details</h2>{DETAILS}</div>"
        f"<div class='pdp-specs'><h2>Dimensions</h2>{DIMENSIONS}</div>{after}</div>"
    )


def test_a_products_details_and_dimensions_beside_its_description_are_kept() -> None:
    text = parse_html(product()).text
    assert "made from solid European oak" in text
    for section in ("Details", "Hard wax oil finish", "Made in Bavaria", "Dimensions", "Height | 75 cm"):
        assert section in text


def test_a_related_products_box_a_form_and_questions_beside_the_sections_stay_out() -> None:
    related = (
        "<div class='shelf'><h2>You may also like</h2><ul><li><a href='/p/1'>Oak bench with a backrest</a></li>"
        "<li><a href='/p/2'>Walnut chair, set of two</a></li><li><a href='/p/3'>Side table in ash</a></li></ul></div>"
    )
    review_form = (
        "<div class='box-3'><h2>Write a review</h2><p>Tell other buyers what you think of this table.</p>"
        "<textarea name='review'></textarea></div>"
    )
    questions = (
        "<div class='box'><h2>Questions and answers</h2>"
        "<div class='comments-body'><p>Does the table fit eight people? Asked by Jo, 3 May 2024</p></div>"
        "<div class='comments-body'><p>Yes, with both leaves pulled out it seats eight. The shop</p></div></div>"
    )
    text = parse_html(product(related + review_form + questions)).text
    assert "made from solid European oak" in text
    for furniture in ("You may also like", "Oak bench", "Write a review", "Tell other buyers", "Asked by Jo"):
        assert furniture not in text


def test_a_recipes_ingredients_and_method_under_its_headline_are_kept() -> None:
    body = (
        f"{NAV}<div class='recipe'><h1>Plum cake</h1><div class='intro'>"
        "<p>This is the plum cake my grandmother baked every September, when the plums in her garden "
        "were ripe, on a thin yeast dough with crumbs on top, and we ate it warm with whipped cream.</p>"
        "<p>It takes an afternoon, most of it waiting for the dough, and it keeps for two days in a cool "
        "place, covered with a cloth, if there is any left.</p></div>"
        "<h2>Ingredients</h2><ul><li>500 g flour</li><li>1 cube of yeast</li><li>250 ml milk</li>"
        "<li>2 kg plums</li><li>150 g butter</li></ul>"
        "<h2>Method</h2><ol><li>Warm the milk and stir in the yeast.</li><li>Knead the dough and let it "
        "rise.</li><li>Halve the plums and lay them on the dough.</li><li>Bake for 40 minutes.</li></ol></div>"
    )
    text = parse_html(page(body, "Plum cake")).text
    assert "grandmother baked" in text
    for part in ("Ingredients", "2 kg plums", "Method", "Halve the plums"):
        assert part in text


FEATURES = (
    ("Plan together", "Everyone on the team sees the same board, and a change made by one of them shows up for "
     "the others at once, with who made it and when, so nobody works from an old copy."),
    ("Work offline", "Take the board on the train: what you change without a connection is kept on your "
     "device and merged when you are back online, with any conflict shown to you."),
    ("Keep it private", "Boards are encrypted on your device before they are stored."),
)


def landing(footer: str = "") -> bytes:
    sections = "".join(
        f"<section class='band band-{n}'><h2>{title}</h2><p>{prose}</p></section>"
        for n, (title, prose) in enumerate(FEATURES)
    )
    return page(f"{NAV}<main><h1>Boards for small teams</h1>{sections}{footer}</main>", "Boards")


def test_a_landing_pages_feature_sections_are_all_kept() -> None:
    text = parse_html(landing()).text
    for title, prose in FEATURES:
        assert title in text and prose in text


def test_a_footers_columns_beside_the_sections_stay_out() -> None:
    footer = (
        "<div class='col'><h4>Company</h4><p>Boards GmbH</p><p>Hauptstrasse 4</p><p>80331 Munich, Germany</p></div>"
        "<div class='col'><h4>Opening hours</h4><p>Support answers</p><p>Monday to Friday</p><p>9 to 17 o'clock</p></div>"
    )
    text = parse_html(landing(footer)).text
    assert FEATURES[2][1] in text
    for furniture in ("Company", "Hauptstrasse", "Opening hours"):
        assert furniture not in text


@pytest.mark.parametrize(
    ("post", "title"),
    [
        ("post", "The market moves uphill"),  # the post named as one
        ("col-7", "<a href='/2024/03/market'>The market moves uphill</a>"),  # its title links to its page
    ],
)
def test_a_blogs_comments_after_its_post_are_not_a_section_of_it(post: str, title: str) -> None:
    paragraphs = "".join(
        f"<p>Paragraph {n} of the post. The river rose again this spring, and the village moved its market "
        "to the hill, where the old church has stood since the flood of 1910.</p>"
        for n in range(4)
    )
    comments = "".join(
        f"<div class='c-{n}'><p>Reader {n}: lovely to read about the market, we went there last year.</p></div>"
        for n in range(3)
    )
    body = (
        f"{NAV}<div class='wrap'><div class='{post}'><h2>{title}</h2>{paragraphs}</div>"
        f"<div class='c-list'><h2>3 Comments</h2>{comments}</div></div>"
    )
    text = parse_html(page(body)).text
    assert "Paragraph 3 of the post" in text
    assert "Reader 1" not in text and "3 Comments" not in text


SENTENCE = (
    "The river rose again this spring, and the village moved its market to the hill, where the old "
    "church has stood since the flood of 1910. "
)
STORY = "".join(f"<p>Body paragraph {n}. {SENTENCE * 2}</p>" for n in range(4))


def test_the_articles_closing_heading_and_its_short_line_are_kept() -> None:
    body = (
        f"{NAV}<article><h1>The market moves uphill</h1><div class='text'>{STORY}</div>"
        "<h3>Exhibition</h3><p>Town museum, Market Square 3</p></article>"
    )
    text = parse_html(page(body)).text
    assert text.endswith("Body paragraph 3. " + SENTENCE.strip() + " " + SENTENCE.strip() + "\n\nExhibition\n\nTown museum, Market Square 3")


def test_a_closing_heading_over_links_or_over_a_form_stays_out() -> None:
    more = "<h3>More news</h3><p><a href='/news/1'>The bridge reopens</a></p>"
    letter = "<h3>Newsletter</h3><p>Our weekly letter, free</p><form><input type='email'></form>"
    for closing, gone in ((more, "More news"), (letter, "Newsletter")):
        body = f"{NAV}<article><h1>The market moves uphill</h1><div class='text'>{STORY}</div>{closing}</article>"
        text = parse_html(page(body)).text
        assert "Body paragraph 3" in text and gone not in text


def test_a_kicker_over_the_title_is_kept() -> None:
    body = f"{NAV}<div class='story'><h4>Flood</h4><h2>The market moves uphill</h2>{STORY}</div>"
    result = parse_html(page(body))
    assert result.text.startswith("Flood\n\nThe market moves uphill\n\nBody paragraph 0.")
    assert result.markdown.startswith("#### Flood\n\n## The market moves uphill")


@pytest.mark.parametrize(
    ("over", "title"),
    [
        ("<h4><a href='/'>Home</a> › <a href='/region'>Region</a></h4>", "h2"),  # a breadcrumb
        ("<h4>Region</h4>", "h1"),  # the site's section name over the page's headline
    ],
)
def test_a_breadcrumb_or_a_section_name_over_the_title_stays_out(over: str, title: str) -> None:
    body = f"{NAV}<div class='story'>{over}<{title}>The market moves uphill</{title}>{STORY}</div>"
    text = parse_html(page(body)).text
    assert "Region" not in text and "Body paragraph 0" in text


def test_an_empty_sections_heading_inside_the_text_stays_out() -> None:
    related = "<h3>Related</h3><ul><li><a href='/a'>Bridge reopens</a></li><li><a href='/b'>Ferry stops</a></li></ul>"
    body = f"{NAV}<article><h1>The market moves uphill</h1>{STORY}{related}<h3>Follow-up</h3>{STORY}</article>"
    text = parse_html(page(body)).text
    assert "Related" not in text and "Follow-up" in text


def test_a_paragraph_that_is_one_linked_sentence_in_the_text_is_kept() -> None:
    linked = "<p><a href='https://commission.example/report.pdf'>The commission has published its full report on the flood.</a></p>"
    body = f"{NAV}<article><h1>The market moves uphill</h1>{STORY}{linked}{STORY.replace('Body', 'Later')}</article>"
    text = parse_html(page(body)).text
    assert "The commission has published its full report on the flood." in text


def test_a_linked_headline_an_advertisement_or_a_closing_promotion_stays_out() -> None:
    teaser = "<p><a href='/news/ferry'>Will the ferry run again this summer?</a></p>"
    promo = "<p><a href='/app'>Our news is now available on your phone, free of charge.</a></p>"
    advert = "<p><img src='/odds.jpg'><a href='https://odds.example/'>The cup draw is out, and the odds are in.</a></p>"
    body = (
        f"{NAV}<article><h1>The market moves uphill</h1>{STORY}{teaser}{advert}"
        f"{STORY.replace('Body', 'Later')}{promo}</article>"
    )
    text = parse_html(page(body)).text
    assert "Later paragraph 3" in text
    for gone in ("ferry", "odds", "phone"):
        assert gone not in text


SOURCES = (
    "<ul><li><a href='https://www.weather-service.example/floods/2024'>Weather service: river levels in March 2024</a></li>"
    "<li><a href='https://statistics.example/markets'>Statistics office: weekly markets by region</a></li>"
    "<li><a href='https://archive.example.org/flood-1910'>Town archive: the flood of 1910 in pictures</a></li></ul>"
)


def test_a_list_of_sources_on_other_sites_is_kept() -> None:
    body = f"{NAV}<article><h1>The market moves uphill</h1>{STORY}<h3>Sources</h3>{SOURCES}</article>"
    text = parse_html(page(body)).text
    assert "Sources" in text and "Statistics office: weekly markets by region" in text
    assert "Town archive: the flood of 1910 in pictures" in text


def test_a_list_of_the_sites_own_stories_a_partners_or_sharing_buttons_stays_out() -> None:
    own = "".join(  # the site's stories, and its sister site's videos
        f"<li><a href='https://{site}/region/{n}'>Story number {n} about the valley and its people</a></li>"
        for n, site in enumerate(("news.example", "newsvideo.example") * 2)
    )
    nav = "".join(f"<a href='https://news.example/s{n}'>Section {n}</a>" for n in range(6))
    partner = "".join(
        f"<li><a href='https://recommend.example/go?id={n}'>You will not believe what happened to story {n}</a></li>"
        for n in range(4)
    )
    share = (
        "<ul><li><a href='https://facebook.example/share?u=1'>Share on Facebook</a></li>"
        "<li><a href='https://x.example/intent?u=1'>Post on X</a></li>"
        "<li><a href='https://mail.example/send?u=1'>Send by email</a></li></ul>"
    )
    body = (
        f"<div>{nav}</div><article><h1>The market moves uphill</h1>{STORY}<h3>More from the region</h3>"
        f"<ul>{own}</ul><h3>Around the web</h3><ul>{partner}</ul>{share}</article>"
    )
    text = parse_html(page(body)).text
    assert "Body paragraph 3" in text
    for gone in ("More from the region", "Story number", "Around the web", "believe", "Share on Facebook", "Send by"):
        assert gone not in text


def test_paragraphs_set_in_headings_in_a_row_are_text() -> None:
    """An old page's paragraphs set in <h5>, one sentence each: not sections left empty."""
    lines = [
        "Once the whole family agrees on the stall's place, a water bowl can be set under the table.",
        "While the market is open, a drip pan should stand under the bowl so that the floor stays dry.",
    ]
    headed = "".join(f"<h5>{line}</h5>" for line in lines)
    related = "<h3>Related</h3><ul><li><a href='/a'>Bridge reopens</a></li><li><a href='/b'>Ferry stops</a></li></ul>"
    body = f"{NAV}<article><h1>The market moves uphill</h1>{STORY}{headed}{related}</article>"
    result = parse_html(page(body))
    for line in lines:
        assert line in result.text and f"\n\n{line}" in result.markdown
    assert "Related" not in result.text


def test_a_paragraph_that_links_to_another_site_in_the_text_is_kept() -> None:
    nav = "<ul class='top'>" + "".join(f"<li><a href='https://news.example/s{n}'>Section {n}</a></li>" for n in range(8)) + "</ul>"
    place = "<p><a href='https://maps.example/hill-market'>maps.example/hill-market</a></p>"  # (no headline)
    own = "<p><a href='https://news.example/region/ferry'>Ferry timetable</a></p>"
    advert = "<p><img src='/odds.jpg'><a href='https://odds.example/'>Cup odds</a></p>"
    later = STORY.replace("Body", "Later")
    body = f"{nav}<article><h1>The market moves uphill</h1>{STORY}{place}{own}{advert}{later}</article>"
    text = parse_html(page(body)).text
    assert "maps.example/hill-market" in text and "Later paragraph 3" in text
    assert "Ferry timetable" not in text and "Cup odds" not in text
