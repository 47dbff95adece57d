"""get_documents: `documents/{uri_without_scheme}` -> the current page and caption evidence the caller may
read (store/served_documents.py).

A name is read as the URL it spells, made a source key as a retrieved URL is (source_urls): a name
with tracking parameters is the document without them, one with a secret value the document
retrieved with that secret (or with the value already in its stored form)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tortoise.connection import get_connection

from evidencekit.server.evidence import source_urls
from evidencekit.server.evidence.document_names import PREFIX, as_document_name
from evidencekit.server.evidence.store.access import Principal
from evidencekit.server.evidence.store.models import Membership
from evidencekit.server.evidence.store.served_documents import served_documents
from evidencekit.server.evidence.store.store_keys import store_key

__all__ = ["MALFORMED", "NOT_FOUND", "PREFIX", "UnknownDocument", "get_documents"]

MALFORMED = "names have the form documents/{uri_without_scheme}"
NOT_FOUND = "no stored document with that name that you may read"


class UnknownDocument(LookupError):
    """Every name that was malformed or found nothing, each with why and where it stood in the
    request, so one answer names them all."""

    def __init__(self, unknown: list[tuple[int, str, str]], found: list[dict[str, Any]] | None = None) -> None:
        # a name asked for twice is named once; a secret value in it is not repeated (source_urls)
        named = dict.fromkeys((source_urls.shown_url(name), why) for _, name, why in unknown)
        super().__init__("; ".join(f"{name}: {why}" for name, why in named))
        self.names = [name for name, _ in named]
        self.places = unknown  # (index in names, name, why)
        self.malformed = any(why == MALFORMED for _, _, why in unknown)
        self.found = found or []  # the documents the other names found, in request order


async def get_documents(principal: Principal, names: list[str]) -> dict[str, Any]:
    """One document per name, in request order; any unknown or unreadable name is an error naming
    every such name (and carrying the documents the others found). A page's http(s) URL is taken
    for its `documents/...` name (document_names).

    Which document a name stands for, and whether it is served: store/served_documents."""
    workspaces = [m.workspace_id for m in await Membership.filter(user_id=principal.user_id)]  # type: ignore[attr-defined]
    names = [as_document_name(name) for name in names]
    unknown: list[tuple[int, str, str]] = []
    keys: dict[str, list[str]] = {}
    names_key = await store_key(source_urls.NAMES_KEY)  # a name's secret values are hashed under it (source_urls)
    for index, name in enumerate(names):
        if not name.startswith(PREFIX) or len(name) <= len(PREFIX):
            unknown.append((index, name, MALFORMED))
        else:
            keys[name] = [source_urls.source_key(f"{scheme}://{name[len(PREFIX):]}", names_key, named=True)
                          for scheme in ("https", "http")]
    served = await served_documents(get_connection("default"), workspaces, keys, datetime.now(UTC))
    documents = []
    for index, name in enumerate(names):
        document = served.get(name)
        if document is None:
            if name in keys:
                unknown.append((index, name, NOT_FOUND))
            continue
        # the document's own name: without the tracking parameters and secrets the name asked by may hold
        documents.append({"name": PREFIX + document.source_key.split("://", 1)[-1], "uri": document.source_key,
                          "content": document.markdown or document.text, "description": document.description,
                          "title": document.title})
    unknown.sort()
    if unknown:
        raise UnknownDocument(unknown, documents)
    return {"documents": documents}
