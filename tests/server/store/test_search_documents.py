"""search_documents over the store, on SQLite (FTS5) and PostgreSQL (GIN full-text): a document (a
page, a caption track) is found by its words in German, Hebrew, French and Chinese, while
get_documents would serve it and only by members of its workspace; ranked, paged, kept current as
receipts settle, purged with them."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from tortoise.connection import get_connection

from evidencekit.server.evidence import transcript
from evidencekit.server.evidence.documents import UnknownDocument, get_documents
from evidencekit.server.evidence.search_documents import BadPageToken, search_documents
from evidencekit.server.evidence.store import jobs, receipts, search_index
from evidencekit.server.evidence.store.caption_documents import caption_documents
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.models import DocumentSearch, Receipt, Workspace
from evidencekit.server.evidence.store.receipts import RetrieveRequest
from tests.server.store.test_receipts import RESULT
from tests.server.store.test_service import principal_in
from tests.support import validator_named

pytestmark = pytest.mark.anyio

PAGES = {
    "https://de.example/wasserstoff": (
        "Wasserstoff als Energieträger",
        "Die Elektrolyse spaltet Wasser in Wasserstoff und Sauerstoff. Grüner Wasserstoff entsteht mit "
        "Strom aus Wind und Sonne; die Speicherung bleibt teuer."),
    "https://he.example/energy": (
        "אנרגיה מתחדשת בישראל",
        "תחנות כוח סולאריות בנגב מספקות חשמל נקי. האגירה של האנרגיה בסוללות היא האתגר הבא."),
    "https://zh.example/hydrogen": (
        "氢能源的发展",
        "电解水可以制取氢气。可再生能源发电后，储存和运输仍然是主要的难题。北京大学的研究团队正在研究新的催化剂。"),
    "https://hi.example/books": (
        "पुस्तकालय",
        "हम पुस्तकालय में किताब पढ़ते हैं। バスで図書館へ行きます。"),
    "https://fr.example/ete": (
        "L’été à Montréal",
        "Les festivals d’été attirent les visiteurs; la chaleur humide rend les nuits courtes."),
}


async def settle_page(workspace: Workspace, url: str, title: str, text: str, *, kind: str = "url_text",
                      language: str | None = None) -> uuid.UUID:
    receipt, _ = await receipts.submit(RetrieveRequest(workspace.id, uuid.uuid4(), url, kind, language))
    claimed = await jobs.claim("worker-1", timedelta(minutes=1), max_attempts=3)
    assert claimed is not None and claimed.id == receipt.id
    await jobs.settle(claimed, "worker-1", RESULT, Content(hashlib.sha256(text.encode()).hexdigest(), url, title, "", text, text, []))
    return receipt.id


async def stored_pages() -> tuple[Workspace, object]:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for url, (title, text) in PAGES.items():
        await settle_page(lab, url, title, text)
    return lab, reader


def parents(answer: dict[str, object]) -> list[str]:
    assert validator_named("search_documents").output_errors(answer) == []
    return [result["parent"] for result in answer["results"]]  # type: ignore[index, union-attr]


@pytest.mark.parametrize(("query", "expected"), [
    ("wasserstoff", "documents/de.example/wasserstoff"),
    ("GRÜNER Energieträger", "documents/de.example/wasserstoff"),  # case and umlauts folded, every word
    ("gruner", "documents/de.example/wasserstoff"),  # accents do not matter
    ("האנרגיה", "documents/he.example/energy"),
    ("חשמל נקי", "documents/he.example/energy"),
    ("氢气", "documents/zh.example/hydrogen"),  # a two-character word inside a sentence
    ("北京大学", "documents/zh.example/hydrogen"),
    ("催", "documents/zh.example/hydrogen"),  # one character
    ("ETE montreal", "documents/fr.example/ete"),
    ("किताब", "documents/hi.example/books"),  # vowel signs and viramas belong to the word
    ("バス", "documents/hi.example/books"),
])
async def test_a_query_finds_the_document_holding_its_words(store: str, query: str, expected: str) -> None:
    _, reader = await stored_pages()
    assert parents(await search_documents(reader, query)) == [expected]  # type: ignore[arg-type]


@pytest.mark.parametrize("query", ["क", "कित", "パス"])
async def test_a_letter_of_a_word_or_another_kana_word_finds_nothing(store: str, query: str) -> None:
    """Marks are not separators (क + ि + त... is one word, not its consonants), and a voicing mark
    is not an accent (パス, pass, is not バス, bus)."""
    _, reader = await stored_pages()
    assert parents(await search_documents(reader, query)) == []  # type: ignore[arg-type]


async def test_a_result_names_a_document_get_documents_serves(store: str) -> None:
    _, reader = await stored_pages()
    answer = await search_documents(reader, "Elektrolyse")  # type: ignore[arg-type]
    [result] = answer["results"]
    assert result["title"] == "Wasserstoff als Energieträger"
    assert result["uri"] == "https://de.example/wasserstoff"
    assert "Elektrolyse spaltet Wasser" in result["snippet"]
    document = (await get_documents(reader, [result["parent"]]))["documents"][0]  # type: ignore[arg-type]
    assert document["uri"] == result["uri"]


async def test_a_snippet_is_taken_around_the_match(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    filler = " ".join(["Vorrede"] * 200)
    await settle_page(lab, "https://de.example/long", "Lang", f"{filler} Hier steht das Stichwort Quellenkritik. {filler}")
    [result] = (await search_documents(reader, "quellenkritik"))["results"]  # type: ignore[arg-type]
    assert "Stichwort Quellenkritik." in result["snippet"]
    assert result["snippet"].startswith("…") and result["snippet"].endswith("…")
    assert len(result["snippet"]) <= 310


async def test_no_match_is_an_empty_answer_and_any_word_is_tried_when_none_holds_all(store: str) -> None:
    _, reader = await stored_pages()
    assert parents(await search_documents(reader, "Quantencomputer")) == []  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "…!?")) == []  # type: ignore[arg-type]
    # no page holds both: each that holds either is answered
    assert sorted(parents(await search_documents(reader, "Sauerstoff 催化剂"))) == [  # type: ignore[arg-type]
        "documents/de.example/wasserstoff", "documents/zh.example/hydrogen"]


async def test_title_matches_rank_first(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://a.example/body", "Allgemeines", "Ein Absatz erwähnt Photovoltaik einmal unter anderem.")
    await settle_page(lab, "https://a.example/title", "Photovoltaik", "Module auf dem Dach erzeugen Strom aus Licht.")
    assert parents(await search_documents(reader, "photovoltaik")) == [  # type: ignore[arg-type]
        "documents/a.example/title", "documents/a.example/body"]


@pytest.mark.parametrize("candidates", [search_index.CANDIDATES, 7])
async def test_pages_follow_each_other_without_repeats(store: str, candidates: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Also when more documents match than are ranked at once (CANDIDATES): every page is there."""
    monkeypatch.setattr(search_index, "CANDIDATES", candidates)
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for n in range(7):
        await settle_page(lab, f"https://p.example/{n}", f"Seite {n}", f"Gemeinsames Wort Archiv, Seite {n}.")
    seen: list[str] = []
    token = None
    while True:
        answer = await search_documents(reader, "archiv", 3, token)  # type: ignore[arg-type]
        seen += parents(answer)
        token = answer.get("next_page_token")
        if token is None:
            break
    assert sorted(seen) == sorted(f"documents/p.example/{n}" for n in range(7))
    with pytest.raises(BadPageToken, match="another query"):
        await search_documents(reader, "seite", 3, (await search_documents(reader, "archiv", 3))["next_page_token"])  # type: ignore[arg-type]
    with pytest.raises(BadPageToken, match="not a next_page_token"):
        await search_documents(reader, "archiv", 3, "bm90IGEgdG9rZW4")  # type: ignore[arg-type]


