"""Cost per operation as the store grows: 10^4, 10^5 and 10^6 receipts, on SQLite and PostgreSQL.

    .venv/bin/python scripts/bench_scale.py [--sizes 10000,100000,1000000] [--rounds 8]
                                            [--postgres postgresql://postgres@127.0.0.1:5432/test]

One database per size, filled with bulk inserts (COPY on PostgreSQL, executemany on SQLite), not
through the API: 50 workspaces of unequal size; 10% of the receipts past valid_until and not purged
yet; WAITING pending (the newest) and RUNNING running at every size, since a backlog follows the
workers' capacity, not the store's size (with 1% pending, the claims at 10^6 took old receipts of
a backlog of 10,000, those at 10^4 soon the ones just submitted); the rest settled (ready with
text, or unsuccessful, cancelled, unconfirmed); two receipts per source, every seventh source with a second revision;
TEXT_CHARS characters of text in each result and revision. Then, in rounds that visit every size
in turn (so a drifting machine speed falls on all sizes alike), the store's own calls, timed one
by one: a status read of a random receipt (any of 5,000 spread over the store; the store is opened
anew each visit, so most reads find their pages outside SQLite's cache), a status read of one of
the 2,000 newest receipts once each has been read (what agents poll: the receipts in flight and
just settled, whose pages a running service keeps in its cache), the CPU of status reads of the
sampled receipts 32 at a time (as a busy service batches them; this process's and, on PostgreSQL,
its backends' from /proc: work without the round trip's latency, which is most of a read one at a
time on PostgreSQL), a new retrieve accepted, and
claims and settles of waiting receipts in a worker's batches (8 per claim, with a new evidence
revision each), and the purge of the PURGE_SLICE receipts due first (a sweeper's steady pace: what
is due at a time follows the receipts made a retention period before, not the store's size). Last,
per size, the sweeper's purge of the rest of the 10% expired at once (a backlog: 500 receipts at
10^4, 99,500 at 10^6), with status reads running beside it; and the plans of the statements,
checked for a scan of a whole table. Each timed operation's figure: the median of its calls in a
round, the minimum of that over the rounds (the median over the rounds beside it, in the ratio
column). Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_common import backend_pids, backend_seconds, database_url_beside  # noqa: E402

from evidencekit.server.evidence.source_urls import source_key  # noqa: E402
from evidencekit.server.evidence.store import jobs, receipts, status_answer  # noqa: E402
from evidencekit.server.evidence.store.db import database_url, open_store, sqlite_path  # noqa: E402
from evidencekit.server.evidence.store.evidence import Content  # noqa: E402
from evidencekit.server.evidence.store.receipt_reads import ReceiptView, find_view  # noqa: E402
from evidencekit.server.evidence.store.receipts import RetrieveRequest  # noqa: E402

TEXT_CHARS = 1500
WORKSPACES = 50
CHUNK = 20_000
WORDS = ["study", "sample", "committee", "finding", "result", "method", "data", "analysis", "report", "trial",
         "control", "group", "effect", "measure", "review", "evidence", "source", "author", "page", "summary"]
SAMPLE_KEYS = 5000  # receipts whose keys the reads pick from
WAITING, RUNNING = 1000, 100  # pending and running receipts, at every size
RECENT_KEYS = 2000  # the newest receipts: what agents poll
NO_SECRETS = b""  # the store key source keys hash secret values with: these URLs have no query string
PURGE_SLICE = 100  # due receipts purged in each round, at every size (10^4 has 1,000 due in all)
Key = tuple[str, str]


def result_of(url: str, text: str | None, status: str = "ready", reason: str | None = None) -> dict[str, Any]:
    return {"kind": "url_text", "status": status, "reason": reason, "warnings": [], "retry_after_seconds": None,
            "title": "Findings" if text else None, "description": None, "text": text or "", "segments": [],
            "provenance": {"source_url": url, "retrieved_at": "2026-12-01T10:00:00Z", "mime_type": "text/html",
                           "parser_version": "research-public-retrieval/v1", "content_kind": "document_text",
                           "caption_format": None, "language": "en", "language_source": "publisher_declared",
                           "platform_native_verified": False}}


class Fill:
    """The rows of one database of `size` receipts, generated chunk by chunk (seeded: the same each run)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.rng = random.Random(size)
        self.now = datetime.now(UTC)
        self.workspaces = [str(uuid.UUID(int=self.rng.getrandbits(128), version=4)) for _ in range(WORKSPACES)]
        weights = [1 / (n + 1) for n in range(WORKSPACES)]  # a few large workspaces, many small ones
        self.workspace_of = self.rng.choices(range(WORKSPACES), weights, k=size // 2 + 1)
        self.sample: list[Key] = []
        self.recent: list[Key] = []  # the RECENT_KEYS newest receipts
        # words of random letters, so the text compresses about as much as prose (PostgreSQL
        # compresses a stored result; the 20 words of WORDS alone would shrink tenfold)
        vocabulary = WORDS + ["".join(self.rng.choice("etaoinshrdlucmfwypvbgkqjxz"[:20 + n % 7])
                                      for _ in range(2 + n % 9)) for n in range(3000)]
        self.text = " ".join(self.rng.choice(vocabulary) for _ in range(TEXT_CHARS // 4))[:TEXT_CHARS]

    def state(self, number: int) -> str:
        if number >= self.size - WAITING:
            return "pending"
        if number >= self.size - WAITING - RUNNING:
            return "running"
        if number < self.size // 10:
            return "expired-due"  # completed, past valid_until, not purged yet
        roll = number % 200
        return "cancelled" if roll == 0 else "unconfirmed" if roll == 1 else "unsuccessful" if roll < 10 else "ready"

    def created(self, number: int) -> datetime:
        if self.state(number) == "expired-due":
            return self.now - timedelta(hours=25) + timedelta(seconds=number * 3600 / self.size)
        return self.now - timedelta(hours=23) * (1 - number / self.size)

    @staticmethod
    def time_ordered(at: datetime, unique: int) -> str:
        """A version 7 UUID for `at`, as the store makes its ids (store/ids.py), unique by `unique`."""
        value = (int(at.timestamp() * 1000) << 80) | (0x7 << 76) | (0b10 << 62) | (unique & ((1 << 62) - 1))
        return str(uuid.UUID(int=value))

    def has_evidence(self, number: int) -> bool:
        return number < self.size and self.state(number) in ("ready", "expired-due")

    def rows(self) -> Iterator[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
        """(evidence, revisions, receipts) per chunk, as column tuples (see the COLUMNS below)."""
        day = timedelta(hours=24)
        for start in range(0, self.size, CHUNK):
            receipt_rows, evidence_rows, revision_rows = [], [], []
            for number in range(start, min(start + CHUNK, self.size)):
                source = number // 2
                workspace = self.workspaces[self.workspace_of[source]]
                url = f"https://news{source % 997}.example/articles/{source}"
                state = self.state(number)
                created = self.created(number)
                evidence_id = self.time_ordered(self.created(2 * source), source << 1)
                revisions = 2 if source % 7 == 0 else 1
                revision = 2 if revisions == 2 and number % 2 else 1
                with_evidence = self.has_evidence(number)
                if number % 2 == 0 and (with_evidence or self.has_evidence(number + 1)):  # once per source
                    evidence_rows.append((evidence_id, workspace, source_key(url, NO_SECRETS), "url_text", "", revisions, created))
                    for rev in range(1, revisions + 1):
                        revision_rows.append((evidence_id, rev, f"hash-{source}-{rev}", url, "Findings", None,
                                              self.text, f"# Findings\n\n{self.text}", "[]", created, None))
                result = (result_of(url, self.text) if with_evidence else
                          result_of(url, None, "unavailable", "not_found") if state == "unsuccessful" else
                          result_of(url, None, "cancelled", "cancelled") if state == "cancelled" else None)
                mutation = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
                stored_state = {"expired-due": "completed", "ready": "completed",
                                "unsuccessful": "completed"}.get(state, state)
                running = state == "running"
                receipt_id = self.time_ordered(created, number << 1 | 1)
                settled = None if state in ("pending", "running") else created + timedelta(seconds=2)
                result_json = None if result is None else json.dumps(result)
                # the status answer the settle checked and kept (store/status_answer), as of the settle
                answer = (None, None, None) if settled is None else status_answer.stored_columns(
                    ReceiptView(receipt_id, workspace, mutation, stored_state, "url_text", created, settled,
                                created + day, result_json, evidence_id if with_evidence else None,
                                revision if with_evidence else None, ""), settled)
                receipt_rows.append((
                    receipt_id, workspace, mutation, f"in-{number}", url,
                    "url_text", None, stored_state, created, settled, created + day,
                    result_json, evidence_id if with_evidence else None,
                    revision if with_evidence else None, 1 if running or state == "unconfirmed" else 0,
                    "elsewhere:boot:1:1" if running else None, self.now + timedelta(hours=1) if running else None,
                    None, *answer))
                if len(self.sample) < SAMPLE_KEYS and self.rng.random() < SAMPLE_KEYS * 2 / self.size:
                    self.sample.append((workspace, mutation))
                if number >= self.size - RECENT_KEYS:
                    self.recent.append((workspace, mutation))
            yield evidence_rows, revision_rows, receipt_rows


RECEIPT_COLUMNS = ("id", "workspace_id", "mutation_id", "input_hash", "url", "kind", "language", "state",
                   "created_at", "settled_at", "valid_until", "result", "evidence_id", "evidence_revision",
                   "attempts", "lease_owner", "lease_expires_at", "purged_at", "answer_contract", "answer_head",
                   "answer_tail")
EVIDENCE_COLUMNS = ("id", "workspace_id", "source_key", "kind", "language", "revision", "updated_at")
REVISION_COLUMNS = ("evidence_id", "revision", "content_hash", "source_url", "title", "description", "text",
                    "markdown", "segments", "created_at", "purged_at")


def _sqlite_value(value: Any) -> Any:
    return value.astimezone(UTC).isoformat(" ") if isinstance(value, datetime) else value


def _pg_value(column: str, value: Any) -> Any:
    if value is not None and column in ("id", "workspace_id", "mutation_id", "evidence_id"):
        return uuid.UUID(value)
    return value


async def fill_database(url: str, size: int, postgres: bool) -> tuple[list[Key], list[Key], float]:
    """Create the schema and `size` receipts; the sampled keys, the newest receipts' keys and the
    seconds it took."""
    started = time.perf_counter()
    fill = Fill(size)
    async with open_store(url):
        pass  # the schema, by the migrations
    # sources first: receipts refer to them
    tables = (("evidence", EVIDENCE_COLUMNS), ("evidence_revision", REVISION_COLUMNS), ("receipt", RECEIPT_COLUMNS))
    if postgres:
        import asyncpg

        connection = await asyncpg.connect(url)
        try:
            for chunk in fill.rows():
                for (table, columns), rows in zip(tables, chunk, strict=True):
                    await connection.copy_records_to_table(
                        table, columns=columns, records=[tuple(_pg_value(c, v) for c, v in zip(columns, row, strict=True))
                                                         for row in rows])
            await connection.execute("VACUUM ANALYZE")
        finally:
            await connection.close()
    else:
        database = sqlite3.connect(sqlite_path(url), isolation_level=None)
        try:
            database.execute("PRAGMA cache_size = -1000000")  # 1 GB: random uuid keys would thrash 2 MB
            database.execute("BEGIN")
            for chunk in fill.rows():
                for (table, columns), rows in zip(tables, chunk, strict=True):
                    database.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                                         f"({', '.join('?' * len(columns))})",
                                         [tuple(_sqlite_value(v) for v in row) for row in rows])
            database.execute("COMMIT")
            database.execute("ANALYZE")
        finally:
            database.close()
    return fill.sample, fill.recent, time.perf_counter() - started


async def timed_each(calls: int, call: Any) -> float:
    """Median seconds of `calls` awaited calls, one at a time."""
    seconds = []
    for number in range(calls):
        started = time.perf_counter()
        await call(number)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def stub_settle(claimed: jobs.Claimed) -> jobs.Settle:
    text = f"{claimed.url} " + "new findings " * 100
    return jobs.Settle(claimed, result_of(claimed.url, text),
                       Content(f"h-{claimed.id}", claimed.url, "Findings", None, text, f"# {text}", []))


async def one_round(url: str, keys: list[Key], recent: list[Key], rng: random.Random,
                    calls: int) -> dict[str, float]:
    """Seconds per operation in one visit of a database (the store opened, warmed, then timed)."""
    async with open_store(url):
        costs = await one_round_body(keys, rng, calls, recent)
        costs.update(await cpu_per_batched_read(url, keys, rng, calls))
        costs[f"purge of the {PURGE_SLICE} receipts due first, per receipt"] = await purge_slice()
        return costs


BATCHED = "status reads 32 at a time, CPU per read: this process + the database's"
BATCHED_DATABASE = "status reads 32 at a time, CPU per read: of it PostgreSQL's"


async def cpu_per_batched_read(url: str, keys: list[Key], rng: random.Random, batches: int) -> dict[str, float]:
    """CPU seconds per status read of the sampled receipts, read 32 at a time (as a busy serve
    process batches them, per event-loop turn): this process's, and on PostgreSQL its backends'
    for this database too. Unlike the reads one at a time, no round-trip latency is in it: what
    it shows is work, which is what grows when a store outgrows its caches."""
    backends = [] if url.startswith("sqlite") else await backend_pids(url)
    process, database = time.process_time(), backend_seconds(backends)
    for _ in range(batches):
        picked = [rng.choice(keys) for _ in range(32)]
        await asyncio.gather(*(find_view(uuid.UUID(workspace), uuid.UUID(mutation)) for workspace, mutation in picked))
    process, database = time.process_time() - process, backend_seconds(backends) - database
    reads = batches * 32
    costs = {BATCHED: (process + database) / reads}
    if backends:
        costs[BATCHED_DATABASE] = database / reads
    return costs


async def purge_slice() -> float:
    """Seconds per receipt of purging the PURGE_SLICE receipts due first: what a sweeper purges at
    a time follows the receipts made a retention period before, not the store's size."""
    from evidencekit.server.evidence.store.models import Receipt

    last = await (Receipt.filter(purged_at=None, valid_until__lte=receipts.utcnow()).order_by("valid_until")
                  .offset(PURGE_SLICE - 1).limit(1).values_list("valid_until", flat=True))
    assert last, f"fewer than {PURGE_SLICE} receipts due"
    started = time.perf_counter()
    purged = await receipts.purge_expired(now=last[0])  # those due by then: the slice
    seconds = time.perf_counter() - started
    assert purged == PURGE_SLICE, f"purged {purged}"
    return seconds / purged


async def one_round_body(keys: list[Key], rng: random.Random, calls: int,
                         recent: list[Key] | None = None) -> dict[str, float]:
    def read(_: int) -> Any:
        workspace, mutation = rng.choice(keys)
        return find_view(uuid.UUID(workspace), uuid.UUID(mutation))

    await timed_each(100, read)  # the pool, prepared statements, caches
    costs = {"status read, any receipt": await timed_each(calls, read)}
    if recent:
        def poll(_: int) -> Any:
            workspace, mutation = rng.choice(recent)
            return find_view(uuid.UUID(workspace), uuid.UUID(mutation))

        for workspace, mutation in recent:  # each read once, as polling them has
            await find_view(uuid.UUID(workspace), uuid.UUID(mutation))
        costs[f"status read, one of the {len(recent):,} newest (polled)"] = await timed_each(calls, poll)

    async def accept(_: int) -> None:
        await receipts.submit(RetrieveRequest(uuid.UUID(keys[0][0]), uuid.uuid4(),
                                              f"https://new.example/{uuid.uuid4().hex}", "url_text"))

    costs["new retrieve accepted"] = await timed_each(calls // 2, accept)
    settles: list[float] = []
    for _ in range(calls // 16):
        started = time.perf_counter()
        claimed = await jobs.claim_many("bench-worker", timedelta(minutes=5), max_attempts=3, limit=8)
        assert len(claimed) == 8, f"claimed {len(claimed)}"
        assert len(await jobs.settle_many("bench-worker", [stub_settle(c) for c in claimed])) == 8
        settles.append((time.perf_counter() - started) / 8)
    costs["claim + settle (per receipt, batches of 8)"] = statistics.median(settles)
    return costs


async def purge_beside_reads(url: str, keys: list[Key]) -> dict[str, float]:
    """The purge of every receipt due, timed, with status reads going on meanwhile (and as long
    before it, for their quiet latency)."""
    rng = random.Random(7)
    async with open_store(url):
        async def reads_for(stop: asyncio.Event, latencies: list[float]) -> None:
            while not stop.is_set():
                workspace, mutation = rng.choice(keys)
                started = time.perf_counter()
                await find_view(uuid.UUID(workspace), uuid.UUID(mutation))
                latencies.append(time.perf_counter() - started)
                await asyncio.sleep(0.001)

        quiet: list[float] = []
        stop = asyncio.Event()
        reading = asyncio.create_task(reads_for(stop, quiet))
        await asyncio.sleep(3)
        stop.set()
        await reading
        during: list[float] = []
        stop = asyncio.Event()
        reading = asyncio.create_task(reads_for(stop, during))
        started = time.perf_counter()
        purged = await receipts.purge_expired()
        seconds = time.perf_counter() - started
        stop.set()
        await reading
    quantile = lambda values: statistics.quantiles(values, n=100)[98]  # noqa: E731 - p99
    return {"purged": purged, "purge per receipt": seconds / max(purged, 1), "purge seconds": seconds,
            "read p99 quiet": quantile(quiet), "read p99 during purge": quantile(during),
            "read max during purge": max(during), "reads during purge": len(during)}


class Recorded:
    """Every statement a round sends, with its values: asyncpg's calls, and SQLite's statements as
    executed (the values written in), from both of the store's SQLite connections."""

    def __init__(self, postgres: bool) -> None:
        self.postgres = postgres
        self.statements: dict[str, Any] = {}  # text -> values (PostgreSQL) or None (SQLite, values inlined)

    def _keep(self, statement: str, values: Any) -> None:
        text = " ".join(statement.split())
        if not text.upper().startswith(("SELECT", "INSERT", "UPDATE", "WITH", "DELETE")) or "tortoise_migrations" in text:
            return  # the migrations' bookkeeping runs once per start
        shape = re.sub(r"'[^']*'|\b\d+(\.\d+)?\b", "?", text)  # SQLite's statements come with their values
        self.statements.setdefault(shape, (text, values))

    def __enter__(self) -> Recorded:
        if self.postgres:
            import asyncpg.connection

            self.real = asyncpg.connection.Connection._execute
            recorded = self

            async def execute(connection: Any, query: str, args: Any, *rest: Any, **options: Any) -> Any:
                recorded._keep(query, args)
                return await recorded.real(connection, query, args, *rest, **options)

            asyncpg.connection.Connection._execute = execute  # type: ignore[method-assign]
        return self

    async def watch_sqlite(self) -> None:
        from tortoise.connection import get_connection

        from evidencekit.server.evidence.store import receipt_reads

        def keep(text: str) -> None:
            self._keep(text, None)

        client: Any = get_connection("default")
        threaded = client._connection  # aiosqlite: its sqlite3 connection belongs to its own thread
        await threaded._execute(threaded._conn.set_trace_callback, keep)
        for connection in receipt_reads._all_direct.values():
            connection.set_trace_callback(keep)

    def __exit__(self, *exc: object) -> None:
        if self.postgres:
            import asyncpg.connection

            asyncpg.connection.Connection._execute = self.real  # type: ignore[method-assign]


async def plans(url: str, postgres: bool, keys: list[Key]) -> dict[str, list[str]]:
    """Every statement a round sends, explained on the largest database: {statement: the plan
    lines that read a whole table} (none expected; a CTE's own rows are not a table)."""
    from tortoise.connection import get_connection

    async def a_round_and_a_purge() -> None:
        await one_round_body(keys, random.Random(3), 32)
        for _ in range(60):  # receipts due, for the purge's statements
            await receipts.submit(RetrieveRequest(uuid.UUID(keys[0][0]), uuid.uuid4(), "https://due.example/",
                                                  "url_text"), retention=timedelta(seconds=-1))
        await receipts.purge_expired(batch=50)

    with Recorded(postgres) as recorded:
        async with open_store(url):
            if not postgres:  # the store's two connections, once they exist
                await get_connection("default").execute_query("SELECT 1")
                await find_view(uuid.UUID(keys[0][0]), uuid.UUID(keys[0][1]))
                await recorded.watch_sqlite()
            await a_round_and_a_purge()
    found = {}
    async with open_store(url):
        connection: Any = get_connection("default")
        for statement, values in recorded.statements.values():
            if postgres:
                async with connection.acquire_connection() as raw:
                    rows = [row[0] for row in await raw.fetch("EXPLAIN " + statement, *(values or ()))]
                found[statement] = [row.strip() for row in rows if "Seq Scan" in row]
            else:
                rows = [row["detail"] for row in await connection.execute_query_dict("EXPLAIN QUERY PLAN " + statement)]
                tables = ("receipt", "evidence", "evidence_revision", "workspace", "membership", "token")
                found[statement] = [row for row in rows if row.startswith("SCAN ")
                                    and row.split()[1] in tables and " USING " not in row]
    return found


async def database_bytes(url: str, postgres: bool) -> int:
    if not postgres:
        path = Path(sqlite_path(url))
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    import asyncpg

    connection = await asyncpg.connect(url)
    try:
        return int(await connection.fetchval("SELECT pg_database_size(current_database())"))
    finally:
        await connection.close()


async def pg_admin(admin_url: str, statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(admin_url)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def run_engine(engine: str, sizes: list[int], rounds: int, calls: int, admin_url: str, folder: Path) -> dict[str, Any]:
    postgres = engine == "PostgreSQL"
    urls, names = {}, []
    for size in sizes:
        if postgres:
            name = f"evidencekit_scale_{size}_{uuid.uuid4().hex[:6]}"
            asyncio.run(pg_admin(admin_url, f'CREATE DATABASE "{name}"'))
            names.append(name)
            urls[size] = database_url_beside(admin_url, name)
        else:
            urls[size] = database_url({"EVIDENCEKIT_DATA_DIR": str(folder / f"sqlite-{size}")})
    try:
        keys, recent, fill_seconds = {}, {}, {}
        for size in sizes:
            keys[size], recent[size], fill_seconds[size] = asyncio.run(fill_database(urls[size], size, postgres))
            print(f"{engine}: filled {size:,} receipts in {fill_seconds[size]:.0f} s", file=sys.stderr, flush=True)
        costs: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
        rng = random.Random(1)
        for turn in range(rounds):
            for size in sizes[turn % len(sizes):] + sizes[:turn % len(sizes)]:
                costs[size].append(asyncio.run(one_round(urls[size], keys[size], recent[size], rng, calls)))
            print(f"{engine}: round {turn + 1}/{rounds}", file=sys.stderr, flush=True)
        stored = {size: asyncio.run(database_bytes(urls[size], postgres)) for size in sizes}
        purges = {size: asyncio.run(purge_beside_reads(urls[size], keys[size])) for size in sizes}
        found_plans = asyncio.run(plans(urls[sizes[-1]], postgres, keys[sizes[-1]]))
        # Each round's figure is a median over its calls; over the rounds, the minimum (noise on a
        # shared machine only ever adds time, and moved a round's median by up to 30%), and the
        # median beside it. What costs more at a size in every round (cold pages) stays in both.
        least = {size: {op: min(r[op] for r in costs[size]) for op in costs[size][0]} for size in sizes}
        medians = {size: {op: statistics.median(r[op] for r in costs[size]) for op in costs[size][0]}
                   for size in sizes}
        return {"costs": least, "medians": medians, "purges": purges, "plans": found_plans, "bytes": stored,
                "fill": fill_seconds}
    finally:
        for name in names:
            asyncio.run(pg_admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def report(results: dict[str, dict[str, Any]], sizes: list[int], command: str) -> str:
    first, last = sizes[0], sizes[-1]
    heads = " | ".join(f"{size:,}" for size in sizes)
    lines = [f"Command: `{command}`", "",
             "Timed operations: the minimum over the rounds of each round's median, and the ratio of the "
             "medians over the rounds in brackets.", "",
             f"| operation | database | {heads} | {last:,} / {first:,} | target |",
             "|---|---|" + "---:|" * len(sizes) + "---:|---|"]
    for engine, result in results.items():
        for op in result["costs"][first]:
            values = [result["costs"][size][op] * 1e6 for size in sizes]
            medians = [result["medians"][size][op] for size in (first, last)]
            lines.append(f"| {op} (µs) | {engine} | " + " | ".join(f"{v:.0f}" for v in values)
                         + f" | {values[-1] / values[0]:.2f} ({medians[1] / medians[0]:.2f}) | <= 1.10 |")
        purge = [result["purges"][size]["purge per receipt"] * 1e6 for size in sizes]
        lines.append(f"| purge of the rest of the 10% expired, at once (µs per receipt) | {engine} | "
                     + " | ".join(f"{v:.0f}" for v in purge) + f" | {purge[-1] / purge[0]:.2f} | <= 1.10 |")
        stall = [result["purges"][size] for size in sizes]
        lines.append(f"| status read p99 during the purge / quiet (ms) | {engine} | " + " | ".join(
            f"{p['read p99 during purge'] * 1e3:.1f} / {p['read p99 quiet'] * 1e3:.1f}" for p in stall)
            + " | | no stall |")
        lines.append(f"| slowest status read during the purge (ms) | {engine} | " + " | ".join(
            f"{p['read max during purge'] * 1e3:.0f}" for p in stall) + " | | |")
        lines.append(f"| stored bytes per receipt (with text, indexes) | {engine} | " + " | ".join(
            f"{result['bytes'][size] / size:,.0f}" for size in sizes) + " | | |")
    lines += ["", "Plans at the largest size: every statement a round and a purge send, explained; those that "
              "read a whole table:", ""]
    for engine, result in results.items():
        scanning = {statement: scans for statement, scans in result["plans"].items() if scans}
        lines.append(f"- {engine}: {len(result['plans'])} statements, "
                     + (f"{len(scanning)} with a whole-table scan:" if scanning else "none reads a whole table"))
        for statement, scans in scanning.items():
            lines.append(f"  - `{statement[:160]}`: {'; '.join(scans)}")
    fills = "; ".join(f"{engine} " + ", ".join(f"{size:,} in {r['fill'][size]:.0f} s" for size in sizes)
                      for engine, r in results.items())
    purged = "; ".join(f"{engine} " + ", ".join(f"{r['purges'][size]['purged']:,} in "
                                                 f"{r['purges'][size]['purge seconds']:.1f} s" for size in sizes)
                       for engine, r in results.items())
    lines += ["", f"Filled: {fills}. Purged: {purged}."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--calls", type=int, default=800, help="timed calls per operation and round")
    parser.add_argument("--engines", default="SQLite,PostgreSQL")
    parser.add_argument("--postgres", default=os.environ.get("EVIDENCEKIT_TEST_PG",
                                                             "postgresql://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    if args.rounds * PURGE_SLICE >= min(sizes) // 10:
        parser.error(f"{args.rounds} rounds purge {args.rounds * PURGE_SLICE:,} receipts: the smallest size must "
                     f"have more due (a tenth of it), some left for the purge at once")
    results = {}
    with tempfile.TemporaryDirectory(prefix="evidencekit-scale-") as folder:
        for engine in args.engines.split(","):
            results[engine] = run_engine(engine, sizes, args.rounds, args.calls, args.postgres, Path(folder))
            print(report({engine: results[engine]}, sizes, "(so far)"), file=sys.stderr, flush=True)
    command = (f"python scripts/bench_scale.py --sizes {args.sizes} --rounds {args.rounds} --calls {args.calls}"
               f" --engines {args.engines}")
    print(report(results, sizes, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
