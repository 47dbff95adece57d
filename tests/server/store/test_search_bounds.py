"""search_documents' work is bounded by what the caller owns and by the query, not by the store
(issue 52): the index reads only the caller's rows, a long CJK query is a bounded phrase search
answering a normal query as before, snippets cost a few passes over a text and are cut off the event
loop, page tokens are signed for one caller and one query, and one credential's searches are
bounded on every surface."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import unicodedata
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tortoise.connection import get_connection

from evidencekit.server.evidence import search_text
from evidencekit.server.evidence.handlers import EvidenceHandlers
from evidencekit.server.evidence.search_documents import BadPageToken, search_documents
from evidencekit.server.evidence.search_share import SearchShare, TooManySearches
from evidencekit.server.evidence.store import access, search_index
from evidencekit.server.evidence.store.models import User, Workspace
from evidencekit.server.evidence.store.sql import dialect_params, is_postgres_connection
from evidencekit.server.generated.models import SearchDocumentsInput
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._errors import RateLimited
from tests.server.store.test_search_documents import parents, settle_page
from tests.server.store.test_service import principal_in
from tests.support import alternating_cpu_seconds

pytestmark = pytest.mark.anyio


async def test_the_index_reads_only_the_callers_rows(store: str) -> None:
    """Another tenant's 40 documents holding the word are not read for a caller who has none: the
    index is asked for the caller's scope beside the word (before, every tenant's matches were read,
    then dropped: a caller paid for the whole store, and the time told other tenants' word counts)."""
    crowd = await Workspace.create(name="crowd")
    for n in range(40):
        await settle_page(crowd, f"https://crowd.example/{n}", f"Seite {n}", f"Gemeinsames Wort Torfmoos {n}.")
    mine = await Workspace.create(name="mine")
    await settle_page(mine, "https://mine.example/a", "Eigene", "Ein Torfmoos im eigenen Garten.")
    empty = await Workspace.create(name="empty")
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    table = "document_search" if postgres else "document_search_fts"

    async def rows_the_index_matches(workspace: Workspace) -> int:
        condition, values = search_index.index_condition([str(workspace.id)], search_text.terms("torfmoos"),
                                                         every=True, postgres=postgres)
        statement = dialect_params(f"SELECT count(*) AS n FROM {table} WHERE {condition}", postgres)
        rows = await connection.execute_query_dict(statement, values if postgres else values[:1])
        return int(rows[0]["n"])

    assert await rows_the_index_matches(empty) == 0
    assert await rows_the_index_matches(mine) == 1
    assert await rows_the_index_matches(crowd) == 40
    reader = await principal_in(mine, "reader", "viewer")
    assert parents(await search_documents(reader, "torfmoos")) == ["documents/mine.example/a"]  # type: ignore[arg-type]


def test_a_long_cjk_query_holds_a_bounded_number_of_words() -> None:
    for query in ("字" * 500, "".join(chr(0x4E00 + n) for n in range(500)), "ab" * 250, "城市交通" * 125):
        found = search_text.terms(query)
        assert sum(len(term.words) for term in found) <= search_text.MAX_QUERY_WORDS, query[:8]
        assert all(len(term.words) < search_text.MAX_PHRASE_CHARS for term in found), query[:8]


@pytest.mark.parametrize("query", ["城市", "城市交通", "北京大学的研究团"])
def test_a_normal_cjk_query_is_one_phrase_of_its_pairs_as_before(query: str) -> None:
    assert search_text.terms(query) == [search_text.Term(tuple(query[i:i + 2] for i in range(len(query) - 1)))]


