"""Migration 0017: what was stored before source_urls named sources, made what a settle makes now.

- Evidence: every source key with a query string becomes `source_urls.source_key` of it (tracking
  parameters dropped, secret values hashed), its search row's name with it. Where that makes two
  evidence rows of a workspace one name (`page?utm_source=x` and `page`), the one updated last
  keeps it, as get_documents served the latest before; the others are retired: their key becomes
  `superseded:{evidence id}`, which no name reads and search does not find (their search rows are
  deleted), while their receipts and revisions stay as they were.
- Shown URLs: a receipt result's `provenance.source_url` and a revision's `source_url` lose their
  secret values (`source_urls.shown_url`), and so does the revision's markdown, whose relative
  links were resolved against that URL. Receipts looked at: those asked for a URL with a query
  string, or settled with a revision whose URL has one.

Old names keep working: get_documents reads a name as a settle names a URL, so the name of a page
with its tracking parameters or its secret finds the renamed document.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence import source_urls
from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    sql_uuid,
    stored_json,
    stored_value,
)
from evidencekit.server.evidence.store.store_keys import store_key_on

RETIRED = "superseded:"
BATCH = 400

_WITH_QUERY = ("SELECT id{t} AS id, workspace_id{t} AS workspace_id, source_key, kind, language, updated_at "
               "FROM evidence WHERE source_key LIKE '%?%'")
_AT_KEYS = ("SELECT id{t} AS id, workspace_id{t} AS workspace_id, source_key, kind, language, updated_at "
            "FROM evidence WHERE source_key IN ({keys})")
_RENAME = "UPDATE evidence SET source_key = {p1} WHERE id = {p2}"
_RENAME_INDEXED = "UPDATE document_search SET name_key = {p1} WHERE evidence_id = {p2}"
_UNINDEX = "DELETE FROM document_search WHERE evidence_id = {p1}"
# the results that may show a secret: of a URL with a query string, or of a revision with one
_RESULTS = """
SELECT r.id{t} AS id, r.result{t} AS result FROM receipt AS r
WHERE r.id > {p1} AND r.result IS NOT NULL AND r.result{t} LIKE '%"source_url":%?%'
  AND (r.url LIKE '%?%' OR EXISTS (SELECT 1 FROM evidence_revision AS v WHERE v.evidence_id = r.evidence_id
                                   AND v.revision = r.evidence_revision AND v.source_url LIKE '%?%'))
ORDER BY r.id LIMIT {p2}
"""
_SET_RESULT = "UPDATE receipt SET result = {p1}{json} WHERE id = {p2}"
_REVISION_URLS = "SELECT id, source_url FROM evidence_revision WHERE source_url LIKE '%?%'"
_SHOW_REVISION = ("UPDATE evidence_revision SET source_url = {p1}, markdown = replace(markdown, {p2}, {p3}) "
                  "WHERE id = {p4}")


async def rename_sources(_apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.client
    postgres = is_postgres_connection(connection)
    names_key = await store_key_on(connection, source_urls.NAMES_KEY)
    await rename_evidence(connection, names_key, postgres)
    await redact_results(connection, postgres)
    await redact_revisions(connection, postgres)


def _batches(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[start:start + BATCH] for start in range(0, len(items), BATCH)]


async def rename_evidence(connection: BaseDBAsyncClient, names_key: bytes, postgres: bool) -> int:
    """Rename every evidence row whose key changes; how many."""
    t = "::text" if postgres else ""
    moving: dict[str, str] = {}  # evidence id -> its new key
    # (workspace, key, kind, language) -> [(updated_at, already there, id)] of the rows it names
    named: dict[tuple[str, str, str, str], list[tuple[Any, bool, str]]] = {}
    for row in await connection.execute_query_dict(_WITH_QUERY.replace("{t}", t)):
        key = source_urls.source_key(row["source_key"], names_key)
        if key != row["source_key"]:
            moving[row["id"]] = key
            named.setdefault((row["workspace_id"], key, row["kind"], row["language"]), []).append(
                (row["updated_at"], False, row["id"]))
    if not moving:
        return 0
    for keys in _batches(sorted({key for _, key, _, _ in named})):
        places = ", ".join(f"{{p{n + 1}}}" for n in range(len(keys)))
        statement = dialect_params(_AT_KEYS.replace("{t}", t).replace("{keys}", places), postgres)
        for row in await connection.execute_query_dict(statement, list(keys)):
            group = named.get((row["workspace_id"], row["source_key"], row["kind"], row["language"]))
            if group is not None and row["id"] not in moving:
                group.append((row["updated_at"], True, row["id"]))
    keeping = {max(group)[2]: key for (_, key, _, _), group in named.items()}
    # every row that moves or gives up its key first takes one of its own, so that no rename meets
    # a key another row still holds
    for group in named.values():
        for *_, evidence_id in group:
            if evidence_id in moving or evidence_id not in keeping:
                await connection.execute_query(dialect_params(_RENAME, postgres),
                                               [RETIRED + evidence_id, sql_uuid(evidence_id, postgres)])
            if evidence_id not in keeping:
                await connection.execute_query(dialect_params(_UNINDEX, postgres), [sql_uuid(evidence_id, postgres)])
    for evidence_id, key in keeping.items():
        if evidence_id in moving:
            await connection.execute_query(dialect_params(_RENAME, postgres), [key, sql_uuid(evidence_id, postgres)])
            await connection.execute_query(dialect_params(_RENAME_INDEXED, postgres),
                                           [key.split("://", 1)[-1], sql_uuid(evidence_id, postgres)])
    return len(moving)


async def redact_results(connection: BaseDBAsyncClient, postgres: bool) -> int:
    """Redact the secret values of the results' source URLs; how many results changed."""
    t = "::text" if postgres else ""
    statement = dialect_params(_RESULTS.replace("{t}", t), postgres)
    update = dialect_params(_SET_RESULT.replace("{json}", "::json" if postgres else ""), postgres)
    after: Any = uuid.UUID(int=0)
    changed = 0
    while True:
        rows = await connection.execute_query_dict(statement, [sql_uuid(after, postgres), BATCH])
        for row in rows:
            result = stored_value(row["result"])
            provenance = result.get("provenance") if isinstance(result, dict) else None
            url = provenance.get("source_url") if isinstance(provenance, dict) else None
            if isinstance(url, str) and source_urls.shown_url(url) != url:
                provenance["source_url"] = source_urls.shown_url(url)  # type: ignore[index]
                await connection.execute_query(update, [stored_json(result), sql_uuid(row["id"], postgres)])
                changed += 1
        if len(rows) < BATCH:
            return changed
        after = rows[-1]["id"]


async def redact_revisions(connection: BaseDBAsyncClient, postgres: bool) -> int:
    """Redact the secret values of the revisions' source URLs, and of that URL in their markdown."""
    update = dialect_params(_SHOW_REVISION, postgres)
    changed = 0
    for row in await connection.execute_query_dict(_REVISION_URLS):
        url = row["source_url"]
        if source_urls.shown_url(url) != url:
            shown = source_urls.shown_url(url)
            await connection.execute_query(update, [shown, url.partition("#")[0], shown, row["id"]])
            changed += 1
    return changed
