"""Every store test runs on SQLite and on PostgreSQL (127.0.0.1:5432; in CI it must be there)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from evidencekit.server.evidence.store.db import open_store

PG_ADMIN_URL = os.environ.get("EVIDENCEKIT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


async def _pg_admin():  # type: ignore[no-untyped-def]
    import asyncpg

    return await asyncpg.connect(PG_ADMIN_URL, timeout=3)


async def create_pg_database() -> str:
    """A fresh database for one test; skips outside CI when no PostgreSQL answers."""
    try:
        admin = await _pg_admin()
    except (OSError, Exception) as exc:  # noqa: BLE001 - any failure to reach it
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN_URL}: {exc}")
    name = f"evidencekit_t_{uuid.uuid4().hex[:12]}"
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name


async def drop_pg_database(url: str) -> None:
    admin = await _pg_admin()
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
    finally:
        await admin.close()


@asynccontextmanager
async def pg_database() -> AsyncIterator[str]:
    url = await create_pg_database()
    try:
        yield url
    finally:
        await drop_pg_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.sqlite3'}?busy_timeout=10000"
        return
    async with pg_database() as url:
        yield url


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    """A fresh PostgreSQL database, for what only PostgreSQL does."""
    async with pg_database() as url:
        yield url


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[str]:
    async with open_store(database_url):
        yield database_url