async def test_a_long_cjk_query_finds_what_it_holds_and_only_that(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    sentence = "可再生能源发电后储存和运输仍然是主要的难题北京大学的研究团队正在研究新的催化剂"
    await settle_page(lab, "https://zh.example/full", "全文", "前言。" + sentence + "。结语。")
    await settle_page(lab, "https://zh.example/half", "一半", "前言。" + sentence[:20] + "。另外的话。")
    assert parents(await search_documents(reader, sentence)) == ["documents/zh.example/full"]  # type: ignore[arg-type]


async def test_a_query_postgresql_reads_as_no_word_finds_nothing_on_either_database(store: str) -> None:
    """PostgreSQL's parser drops some characters SQLite indexes (a Bengali fraction sign): such a
    query asks for no word there, and must not answer every document of the caller's workspaces."""
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://de.example/wasser", "Wasser", "Ein Text über Wasser.")
    await settle_page(lab, "https://de.example/erde", "Erde", "Ein Text über Erde.")
    assert parents(await search_documents(reader, "\u09f4")) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["字" * 500, "ab" * 250, "字文" * 400])
async def test_a_long_run_is_found_alike_on_both_databases(store: str, text: str) -> None:
    """PostgreSQL keeps 256 positions of a word: a phrase of 499 pairs of one character found
    nothing there and 5 pages on SQLite. The query is its own text here."""
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for n in range(3):
        await settle_page(lab, f"https://runs.example/{n}", f"Run {n}", f"Vorwort {n}. {text} Nachwort.")
    await settle_page(lab, "https://runs.example/short", "Short", f"Vorwort. {text[:3]} Nachwort.")
    found = parents(await search_documents(reader, text[:500]))  # type: ignore[arg-type]
    # the pages holding the run first; one holding only its pieces (a guess) may follow
    assert sorted(found[:3]) == [f"documents/runs.example/{n}" for n in range(3)]
    assert found[3:] in ([], ["documents/runs.example/short"])


async def test_a_phrase_past_a_words_256th_place_is_the_same_answer_on_both_databases(store: str) -> None:
    """PostgreSQL keeps 256 places of a word; the index text keeps as many on SQLite (the later
    ones written as a place holder), so a phrase that needs the 300th is found on neither, a
    phrase within the first 256 on both, and the word itself on both."""
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://runs.example/late", "Late", "字" * 300 + "文。" + "早字文")
    assert parents(await search_documents(reader, "字字文")) == []  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "早字文")) == ["documents/runs.example/late"]  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "字字字")) == ["documents/runs.example/late"]  # type: ignore[arg-type]
    words = search_text.words("字" * 300).split()
    assert words.count("字字") == search_text.MAX_PLACES and len(words) == 300


GERMAN = ("Die Straße am Fluss führt über die Brücke zur Mühle; dort wohnen Bürger seit Jahrhunderten. " * 220)[:20_000]


def test_a_snippet_costs_a_few_passes_over_its_text_even_when_the_word_is_only_in_the_title() -> None:
    """A title-only match on a 20,000-character German page cost 18 ms, each character folded in
    Python: twelve times what folding the whole text once costs (search_text.fold, the index's own
    fold). Now it costs about that one fold."""
    in_title = search_text.terms("Hauptbahnhof")
    search_text.snippet(GERMAN, in_title)
    folded, missing = alternating_cpu_seconds(lambda cut: cut(), lambda: search_text.fold(GERMAN),
                                              lambda: search_text.snippet(GERMAN, in_title))
    assert missing / folded < 5, (folded, missing)


@pytest.mark.parametrize(("text", "query", "shown"), [
    ("a " * 300 + "Die Strasse ist lang. " + "b " * 300, "straße", "Strasse ist lang"),
    ("a " * 300 + "Die Straße ist lang. " + "b " * 300, "strasse", "Straße ist lang"),
    ("a " * 300 + unicodedata.normalize("NFD", "Ein Café am Platz. ") + "b " * 300, "cafe", "Caf"),
    ("a " * 300 + "אנחנו בְּתֵל אָבִיב היום. " + "b " * 300, "אביב", "אָבִיב"),
    ("字" * 400 + "城市交通" + "字" * 400, "城市交通", "城市交通"),
])
def test_a_snippet_is_taken_around_a_match_folded_any_way(text: str, query: str, shown: str) -> None:
    snippet = search_text.snippet(text, search_text.terms(query))
    assert shown in snippet and snippet.startswith("…"), snippet


