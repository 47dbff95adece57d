"""Bylines, date lines and reading-time lines inside the article, named so or not, are left out the
same way in every language the service reads (issues 54 and 56); prose that starts like a byline
or mentions a date stays."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from evidencekit.server.evidence.parse import parse_html
from evidencekit.server.evidence.parse.bylines import is_byline_line

# language -> (a sentence of prose, byline line, date line, reading-time line)
ARTICLES = {
    "en": (
        "The river rose again this spring, and the village moved its market to the hill, where the old church stands.",
        "By Jane Doe", "Published March 3, 2024 at 10:15 a.m.", "5 min read",
    ),
    "de": (
        "Der Fluss stieg auch in diesem Frühjahr, und das Dorf verlegte seinen Markt auf den Hügel, wo die alte Kirche steht.",
        "Von Anna Schmidt", "Aktualisiert am 3. März 2024, 14:05 Uhr", "Lesezeit: 4 Minuten",
    ),
    "fr": (
        "La rivière a encore monté ce printemps, et le village a déplacé son marché sur la colline, près de la vieille église.",
        "Par Jean Dupont, le 3 mars 2024", "Publié le 12/03/2024 à 10h15", "5 minutes de lecture",
    ),
    "es": (
        "El río volvió a crecer esta primavera, y el pueblo trasladó su mercado a la colina, junto a la vieja iglesia.",
        "Por María García", "Publicado el 3 de marzo de 2024 a las 10:15", "Lectura de 5 minutos",
    ),
    "it": (
        "Il fiume è salito di nuovo questa primavera, e il paese ha spostato il mercato sulla collina, vicino alla vecchia chiesa.",
        "di Mario Rossi", "Pubblicato il 3 marzo 2024 alle 10:15", "Tempo di lettura: 5 minuti",
    ),
    "nl": (
        "De rivier steeg dit voorjaar opnieuw, en het dorp verplaatste zijn markt naar de heuvel, bij de oude kerk.",
        "Door Jan de Vries", "Gepubliceerd op 3 maart 2024 om 10:15", "Leestijd: 4 minuten",
    ),
    "pt": (
        "O rio voltou a subir nesta primavera, e a aldeia levou o seu mercado para a colina, junto à velha igreja.",
        "Por João Silva", "Publicado em 3 de março de 2024 às 10h15", "5 min de leitura",
    ),
    "he": (
        "הנהר עלה שוב באביב הזה, והכפר העביר את השוק שלו אל הגבעה, ליד הכנסייה הישנה שעומדת שם מאז השיטפון.",
        "מאת דנה לוי", "פורסם ב-3 במרץ 2024, 10:15", "זמן קריאה: 4 דקות",
    ),
    "zh": (
        "今年春天河水再次上涨，村子把集市搬到了山上，就在那座老教堂旁边，那里自从洪水以后一直很安全。",
        "记者 王芳 报道", "2024年3月3日 10:15", "阅读时间：5分钟",
    ),
    "ja": (
        "今年の春も川の水位が上がり、村は市場を丘の上に移した。そこには洪水の後も古い教会が残っている。",
        "文：山田太郎", "公開日：2024年3月3日 10:15", "この記事は約5分で読めます",
    ),
}
# More unmarked bylines and date lines from the issue, each at the top of an article
MORE_LINES = ["作者：李明", "文/张伟", "Publié le 12/03/2024 à 10h15", "By Jane Doe · 5 min read", "记者王芳"]

NAV = "<ul class='top'>" + "".join(f'<li><a href="/s{n}">Section {n}</a></li>' for n in range(10)) + "</ul>"


def article(language: str, top: list[str], bottom: Sequence[str] = (), prose: Sequence[str] = ()) -> bytes:
    sentence = ARTICLES[language][0]
    paragraphs = [f"{n}: {sentence} {sentence}" for n in range(6)]
    blocks = [f"<div>{line}</div>" if n % 2 else f"<p>{line}</p>" for n, line in enumerate(top)]
    body = "".join(f"<p>{p}</p>" for p in [*prose, *paragraphs]) + "".join(f"<p>{line}</p>" for line in bottom)
    html = (
        f'<!DOCTYPE html><html lang="{language}"><head><meta charset="utf-8"><title>T</title></head><body>{NAV}'
        f"<article><h1>{sentence[:20]}</h1>{''.join(blocks)}{body}</article></body></html>"
    )
    return html.encode()


@pytest.mark.parametrize("language", sorted(ARTICLES))
def test_an_unmarked_byline_date_and_reading_time_are_left_out(language: str) -> None:
    sentence, byline, date, reading = ARTICLES[language]
    text = parse_html(article(language, [byline, date], [reading])).text
    assert text.count(sentence) == 12
    for line in (byline, date, reading):
        assert line not in text
    # (the same lines written as one block: a byline with a date and a reading time)
    text = parse_html(article(language, [f"{byline} · {date}<br>{reading}"])).text
    assert text.count(sentence) == 12 and byline not in text and reading not in text


@pytest.mark.parametrize("line", MORE_LINES)
def test_more_unmarked_lines_are_left_out(line: str) -> None:
    text = parse_html(article("en", [line])).text
    assert line not in text and text.count(ARTICLES["en"][0]) == 12


KEPT = [
    ("en", "By 2030 the city plans to move the whole market uphill, away from the river."),
    ("en", "The market reopened on 3 March 2024, two weeks after the water went down."),
    ("en", "By Monday."),
    ("de", "Von der Brücke aus sieht man, wie weit das Wasser gestiegen ist."),
    ("de", "Am 3. März 2024 trat das neue Gesetz in Kraft."),
    ("fr", "Par ailleurs, la mairie a voté un budget pour les digues."),
    ("es", "Por otro lado, el río creció dos metros en una noche."),
    ("it", "Di recente il comune ha deciso di spostare il mercato."),
    ("nl", "Door de regen steeg het water in een nacht twee meter."),
    ("pt", "Por outro lado, o rio subiu dois metros numa noite."),
    ("he", "מאת השנים האחרונות ועד היום נבנו כאן בתים רבים ליד הנהר."),
    ("zh", "文化中心"),
    ("en", "10:15"),
]


@pytest.mark.parametrize(("language", "line"), KEPT)
def test_prose_that_starts_like_a_byline_or_mentions_a_date_is_kept(language: str, line: str) -> None:
    _, byline, date, _ = ARTICLES[language]
    text = parse_html(article(language, [byline, date], prose=[line])).text
    assert line in text
    assert byline not in text and date not in text


@pytest.mark.parametrize("line", [line for _, line in KEPT])
def test_prose_is_no_byline_line(line: str) -> None:
    assert not is_byline_line(line)


def test_a_thread_keeps_the_dates_of_its_posts() -> None:
    """Many date lines: a forum thread or a log, whose entries keep their dates (a guard on the
    rule's limit: it held before the rule too)."""
    sentence = ARTICLES["en"][0]
    posts = "".join(f"<div>06-29-2004, 0{n}:19 AM</div><p>Post {n}. {sentence} {sentence}</p>" for n in range(6))
    html = f"<!DOCTYPE html><html><body>{NAV}<div class='thread'>{posts}</div></body></html>"
    text = parse_html(html.encode()).text
    assert text.count("06-29-2004") == 6


def test_a_date_line_indented_in_the_source_is_left_out() -> None:
    """The block's text as written (a template's indentation and newlines) is read as the reader
    sees it: its spaces do not make it a long line of many words."""
    indent = "\n" + " " * 40
    sentence = ARTICLES["en"][0]
    date = "Thu, January 10, 2008"
    text = parse_html(article("en", [f"<b>{indent}{date}{indent}</b>{indent}"])).text
    assert date not in text and text.count(sentence) == 12
    assert is_byline_line(f"{indent}{date}{indent}")


def story(lines: str) -> bytes:
    sentence = ARTICLES["en"][0]
    paragraphs = "".join(f"<p>{n}: {sentence} {sentence}</p>" for n in range(6))
    html = (
        f"<!DOCTYPE html><html><head><title>T</title></head><body>{NAV}"
        f"<article><h1>The market moves uphill</h1><div class='text'>{lines}{paragraphs}</div></article></body></html>"
    )
    return html.encode()


INLINE_DATES = [
    "<div class='meta'><h2>Flood</h2><small class='date'>December 27, 2007, 5:19 pm</small></div>",
    "<table><tr><td><span class='published'>Published - Sunday, December 30, 2007</span></td></tr></table>",
    "<em>Updated 3 March 2026</em>",
    "<span>5 min read</span>",
]


@pytest.mark.parametrize("line", INLINE_DATES)
def test_a_date_line_written_from_an_inline_element_is_left_out(line: str) -> None:
    text = parse_html(story(line)).text
    for words in ("2007", "2026", "min read"):
        assert words not in text
    assert text.count(ARTICLES["en"][0]) == 12


def test_an_inline_byline_and_a_dated_sentence_stay() -> None:
    lines = (
        "<span>By Jane Doe, 3 March 2026</span><p>Lead.</p>"
        "<em>The market reopened on 3 March 2024, two weeks after the water went down.</em>"
    )
    text = parse_html(story(lines)).text
    assert "By Jane Doe, 3 March 2026" in text and "The market reopened on 3 March 2024" in text


def test_a_log_of_inline_dates_keeps_them() -> None:
    """More date lines than an article has: a log's entries, which keep their dates."""
    sentence = ARTICLES["en"][0]
    entries = "".join(f"<span>June {n + 1}, 2004</span><p>Entry {n}. {sentence} {sentence}</p>" for n in range(6))
    html = f"<!DOCTYPE html><html><body>{NAV}<div class='log'>{entries}</div></body></html>"
    text = parse_html(html.encode()).text
    assert all(f"June {n + 1}, 2004" in text for n in range(6))
