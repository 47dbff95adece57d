"""Secrets the store keeps: made at random the first time one is asked for, and read by every
process sharing the database (the first to insert it wins; the others read what it wrote). A key
never changes once made: each is read once per database connection client, not on every call."""

from __future__ import annotations

import secrets
import weakref
from typing import Any

from tortoise.connection import get_connection

from evidencekit.server.evidence.store.sql import dialect_params, is_postgres_connection

_MAKE = "INSERT INTO store_key (name, secret) VALUES ({p1}, {p2}) ON CONFLICT (name) DO NOTHING"
_READ = "SELECT secret FROM store_key WHERE name = {p1}"


_read: weakref.WeakKeyDictionary[Any, dict[str, bytes]] = weakref.WeakKeyDictionary()


async def store_key(name: str) -> bytes:
    """The store's secret called `name` (32 random bytes)."""
    connection = get_connection("default")
    known = _read.setdefault(connection, {})
    if name not in known:
        known[name] = await _stored(connection, name)
    return known[name]


async def store_key_on(connection: Any, name: str) -> bytes:
    """`store_key` on a given connection (a migration's), not cached."""
    return await _stored(connection, name)


async def _stored(connection: Any, name: str) -> bytes:
    postgres = is_postgres_connection(connection)
    rows = await connection.execute_query_dict(dialect_params(_READ, postgres), [name])
    if not rows:
        await connection.execute_query(dialect_params(_MAKE, postgres), [name, secrets.token_hex(32)])
        rows = await connection.execute_query_dict(dialect_params(_READ, postgres), [name])
    return bytes.fromhex(rows[0]["secret"])