@pytest.mark.parametrize(("word", "inside", "query"), [
    (unicodedata.normalize("NFD", "résumé"), "sumé", "sume"),
    ("אָבִיב", "ביב", "ביב"),
    (unicodedata.normalize("NFD", "Ångström"), "ngström", "ngstrom"),
])
def test_a_word_across_a_cut_of_the_text_is_not_matched_in_its_middle(word: str, inside: str, query: str) -> None:
    """The text is read in pieces of SNIPPET_CHUNK characters: a piece that begins inside a word,
    after a mark folded away, must not take the rest of the word for a word of its own."""
    found = search_text.terms(query)
    for into in range(1, len(word)):  # the cut this many characters into the word
        before = search_text.SNIPPET_CHUNK - into
        text = ("x " * before)[:before - 1] + " " + word + " filler" * 80 + " " + inside + " end" + " z" * 400
        assert text[search_text.SNIPPET_CHUNK - into:].startswith(word)
        snippet = search_text.snippet(text, found)
        assert " " + inside + " end" in snippet, (into, snippet[:60])


SPACED = st.lists(st.sampled_from(["Brücke", "Straße", "Mühle", "wort", "Wort", "zielwort", "城市", "交通", " ", "  ",
                                   "\n", "\t \n", " " * 700, "x" * 40, "É", "e\u0301"]), max_size=400).map("".join)


@settings(max_examples=300, deadline=None)
@given(SPACED, st.sampled_from(["zielwort", "strasse", "wort", "城市", "ete", "nichts"]))
def test_a_snippet_is_the_same_whatever_whitespace_the_text_holds(text: str, query: str) -> None:
    """Only the window a snippet shows is collapsed: the answer is the one the collapsed text gives."""
    found = search_text.terms(query)
    assert search_text.snippet(text, found) == search_text.snippet(" ".join(text.split()), found)


