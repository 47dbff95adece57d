"""Whether an exception means the database could not be reached, rather than a bug.

Both surfaces answer such a failure as 503 `unavailable` ("retry later"; every operation is safe to
repeat) instead of a bare internal error.
"""

from __future__ import annotations

import sqlite3

from tortoise.exceptions import DBConnectionError, OperationalError

try:
    import asyncpg
except ImportError:  # the `postgres` extra is not installed: SQLite only
    _POSTGRES_GONE: tuple[type[BaseException], ...] = ()
else:  # AdminShutdown / CrashShutdown: what queries in flight get when PostgreSQL restarts or fails over.
    _POSTGRES_GONE = (asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError,
                      asyncpg.TooManyConnectionsError, asyncpg.AdminShutdownError, asyncpg.CrashShutdownError)
_SQLITE_GONE = ("database is locked", "unable to open database file", "disk i/o error", "database or disk is full")


def is_store_outage(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:  # the cause chain: tortoise wraps driver errors
        seen.add(id(current))
        if isinstance(current, (DBConnectionError, ConnectionError, TimeoutError, *_POSTGRES_GONE)):
            return True
        operational = isinstance(current, sqlite3.OperationalError | OperationalError)
        if operational and any(text in str(current).lower() for text in _SQLITE_GONE):
            return True
        current = current.__cause__ or current.__context__
    return False
