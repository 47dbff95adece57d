"""The retrieve rate: at most `limit` new receipts of a workspace in any 60 seconds, on both
databases, checked against an oracle of the sliding window over irregular call times."""

from __future__ import annotations

import asyncio
import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence.service import EvidenceService, RateLimited, ServiceSettings
from evidencekit.server.evidence.store import ratelimit
from evidencekit.server.evidence.store.models import Receipt, Workspace
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit

pytestmark = pytest.mark.anyio
WINDOW = timedelta(seconds=60)


class Refused(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


async def call(workspace: uuid.UUID, at: datetime, limit: int) -> int | None:
    """One new receipt at `at`, charged as the service charges it; its Retry-After when refused."""

    async def charge(connection: BaseDBAsyncClient) -> None:
        retry_after = await ratelimit.admit(workspace, limit, now=at, connection=connection)
        if retry_after is not None:
            raise Refused(retry_after)

    try:
        await submit(RetrieveRequest(workspace, uuid.uuid4(), "https://example.com/", "url_text"), now=at,
                     admit=charge)
    except Refused as refused:
        return refused.retry_after
    return None


async def test_a_burst_across_a_minute_boundary_gets_no_more_than_the_limit(store: str) -> None:
    """The fixed per-minute window took 10 of a limit of 5 within 2 s, 5 each side of a minute."""
    workspace = (await Workspace.create(name="lab")).id
    before = datetime(2099, 1, 1, 12, 0, 59, 500_000, tzinfo=UTC)
    assert [await call(workspace, before, 5) for _ in range(5)] == [None] * 5
    after = before + timedelta(seconds=1)  # 12:01:00.5, a new minute
    assert [await call(workspace, after, 5) for _ in range(5)] == [59] * 5  # 59 s until the first five leave
    assert await Receipt.filter(workspace_id=workspace).count() == 5  # a refused call leaves no receipt
    assert await call(workspace, before + timedelta(seconds=59.9), 5) == 1
    assert await call(workspace, before + WINDOW, 5) is None  # the first five have left the window
    assert await call(uuid.uuid4(), after, 5) is None  # another workspace has its own budget


@pytest.mark.parametrize("seed", range(3))
async def test_the_calls_admitted_are_exactly_those_a_sliding_window_admits(store: str, seed: int) -> None:
    """Oracle: a call is admitted iff fewer than `limit` admitted calls lie in the 60 s before it;
    and Retry-After is the time until one of them leaves."""
    chance = random.Random(seed)
    limit = chance.choice((1, 3, 7))
    workspace = (await Workspace.create(name="lab")).id
    at = datetime(2099, 1, 1, 12, 0, 0, tzinfo=UTC)
    admitted: list[datetime] = []
    for _ in range(120):
        at += timedelta(seconds=chance.choice((0, 0.25, 1, 7, 13.5, 30, 59.999, 60)))
        in_window = sorted(t for t in admitted if at - WINDOW < t <= at)
        expected = None if len(in_window) < limit else max(1, -int(-(in_window[-limit] + WINDOW - at).total_seconds() // 1))
        got = await call(workspace, at, limit)
        assert got == expected, (at, in_window, limit)
        if got is None:
            admitted.append(at)
    assert len(admitted) > limit  # the window did move


async def test_concurrent_new_receipts_of_one_workspace_are_counted_one_after_another(store: str) -> None:
    """Twelve new retrieves at once with a limit of 3: three receipts, nine 429s, on PostgreSQL too
    (each transaction's count sees the others once committed)."""
    lab = await Workspace.create(name="lab", retrieve_rate_per_minute=3)
    service = EvidenceService(ServiceSettings(retrieve_per_minute=100))

    async def retrieve(n: int) -> object:
        try:
            return await service.retrieve(lab.id, uuid.uuid4(), f"https://example.com/{n}", "url_text", None)
        except RateLimited as refused:
            return refused

    answers = await asyncio.gather(*(retrieve(n) for n in range(12)))
    assert sum(isinstance(answer, RateLimited) for answer in answers) == 9
    assert await Receipt.filter(workspace_id=lab.id).count() == 3


async def test_the_count_reads_the_claim_index_not_the_workspaces_receipts(store: str) -> None:
    """Range scans of a claim index, one per state: a busy workspace's count reads the last minute,
    not every receipt the workspace ever made (nor the whole table)."""
    from typing import Any

    from tortoise.connection import get_connection

    from evidencekit.server.evidence.store.sql import is_postgres_connection, sql_time, sql_uuid

    connection: Any = get_connection("default")
    postgres = is_postgres_connection(connection)
    busy = uuid.uuid4()
    now = datetime.now(UTC)
    p = [("$%d" if postgres else "?%d") % n for n in range(1, 7)]
    insert = ("INSERT INTO receipt (id, workspace_id, mutation_id, input_hash, url, kind, state, created_at, "
              f"valid_until, attempts) VALUES ({p[0]}, {p[1]}, {p[2]}, 'h', 'https://example.com/', 'url_text', "
              f"{p[3]}, {p[4]}, {p[5]}, 0)")
    rows = []
    for n in range(3000):  # a workspace with a long history (three quarters of the table), and others
        values = [uuid.uuid4(), busy if n % 4 else uuid.uuid4(), uuid.uuid4(), ("completed", "expired", "pending")[n % 3]]
        at = sql_time(now - timedelta(minutes=n + 2), postgres)
        rows.append([*(v if postgres else str(v) for v in values[:3]), values[3], at, at])
    await connection.execute_many(insert, rows)
    await connection.execute_query("ANALYZE")
    _, count, _ = ratelimit._statements(postgres)
    values = [sql_uuid(busy, postgres), sql_time(now - ratelimit.WINDOW, postgres)]
    if postgres:
        async with connection.acquire_connection() as raw:
            plan = "\n".join(row[0] for row in await raw.fetch("EXPLAIN " + count, *values))
        # either claim index: both read the last minute only (which one is the planner's to weigh)
        assert "receipt_state_" in plan and "Seq Scan" not in plan, plan
    else:
        rows = await connection.execute_query_dict("EXPLAIN QUERY PLAN " + count, values)
        plan = "\n".join(row["detail"] for row in rows)
        assert "USING COVERING INDEX idx_receipt_state_" in plan, plan
        assert "(state=? AND workspace_id=? AND created_at>?)" in plan, plan
