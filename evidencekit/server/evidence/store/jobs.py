"""The job side of a receipt: claim with a lease, renew it, settle or release while holding it.

Every step takes a batch: a worker claims as many receipts as it has free slots in one or two
statements, renews all its leases in one, and settles whatever finished meanwhile in one
transaction of a fixed number of statements.

A claim takes the oldest pending receipts, or running ones whose lease expired (their worker
died), as long as the receipt itself has not expired (the sweeper marks those). First the oldest
receipt of each workspace with nothing running, so one workspace's backlog delays another's
receipt by one slot at most; then the oldest of all. A worker's spare slots take only the first
kind (`claim_many`'s `any_limit`), so one workspace cannot hold every slot. PostgreSQL skips rows other workers hold
(FOR UPDATE SKIP LOCKED) and rechecks every row it updates, so no receipt is claimed twice;
SQLite has one writer at a time, so the statement alone is enough.

Settling succeeds only for the receipts the worker still holds, each wholly or not at all: a
batch is one transaction, so a crash inside it settles none of them (their leases run out and
another worker takes them up), and a receipt whose lease was lost is left out of the batch.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection

from evidencekit.server.evidence import source_urls
from evidencekit.server.evidence.index_words import IndexWords, entry_words
from evidencekit.server.evidence.store import evidence as evidence_store
from evidencekit.server.evidence.store import search_index, status_answer
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipt_reads import ReceiptView
from evidencekit.server.evidence.store.served_documents import DOCUMENT_KINDS
from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    param,
    rows_table,
    sql_time,
    stored_json,
)
from evidencekit.server.evidence.store.store_keys import store_key
from evidencekit.server.evidence.store.write_transaction import write_transaction

# One statement: first the oldest pending receipt of each workspace with nothing running (the
# running receipts are few), so one workspace's backlog delays another's receipt by one slot at
# most; then the oldest of all, waiting or running with an expired lease (their worker died).
# The first kind may take up to {p5} (every slot free, spare ones included), the second only what
# is left of {p6} (the free regular slots): a worker whose regular slots one workspace fills
# still takes up another workspace's first receipt in a spare slot, at once.
# Every choice is an index range scan (receipt (state, created_at) and (state, workspace_id,
# created_at)): a claim costs the same with ten or a million receipts waiting. The workspaces with
# receipts waiting are found by skipping through the index, one lookup each. The choices are
# materialized before the update: an `IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)` may be run
# again per row by PostgreSQL's plan, skipping the rows this very statement just updated.
_CLAIM = """
WITH RECURSIVE
spaces(workspace_id) AS (
    SELECT (SELECT workspace_id FROM receipt WHERE state = 'pending' ORDER BY workspace_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.workspace_id FROM receipt AS r WHERE r.state = 'pending' AND r.workspace_id > s.workspace_id
            ORDER BY r.workspace_id LIMIT 1)
    FROM spaces AS s WHERE s.workspace_id IS NOT NULL),
firsts(id) AS MATERIALIZED (
    SELECT (SELECT r.id FROM receipt AS r WHERE r.state = 'pending' AND r.workspace_id = s.workspace_id
            AND r.attempts < {p4} AND r.valid_until > {p3} ORDER BY r.created_at LIMIT 1{lock})
    FROM spaces AS s WHERE s.workspace_id IS NOT NULL AND s.workspace_id NOT IN (
        SELECT workspace_id FROM receipt WHERE state = 'running' AND lease_expires_at >= {p3})),
fair AS MATERIALIZED (
    SELECT f.id, (SELECT r.created_at FROM receipt AS r WHERE r.id = f.id) AS created_at
    FROM firsts AS f WHERE f.id IS NOT NULL ORDER BY 2 LIMIT {p5}),
waiting AS MATERIALIZED (
    SELECT id, created_at FROM receipt WHERE state = 'pending' AND attempts < {p4} AND valid_until > {p3}
    ORDER BY created_at LIMIT 2 * {p5}{lock}),
orphaned AS MATERIALIZED (
    SELECT id, created_at FROM receipt WHERE state = 'running' AND lease_expires_at < {p3}
    AND attempts < {p4} AND valid_until > {p3} ORDER BY created_at LIMIT {p5}{lock}),
