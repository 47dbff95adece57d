"""Secrets the store keeps: made at random the first time one is asked for, and read by every
process sharing the database (the first to insert it wins; the others read what it wrote)."""

from __future__ import annotations

import secrets

from tortoise.connection import get_connection

from evidencekit.server.evidence.store.sql import dialect_params, is_postgres_connection

_MAKE = "INSERT INTO store_key (name, secret) VALUES ({p1}, {p2}) ON CONFLICT (name) DO NOTHING"
_READ = "SELECT secret FROM store_key WHERE name = {p1}"


async def store_key(name: str) -> bytes:
    """The store's secret called `name` (32 random bytes)."""
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    rows = await connection.execute_query_dict(dialect_params(_READ, postgres), [name])
    if not rows:
        await connection.execute_query(dialect_params(_MAKE, postgres), [name, secrets.token_hex(32)])
        rows = await connection.execute_query_dict(dialect_params(_READ, postgres), [name])
    return bytes.fromhex(rows[0]["secret"])