async def test_past_the_ranked_candidates_the_newest_are_answered_and_pages_end(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_index, "CANDIDATES", 5)
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for n in range(7):
        await settle_page(lab, f"https://p.example/{n}", f"Seite {n}", f"Gemeinsames Wort Archiv, Seite {n}.")
    first = await search_documents(reader, "archiv", 3)  # type: ignore[arg-type]
    second = await search_documents(reader, "archiv", 3, first["next_page_token"])  # type: ignore[arg-type]
    seen = parents(first) + parents(second)
    assert sorted(seen) == [f"documents/p.example/{n}" for n in range(2, 7)]  # the 5 newest, once each
    assert "next_page_token" not in second


async def test_only_members_of_the_workspace_find_its_documents(store: str) -> None:
    await stored_pages()
    other = await Workspace.create(name="other")
    outsider = await principal_in(other, "outsider", "owner")
    assert parents(await search_documents(outsider, "wasserstoff")) == []  # type: ignore[arg-type]


async def test_a_name_stored_in_two_workspaces_is_one_result(store: str) -> None:
    lab, reader = await stored_pages()
    second = await Workspace.create(name="second")
    from evidencekit.server.evidence.store import access
    from evidencekit.server.evidence.store.models import User
    await access.add_member(second, await User.get(id=reader.user_id), "viewer")  # type: ignore[attr-defined]
    await settle_page(second, "https://de.example/wasserstoff", "Wasserstoff, neu", "Wasserstoff im Verkehr.")
    answer = await search_documents(reader, "wasserstoff")  # type: ignore[arg-type]
    assert parents(answer) == ["documents/de.example/wasserstoff"]
    assert answer["results"][0]["title"] == "Wasserstoff, neu"  # as get_documents serves it: the latest