chosen AS MATERIALIZED (
    SELECT id FROM (
        SELECT id, turn, ROW_NUMBER() OVER (ORDER BY turn, created_at) AS n FROM (
            SELECT id, 0 AS turn, created_at FROM fair
            UNION ALL
            SELECT id, 1 AS turn, created_at FROM (SELECT id, created_at FROM waiting
                                                   UNION ALL SELECT id, created_at FROM orphaned) AS rest
            WHERE id NOT IN (SELECT id FROM fair)
        ) AS c
    ) AS numbered WHERE n <= CASE WHEN turn = 0 THEN {p5} ELSE {p6} END)
UPDATE receipt SET state = 'running', lease_owner = {p1}, lease_expires_at = {p2}, attempts = attempts + 1
WHERE id IN (SELECT id FROM chosen) AND {still_claimable}
RETURNING {claimed}
"""
# The chosen rows checked again as PostgreSQL updates them (another worker may have claimed one
# meanwhile), in a form no index serves: SQLite would otherwise read every waiting receipt
# through the state index instead of the few chosen ids.
_STILL_CLAIMABLE = ("CASE WHEN state = 'pending' THEN 1 WHEN state = 'running' AND lease_expires_at < {p3} "
                    "THEN 1 ELSE 0 END = 1 AND attempts < {p4} AND valid_until > {p3}")


class LeaseLost(Exception):
    """The worker no longer holds the receipt (its lease expired and another worker took it)."""


@dataclass(frozen=True, slots=True)
class Claimed:
    """A receipt a worker holds: what retrieving and settling it need (no ORM model to build)."""

    id: uuid.UUID
    workspace_id: uuid.UUID
    url: str
    kind: str
    language: str | None
    attempts: int  # this claim included
    # what the receipt's status answer shows beside the result (_settled_row)
    mutation_id: str
    created_at: datetime | str  # as the column gives it: a datetime, or SQLite's text (timestamps.py)
    valid_until: datetime | str


@cache
def _claim_statement(postgres: bool) -> str:
    uuid_text = "::text" if postgres else ""
    statement = (_CLAIM.replace("{lock}", " FOR UPDATE SKIP LOCKED" if postgres else "")
                 .replace("{claimed}", f"id{uuid_text}, workspace_id{uuid_text}, url, kind, language, attempts, "
                                       f"mutation_id{uuid_text}, created_at, valid_until"))
    return dialect_params(statement.replace("{still_claimable}", _STILL_CLAIMABLE), postgres)


async def claim_many(worker_id: str, lease: timedelta, *, max_attempts: int, limit: int,
                     any_limit: int | None = None, now: datetime | None = None) -> list[Claimed]:
    """Up to `limit` receipts, now leased to `worker_id`: the fair choices (the oldest receipt of
    each workspace with nothing running) first, then the oldest of any workspace; of those at most
    `any_limit` in all (default `limit`), so the rest of `limit` goes to fair choices only."""
    now = now or datetime.now(UTC)
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    rows = await connection.execute_query(_claim_statement(postgres), [
        worker_id, sql_time(now + lease, postgres), sql_time(now, postgres), max_attempts, limit,
        limit if any_limit is None else min(any_limit, limit)])
    return [Claimed(uuid.UUID(row[0]), uuid.UUID(row[1]), row[2], row[3], row[4], row[5], str(row[6]), row[7], row[8])
            for row in rows[1]]


async def claim(worker_id: str, lease: timedelta, *, max_attempts: int,
                now: datetime | None = None) -> Claimed | None:
    """The oldest claimable receipt, now leased to `worker_id`, or None."""
    claimed = await claim_many(worker_id, lease, max_attempts=max_attempts, limit=1, now=now)
    return claimed[0] if claimed else None


def _ids(connection: BaseDBAsyncClient, ids: Sequence[uuid.UUID | str], first: int) -> tuple[str, list[Any]]:
    """`ids` for `receipt.id IN (...)`: one uuid array on PostgreSQL, placeholders on SQLite."""
    postgres = is_postgres_connection(connection)
    if postgres:
        return f"SELECT unnest({param(first, True)}::uuid[])", [[str(value) for value in ids]]
    return ", ".join(param(first + n, False) for n in range(len(ids))), [str(value) for value in ids]


async def renew_many(ids: Sequence[uuid.UUID | str], worker_id: str, lease: timedelta) -> set[str]:
    """Extend the leases `worker_id` still holds among `ids`; the ids (as text) it still holds."""
    if not ids:
        return set()
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    listed, values = _ids(connection, ids, 3)
    rows = await connection.execute_query_dict(
        f"UPDATE receipt SET lease_expires_at = {param(1, postgres)} WHERE id IN ({listed}) "
        f"AND lease_owner = {param(2, postgres)} AND state = 'running' RETURNING id",
        [sql_time(datetime.now(UTC) + lease, postgres), worker_id, *values])
    return {str(row["id"]) for row in rows}


async def renew(receipt_id: uuid.UUID, worker_id: str, lease: timedelta) -> bool:
    return bool(await renew_many([receipt_id], worker_id, lease))


async def release_many(ids: Sequence[uuid.UUID | str], worker_id: str) -> int:
    """Give claimed receipts back untouched (graceful shutdown); the attempt does not count."""
    if not ids:
        return 0
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    listed, values = _ids(connection, ids, 2)
    released, _ = await connection.execute_query(
        "UPDATE receipt SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, "
        f"attempts = attempts - 1 WHERE id IN ({listed}) AND lease_owner = {param(1, postgres)} "
        "AND state = 'running'", [worker_id, *values])
    return int(released)


async def release(receipt_id: uuid.UUID, worker_id: str) -> bool:
    return await release_many([receipt_id], worker_id) == 1


@dataclass(frozen=True)
class Settle:
    """What one finished retrieval settles: its receipt, the contract's result, the content kept."""

    receipt: Claimed
    result: dict[str, Any]
    content: evidence_store.Content | None
    words: IndexWords | None = None  # the content's index words, when read before


