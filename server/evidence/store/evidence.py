"""Evidence: one id per source (workspace, normalized URL, kind, language); a new revision only
when the retrieved content changed."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
from tortoise.connection import get_connection

from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    sql_time,
    sql_uuid,
)


def source_key(url: str) -> str:
    """The URL as a source identity, itself a valid URI: scheme and host lowercased (IDNA), default
    port and fragment dropped."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):
        return url
    default = {"https": 443, "http": 80}.get(parsed.scheme)
    port = "" if parsed.port in (None, default) else f":{parsed.port}"
    path = parsed.raw_path.decode("ascii", "replace") or "/"
    host = parsed.raw_host.decode("ascii").lower()  # IDNA (punycode), as a URI spells it
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets
    return f"{parsed.scheme}://{host}{port}{path}"


@dataclass(frozen=True)
class Content:
    content_hash: str
    source_url: str | None
    title: str | None
    description: str | None
    text: str
    markdown: str | None
    segments: list[dict[str, object]]


_OPEN = """
INSERT INTO evidence (id, workspace_id, source_key, kind, language, revision, updated_at)
VALUES ({p1}, {p2}, {p3}, {p4}, {p5}, 0, {p6})
ON CONFLICT (workspace_id, source_key, kind, language) DO UPDATE SET updated_at = evidence.updated_at
RETURNING id, revision
"""
_LATEST = "SELECT content_hash, purged_at FROM evidence_revision WHERE evidence_id = {p1} AND revision = {p2}"
_NEXT = "UPDATE evidence SET revision = revision + 1, updated_at = {p1} WHERE id = {p2} RETURNING revision"
_ADD = """
INSERT INTO evidence_revision (evidence_id, revision, content_hash, source_url, title, description, text,
                               markdown, segments, created_at)
VALUES ({p1}, {p2}, {p3}, {p4}, {p5}, {p6}, {p7}, {p8}, {p9}, {p10})
"""


async def record(workspace_id: uuid.UUID, url: str, kind: str, language: str | None,
                 content: Content) -> tuple[uuid.UUID, int]:
    """The evidence id for this source and the revision holding `content` (new only if it changed).

    Meant for a transaction: the first statement opens or touches the evidence row, so it is
    locked (PostgreSQL) or the write lock is held (SQLite) before the latest revision is read."""
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    now = sql_time(datetime.now(UTC), postgres)

    opened = await connection.execute_query_dict(dialect_params(_OPEN, postgres), [
        sql_uuid(uuid.uuid4(), postgres), sql_uuid(workspace_id, postgres), source_key(url), kind, language or "", now])
    evidence_id, revision = sql_uuid(opened[0]["id"], postgres), int(opened[0]["revision"])
    if revision:
        latest = await connection.execute_query_dict(dialect_params(_LATEST, postgres), [evidence_id, revision])
        if latest and latest[0]["content_hash"] == content.content_hash and latest[0]["purged_at"] is None:
            return uuid.UUID(str(evidence_id)), revision
    bumped = await connection.execute_query_dict(dialect_params(_NEXT, postgres), [now, evidence_id])
    revision = int(bumped[0]["revision"])
    await connection.execute_query_dict(dialect_params(_ADD, postgres), [
        evidence_id, revision, content.content_hash, content.source_url, content.title, content.description,
        content.text, content.markdown, json.dumps(content.segments), now])
    return uuid.UUID(str(evidence_id)), revision
