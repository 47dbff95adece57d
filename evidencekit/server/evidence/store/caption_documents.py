"""Migration 0015: caption tracks stored before they were documents become documents.

Their revisions kept the contract's text (the cue text cut at 20,000 characters) and a copy of it as
markdown; a settle now keeps the cue text and the timestamped cue lines (transcript.py). Every
revision not purged is written again so, from its segments, and the caption tracks get_documents
serves now are indexed for search_documents, as a settle would have.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence import transcript
from evidencekit.server.evidence.store import search_index
from evidencekit.server.evidence.store.served_documents import CAPTIONS
from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    rows_table,
    sql_uuid,
)

_STORED = """
SELECT r.evidence_id{uuid_text} AS evidence_id, r.revision, r.segments
FROM evidence_revision AS r JOIN evidence AS e ON e.id = r.evidence_id
WHERE e.kind = '{kind}' AND r.purged_at IS NULL AND (r.evidence_id, r.revision) > ({p1}, {p2})
ORDER BY r.evidence_id, r.revision LIMIT {p3}
"""
_REWRITTEN = (("evidence_id", "uuid"), ("revision", "int"), ("text", "text"), ("markdown", "text"))


def _segments(stored: Any) -> list[dict[str, Any]]:
    value = json.loads(stored) if isinstance(stored, str | bytes) else stored
    return [segment for segment in value or [] if isinstance(segment, dict)]


async def rewrite_stored(connection: BaseDBAsyncClient, *, batch: int = 100) -> int:
    """Each caption revision's text and markdown written again from its segments, `batch` at a time;
    how many."""
    postgres = is_postgres_connection(connection)
    statement = dialect_params(_STORED.replace("{uuid_text}", "::text" if postgres else "")
                               .replace("{kind}", CAPTIONS), postgres)
    after: tuple[Any, int] = (sql_uuid(uuid.UUID(int=0), postgres), 0)
    done = 0
    while True:
        rows = await connection.execute_query_dict(statement, [*after, batch])
        if rows:
            rewritten = []
            for row in rows:
                segments = _segments(row["segments"])
                rewritten.append((sql_uuid(row["evidence_id"], postgres), int(row["revision"]),
                                  transcript.cue_text(segments), transcript.cue_lines(segments)))
            table, values = rows_table("k", _REWRITTEN, rewritten, postgres, 1)
            await connection.execute_query(
                f"UPDATE evidence_revision SET text = k.text, markdown = k.markdown FROM {table} "
                "WHERE evidence_revision.evidence_id = k.evidence_id AND evidence_revision.revision = k.revision",
                values)
        done += len(rows)
        if len(rows) < batch:
            return done
        after = (sql_uuid(rows[-1]["evidence_id"], postgres), int(rows[-1]["revision"]))


async def caption_documents(_apps: Any, schema_editor: Any) -> None:
    """Migration 0015: the caption revisions stored before written as documents, and indexed."""
    connection = schema_editor.client
    await rewrite_stored(connection)
    await search_index.index_stored(connection, now=datetime.now().astimezone(), kinds=(CAPTIONS,))
