"""The status read without the ORM: one indexed SELECT, decoded by hand.

Status is the call agents poll, so it is the hot path. Through tortoise one lookup cost ~0.8 ms
(query building, model construction, timestamp parsing) plus, on SQLite, a hop to aiosqlite's
thread that convoys with the event loop on the GIL; the statement below costs ~0.15 ms through
the tortoise connection and ~0.03 ms on SQLite's direct path (scripts/bench.py status).

SQLite's direct path is a per-thread `sqlite3` connection used on the event loop thread. In WAL
mode (tortoise's default) a reader takes no lock a writer holds, and each SELECT sees the latest
commit, so an indexed point read neither waits nor goes stale. If SQLite ever reports the database
busy, the read goes through the async connection instead.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.connection import get_connection

from .sql import dialect_params, is_postgres_connection, sql_uuid

_COLUMNS = ("id, workspace_id, mutation_id, state, kind, created_at, settled_at, valid_until, result, "
            "evidence_id, evidence_revision, input_hash")
_SELECT = f"SELECT {_COLUMNS} FROM receipt WHERE workspace_id = {{p1}} AND mutation_id = {{p2}}"
_SQLITE_SELECT = dialect_params(_SELECT, postgres=False)
_POSTGRES_SELECT = dialect_params(_SELECT, postgres=True)


@dataclass(frozen=True, slots=True)
class ReceiptView:
    """What `receipts.as_retrieval` reads of a receipt, and what it was made for."""

    id: uuid.UUID | str
    workspace_id: uuid.UUID | str
    mutation_id: uuid.UUID | str
    state: str
    kind: str
    created_at: datetime
    settled_at: datetime | None
    valid_until: datetime
    result: dict[str, Any] | None
    evidence_id: uuid.UUID | str | None
    evidence_revision: int | None
    input_hash: str  # what the receipt was made for (receipts.RetrieveRequest.input_hash)

    @classmethod
    def from_row(cls, row: dict[str, Any] | sqlite3.Row) -> ReceiptView:
        result = row["result"]
        return cls(row["id"], row["workspace_id"], row["mutation_id"], row["state"], row["kind"],
                   _datetime(row["created_at"]), _optional_datetime(row["settled_at"]),
                   _datetime(row["valid_until"]), json.loads(result) if isinstance(result, str) else result,
                   row["evidence_id"], row["evidence_revision"], row["input_hash"])


def _datetime(value: datetime | str) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value  # SQLite keeps ISO text


def _optional_datetime(value: datetime | str | None) -> datetime | None:
    return None if value is None else _datetime(value)


# One reader per (database file, thread): a thread's event loop uses only its own.
_all_direct: dict[tuple[str, int], sqlite3.Connection] = {}
_all_lock = threading.Lock()


def _direct_connection(filename: str) -> sqlite3.Connection:
    key = (filename, threading.get_ident())
    connection = _all_direct.get(key)
    if connection is None:
        # timeout=0: never wait on the event loop; a busy database falls back to the async path
        connection = sqlite3.connect(filename, timeout=0, isolation_level=None, check_same_thread=False)
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA query_only = 1")
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


async def find_view(workspace_id: uuid.UUID, mutation_id: uuid.UUID) -> ReceiptView | None:
    """The receipt of (workspace_id, mutation_id) as last committed (outside any transaction), or None."""
    client = get_connection("default")
    filename = _direct_filename(client)
    if filename is not None:
        try:
            row = _direct_connection(filename).execute(
                _SQLITE_SELECT, (str(workspace_id), str(mutation_id))).fetchone()
            return None if row is None else ReceiptView.from_row(row)
        except sqlite3.OperationalError:
            pass  # busy or locked: ask through the async connection, which may wait
    postgres = is_postgres_connection(client)
    values = [sql_uuid(workspace_id, postgres), sql_uuid(mutation_id, postgres)]
    rows = await client.execute_query_dict(_POSTGRES_SELECT if postgres else _SQLITE_SELECT, values)
    return ReceiptView.from_row(rows[0]) if rows else None
