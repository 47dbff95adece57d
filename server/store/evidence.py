"""Evidence: one id per source (workspace, normalized URL, kind, language); a new revision only
when the retrieved content changed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from .models import Evidence, EvidenceRevision


def source_key(url: str) -> str:
    """The URL as a source identity: scheme and host lowercased, default port and fragment dropped."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):
        return url
    default = {"https": 443, "http": 80}.get(parsed.scheme)
    port = "" if parsed.port in (None, default) else f":{parsed.port}"
    path = parsed.raw_path.decode("ascii", "replace") or "/"
    return f"{parsed.scheme}://{parsed.host.lower()}{port}{path}"


@dataclass(frozen=True)
class Content:
    content_hash: str
    source_url: str | None
    title: str | None
    description: str | None
    text: str
    markdown: str | None
    segments: list[dict[str, object]]


async def record(workspace_id: uuid.UUID, url: str, kind: str, language: str | None,
                 content: Content) -> tuple[Evidence, int]:
    """The evidence for this source and the revision holding `content` (new only if it changed)."""
    key: dict[str, Any] = {"workspace_id": workspace_id, "source_key": source_key(url), "kind": kind,
                           "language": language or ""}
    evidence = await Evidence.filter(**key).select_for_update().first()
    if evidence is None:
        try:
            async with in_transaction():
                evidence = await Evidence.create(**key)
        except IntegrityError:  # created concurrently
            evidence = await Evidence.filter(**key).select_for_update().first()
            assert evidence is not None
    latest = await EvidenceRevision.filter(evidence_id=evidence.id, revision=evidence.revision).first()
    if latest is not None and latest.content_hash == content.content_hash and latest.purged_at is None:
        return evidence, latest.revision
    evidence.revision += 1
    await evidence.save(update_fields=["revision", "updated_at"])
    await EvidenceRevision.create(
        evidence_id=evidence.id, revision=evidence.revision, content_hash=content.content_hash,
        source_url=content.source_url, title=content.title, description=content.description,
        text=content.text, markdown=content.markdown, segments=content.segments,
    )
    return evidence, evidence.revision