async def test_a_new_revision_replaces_the_words_it_is_found_by(store: str) -> None:
    lab, reader = await stored_pages()
    await settle_page(lab, "https://de.example/wasserstoff", "Wasserstoff", "Jetzt geht es um Brennstoffzellen.")
    assert parents(await search_documents(reader, "brennstoffzellen")) == ["documents/de.example/wasserstoff"]  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "elektrolyse")) == []  # type: ignore[arg-type]
    assert await DocumentSearch.filter(name_key="de.example/wasserstoff").count() == 1


async def test_a_name_get_documents_refuses_is_not_found(store: str) -> None:
    """The same URL kept twice (asked in two languages): get_documents serves the latest, and
    refuses the name once that one's receipts expire, though the older one's have not; search says
    the same."""
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://x.example/p", "Sprache", "Eine Seite über Mundarten.", language="de")
    newer = await settle_page(lab, "https://x.example/p", "Language", "A page on Mundarten and dialects.",
                              language="en")
    assert parents(await search_documents(reader, "mundarten")) == ["documents/x.example/p"]  # type: ignore[arg-type]
    past = datetime.now(UTC) - timedelta(seconds=1)
    await Receipt.filter(id=newer).update(valid_until=past)
    receipt = await Receipt.get(id=newer)
    await DocumentSearch.filter(evidence_id=receipt.evidence_id).update(valid_until=past)  # type: ignore[attr-defined]
    with pytest.raises(UnknownDocument):
        await get_documents(reader, ["documents/x.example/p"])  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "mundarten")) == []  # type: ignore[arg-type]


CUES = [{"start_ms": 1000, "end_ms": 3000, "text": "Willkommen zum Vortrag."},
        {"start_ms": 62500, "end_ms": 66000, "text": "Heute geht es um\nGeothermie im Oberrhein."}]


async def settle_captions(workspace: Workspace, url: str, title: str | None, cues: list[dict[str, object]]) -> uuid.UUID:
    """A caption track settled as the worker keeps one (worker.content_of)."""
    receipt, _ = await receipts.submit(RetrieveRequest(workspace.id, uuid.uuid4(), url, "published_captions", None))
    claimed = await jobs.claim("worker-1", timedelta(minutes=1), max_attempts=3)
    assert claimed is not None and claimed.id == receipt.id
    await jobs.settle(claimed, "worker-1", RESULT, Content(
        hashlib.sha256(repr(cues).encode()).hexdigest(), url, title, "", transcript.cue_text(cues),  # type: ignore[arg-type]
        transcript.cue_lines(cues), cues))  # type: ignore[arg-type]
    return receipt.id


