"""search_documents finds what a reader of each language would take for the query's words (their
inflections, compound parts, Hebrew prefix letters and spellings, a CJK phrase's pieces), ranks
exact matches first and says of each hit how it matched, alike on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from evidencekit.server.evidence.search_documents import search_documents
from evidencekit.server.evidence.store.models import Workspace
from tests.server.store.test_search_documents import parents, settle_page
from tests.server.store.test_service import principal_in

pytestmark = pytest.mark.anyio

PAGES = {
    "https://de.example/energie": (
        "Energiewende im Landkreis",
        "Die neuen Windkraftanlagen am Deich liefern Strom für dreitausend Haushalte. Der Bürgermeister "
        "eröffnete den Windpark im Frühjahr; die Zugvögel meiden die Rotoren."),
    "https://de.example/bildung": (
        "Bildung in der Stadt",
        "Die Schule am Markt bekommt eine neue Turnhalle, und der Schulweg wird sicherer."),
    "https://he.example/library": (
        "הספרייה העירונית",
        "הספרייה בירושלים פתוחה גם בערב, והקוראים מגיעים מכל העיר לאולם הקריאה החדש."),
    "https://zh.example/transport": (
        "城市的公共服务",
        "这座城市正在扩建地铁网络。新的交通规划让公交车和出租车更方便。"),
    "https://fr.example/culture": (
        "La saison culturelle",
        "Les spectacles de la saison attirent un public nombreux au théâtre municipal."),
    "https://en.example/garden": (
        "Urban gardens",
        "Honeybees and bumblebees visit the flowers; pollinators thrive on the rooftops of the old town."),
    "https://en.example/coffee": (
        "Coffee roasting",
        "The coffee beans are roasted slowly in small batches every morning."),
}


async def _reader() -> object:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for url, (title, text) in PAGES.items():
        await settle_page(lab, url, title, text)
    return reader


@pytest.mark.parametrize(("query", "expected"), [
    ("Anlagen", "de.example/energie"),  # the end of a compound
    ("Anlage", "de.example/energie"),  # ... in another inflection
    ("Windkraft", "de.example/energie"),  # its beginning
    ("Schulen", "de.example/bildung"),  # the page says "Schule"
    ("Buergermeister", "de.example/energie"),  # ü spelled out
    ("ירושלים", "he.example/library"),  # the page says בירושלים
    ("ספרייה", "he.example/library"),  # the page says הספרייה
    ("הספריה", "he.example/library"),  # defective spelling of הספרייה
    ("城市交通", "zh.example/transport"),  # the page holds 城市 and 交通 apart
    ("spectacle", "fr.example/culture"),
    ("pollinator", "en.example/garden"),
    ("bee", "en.example/garden"),  # honeybees, bumblebees
    ("rooftop", "en.example/garden"),
])
async def test_another_form_of_a_word_finds_its_page_and_says_it_guessed(store: str, query: str, expected: str) -> None:
    reader = await _reader()
    answer = await search_documents(reader, query)  # type: ignore[arg-type]
    assert parents(answer)[0] == f"documents/{expected}"
    first = answer["results"][0]
    assert (first["match"], first["matched_words"]) == ("forms", [query])


async def test_a_page_holding_the_words_as_written_ranks_before_one_holding_another_form(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://de.example/singular", "Schule", "Die Schule liegt am Markt. " * 5)
    await settle_page(lab, "https://de.example/plural", "Bildung", "Viele Schulen liegen am Markt.")
    answer = await search_documents(reader, "Schulen")  # type: ignore[arg-type]
    assert [(r["parent"], r["match"]) for r in answer["results"]] == [  # type: ignore[index]
        ("documents/de.example/plural", "exact"), ("documents/de.example/singular", "forms")]


async def test_a_word_no_page_holds_is_named_as_missing(store: str) -> None:
    reader = await _reader()
    answer = await search_documents(reader, "coffee xyzzy")  # type: ignore[arg-type]
    [result] = answer["results"]
    assert (result["parent"], result["match"], result["matched_words"]) == (
        "documents/en.example/coffee", "some", ["coffee"])


async def test_every_word_as_written_is_an_exact_match(store: str) -> None:
    reader = await _reader()
    [result] = (await search_documents(reader, "Coffee BEANS"))["results"]  # type: ignore[arg-type]
    assert (result["match"], result["matched_words"]) == ("exact", ["Coffee", "BEANS"])


async def test_a_snippet_shows_where_the_other_form_stands(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    filler = " ".join(["Vorrede"] * 200)
    await settle_page(lab, "https://de.example/lang", "Lang", f"{filler} Hier stehen Windkraftanlagen am Deich. {filler}")
    [result] = (await search_documents(reader, "Anlage"))["results"]  # type: ignore[arg-type]
    assert "Windkraftanlagen am Deich" in result["snippet"]


async def test_unrelated_words_sharing_letters_are_not_taken_for_forms(store: str) -> None:
    reader = await _reader()
    assert parents(await search_documents(reader, "Kraftwerk")) == []  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "ספר")) == []  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "Schulbus")) == []  # type: ignore[arg-type]


async def test_pages_run_from_the_exact_matches_into_the_guesses_without_repeats(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for n in range(3):
        await settle_page(lab, f"https://de.example/plural-{n}", f"Seite {n}", "Die Schulen der Stadt.")
    for n in range(2):
        await settle_page(lab, f"https://de.example/singular-{n}", f"Blatt {n}", "Die Schule der Stadt.")
    seen, names, token = [], set(), None
    while True:
        answer = await search_documents(reader, "Schulen", 2, token)  # type: ignore[arg-type]
        seen += [(r["parent"].rsplit("/", 1)[1].split("-")[0], r["match"]) for r in answer["results"]]  # type: ignore[index]
        names |= {r["parent"] for r in answer["results"]}  # type: ignore[index]
        token = answer.get("next_page_token")
        if token is None:
            break
    assert seen == [("plural", "exact")] * 3 + [("singular", "forms")] * 2 and len(names) == 5


async def test_when_no_page_holds_every_word_the_one_holding_more_of_them_comes_first(store: str) -> None:
    """PostgreSQL's any-word answer ranked by ts_rank_cd, which counts how often, not how many of
    the words: three pages full of "au" came before the one holding "moustoir lorient"."""
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for n in range(3):
        await settle_page(lab, f"https://fr.example/au-{n}", "Au marché", "Au marché, au port, au quai, au café. " * 20)
    await settle_page(lab, "https://fr.example/stade", "Le stade", "Le stade du Moustoir à Lorient accueille le match.")
    answer = await search_documents(reader, "au moustoir lorient parking")  # type: ignore[arg-type]
    first = answer["results"][0]
    assert (first["parent"], first["match"], first["matched_words"]) == (
        "documents/fr.example/stade", "some", ["moustoir", "lorient"])