async def test_snippets_are_cut_in_a_worker_thread(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://de.example/lang", "Hauptbahnhof", GERMAN)
    threads: list[threading.Thread] = []
    cut = search_text.snippet

    def recording(text: str, found: list[search_text.Term], size: int = search_text.SNIPPET_CHARS,
                  budget: search_text.ScanBudget | None = None) -> str:
        threads.append(threading.current_thread())
        return cut(text, found, size, budget)

    monkeypatch.setattr(search_text, "snippet", recording)
    assert parents(await search_documents(reader, "hauptbahnhof")) == ["documents/de.example/lang"]  # type: ignore[arg-type]
    assert threads and threading.main_thread() not in threads


async def many_pages(count: int = 5) -> tuple[Workspace, object]:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    for n in range(count):
        await settle_page(lab, f"https://p.example/{n}", f"Seite {n}", f"Gemeinsames Wort Archiv, Seite {n}.")
    return lab, reader


def forged(token: str, **changes: object) -> str:
    payload = token.split(".", 1)[0]
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    raw = json.dumps({**data, **changes}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


async def test_a_forged_page_token_is_refused(store: str) -> None:
    _, reader = await many_pages()
    token = (await search_documents(reader, "archiv", 2))["next_page_token"]  # type: ignore[arg-type]
    assert parents(await search_documents(reader, "archiv", 2, token))  # type: ignore[arg-type]
    for bad in (forged(token, o=3), forged(token, e=0), forged(token, o=3) + "." + token.split(".", 1)[1],
                token[:-2] + ("AA" if not token.endswith("AA") else "BB")):
        with pytest.raises(BadPageToken, match="not a next_page_token"):
            await search_documents(reader, "archiv", 2, bad)  # type: ignore[arg-type]


async def test_a_page_token_is_the_callers_own(store: str) -> None:
    lab, reader = await many_pages()
    token = (await search_documents(reader, "archiv", 2))["next_page_token"]  # type: ignore[arg-type]
    other = await Workspace.create(name="other")
    stranger = await principal_in(other, "stranger", "owner")
    await settle_page(other, "https://q.example/1", "Archiv", "Ein Archiv.")
    with pytest.raises(BadPageToken, match="not a next_page_token"):
        await search_documents(stranger, "archiv", 2, token)  # type: ignore[arg-type]
    colleague = await principal_in(lab, "colleague", "viewer")  # the same workspaces: the same pages
    assert parents(await search_documents(colleague, "archiv", 2, token))  # type: ignore[arg-type]
    await access.add_member(other, await User.get(id=reader.user_id), "viewer")  # type: ignore[attr-defined]
    with pytest.raises(BadPageToken, match="not a next_page_token"):  # issued for the workspaces it had
        await search_documents(reader, "archiv", 2, token)  # type: ignore[arg-type]


async def test_one_credential_holds_a_bounded_share_of_searches() -> None:
    share = SearchShare(per_credential=2, running=1)
    first_in, release = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def search(credential: str, name: str) -> None:
        async with share.turn(credential):
            order.append(name)
            first_in.set()
            await release.wait()

    async with asyncio.TaskGroup() as group:
        group.create_task(search("a", "a1"))
        await first_in.wait()
        group.create_task(search("a", "a2"))  # waits for the one running turn
        await asyncio.sleep(0)
        with pytest.raises(TooManySearches):
            async with share.turn("a"):
                pass
        group.create_task(search("b", "b1"))  # another credential: its own share
        await asyncio.sleep(0)
        assert order == ["a1"]
        release.set()
    assert sorted(order) == ["a1", "a2", "b1"] and not share.open


async def test_a_search_past_the_share_is_refused_as_rate_limited_on_every_surface(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    handlers = EvidenceHandlers()
    handlers.searches.open[reader.token_id] = handlers.searches.per_credential  # type: ignore[attr-defined]
    context = RequestContext(request_id="r", surface="rest", principal=reader)
    with pytest.raises(RateLimited) as refused:
        await handlers.search_documents(SearchDocumentsInput(query="archiv"), context)
    assert refused.value.code == "too_many_searches" and refused.value.retry_after == 1
    handlers.searches.open.clear()
    await handlers.search_documents(SearchDocumentsInput(query="archiv"), context)  # its share free again


def test_workspace_scope_words_are_one_word_each() -> None:
    workspace = uuid.uuid4()
    assert search_text.words(search_index.scope_word(workspace, False)) == search_index.scope_word(workspace, False)


async def test_a_store_indexed_before_the_scope_is_upgraded(database_url: str) -> None:
    """Migration 0012 on a store of 0011: its indexed document gets its workspace's scope, one it
    never indexed (stored before 0011's index) is indexed, each found once by its workspace's
    members and by no one else."""
    import sqlite3
    from datetime import UTC, datetime, timedelta

    import asyncpg
    from tortoise.context import TortoiseContext
    from tortoise.migrations.api import migrate as tortoise_migrate

    from evidencekit.server.evidence.store.db import open_store, sqlite_path, tortoise_config
    from evidencekit.server.evidence.store.models import DocumentSearch

    async with TortoiseContext():
        await tortoise_migrate(config=tortoise_config(database_url), target="models.0011_document_search")
    postgres = not database_url.startswith("sqlite")
    workspace, now = uuid.uuid4(), datetime.now(UTC)
    rows: list[tuple[str, tuple[object, ...]]] = []
    for n, (title, text, indexed) in enumerate((("Indexiert", "Ein Text über Moorböden.", True),
                                                 ("Ungelesen", "Ein Text über Moorböden und Torf.", False))):
        evidence, key = uuid.uuid4(), f"https://old.example/{n}"
        rows += [
            ("evidence (id, workspace_id, source_key, kind, language, revision, updated_at)",
             (evidence, workspace, key, "url_text", "", 1, now)),
            ("evidence_revision (evidence_id, revision, content_hash, source_url, title, description, text, markdown, "
             "segments, created_at)", (evidence, 1, f"{n:064x}", key, title, "", text, text, "[]", now)),
            ("receipt (id, workspace_id, mutation_id, input_hash, url, kind, state, created_at, settled_at, "
             "valid_until, evidence_id, evidence_revision, attempts)",
             (uuid.uuid4(), workspace, uuid.uuid4(), f"{n:064x}", key, "url_text", "completed", now, now,
              now + timedelta(days=1), evidence, 1, 1))]
        if indexed:
            rows.append(("document_search (evidence_id, workspace_id, revision, name_key, valid_until, title_words, "
                         "body_words)", (evidence, workspace, 1, key.split("://")[1], now + timedelta(days=1),
                                         search_text.words(title), search_text.words(text))))
    if postgres:
        connection = await asyncpg.connect(database_url)
        try:
            for table, values in rows:
                places = ", ".join(f"${n + 1}" for n in range(len(values)))
                await connection.execute(f"INSERT INTO {table} VALUES ({places})", *values)
            await connection.execute(  # as 0011's keep() wrote it: the words' tsvector alone
                "UPDATE document_search SET search = setweight(to_tsvector('simple', title_words), 'A') || "
                "setweight(to_tsvector('simple', body_words), 'B'), title_words = '', body_words = ''")
        finally:
            await connection.close()
    else:
        database = sqlite3.connect(sqlite_path(database_url))
        with database:
            for table, values in rows:
                database.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(values))})", [
                    str(v) if isinstance(v, uuid.UUID) else v.isoformat(" ") if isinstance(v, datetime) else v
                    for v in values])
        database.close()
    async with open_store(database_url):
        lab = await Workspace.create(id=workspace, name="lab")
        reader = await principal_in(lab, "reader", "viewer")
        other = await Workspace.create(name="other")
        stranger = await principal_in(other, "stranger", "owner")
        assert sorted(parents(await search_documents(reader, "moorboden"))) == [  # type: ignore[arg-type]
            "documents/old.example/0", "documents/old.example/1"]
        assert parents(await search_documents(stranger, "moorboden")) == []  # type: ignore[arg-type]
        assert await DocumentSearch.all().count() == 2


