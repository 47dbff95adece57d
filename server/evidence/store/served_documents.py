"""Which stored document a `documents/...` name stands for, the one rule get_documents serves by
and search_documents answers by: among the caller's workspaces, the latest updated url_text
evidence of the name's URL; served only while an unexpired receipt refers to its current revision
(the rule the sweeper purges by, so content is hidden from the moment it expires) and that
revision's content is not purged. Every name in one statement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence.store.sql import is_postgres_connection, param, sql_time, sql_uuid


@dataclass(frozen=True)
class Served:
    source_key: str  # the URL the name maps to, also when the page was redirected
    title: str
    description: str
    text: str
    markdown: str | None


async def served_documents(connection: BaseDBAsyncClient, workspaces: Sequence[Any],
                           keys: Mapping[str, Sequence[str]], now: datetime) -> dict[str, Served]:
    """The served document of each name in `keys` (name -> the source keys it may stand for) that
    has one."""
    wanted = {key: name for name, named in keys.items() for key in named}
    if not wanted or not workspaces:
        return {}
    postgres = is_postgres_connection(connection)
    places = ", ".join(param(2 + n, postgres) for n in range(len(workspaces)))
    listed = ", ".join(param(2 + len(workspaces) + n, postgres) for n in range(len(wanted)))
    rows = await connection.execute_query_dict(
        "SELECT e.source_key, r.title, r.description, r.text, r.markdown, EXISTS (SELECT 1 FROM receipt "
        "WHERE receipt.evidence_id = e.id AND receipt.evidence_revision = e.revision "
        f"AND receipt.valid_until > {param(1, postgres)}) AS unexpired "
        "FROM evidence AS e LEFT JOIN evidence_revision AS r ON r.evidence_id = e.id AND r.revision = e.revision "
        f"AND r.purged_at IS NULL WHERE e.workspace_id IN ({places}) AND e.source_key IN ({listed}) "
        "AND e.kind = 'url_text' AND e.revision > 0 ORDER BY e.updated_at DESC",
        [sql_time(now, postgres), *(sql_uuid(w, postgres) for w in workspaces), *wanted])
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        latest.setdefault(wanted[row["source_key"]], row)
    return {name: Served(row["source_key"], row["title"] or "", row["description"] or "", row["text"],
                         row["markdown"])
            for name, row in latest.items() if row["unexpired"] and row["text"] is not None}
