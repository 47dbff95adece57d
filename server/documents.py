"""get_documents: `documents/{uri_without_scheme}` -> the current url_text evidence the caller may read."""

from __future__ import annotations

from typing import Any

from server.store.access import Principal
from server.store.evidence import source_key
from server.store.models import Evidence, EvidenceRevision, Membership

PREFIX = "documents/"


class UnknownDocument(LookupError):
    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"{name}: {why}")
        self.name = name


async def get_documents(principal: Principal, names: list[str]) -> dict[str, Any]:
    """One document per name, in request order; the first unknown or unreadable name is an error."""
    workspaces = [m.workspace_id for m in await Membership.filter(user_id=principal.user_id)]  # type: ignore[attr-defined]
    documents = []
    for name in names:
        if not name.startswith(PREFIX) or len(name) <= len(PREFIX):
            raise UnknownDocument(name, "names have the form documents/{uri_without_scheme}")
        rest = name[len(PREFIX):]
        keys = [source_key(f"{scheme}://{rest}") for scheme in ("https", "http")]
        evidence = await Evidence.filter(workspace_id__in=workspaces, source_key__in=keys, kind="url_text",
                                         revision__gt=0).order_by("-updated_at").first()
        revision = None if evidence is None else await EvidenceRevision.get_or_none(
            evidence_id=evidence.id, revision=evidence.revision, purged_at=None)
        if evidence is None or revision is None:
            raise UnknownDocument(name, "no stored document with that name that you may read")
        documents.append({
            "name": name,
            "uri": revision.source_url or evidence.source_key,
            "content": revision.markdown or revision.text,
            "description": revision.description or "",
            "title": revision.title or "",
        })
    return {"documents": documents}
