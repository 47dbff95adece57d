"""get_documents: `documents/{uri_without_scheme}` -> the current url_text evidence the caller may read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from evidencekit.server.evidence.store.access import Principal
from evidencekit.server.evidence.store.evidence import source_key
from evidencekit.server.evidence.store.models import Evidence, EvidenceRevision, Membership, Receipt

PREFIX = "documents/"


MALFORMED = "names have the form documents/{uri_without_scheme}"
NOT_FOUND = "no stored document with that name that you may read"


class UnknownDocument(LookupError):
    """Every name that was malformed or found nothing, each with why and where it stood in the
    request, so one answer names them all."""

    def __init__(self, unknown: list[tuple[int, str, str]]) -> None:
        named = dict.fromkeys((name, why) for _, name, why in unknown)  # a name asked for twice is named once
        super().__init__("; ".join(f"{name}: {why}" for name, why in named))
        self.names = [name for name, _ in named]
        self.places = unknown  # (index in names, name, why)
        self.malformed = any(why == MALFORMED for _, _, why in unknown)


async def get_documents(principal: Principal, names: list[str]) -> dict[str, Any]:
    """One document per name, in request order; any unknown or unreadable name is an error naming
    every such name.

    A revision is served only while an unexpired receipt refers to it, the rule the sweeper purges
    by, so content is hidden from the moment it expires rather than from the next sweep."""
    now = datetime.now(UTC)
    workspaces = [m.workspace_id for m in await Membership.filter(user_id=principal.user_id)]  # type: ignore[attr-defined]
    documents = []
    unknown: list[tuple[int, str, str]] = []
    for index, name in enumerate(names):
        if not name.startswith(PREFIX) or len(name) <= len(PREFIX):
            unknown.append((index, name, MALFORMED))
            continue
        rest = name[len(PREFIX):]
        keys = [source_key(f"{scheme}://{rest}") for scheme in ("https", "http")]
        evidence = await Evidence.filter(workspace_id__in=workspaces, source_key__in=keys, kind="url_text",
                                         revision__gt=0).order_by("-updated_at").first()
        revision = None
        if evidence is not None and await Receipt.filter(
                evidence_id=evidence.id, evidence_revision=evidence.revision, valid_until__gt=now).exists():
            revision = await EvidenceRevision.get_or_none(evidence_id=evidence.id, revision=evidence.revision,
                                                          purged_at=None)
        if evidence is None or revision is None:
            unknown.append((index, name, NOT_FOUND))
            continue
        documents.append({
            "name": name,
            "uri": evidence.source_key,  # the URL the name maps to, also when the page was redirected
            "content": revision.markdown or revision.text,
            "description": revision.description or "",
            "title": revision.title or "",
        })
    if unknown:
        raise UnknownDocument(unknown)
    return {"documents": documents}
