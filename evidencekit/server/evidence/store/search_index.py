"""search_documents' index: kept in the settle's transaction, purged with the receipts, queried ranked.

A row per document evidence (models.DocumentSearch; a page or a caption track, whose revision's
text is its cue text: served_documents.DOCUMENT_KINDS) holds the words (search_text.words) of its
current revision and the latest valid_until of the receipts that settled with it: a document is
found exactly while get_documents would serve it (an unexpired receipt refers to its current
revision). SQLite matches with FTS5 (bm25, the title weighted 4 to 1) over the row's words,
PostgreSQL with a GIN index over a tsvector of them written with the row (ts_rank_cd, the title
weight A; the words themselves are not kept there); both are created by migration 0011.

The index is keyed by workspace (migration 0012): each row also holds its workspace's scope word
(`scope_word`), an FTS5 column of its own on SQLite and a lexeme without position in the tsvector
on PostgreSQL, and every query asks for one of the caller's scope words beside its terms. The
index then intersects the caller's own rows with each term's (FTS5 and GIN skip through a long
list to the next row of a short one) instead of reading every tenant's matches and dropping the
others': at 10^5 other tenants' documents a search by a caller with none took 0.3-0.7 s.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence import search_rank, search_text
from evidencekit.server.evidence.index_words import IndexWords, entry_words
from evidencekit.server.evidence.store.served_documents import DOCUMENT_KINDS, served_documents
from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    rows_table,
    sql_time,
    sql_uuid,
)
from evidencekit.server.evidence.store.timestamps import as_datetime

# Migration 0011's index, as it was created then; migration 0012 replaces it with SQLITE_SCOPED_DDL.
SQLITE_DDL = """
CREATE VIRTUAL TABLE document_search_fts USING fts5(
    title_words, body_words, content='document_search', content_rowid='id',
    tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
CREATE TRIGGER document_search_added AFTER INSERT ON document_search BEGIN
    INSERT INTO document_search_fts(rowid, title_words, body_words) VALUES (new.id, new.title_words, new.body_words);
END;
CREATE TRIGGER document_search_removed AFTER DELETE ON document_search BEGIN
    INSERT INTO document_search_fts(document_search_fts, rowid, title_words, body_words)
    VALUES ('delete', old.id, old.title_words, old.body_words);
END;
CREATE TRIGGER document_search_changed AFTER UPDATE OF title_words, body_words ON document_search
WHEN old.title_words IS NOT new.title_words OR old.body_words IS NOT new.body_words BEGIN
    INSERT INTO document_search_fts(document_search_fts, rowid, title_words, body_words)
    VALUES ('delete', old.id, old.title_words, old.body_words);
    INSERT INTO document_search_fts(rowid, title_words, body_words) VALUES (new.id, new.title_words, new.body_words);
END;
"""
SQLITE_SCOPED_DDL = """
DROP TRIGGER document_search_added;
DROP TRIGGER document_search_removed;
DROP TRIGGER document_search_changed;
DROP TABLE document_search_fts;
ALTER TABLE document_search ADD COLUMN scope_words TEXT NOT NULL DEFAULT '';
DELETE FROM document_search;
CREATE VIRTUAL TABLE document_search_fts USING fts5(
    title_words, body_words, scope_words, content='document_search', content_rowid='id',
    tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
CREATE TRIGGER document_search_added AFTER INSERT ON document_search BEGIN
    INSERT INTO document_search_fts(rowid, title_words, body_words, scope_words)
    VALUES (new.id, new.title_words, new.body_words, new.scope_words);
END;
CREATE TRIGGER document_search_removed AFTER DELETE ON document_search BEGIN
    INSERT INTO document_search_fts(document_search_fts, rowid, title_words, body_words, scope_words)
    VALUES ('delete', old.id, old.title_words, old.body_words, old.scope_words);
END;
CREATE TRIGGER document_search_changed AFTER UPDATE OF title_words, body_words ON document_search
WHEN old.title_words IS NOT new.title_words OR old.body_words IS NOT new.body_words BEGIN
    INSERT INTO document_search_fts(document_search_fts, rowid, title_words, body_words, scope_words)
    VALUES ('delete', old.id, old.title_words, old.body_words, old.scope_words);
    INSERT INTO document_search_fts(rowid, title_words, body_words, scope_words)
    VALUES (new.id, new.title_words, new.body_words, new.scope_words);
END;
"""
# Migration 0014: two more columns, a page's forms and its long words' endings reversed
# (search_forms), in FTS5's table after the scope (SQLite) or the tsvector weighted C and D (PostgreSQL).
# FTS5 keeps an index of 4-letter prefixes: an ending is looked up as a prefix, and without it FTS5
# read every word with a common ending ("keit") whoever's it was (a caller with no documents: 51 ms
# at p99 at 10^5 documents, 20 with it; the index is 45% larger).
_FTS5_COLUMNS = "title_words, body_words, scope_words, form_words, tail_words"
_FTS5_NEW = ", ".join(f"new.{column}" for column in _FTS5_COLUMNS.split(", "))
_FTS5_OLD = ", ".join(f"old.{column}" for column in _FTS5_COLUMNS.split(", "))
SQLITE_FORMS_DDL = f"""
DROP TRIGGER document_search_added;
DROP TRIGGER document_search_removed;
DROP TRIGGER document_search_changed;
DROP TABLE document_search_fts;
ALTER TABLE document_search ADD COLUMN form_words TEXT NOT NULL DEFAULT '';
ALTER TABLE document_search ADD COLUMN tail_words TEXT NOT NULL DEFAULT '';
DELETE FROM document_search;
CREATE VIRTUAL TABLE document_search_fts USING fts5(
    {_FTS5_COLUMNS}, content='document_search', content_rowid='id', prefix='4',
    tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
CREATE TRIGGER document_search_added AFTER INSERT ON document_search BEGIN
    INSERT INTO document_search_fts(rowid, {_FTS5_COLUMNS}) VALUES (new.id, {_FTS5_NEW});
END;
CREATE TRIGGER document_search_removed AFTER DELETE ON document_search BEGIN
    INSERT INTO document_search_fts(document_search_fts, rowid, {_FTS5_COLUMNS}) VALUES ('delete', old.id, {_FTS5_OLD});
END;
CREATE TRIGGER document_search_changed AFTER UPDATE OF title_words, body_words, form_words, tail_words ON document_search
WHEN old.title_words IS NOT new.title_words OR old.body_words IS NOT new.body_words
  OR old.form_words IS NOT new.form_words OR old.tail_words IS NOT new.tail_words BEGIN
    INSERT INTO document_search_fts(document_search_fts, rowid, {_FTS5_COLUMNS}) VALUES ('delete', old.id, {_FTS5_OLD});
    INSERT INTO document_search_fts(rowid, {_FTS5_COLUMNS}) VALUES (new.id, {_FTS5_NEW});
END;
"""
# (search_exact is 0018's, made here too: this migration indexes with today's keep())
POSTGRES_FORMS_DDL = """
ALTER TABLE document_search ADD COLUMN form_words TEXT NOT NULL DEFAULT '';
ALTER TABLE document_search ADD COLUMN tail_words TEXT NOT NULL DEFAULT '';
ALTER TABLE document_search ADD COLUMN search_exact tsvector NOT NULL DEFAULT ''::tsvector;
DELETE FROM document_search;
CREATE TABLE document_words (
    evidence_id uuid PRIMARY KEY REFERENCES document_search (evidence_id) ON DELETE CASCADE,
    revision int NOT NULL,
    words text NOT NULL);
"""
# PostgreSQL's copy of a row's index words (title, text, forms, endings, a line each) for
# search_rank, read for a query's first candidates only: document_search keeps them empty there.
_PG_WORDS = """
INSERT INTO document_words (evidence_id, revision, words)
SELECT k.evidence_id, k.revision, k.title_words || chr(10) || k.body_words || chr(10) || k.form_words || chr(10)
       || k.tail_words FROM {table} WHERE true
ON CONFLICT (evidence_id) DO UPDATE SET revision = excluded.revision, words = excluded.words
WHERE excluded.revision > document_words.revision
"""
# A row's scope lexeme: `_` is never part of an indexed word (search_text), so no page's text can
# hold it; it has no position, so phrases and ts_rank_cd never see it.
_PG_SCOPE = "array_to_tsvector(ARRAY['ws_' || replace({column}::text, '-', '')])"
POSTGRES_SCOPED_DDL = "DELETE FROM document_search;"


def scope_word(workspace: uuid.UUID | str, postgres: bool) -> str:
    """The word a row of `workspace` is found by, as its dialect indexes it."""
    return ("ws_" if postgres else "ws") + uuid.UUID(str(workspace)).hex


# PostgreSQL keeps the tsvector alone (keep() writes the words columns empty there): a query reads
# the row of every match, and rows with the words too were ten times as wide (at 10^5 documents a
# word half of them hold took 93 ms, 34 without).
POSTGRES_DDL = """
ALTER TABLE document_search ADD COLUMN search tsvector NOT NULL DEFAULT ''::tsvector;
CREATE INDEX document_search_words ON document_search USING gin (search);
"""
# The tsvector of a row's words, the title's weighted A.
_TSVECTOR = ("setweight(to_tsvector('simple'::regconfig, k.title_words), 'A') "
             "|| setweight(to_tsvector('simple'::regconfig, k.body_words), 'B')")
# Migration 0014: the forms (weight C) and reversed endings (D) after the words (search_forms), each
# marked (search_text.FORM_MARK, TAIL_MARK) so that no query needs weights.
def _marked(column: str, mark: str) -> str:
    """SQL: each word of `column` with `mark` before it (search_text.FORM_MARK, TAIL_MARK)."""
    return f"CASE WHEN {column} = '' THEN '' ELSE '{mark}' || replace({column}, ' ', ' {mark}') END"


_FORMS = (
    f"setweight(to_tsvector('simple'::regconfig, {_marked('k.form_words', search_text.FORM_MARK)}), 'C') "
    f"|| setweight(to_tsvector('simple'::regconfig, {_marked('k.tail_words', search_text.TAIL_MARK)}), 'D')")
_TSVECTOR_FORMS = f"{_TSVECTOR} || {_FORMS}"


# Migration 0018: beside `search`, the words alone (and the scope) in `search_exact`, which the
# exact stage of a query reads and ranks: a third of the tsvector (at 10^5 documents a word a tenth
# of them hold took 15.5 ms with the forms read too, 6.5 without). A trigger adds the row's recency
# lexeme, `rb_` and its id / RECENT (positionless, as the scope's): a word most documents hold is
# first looked for among the newest rows only (_ranked), where the GIN index reads the two
# newest buckets' postings instead of every match's heap row (24 ms at 10^5 documents, 3 so).
RECENT = 4096  # written into 0018's trigger: another value needs a migration that rewrites it and the rows
_TSVECTOR_EXACT = f"{_TSVECTOR} || {_PG_SCOPE.format(column='k.workspace_id')}"
POSTGRES_EXACT_DDL = f"""
ALTER TABLE document_search ADD COLUMN IF NOT EXISTS search_exact tsvector NOT NULL DEFAULT ''::tsvector;
CREATE OR REPLACE FUNCTION document_search_recency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_exact := NEW.search_exact || array_to_tsvector(ARRAY['rb_' || (NEW.id / {RECENT})::text]);
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER document_search_recency BEFORE INSERT OR UPDATE OF search_exact ON document_search
    FOR EACH ROW EXECUTE FUNCTION document_search_recency();
UPDATE document_search SET search_exact = ts_filter(search, '{{a,b}}')
    || array_to_tsvector(ARRAY['ws_' || replace(workspace_id::text, '-', '')]);
CREATE INDEX IF NOT EXISTS document_search_exact_words ON document_search USING gin (search_exact);
"""
# The exact stage's condition on the two newest buckets, to the newest id (the statement's snapshot)
_NEWEST = (f"search_exact @@ (SELECT format('rb_%s | rb_%s', max(id) / {RECENT} - 1, max(id) / {RECENT}) "
           "FROM document_search)::tsquery")




@dataclass(frozen=True)
class Entry:
    """A settled document receipt's (a page's or a caption track's): its evidence's revision and the
    content it holds."""

    evidence_id: uuid.UUID | str
    revision: int
    workspace_id: uuid.UUID | str
    source_key: str
    valid_until: datetime | str
    title: str | None
    text: str
    words: IndexWords | None = None  # when computed before, off the event loop


def name_key(source_key: str) -> str:
    """The document's name without `documents/`: its source URL without the scheme."""
    return source_key.split("://", 1)[-1]


_COLUMNS = (("evidence_id", "uuid"), ("workspace_id", "uuid"), ("revision", "int"), ("name_key", "text"),
            ("valid_until", "timestamptz"), ("title_words", "text"), ("body_words", "text"), ("form_words", "text"),
            ("tail_words", "text"))


async def keep(connection: BaseDBAsyncClient, entries: Sequence[Entry]) -> None:
    """Index `entries` (inside the transaction that settles them), in one statement: a revision new
    to the index replaces the row's words, one already indexed only extends its valid_until (the
    FTS5 trigger fires only when the words differ)."""
    if not entries:
        return
    postgres = is_postgres_connection(connection)
    latest: dict[str, Entry] = {}
    for entry in entries:
        key = str(entry.evidence_id)
        held = latest.get(key)
        if held is None or (entry.revision, as_datetime(entry.valid_until)) > (held.revision,
                                                                              as_datetime(held.valid_until)):
            latest[key] = entry
    table, values = rows_table("k", _COLUMNS, [
        (sql_uuid(e.evidence_id, postgres), sql_uuid(e.workspace_id, postgres), e.revision,
         name_key(e.source_key), sql_time(as_datetime(e.valid_until), postgres),
         *(e.words or entry_words(e.title, e.text))) for e in latest.values()], postgres, 1)
    # PostgreSQL: the words' tsvector made once (the text's longest part), for both columns. OFFSET 0
    # keeps the planner from pulling the subquery up into the SELECT, which copied its expression
    # into both columns and parsed the text twice (half of the statement's time, 2 ms of a 20 KB page)
    words, search, searched, once = (
        "'', '', '', ''", f", t.words || {_FORMS} || t.scope, t.words || t.scope",
        ", search = excluded.search, search_exact = excluded.search_exact",
        f" CROSS JOIN LATERAL (SELECT {_TSVECTOR} AS words, {_PG_SCOPE.format(column='k.workspace_id')} AS scope "
        "OFFSET 0) AS t"
    ) if postgres else ("k.title_words, k.body_words, k.form_words, k.tail_words",
                        ", 'ws' || replace(lower(k.workspace_id), '-', '')", "", "")
    later = ("CASE WHEN excluded.valid_until > document_search.valid_until THEN excluded.valid_until "
             "ELSE document_search.valid_until END")
    indexed = (
        "INSERT INTO document_search (evidence_id, workspace_id, revision, name_key, valid_until, title_words, "
        f"body_words, form_words, tail_words, {'search, search_exact' if postgres else 'scope_words'}) SELECT k.evidence_id, k.workspace_id, k.revision, "
        f"k.name_key, k.valid_until, {words}{search} FROM {table}{once} WHERE true "
        "ON CONFLICT (evidence_id) DO UPDATE SET revision = excluded.revision, name_key = excluded.name_key, "
        f"valid_until = CASE WHEN excluded.revision = document_search.revision THEN {later} "
        "ELSE excluded.valid_until END, title_words = excluded.title_words, "
        "body_words = excluded.body_words, form_words = excluded.form_words, tail_words = excluded.tail_words"
        f"{searched} WHERE excluded.revision >= document_search.revision")
    # PostgreSQL: the copy of the words in the same statement (a settle's round trip fewer); its
    # foreign key is checked when the statement ends, after both rows are written
    await connection.execute_query(f"WITH indexed AS ({indexed}) {_PG_WORDS.replace('{table}', table)}" if postgres
                                   else indexed, values)


# Rows of the evidence a purge batch's receipts refer to whose receipts have all expired.
DROP_EXPIRED = """
DELETE FROM document_search WHERE valid_until <= {p1}
  AND evidence_id IN (SELECT done.evidence_id FROM receipt AS done WHERE done.id IN ({ids}))
"""


# Matches ranked per query: a word that most documents hold would have every one of them ranked
# (at 10^5 documents, 50,000: 200 ms on SQLite). Past this many, the answer is the most recently
# indexed matches, ranked; the same ones for every page, so pages neither repeat nor skip, and
# there are no pages past them (docs/storage.md, "Search"). 500, not 2,000: ranking reads each
# candidate's tsvector on PostgreSQL, and 2,000 of them cost a mid-frequency word's query 38 ms of
# its 45 at the 99th percentile (scripts/bench_search.py; 26 ms with 500).
CANDIDATES = 500


@dataclass(frozen=True)
class Hit:
    name_key: str
    source_key: str
    title: str
    text: str
    held: tuple[str | None, ...] = ()  # per query term: "exact", "form" (found by a guess) or None


def _fts5_scoped(workspaces: Sequence[str], expression: str) -> str:
    scopes = " OR ".join(scope_word(workspace, False) for workspace in workspaces)
    return f"{{scope_words}} : ({scopes}) AND ({expression})"


def index_condition(workspaces: Sequence[str], found: list[search_text.Term], *, every: bool,
                    postgres: bool, guess: bool = False) -> tuple[str, list[str]]:
    """What the full-text index is asked: rows of one of `workspaces` (their scope words) holding
    the terms (every one, or any; by their forms too with `guess`). SQL over document_search_fts
    (SQLite) or document_search (PostgreSQL), its values {p1} and {p2} (PostgreSQL: {p1} is the
    terms' tsquery, ranked by)."""
    if postgres:
        scopes = " | ".join(f"'{scope_word(workspace, True)}'" for workspace in workspaces)
        # two conditions, not one `&&`: a query PostgreSQL reads as empty (a character its parser
        # drops) must match nothing, and `empty && scope` is the scope alone
        column = "search" if guess else "search_exact"
        return (f"{column} @@ to_tsquery('simple'::regconfig, {{p1}}) AND {column} @@ {{p2}}::text::tsquery",
                [search_text.tsquery(found, every=every, guess=guess), f"({scopes})"])
    return ("document_search_fts MATCH {p1}",  # {p2} unused: SQLite numbers by the highest placeholder
            [_fts5_scoped(workspaces, search_text.fts5_query(found, every=every, guess=guess)), ""])


def _exact_flag(workspaces: Sequence[str], found: list[search_text.Term], postgres: bool, row: str,
                number: int) -> tuple[str, str]:
    """SQL true for a row (`row`: its id or its search column) holding every term as written, and
    the value of its placeholder {p`number`}."""
    if postgres:
        return (f"({row}_exact @@ to_tsquery('simple'::regconfig, {{p{number}}}))",
                search_text.tsquery(found, every=True))
    return (f"({row} IN (SELECT rowid FROM document_search_fts WHERE document_search_fts MATCH {{p{number}}}))",
            _fts5_scoped(workspaces, search_text.fts5_query(found, every=True)))


def _held_count(workspaces: Sequence[str], found: list[search_text.Term], postgres: bool, row: str,
                first: int) -> tuple[str, list[str]]:
    """SQL counting the terms a row holds in any form (placeholders from {p`first`}), and their values."""
    flags, values = [], []
    for number, term in enumerate(found, first):
        if postgres:
            flags.append(f"(({row} @@ to_tsquery('simple'::regconfig, {{p{number}}}))::int)")
            values.append(search_text.tsquery([term], every=True, guess=True))
        else:
            flags.append(f"({row} IN (SELECT rowid FROM document_search_fts WHERE document_search_fts "
                         f"MATCH {{p{number}}}))")
            values.append(_fts5_scoped(workspaces, search_text.fts5_query([term], every=True, guess=True)))
    return " + ".join(flags), values


# bm25's weights of FTS5's columns: title, body, scope (never ranked), forms, reversed endings
_BM25 = "bm25(document_search_fts, 4.0, 1.0, 0.0, 0.5, 0.25)"


@dataclass(frozen=True)
class Found:
    """A page of hits, and how many names hold every term as written when this page told it (the
    next page's offset past them is among the guesses)."""

    hits: list[Hit]
    exact: int | None = None


async def search(connection: BaseDBAsyncClient, workspaces: Sequence[str], found: list[search_text.Term], *,
                 every: bool, offset: int, limit: int, now: datetime, exact: int | None = None) -> Found:
    """The documents of `workspaces` matching `found`, best first, one per name: `limit` of them
    from `offset`. With `every`, those holding every term as written (ranked by the database's
    score: bm25, ts_rank_cd), then those holding every term, some only in another form (a guess,
    ranked likewise); `exact` is how many the first are, when an earlier page found out. Without
    `every`, those holding any term in any form, the more terms the sooner. A name stored in several
    of the workspaces is ranked by its best row and answered with the one get_documents serves."""
    if not found or not workspaces:
        return Found([])
    guess = any(term.guessable for term in found)
    if not every:
        some = await _page(connection, workspaces, found, every=False, guess=guess, offset=offset, limit=limit, now=now)
        return Found(await _hits(connection, workspaces, found, some, now, exact=False))
    rows: dict[str, list[int]] = {}
    if exact is None or offset < exact:
        rows = await _page(connection, workspaces, found, every=True, guess=False, offset=offset, limit=limit, now=now)
        if len(rows) == limit or not guess:
            return Found(await _hits(connection, workspaces, found, rows, now, exact=True), exact)
        exact = offset + len(rows)
    guesses = await _page(connection, workspaces, found, every=True, guess=True, offset=max(0, offset - exact),
                          limit=limit - len(rows), now=now, only_guesses=True)
    return Found(await _hits(connection, workspaces, found, rows, now, exact=True)
                 + await _hits(connection, workspaces, found, guesses, now, exact=False), exact)


async def _page(connection: BaseDBAsyncClient, workspaces: Sequence[str], found: list[search_text.Term], *,
                every: bool, guess: bool, offset: int, limit: int, now: datetime,
                only_guesses: bool = False) -> dict[str, list[int]]:
    """`limit` ranked names from `offset`, each with its rows: the database's first
    search_rank.RERANKED put in search_rank's order (within the same count of terms held), the
    rest in the database's."""
    window = max(search_rank.RERANKED, offset + limit)
    ranked = await _ranked(connection, workspaces, found, every=every, guess=guess, offset=0, limit=window, now=now,
                           only_guesses=only_guesses)
    first = ranked[:search_rank.RERANKED]
    words = await _words(connection, [row for _, rows, _ in first for row in rows])
    score = search_rank.scores(found, {name: [words[row] for row in rows if row in words] for name, rows, _ in first})
    first.sort(key=lambda named: (-named[2], -score.get(named[0], 0.0), named[0]))
    return {name: rows for name, rows, _ in (first + ranked[search_rank.RERANKED:])[offset:offset + limit]}


async def _words(connection: BaseDBAsyncClient, rows: list[int]) -> dict[int, IndexWords]:
    """The index's words of each row (PostgreSQL keeps them in document_words, beside the narrow
    rows its GIN scans read)."""
    if not rows:
        return {}
    places = ", ".join(str(row) for row in rows)  # integers from the database
    if is_postgres_connection(connection):
        read = await connection.execute_query_dict(
            "SELECT d.id, w.words FROM document_search AS d JOIN document_words AS w ON w.evidence_id = d.evidence_id "
            f"WHERE d.id IN ({places})")
        return {row["id"]: tuple(row["words"].split("\n")) for row in read}
    read = await connection.execute_query_dict(
        f"SELECT id, title_words, body_words, form_words, tail_words FROM document_search WHERE id IN ({places})")
    return {row["id"]: (row["title_words"], row["body_words"], row["form_words"], row["tail_words"]) for row in read}


async def _ranked(connection: BaseDBAsyncClient, workspaces: Sequence[str], found: list[search_text.Term], *,
                  every: bool, guess: bool, offset: int, limit: int, now: datetime,
                  only_guesses: bool = False) -> list[tuple[str, list[int], int]]:
    """Names of the matches ranked (with `only_guesses`, those not holding every term as written;
    without `every`, those holding more terms first), `limit` from `offset`, each with its rows."""
    postgres = is_postgres_connection(connection)
    ids = [sql_uuid(workspace, postgres) for workspace in workspaces]
    condition, asked = index_condition(workspaces, found, every=every, postgres=postgres, guess=guess)
    row = "d.search" if postgres else "m.id"
    extra: list[str] = []  # the values of placeholders past the workspaces', in order
    exact = "false"
    if only_guesses:
        exact, exact_value = _exact_flag(workspaces, found, postgres, row, 7 + len(ids))
        extra.append(exact_value)
    held = "0"
    if not every:
        held, held_values = _held_count(workspaces, found, postgres, row, 7 + len(ids) + len(extra))
        extra.extend(held_values)
    if postgres:
        # The candidates newest first, then ranked (ts_rank_cd reads each row's whole tsvector). A
        # prepared statement's plan: after five runs PostgreSQL plans it once for any query, a
        # bitmap of the GIN index and valid_until's; planned per query instead, it took a backward
        # walk of the primary key for frequent words, reading every tsvector on its way (at 10^5
        # documents, 195 ms for a word 5% of them hold, where the bitmap takes 36). The bitmap
        # still visits every match's row: the exact stage looks among the newest rows first
        # ({newest}), and the candidates found there are all of them when they are CANDIDATES.
        ranked = ("WITH c AS MATERIALIZED (SELECT id FROM document_search WHERE {condition}{newest} "
                  "AND workspace_id IN ({places}) AND valid_until > {p3} ORDER BY id DESC LIMIT {p6}) "
                  "SELECT d.name_key, string_agg(d.id::text, ',') AS ids, max(({held})) AS held, "
                  "max(ts_rank_cd({ranked_by}, q)) AS best, (SELECT count(*) FROM c) AS candidates "
                  "FROM c JOIN document_search AS d ON d.id = c.id, to_tsquery('simple'::regconfig, {p1}) AS q "
                  "GROUP BY d.name_key HAVING NOT bool_or({exact}) "
                  "ORDER BY held DESC, best DESC, d.name_key LIMIT {p4} OFFSET {p5}")
    else:
        # bm25() cannot be aggregated where it is computed: the candidates are materialized first;
        # FTS5 walks the matches newest first and computes bm25 only for those it returns
        ranked = ("WITH m AS MATERIALIZED (SELECT d.name_key, d.id, " + _BM25 + " AS score "
                  "FROM document_search_fts JOIN document_search AS d ON d.id = document_search_fts.rowid "
                  "WHERE {condition} AND d.workspace_id IN ({places}) AND d.valid_until > {p3} "
                  "ORDER BY document_search_fts.rowid DESC LIMIT {p6}) "
                  "SELECT name_key, group_concat(id) AS ids, max({held}) AS held, min(score) AS best FROM m "
                  "GROUP BY name_key HAVING NOT max({exact}) ORDER BY held DESC, best, name_key LIMIT {p4} OFFSET {p5}")
    places = ", ".join(f"{{p{7 + n}}}" for n in range(len(ids)))
    ranked = (ranked.replace("{condition}", condition).replace("{places}", places).replace("{exact}", exact)
              .replace("{held}", held).replace("{ranked_by}", "d.search" if guess else "d.search_exact"))
    values = [*asked, sql_time(now, postgres), limit, offset, CANDIDATES, *ids, *extra]
    for newest in ((True, False) if postgres and not guess else (False,)):
        statement = dialect_params(ranked.replace("{newest}", f" AND {_NEWEST}" if newest else ""), postgres)
        rows = await connection.execute_query_dict(statement, values)
        if not newest or (rows and int(rows[0]["candidates"]) >= CANDIDATES):
            break
    return [(row["name_key"], [int(n) for n in str(row["ids"]).split(",")], int(row["held"])) for row in rows]


async def _hits(connection: BaseDBAsyncClient, workspaces: Sequence[str], found: list[search_text.Term],
                rows_of: dict[str, list[int]], now: datetime, *, exact: bool) -> list[Hit]:
    """The hits of ranked names (`exact`: each holds every term as written)."""
    if not rows_of:
        return []
    postgres = is_postgres_connection(connection)
    held_by: dict[str, tuple[str | None, ...]] = ({name: ("exact",) * len(found) for name in rows_of} if exact
               else await _held(connection, workspaces, found, rows_of, postgres))
    return await _documents(connection, list(rows_of), [sql_uuid(w, postgres) for w in workspaces], now, held_by)


async def _held(connection: BaseDBAsyncClient, workspaces: Sequence[str], found: list[search_text.Term],
                rows_of: dict[str, list[int]], postgres: bool) -> dict[str, tuple[str | None, ...]]:
    """For each name, how its rows hold each term: "exact" (as written), "form" or None."""
    every_row = sorted({row for rows in rows_of.values() for row in rows})
    checks: list[tuple[int, str, str]] = []  # (term, kind, its query)
    for at, term in enumerate(found):
        if postgres:
            checks.append((at, "exact", search_text.tsquery([term], every=True)))
            if term.guessable:
                checks.append((at, "form", search_text.tsquery([term], every=True, guess=True)))
        else:
            checks.append((at, "exact", _fts5_scoped(workspaces, search_text.fts5_query([term], every=True))))
            if term.guessable:
                checks.append((at, "form", _fts5_scoped(workspaces, search_text.fts5_query([term], every=True,
                                                                                           guess=True))))
    places = ", ".join(str(row) for row in every_row)  # integers from the database
    if postgres:
        flags = ", ".join(f"search{'_exact' if kind == 'exact' else ''} @@ to_tsquery('simple'::regconfig, "
                          f"${n + 1}) AS c{n}" for n, (_, kind, _) in enumerate(checks))
        result = await connection.execute_query_dict(
            f"SELECT id, {flags} FROM document_search WHERE id IN ({places})", [query for _, _, query in checks])
        holding = {(n, row["id"]) for row in result for n in range(len(checks)) if row[f"c{n}"]}
    else:
        union = " UNION ALL ".join(
            f"SELECT {n} AS n, rowid AS id FROM document_search_fts WHERE document_search_fts MATCH ?{n + 1} "
            f"AND rowid IN ({places})" for n in range(len(checks)))
        result = await connection.execute_query_dict(union, [query for _, _, query in checks])
        holding = {(row["n"], row["id"]) for row in result}
    answer: dict[str, tuple[str | None, ...]] = {}
    for name, rows in rows_of.items():
        held: list[str | None] = [None] * len(found)
        for n, (at, kind, _) in enumerate(checks):
            if held[at] != "exact" and any((n, row) in holding for row in rows):
                held[at] = kind
        answer[name] = tuple(held)
    return answer


async def _documents(connection: BaseDBAsyncClient, names: list[str], workspaces: list[Any], now: datetime,
                     held: dict[str, tuple[str | None, ...]]) -> list[Hit]:
    """Each name's document as get_documents answers it (served_documents), names it would refuse
    left out."""
    served = await served_documents(connection, workspaces,
                                    {name: [f"https://{name}", f"http://{name}"] for name in names}, now)
    return [Hit(name, served[name].source_key, served[name].title, served[name].text, held[name])
            for name in names if name in served]


_STORED = """
SELECT e.id{uuid_text} AS evidence_id, e.revision, e.workspace_id{uuid_text} AS workspace_id, e.source_key,
       max(done.valid_until) AS valid_until, r.title, r.text
FROM evidence AS e
JOIN evidence_revision AS r ON r.evidence_id = e.id AND r.revision = e.revision AND r.purged_at IS NULL
JOIN receipt AS done ON done.evidence_id = e.id AND done.evidence_revision = e.revision
WHERE e.kind IN ({kinds}) AND done.valid_until > {p1} AND e.id > {p2}
GROUP BY e.id, e.revision, e.workspace_id, e.source_key, r.title, r.text
ORDER BY e.id LIMIT {p3}
"""


async def create_index(_apps: Any, schema_editor: Any) -> None:
    """Migration 0011: the dialect's full-text index (migration 0012 indexes what was stored)."""
    connection = schema_editor.client
    postgres = is_postgres_connection(connection)
    await connection.execute_script(POSTGRES_DDL if postgres else SQLITE_DDL)


async def scope_index(_apps: Any, schema_editor: Any) -> None:
    """Migration 0012: the index keyed by workspace, its words capped (search_text.MAX_PLACES),
    emptied: migration 0014 indexes every document served (as keep() writes rows since)."""
    connection = schema_editor.client
    postgres = is_postgres_connection(connection)
    await connection.execute_script(POSTGRES_SCOPED_DDL if postgres else SQLITE_SCOPED_DDL)


async def forms_index(_apps: Any, schema_editor: Any) -> None:
    """Migration 0014: the index holds the forms of each document's words (search_forms): every
    document served now indexed again, as a settle writes it."""
    connection = schema_editor.client
    postgres = is_postgres_connection(connection)
    await connection.execute_script(POSTGRES_FORMS_DDL if postgres else SQLITE_FORMS_DDL)
    await index_stored(connection, now=datetime.now().astimezone())


async def exact_index(_apps: Any, schema_editor: Any) -> None:
    """Migration 0018: PostgreSQL's words alone in `search_exact`, taken from `search` (its words
    are weighted A and B, the forms C and D) as keep() writes them since."""
    connection = schema_editor.client
    if is_postgres_connection(connection):
        await connection.execute_script(POSTGRES_EXACT_DDL)


async def index_stored(connection: BaseDBAsyncClient, *, now: datetime, batch: int = 400,
                       kinds: Sequence[str] = DOCUMENT_KINDS) -> int:
    """Index every document of `kinds` get_documents serves now, `batch` at a time (SQLite reads a
    batch's rows as one compound SELECT, of at most 500 terms); how many."""
    assert kinds and set(kinds) <= set(DOCUMENT_KINDS), kinds  # written into the statement
    postgres = is_postgres_connection(connection)
    statement = dialect_params(_STORED.replace("{uuid_text}", "::text" if postgres else "")
                               .replace("{kinds}", ", ".join(f"'{kind}'" for kind in kinds)), postgres)
    after: Any = sql_uuid(uuid.UUID(int=0), postgres)
    done = 0
    while True:
        rows = await connection.execute_query_dict(statement, [sql_time(now, postgres), after, batch])
        await keep(connection, [Entry(row["evidence_id"], int(row["revision"]), row["workspace_id"],
                                      row["source_key"], row["valid_until"], row["title"], row["text"] or "")
                                for row in rows])
        done += len(rows)
        if len(rows) < batch:
            return done
        after = sql_uuid(rows[-1]["evidence_id"], postgres)
