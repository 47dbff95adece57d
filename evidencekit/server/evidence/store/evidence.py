"""Evidence: one id per source (workspace, normalized URL, kind, language); a new revision only
when the retrieved content changed."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence.store.ids import new_id
from evidencekit.server.evidence.store.sql import (
    is_postgres_connection,
    param,
    rows_table,
    sql_time,
)


@dataclass(frozen=True)
class Content:
    content_hash: str
    source_url: str | None
    title: str | None
    description: str | None
    text: str
    markdown: str | None
    segments: list[dict[str, object]]


@dataclass(frozen=True)
class Source:
    """What a settle records: the receipt's source and the content retrieved from it."""

    workspace_id: uuid.UUID | str
    source_key: str  # of the receipt's URL (source_urls.source_key)
    kind: str
    language: str | None
    content: Content
    key: tuple[str, str, str, str] = field(init=False)  # the evidence row's unique key

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (str(self.workspace_id), self.source_key, self.kind, self.language or ""))


_KEYS = (("id", "uuid"), ("workspace_id", "uuid"), ("source_key", "text"), ("kind", "text"), ("language", "text"))
_REVISION_KEYS = (("evidence_id", "uuid"), ("revision", "int"))
_REVISIONS = (("evidence_id", "uuid"), ("revision", "int"), ("content_hash", "text"), ("source_url", "text"),
              ("title", "text"), ("description", "text"), ("text", "text"), ("markdown", "text"),
              ("segments", "text"))


def _uuid_text(postgres: bool) -> str:
    return "::text" if postgres else ""


async def record_many(connection: BaseDBAsyncClient, sources: Sequence[Source]) -> list[tuple[str, int]]:
    """The evidence id of each source and the revision holding its content, in order: a source's
    revision is new only when its content differs from the latest one (also within `sources`).

    Meant for a settle's transaction, in a fixed number of statements however many sources: the
    first opens or touches every evidence row, in key order, so they are locked (PostgreSQL; the
    order keeps two settles from deadlocking) or the write lock is held (SQLite) before the latest
    revisions are read. A purge holding those rows runs before or after, never between."""
    if not sources:
        return []
    postgres = is_postgres_connection(connection)
    now = sql_time(datetime.now(UTC), postgres)
    keys = sorted({source.key for source in sources})
    table, values = rows_table("k", _KEYS, [(str(new_id()), *key) for key in keys], postgres, 2)
    opened = await connection.execute_query_dict(
        f"INSERT INTO evidence (id, workspace_id, source_key, kind, language, revision, updated_at) "
        f"SELECT k.id, k.workspace_id, k.source_key, k.kind, k.language, 0, {param(1, postgres)} FROM {table} "
        "WHERE true ORDER BY k.workspace_id, k.source_key, k.kind, k.language "
        "ON CONFLICT (workspace_id, source_key, kind, language) DO UPDATE SET updated_at = evidence.updated_at "
        f"RETURNING id{_uuid_text(postgres)} AS id, workspace_id{_uuid_text(postgres)} AS workspace_id, "
        "source_key, kind, language, revision", [now, *values])
    # per key: [evidence id, latest revision, its content hash (None: none, or purged)]
    latest = {(row["workspace_id"], row["source_key"], row["kind"], row["language"]):
              [row["id"], int(row["revision"]), None] for row in opened}
    await _read_latest_hashes(connection, list(latest.values()), postgres)
    found, added, bumped = [], [], set()
    for source in sources:
        state = latest[source.key]
        if state[2] != source.content.content_hash:
            state[1], state[2] = state[1] + 1, source.content.content_hash
            bumped.add(source.key)
            content = source.content
            added.append((state[0], state[1], content.content_hash, content.source_url, content.title,
                          content.description, content.text, content.markdown, json.dumps(content.segments)))
        found.append((state[0], state[1]))
    if bumped:
        await _write_revisions(connection, [latest[key][:2] for key in sorted(bumped)], added, now, postgres)
    return found


async def _write_revisions(connection: BaseDBAsyncClient, bumps: list[list[Any]], added: list[tuple[Any, ...]],
                           now: Any, postgres: bool) -> None:
    """Raise the evidence rows' revision numbers and add the new revisions: one statement on
    PostgreSQL (a data-modifying WITH), two on SQLite."""
    numbers, bump_values = rows_table("b", _REVISION_KEYS, bumps, postgres, 2)
    bump = (f"UPDATE evidence SET revision = b.revision, updated_at = {param(1, postgres)} FROM {numbers} "
            "WHERE evidence.id = b.evidence_id")

    def add(first: int) -> tuple[str, list[Any]]:
        revisions, values = rows_table("a", _REVISIONS, added, postgres, first)
        segments = "a.segments::jsonb" if postgres else "a.segments"
        return ("INSERT INTO evidence_revision (evidence_id, revision, content_hash, source_url, title, "
                "description, text, markdown, segments, created_at) SELECT a.evidence_id, a.revision, "
                "a.content_hash, a.source_url, a.title, a.description, a.text, a.markdown, "
                f"{segments}, {param(1, postgres)} FROM {revisions}"), values

    if postgres:
        insert, values = add(2 + len(bump_values))
        await connection.execute_query(f"WITH bumped AS ({bump}) {insert}", [now, *bump_values, *values])
    else:
        await connection.execute_query(bump, [now, *bump_values])
        insert, values = add(2)
        await connection.execute_query(insert, [now, *values])


async def _read_latest_hashes(connection: BaseDBAsyncClient, states: list[list[Any]], postgres: bool) -> None:
    """Fill in each [evidence id, revision, None] the content hash of that revision, unless purged."""
    wanted = [state for state in states if state[1]]
    if not wanted:
        return
    table, values = rows_table("k", _REVISION_KEYS, [state[:2] for state in wanted], postgres, 1)
    rows = await connection.execute_query_dict(
        f"SELECT r.evidence_id{_uuid_text(postgres)} AS evidence_id, r.revision, r.content_hash FROM {table} "
        "JOIN evidence_revision AS r ON r.evidence_id = k.evidence_id AND r.revision = k.revision "
        "WHERE r.purged_at IS NULL", values)
    hashes = {(row["evidence_id"], int(row["revision"])): row["content_hash"] for row in rows}
    for state in wanted:
        state[2] = hashes.get((state[0], state[1]))
