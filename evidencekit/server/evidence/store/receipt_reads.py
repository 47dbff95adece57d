"""The status read without the ORM: indexed SELECTs, decoded by hand, batched per loop turn.

Status is the call agents poll, so it is the hot path. Through tortoise one lookup cost ~0.8 ms
(query building, model construction, timestamp parsing) plus, on SQLite, a hop to aiosqlite's
thread that convoys with the event loop on the GIL. Here the lookups asked for in one turn of the
event loop are answered by one statement (turn_batch): a join of the asked keys with the receipt
table's (workspace_id, mutation_id) index (scripts/bench.py status).

SQLite's direct path is a per-thread `sqlite3` connection used on the event loop thread. In WAL
mode (tortoise's default) a reader takes no lock a writer holds, and each SELECT sees the latest
commit, so an indexed read neither waits nor goes stale. If SQLite ever reports the database
busy, the read goes through the async connection instead.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.context import require_context

from evidencekit.server.evidence.store import pg_reads
from evidencekit.server.evidence.store.sql import is_postgres_connection, stored_value
from evidencekit.server.evidence.store.tortoise_adapter import current_client
from evidencekit.server.evidence.store.turn_batch import TurnBatch

# In ReceiptView's order: rows are read by position (by name, sqlite3.Row compares every column's
# name). PostgreSQL sends the uuids as text, as SQLite keeps them: no UUID objects to make and print.
_COLUMN_NAMES = ("id", "workspace_id", "mutation_id", "state", "kind", "created_at", "settled_at",
                 "valid_until", "result", "evidence_id", "evidence_revision", "input_hash", "answer_contract",
                 "answer_head", "answer_tail")
_UUID_COLUMNS = frozenset({"id", "workspace_id", "mutation_id", "evidence_id"})
# The result comes as its UTF-8 bytes, which a stored answer sends as they are: as text, a page
# that is not ASCII was decoded as it was read and encoded again to be sent (~9 µs for 6,000
# characters). On PostgreSQL, text's binary output (in the client's encoding, which asyncpg sets to
# UTF-8): a cast to bytea would read backslashes as escapes, and convert_to, which checks the
# bytes again, cost this process ~1 µs a row more in asyncpg's reads.
_SQLITE_AS_READ = {"result": "CAST(r.result AS BLOB)"}
_POSTGRES_AS_READ = {"result": "textsend(r.result::text)"} | {
    name: f"r.{name}::text" for name in _UUID_COLUMNS}  # uuids as text, as SQLite keeps them
_COLUMNS = ", ".join(_SQLITE_AS_READ.get(name, f"r.{name}") for name in _COLUMN_NAMES)
_POSTGRES_COLUMNS = ", ".join(_POSTGRES_AS_READ.get(name, f"r.{name}") for name in _COLUMN_NAMES)
_SQLITE_ONE = f"SELECT {_COLUMNS} FROM receipt AS r WHERE r.workspace_id = ? AND r.mutation_id = ?"
_POSTGRES_ONE = f"SELECT {_POSTGRES_COLUMNS} FROM receipt AS r WHERE r.workspace_id = $1 AND r.mutation_id = $2"
# The asked keys, then the receipt table through its unique index: CROSS JOIN keeps SQLite from
# choosing another order (a VALUES list inside `IN (...)` made it scan the table).
_SQLITE_SIZES = (2, 4, 8, 16, 32, 64)  # padded to these, so that a few statements stay cached
_SQLITE_MANY = {size: f"SELECT {_COLUMNS} FROM (VALUES {', '.join(['(?, ?)'] * size)}) AS k "
                      "CROSS JOIN receipt AS r ON r.workspace_id = k.column1 AND r.mutation_id = k.column2"
                for size in _SQLITE_SIZES}
_POSTGRES_MANY = (f"SELECT {_POSTGRES_COLUMNS} FROM unnest($1::uuid[], $2::uuid[]) AS k(w, m) "
                  "JOIN receipt AS r ON r.workspace_id = k.w AND r.mutation_id = k.m")

Key = tuple[str, str]  # (workspace_id, mutation_id) in canonical text


@dataclass(slots=True)
class ReceiptView:
    """What `receipts.as_retrieval` reads of a receipt, and what it was made for. Read-only by
    convention (the waiters of one batch share a view): a frozen dataclass's __init__ sets each
    field through object.__setattr__, ~10x the cost, on every row a status read decodes."""

    # ids as canonical text: SQLite keeps them so, PostgreSQL is asked for ::text
    id: str
    workspace_id: str
    mutation_id: str
    state: str
    kind: str
    # Timestamps as the columns give them: SQLite's ISO text, asyncpg's datetimes (timestamps.py)
    created_at: datetime | str
    settled_at: datetime | str | None
    valid_until: datetime | str
    # The result as stored, its UTF-8 bytes as read (`result` parses it): a stored answer sends it
    # as it is. Text where a view is made from a result just written (the settle).
    result_json: str | bytes | None
    evidence_id: str | None
    evidence_revision: int | None
    input_hash: str  # what the receipt was made for (receipts.RetrieveRequest.input_hash)
    # The status answer checked when the receipt settled, around the result (models.Receipt.answer_*)
    answer_contract: str | None = None
    answer_head: str | None = None
    answer_tail: str | None = None

    @property
    def result(self) -> dict[str, Any] | None:
        return None if self.result_json is None else stored_value(self.result_json)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> ReceiptView:
        """A row of _COLUMN_NAMES, in that order."""
        return cls(*row)


# The store's SQLite memory settings, for this reader too (db.SQLITE_PRAGMAS). temp_store: a
# statement's transient tables (the claim's materialized choices, a settle's rows) in memory; in
# temp files they cost ~200 page faults a claim (its CPU, 0.8 ms, was 4x the statement's own).
SQLITE_MEMORY = {"cache_size": -65536, "mmap_size": 1 << 30, "temp_store": "MEMORY"}

# One reader per (database file, thread): a thread's event loop uses only its own.
_all_direct: dict[tuple[str, int], sqlite3.Connection] = {}
_all_lock = threading.Lock()


def _direct_connection(filename: str) -> sqlite3.Connection:
    key = (filename, threading.get_ident())
    connection = _all_direct.get(key)
    if connection is None:
        # timeout=0: never wait on the event loop; a busy database falls back to the async path
        connection = sqlite3.connect(filename, timeout=0, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA query_only = 1")
        for pragma, value in SQLITE_MEMORY.items():
            connection.execute(f"PRAGMA {pragma} = {value}")
        with _all_lock:
            _all_direct[key] = connection
    return connection


def close_direct(filename: str | None = None) -> None:
    """Close the direct SQLite readers (of one database file, or all), e.g. when its store closes."""
    with _all_lock:
        keys = [key for key in _all_direct if filename is None or key[0] == filename]
        closing = [_all_direct.pop(key) for key in keys]
    for connection in closing:
        connection.close()


def _direct_filename(client: Any) -> str | None:
    filename = getattr(client, "filename", None)
    if client.capabilities.dialect != "sqlite" or not isinstance(filename, str):
        return None
    return None if filename == ":memory:" or filename.startswith("file:") else filename


def _sqlite_statements(keys: list[Key]) -> list[tuple[str, list[str]]]:
    """Statements (and their values) that read `keys`, at most 64 keys each."""
    statements = []
    for start in range(0, len(keys), _SQLITE_SIZES[-1]):
        part = keys[start:start + _SQLITE_SIZES[-1]]
        if len(part) == 1:
            statements.append((_SQLITE_ONE, list(part[0])))
            continue
        size = next(size for size in _SQLITE_SIZES if size >= len(part))
        padded = part + [part[-1]] * (size - len(part))  # a repeated key matches the same row again
        statements.append((_SQLITE_MANY[size], [value for key in padded for value in key]))
    return statements


def _views(rows: list[Any]) -> dict[Key, ReceiptView]:
    views = {}
    for row in rows:
        view = ReceiptView.from_row(row)
        views[(view.workspace_id, view.mutation_id)] = view
    return views


def _read_now(client: BaseDBAsyncClient, keys: list[Key]) -> dict[Key, ReceiptView] | None:
    """The receipts of `keys` through SQLite's direct path; None when that path cannot answer
    at once (PostgreSQL, an in-memory database, or SQLite busy)."""
    filename = _direct_filename(client)
    if filename is None:
        return None
    try:
        connection = _direct_connection(filename)
        rows = [row for statement, values in _sqlite_statements(keys)
                for row in connection.execute(statement, values).fetchall()]
    except sqlite3.OperationalError:
        return None  # busy or locked: ask through the async connection, which may wait
    return _views(rows)


async def _read_later(client: BaseDBAsyncClient, keys: list[Key]) -> dict[Key, ReceiptView]:
    if is_postgres_connection(client):
        # asyncpg itself, on the connection kept for these reads (pg_reads); its uuid codec takes
        # the keys' text as it is
        if len(keys) == 1:
            return _views(await pg_reads.fetch(client, _POSTGRES_ONE, *keys[0]))
        return _views(await pg_reads.fetch(client, _POSTGRES_MANY, [key[0] for key in keys],
                                           [key[1] for key in keys]))
    rows = []
    for statement, values in _sqlite_statements(keys):
        rows += [tuple(row.values()) for row in await client.execute_query_dict(statement, values)]
    return _views(rows)


# Batched per connection: a lookup inside a transaction (none is today) reads through it.
_reads: TurnBatch[BaseDBAsyncClient, Key, ReceiptView] = TurnBatch(_read_now, _read_later)


def forget(client: BaseDBAsyncClient) -> None:
    """Drop the read batches kept for `client`, whose store closed."""
    _reads.forget(client)


def find_view(workspace_id: uuid.UUID, mutation_id: uuid.UUID) -> Awaitable[ReceiptView | None]:
    """The receipt of (workspace_id, mutation_id) as last committed (outside any transaction), or None.

    Read together with the other lookups of this event-loop turn on the same store (turn_batch)."""
    connections = require_context().connections
    # This context's own connection (a transaction's, inside one), read without tortoise's check
    # that it belongs to the running loop (a system call each time); a loop switch would have
    # warned (an error in the tests) where the connection was first taken.
    client = current_client(connections)
    return _reads.get(client, (str(workspace_id), str(mutation_id)))
