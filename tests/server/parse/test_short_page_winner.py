"""A short article beside what competes with it on its page (issue 56): a comment thread, reviews,
testimonials, a FAQ, an author's bio, a footer's blurb. No block is named for what it is: the
article is told from them by the page's shape. Each with a page where the competitor is the text."""

from __future__ import annotations

from evidencekit.server.evidence.parse import parse_html

NAV = "<ul class='top'>" + "".join(f'<li><a href="/s{n}">Section {n}</a></li>' for n in range(12)) + "</ul>"
HEADLINE = "<h1>The market moves up the hill</h1>"
ARTICLE = (
    "<p>The river rose again this spring, and the village moved its Saturday market to the hill behind "
    "the church, where the stalls stand on dry ground and the view reaches the old bridge.</p>"
    "<p>Stallholders voted for the move in March. Most of them say trade is as good as it was by the "
    "water, and the baker, who lost her oven in the flood of 2019, says it is better.</p>"
    "<p>The council will decide in the autumn whether the market stays on the hill for good.</p>"
)
ARTICLE_LINES = ("The river rose again", "Stallholders voted", "The council will decide")


def page(body: str) -> bytes:
    return f"<!DOCTYPE html><html><head><title>Market</title></head><body>{NAV}{body}</body></html>".encode()


def assert_article_alone(text: str, *furniture: str) -> None:
    for line in ARTICLE_LINES:
        assert line in text
    for words in furniture:
        assert words not in text


PLAIN_POST = "Went on Saturday, stalls were busy, the bread was good, and parking easy"
# A post that repeats the commas a block's score counts
BUSY_POST = ("Went on Saturday, stalls were busy, the bread, cheese, and apples were good, parking "
             "was easy, and the view, well, lovely")


def thread(count: int = 8, post: str = PLAIN_POST) -> str:
    """Posts as a forum or blog engine renders them, with no name that says so: a username's link
    and a date, the post's text, a reply link."""
    return "".join(
        f"<div class='item'><div class='meta'><a href='/u/walker{n}'>walker{n}</a> <span>{n + 1} days ago</span></div>"
        f"<div class='txt'><p>{post}, visit {n}.</p></div>"
        f"<div class='actions'><a href='#reply{n}'>Reply</a></div></div>"
        for n in range(count)
    )


def test_an_unnamed_comment_thread_after_the_article_is_left_out() -> None:
    box = f"<div class='col'><div class='c1'>{HEADLINE}{ARTICLE}</div><div class='list'><h3>8 responses</h3>{thread()}</div></div>"
    assert_article_alone(parse_html(page(box)).text, "visit 3", "walker2", "8 responses")


def test_an_unnamed_comment_thread_in_the_articles_own_box_is_left_out() -> None:
    box = f"<div class='col'>{HEADLINE}{ARTICLE}<h3>Responses</h3>{thread()}</div>"
    assert_article_alone(parse_html(page(box)).text, "visit 3", "walker2", "Responses")


def test_reviews_signed_with_a_name_and_a_date_after_the_article_are_left_out() -> None:
    reviews = "".join(
        f"<div class='rev'><span>\u2605\u2605\u2605\u2605\u2606</span> <b>Anna {n}</b> <span>12 May 2024</span>"
        f"<p>Nice market, good bread, friendly people, a bit windy up on the hill, review {n}.</p></div>"
        for n in range(6)
    )
    box = f"<div class='col'><div class='c1'>{HEADLINE}{ARTICLE}</div><div class='r'><h2>Reviews</h2>{reviews}</div></div>"
    assert_article_alone(parse_html(page(box)).text, "review 2", "Anna 4")


def test_a_thread_with_no_article_beside_it_is_the_text() -> None:
    body = f"<div class='col'><h1>Parking at the new market?</h1>{thread()}</div>"
    text = parse_html(page(body)).text
    for n in range(8):
        assert f"visit {n}." in text


def test_an_articles_own_dated_entries_stay() -> None:
    # A timeline in the article: dated lines, not signed boxes; and posts set between its paragraphs
    timeline = "<ul>" + "".join(f"<li><time>{n + 1} March 2024</time> <a href='/gauge'>Town gauge</a> The water rose by {n} metres.</li>" for n in range(5)) + "</ul>"
    embedded = "".join(
        f"<div class='embed'><p>The stalls are up on the hill this morning, photo {n}.</p><a href='/u/p{n}'>Reporter {n}</a> "
        f"<span>3 March 2024</span></div><p>Paragraph {n} between the posts, {ARTICLE_LINES[0].lower()} and the market moved up to the churchyard.</p>"
        for n in range(4)
    )
    text = parse_html(page(f"<div class='col'>{HEADLINE}{ARTICLE}{timeline}{embedded}</div>")).text
    for n in range(5):
        assert f"The water rose by {n} metres." in text
    for n in range(4):
        assert f"photo {n}." in text


def test_an_article_is_preferred_to_the_thread_that_outscores_it() -> None:
    article = f"<div class='wrap'><div class='c1'><div class='inner'><div class='x'>{HEADLINE}{ARTICLE}</div></div></div></div>"
    body = f"{article}<div class='c2'><h3>Responses</h3>{thread(10, BUSY_POST)}</div>"
    assert_article_alone(parse_html(page(body)).text, "visit 3", "walker2")


def test_a_blurb_after_a_thread_alone_does_not_displace_it() -> None:
    blurb = (
        "<div class='f'><div class='bottom'><p>The Valley Post has reported on the river towns since 1921, every morning but "
        "Sunday, with news, sport, weather, markets, fairs and notices from Lower Field to the old bridge, and "
        "its forum, where readers, stallholders, farmers, and the council, talk about the valley, is open to all.</p></div></div>"
    )
    body = f"<section><section><div class='col'><h1>Parking at the new market?</h1>{thread(10, BUSY_POST)}</div></section></section>{blurb}"
    text = parse_html(page(body)).text
    for n in range(10):
        assert f"visit {n}." in text


