"""search_documents: the stored documents of the caller's workspaces that hold the query's words.

Every word must match; when no document holds them all, the first page answers the documents that
hold any (ranked, so those with more of them first), and its page token keeps to that. A page
token is the offset of the next page, bound to the query it was issued for: a token from another
query is refused rather than silently answering the wrong page. Documents settled between two
pages may shift the ranking: a page then repeats or skips a result, as offset paging does. Pages
end at search_index.CANDIDATES results.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tortoise.connection import get_connection

from evidencekit.server.evidence import search_text
from evidencekit.server.evidence.documents import PREFIX
from evidencekit.server.evidence.store import search_index
from evidencekit.server.evidence.store.access import Principal
from evidencekit.server.evidence.store.models import Membership

DEFAULT_PAGE_SIZE = 10


class BadPageToken(ValueError):
    pass


@dataclass(frozen=True)
class Page:
    offset: int
    every: bool  # every term must match (False: any)


def _query_id(found: list[search_text.Term]) -> str:
    return hashlib.sha256(repr(found).encode()).hexdigest()[:12]


def page_token(found: list[search_text.Term], page: Page) -> str:
    raw = json.dumps({"q": _query_id(found), "o": page.offset, "e": int(page.every)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def read_token(token: str, found: list[search_text.Term]) -> Page:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        offset, every = data["o"], data["e"]
        if type(offset) is not int or every not in (0, 1):
            raise ValueError("not ours")
        page = Page(offset, bool(every))
        same = data["q"] == _query_id(found)
    except (ValueError, TypeError, KeyError, binascii.Error):
        raise BadPageToken("page_token is not a next_page_token this service issued") from None
    if not same:
        raise BadPageToken("page_token belongs to another query: send the query it was issued with")
    if not 0 < page.offset < search_index.CANDIDATES:
        raise BadPageToken("page_token is not a next_page_token this service issued")
    return page


async def search_documents(principal: Principal, query: str, page_size: int | None = None,
                           token: str | None = None) -> dict[str, Any]:
    found = search_text.terms(query)
    size = page_size or DEFAULT_PAGE_SIZE
    page = read_token(token, found) if token else Page(0, True)
    workspaces = [str(m.workspace_id) for m in await Membership.filter(user_id=principal.user_id)]  # type: ignore[attr-defined]
    connection = get_connection("default")
    now = datetime.now(UTC)

    async def ranked(at: Page) -> list[search_index.Hit]:
        return await search_index.search(connection, workspaces, found, every=at.every, offset=at.offset,
                                         limit=size + 1, now=now)

    hits = await ranked(page)
    if not hits and not token and len(found) > 1:  # no document holds every word: any of them
        page = Page(0, False)
        hits = await ranked(page)
    answer: dict[str, Any] = {"results": [{
        "parent": PREFIX + hit.name_key,
        "title": hit.title,
        "uri": hit.source_key,
        "snippet": search_text.snippet(hit.text, found),
    } for hit in hits[:size]]}
    following = page.offset + size
    if len(hits) > size and following < search_index.CANDIDATES:
        answer["next_page_token"] = page_token(found, Page(following, page.every))
    return answer