async def test_a_page_and_its_captions_are_one_document_holding_both(store: str) -> None:
    """A talk's page retrieved as a page and for its captions: one name, whose words of either are
    found and whose document is the page, then its transcript; while only the captions are still
    served, they are the document."""
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    page = await settle_page(lab, "https://v.example/talk", "Erdwärme", "Ein Vortrag über Tiefenbohrungen.")
    await settle_captions(lab, "https://v.example/talk", "Erdwärme", CUES)
    for word in ("tiefenbohrungen", "oberrhein"):
        answer = await search_documents(reader, word)  # type: ignore[arg-type]
        assert parents(answer) == ["documents/v.example/talk"]
        assert word in answer["results"][0]["snippet"].lower()
    [document] = (await get_documents(reader, ["documents/v.example/talk"]))["documents"]  # type: ignore[arg-type]
    assert document["title"] == "Erdwärme" and document["uri"] == "https://v.example/talk"
    assert document["content"] == ("Ein Vortrag über Tiefenbohrungen.\n\n## Transcript\n\n"
                                   "[00:00:01] Willkommen zum Vortrag.\n[00:01:02] Heute geht es um Geothermie im Oberrhein.")
    past = datetime.now(UTC) - timedelta(seconds=1)
    await Receipt.filter(id=page).update(valid_until=past)
    await DocumentSearch.filter(evidence_id=(await Receipt.get(id=page)).evidence_id).update(valid_until=past)  # type: ignore[attr-defined]
    assert parents(await search_documents(reader, "tiefenbohrungen")) == []  # type: ignore[arg-type]
    [document] = (await get_documents(reader, ["documents/v.example/talk"]))["documents"]  # type: ignore[arg-type]
    assert document["content"].startswith("# Erdwärme\n\n[00:00:01] Willkommen")


async def test_captions_stored_before_they_were_documents_become_documents_by_migration_0015(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_captions(lab, "https://v.example/talk.vtt", None, CUES)
    connection = get_connection("default")
    # as a settle kept captions before: the contract's text and a copy of it, not indexed
    await connection.execute_query("UPDATE evidence_revision SET text = 'Willkommen zum Vortrag.\nHeute geht es um', "
                                   "markdown = 'Willkommen zum Vortrag.\nHeute geht es um'")
    await connection.execute_query("DELETE FROM document_search")
    assert parents(await search_documents(reader, "geothermie")) == []  # type: ignore[arg-type]
    await caption_documents(None, SimpleNamespace(client=connection))
    assert parents(await search_documents(reader, "geothermie")) == ["documents/v.example/talk.vtt"]  # type: ignore[arg-type]
    [document] = (await get_documents(reader, ["documents/v.example/talk.vtt"]))["documents"]  # type: ignore[arg-type]
    assert document["content"] == ("# Transcript of https://v.example/talk.vtt\n\n[00:00:01] Willkommen zum Vortrag.\n"
                                   "[00:01:02] Heute geht es um Geothermie im Oberrhein.")


async def test_expired_documents_are_not_found_and_the_purge_drops_them(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    old = await settle_page(lab, "https://de.example/alt", "Alt", "Ein Text über Moorböden.")
    await settle_page(lab, "https://de.example/neu", "Neu", "Ein Text über Moorböden und Torf.")
    await Receipt.filter(id=old).update(valid_until=datetime.now(UTC) - timedelta(seconds=1))
    # the index still holds the row's valid_until as settled: expire it as the receipt's
    await DocumentSearch.filter(name_key="de.example/alt").update(valid_until=datetime.now(UTC) - timedelta(seconds=1))
    assert parents(await search_documents(reader, "moorboden")) == ["documents/de.example/neu"]  # type: ignore[arg-type]
    assert await receipts.purge_expired() == 1
    assert [row.name_key for row in await DocumentSearch.all()] == ["de.example/neu"]


async def test_a_later_receipt_of_the_same_content_keeps_it_found(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    first = await settle_page(lab, "https://de.example/gleich", "Gleich", "Derselbe Inhalt über Auenwälder.")
    await settle_page(lab, "https://de.example/gleich", "Gleich", "Derselbe Inhalt über Auenwälder.")
    row = await DocumentSearch.get(name_key="de.example/gleich")
    second_until = (await Receipt.filter(evidence_id=row.evidence_id).order_by("-valid_until").first())
    assert second_until is not None and row.valid_until == second_until.valid_until
    await Receipt.filter(id=first).update(valid_until=datetime.now(UTC) - timedelta(seconds=1))
    await receipts.purge_expired()
    assert parents(await search_documents(reader, "auenwalder")) == ["documents/de.example/gleich"]  # type: ignore[arg-type]


async def test_documents_stored_before_the_index_are_indexed_by_the_migration(store: str) -> None:
    _, reader = await stored_pages()
    connection = get_connection("default")
    await connection.execute_query("DELETE FROM document_search")
    assert parents(await search_documents(reader, "wasserstoff")) == []  # type: ignore[arg-type]
    assert await search_index.index_stored(connection, now=datetime.now(UTC), batch=2) == len(PAGES)
    assert parents(await search_documents(reader, "wasserstoff")) == ["documents/de.example/wasserstoff"]  # type: ignore[arg-type]
