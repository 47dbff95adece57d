"""The embedded store's SQLite keeps a statement's transient tables (the claim's materialized
choices, a settle's rows) in memory, on its connection and on the status path's direct reader.
In temp files they cost a claim on aiosqlite's thread ~200 page faults, its CPU four times the
statement's own (issue 54)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from tortoise.connection import get_connection

from evidencekit.server.evidence.store import jobs, receipt_reads, receipts
from evidencekit.server.evidence.store.db import database_url, open_store, sqlite_path

pytestmark = pytest.mark.anyio
MEMORY = 2  # PRAGMA temp_store's answer for MEMORY


async def test_the_data_folders_store_and_its_direct_reader_keep_transient_tables_in_memory(tmp_path: Path) -> None:
    url = database_url({"EVIDENCEKIT_DATA_DIR": str(tmp_path)})
    async with open_store(url):
        request = receipts.RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://a.example/moor", "url_text")
        await receipts.submit(request)
        assert len(await jobs.claim_many("w1", timedelta(seconds=60), max_attempts=3, limit=4)) == 1
        [store] = await get_connection("default").execute_query_dict("PRAGMA temp_store")
        assert (await receipts.existing(request)) is not None  # read through the direct reader
        reader = receipt_reads._direct_connection(sqlite_path(url))
        assert list(store.values()) == [MEMORY]
        assert reader.execute("PRAGMA temp_store").fetchone() == (MEMORY,)