FAQ = "<div class='q'><h2>Questions</h2>" + "".join(
    f"<h3>Question {n}: where can I park, and is it free?</h3><p>Answer {n}: the lot behind the church is free, "
    "on market days, and it fills by nine, so come early.</p>"
    for n in range(6)
) + "</div>"
BIO = (
    "<div class='a'><h3>About Ana</h3><p>Ana Lee has reported on the valley, its rivers, markets, councils and "
    "floods, for twenty years, first for the Courier, then for us, and she lives in the village with her two dogs, "
    "a cat, and far too many books.</p><p>She wrote two books, one on the flood of 2019, one on the bridge, and "
    "teaches, on Fridays, at the school.</p></div>"
)
BLURB = (
    "<div class='bottom'><h2>About the Valley Post</h2><p>The Valley Post has reported on the river towns since "
    "1921, every morning but Sunday, with news, sport, weather, markets and notices, from Lower Field to the old "
    "bridge.</p></div>"
)


def test_a_faq_box_that_outscores_the_article_is_left_out() -> None:
    body = f"<div class='col'><div class='c1'>{HEADLINE}{ARTICLE}</div>{FAQ}</div>"
    assert_article_alone(parse_html(page(body)).text, "Question 2", "Answer 4")


def test_an_authors_bio_that_outscores_the_article_is_left_out() -> None:
    body = f"<div class='col'><div class='c1'>{HEADLINE}{ARTICLE}</div>{BIO}</div>"
    assert_article_alone(parse_html(page(body)).text, "About Ana", "two dogs", "two books")


def test_a_footer_blurb_after_the_article_is_not_a_section_of_it() -> None:
    for body in (f"<div class='col'>{HEADLINE}{ARTICLE}</div>{BLURB}", f"<div class='w'><div class='col'>{HEADLINE}{ARTICLE}</div>{BLURB}</div>"):
        assert_article_alone(parse_html(page(body)).text, "About the Valley Post", "since 1921")


def test_a_short_section_of_data_after_the_article_stays() -> None:
    hours = (
        "<div class='s'><h2>Opening hours</h2><ul><li>Saturday, 8 to 13</li><li>Wednesday, 14 to 18</li>"
        "<li>Closed on public holidays</li></ul></div>"
    )
    text = parse_html(page(f"<div class='col'><div class='c1'>{HEADLINE}{ARTICLE}</div>{hours}</div>")).text
    assert "Saturday, 8 to 13" in text and "Wednesday, 14 to 18" in text


def test_a_long_section_after_the_article_stays() -> None:
    history = "<div class='s'><h2>How the market began</h2>" + "".join(
        f"<p>History {n}: the first stalls stood by the ford in 1850, and farmers, bakers and weavers came by boat.</p>"
        for n in range(6)
    ) + "</div>"
    text = parse_html(page(f"<div class='col'><div class='c1'>{HEADLINE}{ARTICLE}</div>{history}</div>")).text
    for n in range(6):
        assert f"History {n}:" in text


def test_a_story_under_its_own_headline_after_the_article_stays() -> None:
    story = "<div class='s'><h1>The ferry runs again</h1><p>The ferry runs again from Monday, and the school opens.</p></div>"
    text = parse_html(page(f"<div class='col'><div class='c1'>{HEADLINE}{ARTICLE}</div>{story}</div>")).text
    assert "The ferry runs again from Monday" in text


FAR_ARTICLE = f"<div class='wrap'><div class='c1'><div class='inner'><div class='x'>{HEADLINE}{ARTICLE}</div></div></div></div>"


def test_quoted_testimonials_that_outscore_the_article_far_from_it_are_left_out() -> None:
    cards = "".join(
        f"<div class='t'><p>\u201cWorking with the market team was a pleasure, stalls, tents, signs, and lights came on "
        f"time, and the price, well, fair, number {n}.\u201d</p><span>Stallholder {n}, Lower Field</span></div>"
        for n in range(6)
    )
    body = f"{FAR_ARTICLE}<section><h2>What people say</h2>{cards}</section>"
    assert_article_alone(parse_html(page(body)).text, "What people say", "number 3", "Stallholder 2")


def test_a_faq_far_from_the_article_is_left_out() -> None:
    assert_article_alone(parse_html(page(f"{FAR_ARTICLE}{FAQ}")).text, "Question 2", "Answer 4")



BRIEF = "<h1>Market moves</h1><p>The market moved up the hill on Saturday.</p><p>Stallholders say trade is good there.</p>"


def test_a_brief_under_its_headline_is_the_text_not_the_whole_page() -> None:
    bio = "<div class='a'><h3>About Ana</h3><p>Ana Lee has reported on the valley for twenty years.</p></div>"
    text = parse_html(page(f"<div class='col'><div class='c1'>{BRIEF}</div>{bio}</div>")).text
    assert "The market moved up the hill" in text and "trade is good there" in text
    assert "Ana Lee" not in text


def test_a_stub_under_a_headline_still_shows_the_page() -> None:
    # Lines, no sentences: the page's other text is shown (what the fall-back is for)
    stub = "<h1>Market moves</h1><p>Page 1 of 5, next page, last page, all pages</p><p>Photos, maps, videos</p>"
    notes = "<div class='f'><div class='a'><p>Ana Lee has reported on the valley for years.</p></div></div>"
    text = parse_html(page(f"<div class='col'><div class='c1'>{stub}</div></div>{notes}")).text
    assert "Ana Lee" in text
