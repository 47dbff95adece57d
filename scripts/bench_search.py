"""search_documents' query latency at 10^5 stored documents, on SQLite (FTS5) and PostgreSQL (GIN).

    .venv/bin/python scripts/bench_search.py [--documents 100000] [--queries 300]
                                             [--postgres postgresql://postgres@127.0.0.1:5432/test]

One database per engine, migrated, then filled with bulk inserts (not through the API): DOCUMENTS
url_text documents in one workspace, each with an evidence row, its revision's text (WORDS_PER_DOC
words, about 2.5 KB), the settled receipt that serves it and its index row of index_words.entry_words (the words and their forms),
as a settle writes them (on PostgreSQL, the words' tsvector). The
text is made of pseudo-words drawn with Zipf frequencies (s = 1.1, as natural text) from a
vocabulary of VOCABULARY words per script: 60% of the documents Latin-script (German, French,
English-like syllables, with accents), 20% Hebrew, 20% Chinese (characters, no spaces). Then the
store's own call (search_index.search and the page it answers, as the handler runs it), timed one
by one, for queries of these kinds: a common word (rank 5-20: a tenth or more of the documents
match, the most work to rank), a mid-frequency word (rank 200-400), a rare word (rank 3,000+), two
words that must both match, a two-character Chinese word, a Hebrew word. p50 and p99 per kind.

The named peer, in the same run on the same data: what a store without a full-text index does,
a substring scan (`WHERE text LIKE '%word%' LIMIT 11`: unranked, so it stops at the 11th match,
its best case), for the one-word kinds. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_common import database_url_beside, pg_database  # noqa: E402

from evidencekit.server.evidence import search_text  # noqa: E402
from evidencekit.server.evidence.index_words import entry_words  # noqa: E402
from evidencekit.server.evidence.store.db import open_store, sqlite_path  # noqa: E402
from evidencekit.server.evidence.store.search_index import (  # noqa: E402
    _PG_SCOPE,
    _TSVECTOR_EXACT,
    _TSVECTOR_FORMS,
    scope_word,
    search,
)

VOCABULARY = 20_000
WORDS_PER_DOC = 300
CHUNK = 5_000
LATIN = ["ka", "ber", "ung", "sch", "ein", "ver", "lé", "tion", "ma", "ri", "stein", "ge", "ré", "mon", "the",
         "ward", "lich", "keit", "ü", "ö", "ä", "eau", "que", "ist", "ter", "al", "do", "sa", "mi", "nu"]
HEBREW = "אבגדהוזחטיכלמנסעפצקרשת"
CHINESE = [chr(0x4E00 + n) for n in range(3000)]


def vocabulary(rng: random.Random) -> dict[str, list[str]]:
    words: dict[str, list[str]] = {"latin": [], "hebrew": [], "chinese": []}
    seen: set[str] = set()
    for script, make in (("latin", lambda: "".join(rng.choices(LATIN, k=rng.randint(2, 4)))),
                         ("hebrew", lambda: "".join(rng.choices(HEBREW, k=rng.randint(3, 6)))),
                         ("chinese", lambda: "".join(rng.choices(CHINESE, k=2)))):
        while len(words[script]) < VOCABULARY:
            word = make()
            if search_text.fold(word) not in seen:
                seen.add(search_text.fold(word))
                words[script].append(word)
    return words


class Zipf:
    def __init__(self, n: int, s: float = 1.1) -> None:
        self.cumulative = list(itertools.accumulate(1 / (rank ** s) for rank in range(1, n + 1)))

    def draw(self, rng: random.Random, k: int) -> list[int]:
        total = self.cumulative[-1]
        return [bisect.bisect_left(self.cumulative, rng.random() * total) for _ in range(k)]


def script_of(number: int) -> str:
    return "latin" if number % 5 < 3 else ("hebrew" if number % 5 == 3 else "chinese")


def document(number: int, words: dict[str, list[str]], zipf: Zipf, rng: random.Random) -> tuple[str, str]:
    script = script_of(number)
    drawn = [words[script][rank] for rank in zipf.draw(rng, WORDS_PER_DOC)]
    joiner = "" if script == "chinese" else " "
    sentences = [joiner.join(drawn[i:i + 12]) for i in range(0, len(drawn), 12)]
    return joiner.join(drawn[:4]), (". " if script != "chinese" else "。").join(sentences)


async def fill(url: str, postgres: bool, count: int, words: dict[str, list[str]]) -> tuple[str, float]:
    """Migrate and fill the store; the workspace id and the seconds it took."""
    started = time.perf_counter()
    async with open_store(url):
        pass
    workspace = str(uuid.uuid4())
    zipf, rng = Zipf(VOCABULARY), random.Random(7)
    now = datetime.now(UTC)
    valid = now + timedelta(days=30)

    def rows(first: int) -> tuple[list[tuple[Any, ...]], ...]:
        evidence, revisions, receipts, index = [], [], [], []
        for number in range(first, min(count, first + CHUNK)):
            title, text = document(number, words, zipf, rng)
            evidence_id = str(uuid.uuid4())
            key = f"https://docs{number % 97}.example/page/{number}"
            evidence.append((evidence_id, workspace, key, "url_text", "", 1, now))
            revisions.append((evidence_id, 1, f"{number:064x}", key, title, "", text, text, "[]", now))
            # the settled receipt that makes it served (store/served_documents)
            receipts.append((str(uuid.uuid4()), workspace, str(uuid.uuid4()), f"{number:064x}", key, "url_text",
                             "completed", now, now, valid, evidence_id, 1, 1))
            index.append((evidence_id, workspace, 1, key.split("://", 1)[1], valid, *entry_words(title, text))
                         + (() if postgres else (scope_word(workspace, False),)))
        return evidence, revisions, receipts, index

    tables = (("evidence", ("id", "workspace_id", "source_key", "kind", "language", "revision", "updated_at")),
              ("evidence_revision", ("evidence_id", "revision", "content_hash", "source_url", "title",
                                     "description", "text", "markdown", "segments", "created_at")),
              ("receipt", ("id", "workspace_id", "mutation_id", "input_hash", "url", "kind", "state", "created_at",
                           "settled_at", "valid_until", "evidence_id", "evidence_revision", "attempts")),
              ("document_search", ("evidence_id", "workspace_id", "revision", "name_key", "valid_until",
                                   "title_words", "body_words", "form_words", "tail_words")
               + (() if postgres else ("scope_words",))))
    if postgres:
        import asyncpg

        connection = await asyncpg.connect(url)
        try:
            # the index rows as keep() writes them: the tsvector of the words, the words not kept
            await connection.execute("CREATE TEMPORARY TABLE document_search_fill (evidence_id uuid, "
                                     "workspace_id uuid, revision int, name_key text, valid_until timestamptz, "
                                     "title_words text, body_words text, form_words text, tail_words text)")
            for first in range(0, count, CHUNK):
                for (table, columns), chunk in zip(tables, rows(first), strict=True):
                    records = [tuple(uuid.UUID(v) if c in ("id", "evidence_id", "workspace_id", "mutation_id") else v
                                     for c, v in zip(columns, row, strict=True)) for row in chunk]
                    staged = table == "document_search"
                    await connection.copy_records_to_table(f"{table}_fill" if staged else table, columns=columns,
                                                           records=records)
                await connection.execute(
                    "INSERT INTO document_search (evidence_id, workspace_id, revision, name_key, valid_until, "
                    "title_words, body_words, search, search_exact) SELECT k.evidence_id, k.workspace_id, "
                    f"k.revision, k.name_key, k.valid_until, '', '', {_TSVECTOR_FORMS} || "
                    f"{_PG_SCOPE.format(column='k.workspace_id')}, {_TSVECTOR_EXACT} "
                    "FROM document_search_fill AS k")
                await connection.execute("TRUNCATE document_search_fill")
                print(f"  {min(count, first + CHUNK):,} documents", file=sys.stderr, flush=True)
            await connection.execute("VACUUM ANALYZE")
        finally:
            await connection.close()
    else:
        database = sqlite3.connect(sqlite_path(url), isolation_level=None)
        try:
            database.execute("BEGIN")
            for first in range(0, count, CHUNK):
                for (table, columns), chunk in zip(tables, rows(first), strict=True):
                    database.executemany(
                        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                        [tuple(v.astimezone(UTC).isoformat(" ") if isinstance(v, datetime) else v for v in row)
                         for row in chunk])
                print(f"  {min(count, first + CHUNK):,} documents", file=sys.stderr, flush=True)
            database.execute("COMMIT")
            database.execute("INSERT INTO document_search_fts(document_search_fts) VALUES ('optimize')")
            database.execute("ANALYZE")
        finally:
            database.close()
    return workspace, time.perf_counter() - started


def queries(words: dict[str, list[str]], rng: random.Random, per_kind: int) -> dict[str, list[str]]:
    latin = words["latin"]
    return {
        "common word (rank 5-20)": [latin[rng.randint(5, 20)] for _ in range(per_kind)],
        "mid-frequency word (rank 200-400)": [latin[rng.randint(200, 400)] for _ in range(per_kind)],
        "rare word (rank 3,000+)": [latin[rng.randint(3000, VOCABULARY - 1)] for _ in range(per_kind)],
        "two words, both (ranks 20-200)": [f"{latin[rng.randint(20, 200)]} {latin[rng.randint(20, 200)]}"
                                           for _ in range(per_kind)],
        "Chinese, two characters (rank 20-400)": [words["chinese"][rng.randint(20, 400)] for _ in range(per_kind)],
        "Hebrew word (rank 20-400)": [words["hebrew"][rng.randint(20, 400)] for _ in range(per_kind)],
    }


async def time_queries(url: str, workspace: str, asked: dict[str, list[str]], peer_runs: int
                       ) -> dict[str, dict[str, Any]]:
    from tortoise.connection import get_connection

    measured: dict[str, dict[str, Any]] = {}
    async with open_store(url):
        connection = get_connection("default")
        postgres = connection.capabilities.dialect == "postgres"
        now = datetime.now(UTC)
        for kind, texts in asked.items():
            times = []
            for text in texts[:5]:  # warm the caches the way a running service has them warm
                await search(connection, [workspace], search_text.terms(text), every=True, offset=0, limit=11, now=now)
            for text in texts:
                started = time.perf_counter()
                hits = (await search(connection, [workspace], search_text.terms(text), every=True, offset=0,
                                     limit=11, now=now)).hits
                for hit in hits[:10]:
                    search_text.snippet(hit.text, search_text.terms(text))
                times.append(time.perf_counter() - started)
            peer: list[float] = []
            if " " not in texts[0]:
                like = ("SELECT evidence_id, title FROM evidence_revision WHERE text LIKE $1 LIMIT 11" if postgres
                        else "SELECT evidence_id, title FROM evidence_revision WHERE text LIKE ?1 LIMIT 11")
                for text in texts[:peer_runs]:
                    started = time.perf_counter()
                    await connection.execute_query_dict(like, [f"%{text}%"])
                    peer.append(time.perf_counter() - started)
            count = ("SELECT count(*) AS n FROM document_search WHERE search @@ to_tsquery('simple', $1)"
                     if postgres else
                     "SELECT count(*) AS n FROM document_search_fts WHERE document_search_fts MATCH ?1")
            matching = [(await connection.execute_query_dict(count, [
                (search_text.tsquery if postgres else search_text.fts5_query)(search_text.terms(text), every=True)
            ]))[0]["n"] for text in texts[:9]]
            measured[kind] = {"times": times, "found": statistics.median(matching), "peer": peer}
        # a caller whose workspace holds none of the store's documents: the index keyed by workspace
        # reads none of them (before, every match of every tenant was read, then dropped)
        stranger = str(uuid.uuid4())
        for kind in ("common word (rank 5-20)", "two words, both (ranks 20-200)"):
            times = []
            for text in asked[kind]:
                started = time.perf_counter()
                hits = (await search(connection, [stranger], search_text.terms(text), every=True, offset=0,
                                     limit=11, now=now)).hits
                times.append(time.perf_counter() - started)
                assert not hits
            measured[f"{kind}, by a caller with no documents"] = {"times": times, "found": 0, "peer": []}
    return measured


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300, help="queries per kind")
    parser.add_argument("--peer-runs", type=int, default=10, help="substring scans per kind")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--engines", default="SQLite,PostgreSQL")
    args = parser.parse_args()
    rng = random.Random(11)
    words = vocabulary(rng)
    asked = queries(words, rng, args.queries)
    print(f"Command: `python scripts/bench_search.py --documents {args.documents} --queries {args.queries} "
          f"--peer-runs {args.peer_runs}` (or `scripts/bench search`)\n")
    print("| query kind | database | documents matching (median) | p50 (ms) | p99 (ms) | peer: substring scan p50 (ms) | peer / ours (p50) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for engine in args.engines.split(","):
            postgres = engine == "PostgreSQL"
            name = f"bench_search_{uuid.uuid4().hex[:8]}"
            if postgres:
                await pg_database(True, name)
                url = database_url_beside(args.postgres, name)
            else:
                url = f"sqlite://{Path(folder) / 'search.sqlite3'}"
            try:
                print(f"{engine}: filling {args.documents:,} documents", file=sys.stderr, flush=True)
                workspace, seconds = await fill(url, postgres, args.documents, words)
                print(f"{engine}: filled in {seconds:.0f} s", file=sys.stderr, flush=True)
                measured = await time_queries(url, workspace, asked, args.peer_runs)
            finally:
                if postgres:
                    await pg_database(False, name)
            for kind, figures in measured.items():
                p50, p99 = quantile(figures["times"], 0.5) * 1000, quantile(figures["times"], 0.99) * 1000
                if figures["peer"]:
                    peer = statistics.median(figures["peer"]) * 1000
                    peer_text, ratio = f"{peer:.1f}", f"{peer / p50:.1f}x"
                else:
                    peer_text, ratio = "", ""
                print(f"| {kind} | {engine} | {figures['found']:,.0f} "
                      f"| {p50:.1f} | {p99:.1f} | {peer_text} | {ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
