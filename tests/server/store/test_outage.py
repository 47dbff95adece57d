"""Which failures read as "the database could not be reached", from the real drivers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tortoise.exceptions import IntegrityError

from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.outage import is_store_outage

pytestmark = pytest.mark.anyio


async def test_postgres_that_does_not_answer_is_an_outage() -> None:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - whatever the driver and tortoise raise
        async with open_store("postgres://postgres@127.0.0.1:1/gone"):
            pass
    assert is_store_outage(caught.value)


def test_a_sqlite_file_that_cannot_be_opened_is_an_outage(tmp_path: Path) -> None:
    with pytest.raises(sqlite3.OperationalError) as caught:
        sqlite3.connect(tmp_path / "missing-dir" / "db.sqlite3").execute("SELECT 1")
    assert is_store_outage(caught.value)


def test_bugs_and_refusals_are_not_outages() -> None:
    assert not is_store_outage(ValueError("bad value"))
    assert not is_store_outage(IntegrityError("UNIQUE constraint failed: receipt.mutation_id"))
    assert not is_store_outage(sqlite3.OperationalError("no such table: receipt"))
    import asyncpg

    assert is_store_outage(asyncpg.AdminShutdownError("terminating connection due to administrator command"))
    wrapped = RuntimeError("while settling")
    wrapped.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert is_store_outage(wrapped)