_SETTLED = (("id", "uuid"), ("result", "text"), ("evidence_id", "uuid"), ("evidence_revision", "int"),
            ("answer_contract", "text"), ("answer_head", "text"), ("answer_tail", "text"), ("failure", "text"))


def _settled_row(item: Settle, evidence: tuple[Any, Any], now: datetime) -> tuple[Any, ...]:
    """The values `item` settles its receipt with: the result's text, its evidence, and the status
    answer it will have, checked now (status_answer)."""
    receipt, result = item.receipt, stored_json(item.result)
    view = ReceiptView(str(receipt.id), str(receipt.workspace_id), receipt.mutation_id, "completed", receipt.kind,
                       receipt.created_at, now, receipt.valid_until, result, *evidence, "")
    # why a fetch failed rides beside the result (engine.Result), never in its contract fields
    failure = getattr(item.result, "failure", None)
    return (str(receipt.id), result, *evidence, *status_answer.stored_columns(view, now), failure)


class _NotAllHeld(Exception):
    """Raised inside a settle's transaction to undo it: some receipts were not held any more."""

    def __init__(self, held: set[str]) -> None:
        super().__init__(f"{len(held)} held")
        self.held = held


def _indexed(item: Settle) -> bool:
    """Whether a settle's document goes into search_documents' index (a page or a caption track,
    with content: served_documents.DOCUMENT_KINDS)."""
    return item.receipt.kind in DOCUMENT_KINDS and item.content is not None


def _words_of(settles: Sequence[Settle]) -> dict[str, IndexWords]:
    return {str(item.receipt.id): item.words or entry_words(item.content.title, item.content.text)
            for item in settles if _indexed(item) and item.content is not None}


