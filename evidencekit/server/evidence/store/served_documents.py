"""Which stored document a `documents/...` name stands for, the one rule get_documents serves by
and search_documents answers by: among the caller's workspaces, the latest updated evidence of the
name's URL of each document kind (a page, url_text; a caption track, published_captions); each
served only while an unexpired receipt refers to its current revision (the rule the sweeper purges
by, so content is hidden from the moment it expires) and that revision's content is not purged.
Every name in one statement.

A URL stored both as a page and as captions (a talk's page asked for its text and for its caption
track) is one document: the page (its title, description, uri and markdown), then its transcript
under a `## Transcript` heading; its text is the page's text, then the cue text. Captions alone are
served under their title (transcript.py). Neither kind hides the other, so a word of either is
found by search_documents under that name and read back by get_documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence import transcript
from evidencekit.server.evidence.store.sql import is_postgres_connection, param, sql_time, sql_uuid

PAGE, CAPTIONS = "url_text", "published_captions"
DOCUMENT_KINDS = (PAGE, CAPTIONS)  # the evidence kinds stored as documents, and indexed for search


@dataclass(frozen=True)
class Served:
    source_key: str  # the URL the name maps to, also when the page was redirected
    title: str
    description: str
    text: str
    markdown: str | None


def _document(page: dict[str, Any] | None, captions: dict[str, Any] | None) -> Served:
    if captions is None:
        assert page is not None
        return Served(page["source_key"], page["title"] or "", page["description"] or "", page["text"],
                      page["markdown"])
    lines = captions["markdown"] or ""
    if page is None:
        title = captions["title"] or ""
        return Served(captions["source_key"], title, captions["description"] or "", captions["text"],
                      transcript.markdown(title, captions["source_key"], lines))
    return Served(page["source_key"], page["title"] or captions["title"] or "",
                  page["description"] or captions["description"] or "",
                  f"{page['text']}\n\n{captions['text']}",
                  transcript.after_page(page["markdown"] or page["text"], lines))


async def served_documents(connection: BaseDBAsyncClient, workspaces: Sequence[Any],
                           keys: Mapping[str, Sequence[str]], now: datetime) -> dict[str, Served]:
    """The served document of each name in `keys` (name -> the source keys it may stand for) that
    has one."""
    wanted: dict[str, list[str]] = {}  # two names may stand for one key (source_urls: tracking parameters)
    for name, named in keys.items():
        for key in named:
            wanted.setdefault(key, []).append(name)
    if not wanted or not workspaces:
        return {}
    postgres = is_postgres_connection(connection)
    places = ", ".join(param(2 + n, postgres) for n in range(len(workspaces)))
    listed = ", ".join(param(2 + len(workspaces) + n, postgres) for n in range(len(wanted)))
    kinds = ", ".join(f"'{kind}'" for kind in DOCUMENT_KINDS)
    rows = await connection.execute_query_dict(
        "SELECT e.source_key, e.kind, r.title, r.description, r.text, r.markdown, EXISTS (SELECT 1 FROM receipt "
        "WHERE receipt.evidence_id = e.id AND receipt.evidence_revision = e.revision "
        f"AND receipt.valid_until > {param(1, postgres)}) AS unexpired "
        "FROM evidence AS e LEFT JOIN evidence_revision AS r ON r.evidence_id = e.id AND r.revision = e.revision "
        f"AND r.purged_at IS NULL WHERE e.workspace_id IN ({places}) AND e.source_key IN ({listed}) "
        f"AND e.kind IN ({kinds}) AND e.revision > 0 ORDER BY e.updated_at DESC",
        [sql_time(now, postgres), *(sql_uuid(w, postgres) for w in workspaces), *wanted])
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        for name in wanted[row["source_key"]]:
            latest.setdefault((name, row["kind"]), row)
    parts: dict[str, dict[str, dict[str, Any]]] = {}
    for (name, kind), row in latest.items():
        if row["unexpired"] and row["text"] is not None:
            parts.setdefault(name, {})[kind] = row
    return {name: _document(kinds_of.get(PAGE), kinds_of.get(CAPTIONS)) for name, kinds_of in parts.items()}