@pytest.mark.parametrize(("candidates", "found"), [(2, {"new/0", "new/1"}), (3, {"new/0", "new/1", "old/1"})])
async def test_postgresql_looks_among_the_newest_rows_first_and_past_them_when_they_are_too_few(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch, candidates: int, found: set[str]) -> None:
    """A word is first looked for in the two newest recency buckets (search_index._NEWEST); the
    answer is the newest CANDIDATES matches either way: from the buckets when they hold that many,
    else from every row (two pages indexed long before the others are then among them)."""
    from evidencekit.server.evidence.store.db import open_store

    monkeypatch.setattr(search_index, "CANDIDATES", candidates)
    async with open_store(postgres_url):
        lab = await Workspace.create(name="lab")
        reader = await principal_in(lab, "reader", "viewer")
        for number in range(2):
            await settle_page(lab, f"https://example.com/old/{number}", "Reiher", "Graureiher am Teich")
        await get_connection("default").execute_script(  # later pages: three buckets further on
            f"SELECT setval(pg_get_serial_sequence('document_search', 'id'), {3 * search_index.RECENT})")
        for number in range(2):
            await settle_page(lab, f"https://example.com/new/{number}", "Reiher", "Graureiher im Schilf")
        answer = await search_documents(reader, "graureiher", page_size=10)
        assert {parent.removeprefix("documents/example.com/") for parent in parents(answer)} == found