async def _settle_all(worker_id: str, settles: Sequence[Settle], now: datetime,
                      words: dict[str, IndexWords], names_key: bytes) -> set[str]:
    """Settle every receipt of `settles` in one transaction, or none (_NotAllHeld, with the ones held).

    The evidence is written first, its statement a write: on SQLite it takes the write lock before
    anything is read. On PostgreSQL the receipt rows are locked last, by the UPDATE that settles
    them; nothing else holds a receipt row while waiting for an evidence row, so no deadlock."""
    async with write_transaction() as connection:
        postgres = is_postgres_connection(connection)
        with_content = [item for item in settles if item.content is not None]
        keys = {str(item.receipt.id): source_urls.source_key(item.receipt.url, names_key) for item in with_content}
        recorded = await evidence_store.record_many(connection, [
            evidence_store.Source(item.receipt.workspace_id, keys[str(item.receipt.id)], item.receipt.kind,
                                  item.receipt.language, item.content)
            for item in with_content if item.content is not None])
        evidence = {str(item.receipt.id): found for item, found in zip(with_content, recorded, strict=True)}
        await search_index.keep(connection, [
            search_index.Entry(found[0], found[1], item.receipt.workspace_id,
                               keys[str(item.receipt.id)], item.receipt.valid_until,
                               item.content.title, item.content.text, words.get(str(item.receipt.id)))
            for item, found in zip(with_content, recorded, strict=True) if _indexed(item) and item.content is not None])
        rows = [_settled_row(item, evidence.get(str(item.receipt.id), (None, None)), now) for item in settles]
        table, values = rows_table("k", _SETTLED, rows, postgres, 3)
        result = "k.result::json" if postgres else "k.result"
        settled = await connection.execute_query_dict(
            f"UPDATE receipt SET state = 'completed', settled_at = {param(1, postgres)}, result = {result}, "
            "evidence_id = k.evidence_id, evidence_revision = k.evidence_revision, lease_owner = NULL, "
            "answer_contract = k.answer_contract, answer_head = k.answer_head, answer_tail = k.answer_tail, "
            "failure = k.failure, "
            f"lease_expires_at = NULL FROM {table} WHERE receipt.id = k.id AND receipt.lease_owner = "
            f"{param(2, postgres)} AND receipt.state = 'running' RETURNING receipt.id",
            [sql_time(now, postgres), worker_id, *values])
        held = {str(row["id"]) for row in settled}
        if len(held) < len(settles):
            raise _NotAllHeld(held)  # rolls back the evidence written for receipts not held
    return held


def settles_at_once() -> int:
    """How many settle transactions one worker runs side by side: PostgreSQL writes them at once
    (each locks its evidence rows in key order first, so two never wait on each other in a
    circle); SQLite has one writer at a time."""
    return 2 if is_postgres_connection(get_connection("default")) else 1


async def settle_many(worker_id: str, settles: Sequence[Settle], *, now: datetime | None = None) -> set[str]:
    """Store result, evidence and state of every receipt in `settles` that `worker_id` still
    holds, in one transaction; the ids (as text) settled. The others (leases lost) are left as
    they are. A lease is seldom lost, so the batch is written at once and, when a receipt turns out
    not to be held, undone and written again without it."""
    now = now or datetime.now(UTC)
    # the index's words, a few ms of CPU for a long page: in a thread, before the transaction, so
    # that neither the event loop nor the database's write lock waits on them
    unread = any(_indexed(item) and item.words is None for item in settles)
    words = await asyncio.to_thread(_words_of, settles) if unread else _words_of(settles)
    # secret values in the evidence's names are hashed under it (source_urls); read once per client
    names_key = await store_key(source_urls.NAMES_KEY) if any(item.content is not None for item in settles) else b""
    while settles:
        try:
            return await _settle_all(worker_id, settles, now, words, names_key)
        except _NotAllHeld as partly:
            settles = [item for item in settles if str(item.receipt.id) in partly.held]
    return set()


async def settle(receipt: Claimed, worker_id: str, result: dict[str, Any],
                 content: evidence_store.Content | None, *, now: datetime | None = None) -> None:
    """Settle one receipt, only while holding its lease (LeaseLost otherwise)."""
    if not await settle_many(worker_id, [Settle(receipt, result, content)], now=now):
        raise LeaseLost(f"receipt {receipt.id} is no longer held by {worker_id}")


async def settle_abandoned(max_attempts: int, *, now: datetime | None = None) -> int:
    """Receipts whose every attempt lost its lease cannot be confirmed either way: `unconfirmed`."""
    now = now or datetime.now(UTC)
    return await Receipt.filter(state="running", lease_expires_at__lt=now, attempts__gte=max_attempts).update(
        state="unconfirmed", settled_at=now, lease_owner=None, lease_expires_at=None)


async def running_owners(prefix: str) -> list[str]:
    """The lease holders of running receipts whose ids start with `prefix` (one machine's boot)."""
    rows = await Receipt.filter(state="running", lease_owner__startswith=prefix).distinct().values_list(
        "lease_owner", flat=True)
    return sorted(str(owner) for owner in rows if owner)


async def expire_leases(owners: list[str], now: datetime | None = None) -> int:
    """End the leases of holders known to be dead: their receipts are claimable at once, as if the
    leases had run out (the attempt they spent still counts)."""
    if not owners:
        return 0
    now = now or datetime.now(UTC)
    return await Receipt.filter(state="running", lease_owner__in=owners).update(lease_expires_at=now)
