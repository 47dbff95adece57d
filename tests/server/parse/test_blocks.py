"""Blocks inside the chosen content judged on their own (issue 56): what a template puts in the
article's box is left out by what the page shows of it, whatever it is named."""

from __future__ import annotations

import pytest

from evidencekit.server.evidence.parse import parse_html

SENTENCE = (
    "The river rose again this spring, and the village moved its market to the hill, where the old "
    "church has stood since the flood of 1910. "
)


def paragraphs(count: int, label: str = "Body") -> str:
    return "".join(f"<p>{label} paragraph {n}. {SENTENCE * 2}</p>" for n in range(count))


def page(body: str) -> bytes:
    return f"<!DOCTYPE html><html><head><title>Flood Market</title></head><body>{body}</body></html>".encode()


# Named as a template names its parts, with no furniture word: only the field gives them away
FORMS = {
    "newsletter": (
        "<div class='box-7'><h3>Never miss a story</h3>"
        "<p>Get the best of the valley in your inbox every Friday, free.</p>"
        "<form action='/letter'><input type='email' placeholder='Your email'><button>Send</button></form></div>"
    ),
    "comment terms": (
        "<div class='c-4'><p>Please remember that what you post is governed by our house rules.</p>"
        "<textarea name='text'></textarea><div>Type the code you see below.</div><input name='code'></div>"
    ),
    "poll": (
        "<div class='unit'><p>Which market day suits you best?</p>"
        "<select name='day'><option>Saturday</option><option>Sunday</option></select></div>"
    ),
}


@pytest.mark.parametrize("widget", FORMS.values(), ids=FORMS.keys())
def test_the_prompt_of_a_form_inside_the_article_is_left_out(widget: str) -> None:
    body = f"<article><div class='text'>{paragraphs(3)}{widget}{paragraphs(2, 'Later')}</div></article>"
    text = parse_html(page(body)).text
    assert text.count("Body paragraph") == 3 and text.count("Later paragraph") == 2
    for prompt in ("inbox every Friday", "house rules", "code you see", "Which market day"):
        assert prompt not in text


def test_a_sentence_beside_a_field_in_a_section_with_more_text_stays() -> None:
    section = (
        f"<div class='stalls'><p>Enter your postcode in the box below to find the stall nearest to you.</p>"
        f"<p>Stalls paragraph. {SENTENCE * 3}</p><input name='postcode'></div>"
    )
    body = f"<article><div class='text'>{paragraphs(3)}</div>{section}</article>"
    text = parse_html(page(body)).text
    assert "Enter your postcode in the box below" in text and "Stalls paragraph" in text


def test_a_hidden_input_does_not_make_a_box_a_form() -> None:
    quote = "<div class='pull'><p>“We will be back next spring.”</p><input type='hidden' name='ref' value='7'></div>"
    body = f"<article><div class='text'>{paragraphs(3)}{quote}{paragraphs(2, 'Later')}</div></article>"
    assert "We will be back next spring." in parse_html(page(body)).text


def test_a_long_block_beside_a_field_is_not_a_prompt() -> None:
    terms = f"<div class='unit'><p>Rules of the market. {SENTENCE * 3}</p><input type='checkbox' name='agree'></div>"
    body = f"<article><div class='text'>{paragraphs(3)}{terms}{paragraphs(2, 'Later')}</div></article>"
    assert "Rules of the market." in parse_html(page(body)).text


def test_a_short_page_whose_text_stands_beside_a_form_keeps_it_alone() -> None:
    letter = (
        "<div class='main'><p>Write to the market office with your stall request: we answer every letter "
        "within two days, and the fee for the season is due on the first market day, in cash or by card.</p>"
        "<form><input name='email'><textarea name='request'></textarea></form></div>"
    )
    body = f"{letter}<div class='bottom'><p>Open Monday to Friday</p><p>3 Church Lane</p></div>"
    text = parse_html(page(body)).text
    assert text.startswith("Write to the market office") and "Church Lane" not in text



# Worded in a language bylines.py has no table for: only the markup says it is a date
STAMP = "<time datetime='2024-03-12T14:05'>wczoraj o 14:05</time>"


@pytest.mark.parametrize(
    "line",
    [STAMP, f"<span class='when'>{STAMP}</span>", f"<p>{STAMP}</p>", f"<div> · {STAMP} · </div>"],
    ids=["bare", "wrapped", "paragraph", "separators"],
)
def test_a_time_alone_on_its_line_is_left_out(line: str) -> None:
    body = f"<article><div class='text'>{paragraphs(2)}{line}{paragraphs(2, 'Later')}</div></article>"
    text = parse_html(page(body)).text
    assert "wczoraj" not in text and text.count("paragraph") == 4


def test_a_time_inside_a_sentence_stays() -> None:
    sentence = f"<p>The market opens {STAMP} and closes at dusk.</p>"
    body = f"<article>{paragraphs(2)}{sentence}{paragraphs(2, 'Later')}</article>"
    assert "The market opens wczoraj o 14:05 and closes at dusk." in parse_html(page(body)).text


@pytest.mark.parametrize(
    "data",
    [
        "<table><tr><th>When</th><th>What</th></tr>"
        "<tr><td><time>10:00</time></td><td>Stalls open</td></tr><tr><td><time>18:00</time></td><td>Stalls close</td></tr></table>",
        "<h2><time datetime='2024-03-01'>2024-03-01</time></h2><p>Version 2: the market moved uphill.</p>",
    ],
    ids=["timetable", "changelog heading"],
)
def test_a_time_in_a_cell_or_a_heading_is_data(data: str) -> None:
    body = f"<article>{paragraphs(2)}{data}{paragraphs(2, 'Later')}</article>"
    text = parse_html(page(body)).text
    assert ("10:00" in text and "18:00" in text) or "2024-03-01" in text


@pytest.mark.parametrize(
    "notice",
    ["© 2024 Valley Media GmbH. Alle Rechte vorbehalten.", "Copyright 2007 PR Newswire. All rights reserved.",
     "CopyRight 2011 Valley Media. All rights reserved.", "COPYright 2011 Valley Media. All rights reserved."],
    ids=["sign", "word and year", "camel case", "mixed case"],
)
def test_a_copyright_notice_apart_from_the_articles_run_is_left_out(notice: str) -> None:
    body = f"<article><div class='text'>{paragraphs(3)}<div class='end'><p>{notice}</p></div></div></article>"
    text = parse_html(page(body)).text
    assert notice[:12] not in text and text.count("Body paragraph") == 3


@pytest.mark.parametrize(
    "block",
    [
        "The council argues that copyright law should let the market's photographers keep their pictures.",
        "Southampton: Davis; Thomas, Davies, Bennett, Wright, Surman, Safri (c), Euell, John.",
        "Copyright 1970, soft cover, brand new: the definitive manual for the market's old scales, with every "
        "weight and measure the stalls used, practice problems and an index; a rare volume in perfect shape.",
    ],
    ids=["prose about copyright", "a captain", "a book's description"],
)
def test_a_block_that_only_mentions_copyright_stays(block: str) -> None:
    body = f"<article><div class='text'>{paragraphs(3)}<div class='end'><p>{block}</p></div></div></article>"
    assert block in parse_html(page(body)).text


def test_a_notice_written_as_the_articles_last_paragraph_stays() -> None:
    # (the development sets' references keep a credit line in the article's own run: "This article
    # originally appeared at ... Copyright 2015.")
    body = f"<article><div class='text'>{paragraphs(3)}<p>First published by the Valley Courier. Copyright 2015.</p></div></article>"
    assert "First published by the Valley Courier" in parse_html(page(body)).text
