"""search_documents: the stored documents of the caller's workspaces that hold the query's words.

Every word must match, as written or in another form (search_forms; those holding every word as
written rank first); when no document holds them all, the first page answers the documents that
hold any (those with more of them first), and its page token keeps to that. Each result says how
it matched: `match` (exact, forms, some) and `matched_words` (the query's words it holds). A page
token is the offset of the next page, signed with a key the store keeps (HMAC-SHA256) over the
query it was issued for and the caller's workspaces: a forged token, one issued for other
workspaces (another tenant's, or the caller's before a membership changed) or for another query is
refused rather than answering a page nobody asked for. Documents settled between two pages may shift the ranking: a page then
repeats or skips a result, as offset paging does. Pages end at search_index.CANDIDATES results.
Snippets are cut in a worker thread: the event loop serves other requests meanwhile.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
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
from evidencekit.server.evidence.store.store_keys import store_key

DEFAULT_PAGE_SIZE = 10


class BadPageToken(ValueError):
    pass


@dataclass(frozen=True)
class Page:
    offset: int
    every: bool  # every term must match (False: any)
    exact: int | None = None  # how many names hold every term as written, once a page found out


TOKEN_KEY = "page_token"  # the store key (store_keys) page tokens are signed with


def _query_id(found: list[search_text.Term]) -> str:
    return hashlib.sha256(repr([(term.words, term.prefix) for term in found]).encode()).hexdigest()[:12]


def _signature(key: bytes, payload: str, workspaces: list[str]) -> str:
    signed = hmac.new(key, payload.encode() + b"|" + ",".join(sorted(workspaces)).encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(signed.digest()[:16]).decode().rstrip("=")


def page_token(key: bytes, found: list[search_text.Term], page: Page, workspaces: list[str]) -> str:
    raw = json.dumps({"q": _query_id(found), "o": page.offset, "e": int(page.every), "x": page.exact},
                     separators=(",", ":"))
    payload = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    return f"{payload}.{_signature(key, payload, workspaces)}"


NOT_OURS_TOKEN = "page_token is not a next_page_token this service issued for your workspaces"


def read_token(key: bytes, token: str, found: list[search_text.Term], workspaces: list[str]) -> Page:
    payload, _, signature = token.partition(".")
    if not hmac.compare_digest(signature.encode(), _signature(key, payload, workspaces).encode()):
        raise BadPageToken(NOT_OURS_TOKEN)
    try:
        data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        page = Page(data["o"], bool(data["e"]), data.get("x"))
        same = data["q"] == _query_id(found)
    except (ValueError, TypeError, KeyError, binascii.Error):  # signed by us: only an old format
        raise BadPageToken(NOT_OURS_TOKEN) from None
    if not same:
        raise BadPageToken("page_token belongs to another query: send the query it was issued with")
    return page


def how_matched(held: tuple[str | None, ...], found: list[search_text.Term]) -> tuple[str, list[str]]:
    """A hit's `match` and `matched_words`: "exact" when it holds every query word as written
    (case and accents aside), "forms" when it holds every one but some only in another form (a
    guess), "some" when it lacks some; and the query's words it holds, as the query wrote them."""
    words: dict[str, list[str | None]] = {}
    for term, how in zip(found, held, strict=True):
        words.setdefault(term.source, []).append(how)
    matched = [word for word, hows in words.items() if all(hows)]
    if len(matched) < len(words):
        return "some", matched
    return ("exact" if all(how == "exact" for how in held) else "forms"), matched


def _results(hits: list[search_index.Hit], found: list[search_text.Term]) -> list[dict[str, Any]]:
    budget = search_text.ScanBudget()  # one for the answer: its snippets' work is bounded
    results = []
    for hit in hits:
        match, matched = how_matched(hit.held, found)
        results.append({
            "parent": PREFIX + hit.name_key,
            "title": hit.title,
            "uri": hit.source_key,
            "snippet": search_text.snippet(hit.text, found, budget=budget),
            "match": match,
            "matched_words": matched,
        })
    return results


async def search_documents(principal: Principal, query: str, page_size: int | None = None,
                           token: str | None = None) -> dict[str, Any]:
    found = search_text.terms(query)
    size = page_size or DEFAULT_PAGE_SIZE
    workspaces = [str(m.workspace_id) for m in await Membership.filter(user_id=principal.user_id)]  # type: ignore[attr-defined]
    key = await store_key(TOKEN_KEY)
    page = read_token(key, token, found, workspaces) if token else Page(0, True)
    connection = get_connection("default")
    now = datetime.now(UTC)

    async def ranked(at: Page) -> search_index.Found:
        return await search_index.search(connection, workspaces, found, every=at.every, offset=at.offset,
                                         limit=size + 1, now=now, exact=at.exact)

    result = await ranked(page)
    if not result.hits and not token and len(found) > 1:  # no document holds every word: any of them
        page = Page(0, False)
        result = await ranked(page)
    hits = result.hits
    answer: dict[str, Any] = {"results": await asyncio.to_thread(_results, hits[:size], found)}
    following = page.offset + size
    if len(hits) > size and following < search_index.CANDIDATES:
        answer["next_page_token"] = page_token(key, found, Page(following, page.every, result.exact), workspaces)
    return answer
