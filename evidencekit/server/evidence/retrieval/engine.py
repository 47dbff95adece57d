"""Retrieve one public source into the contract's `result` object.

fetch (evidence.fetch) -> read by media type (evidence.parse) -> limits -> status and reason from the
one mapping table (evidence.retrieval.outcomes). Every path ends in a result valid against every
published output schema; nothing here raises for anything a remote origin can send.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import re
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

import httpx
import rfc8785

from evidencekit.server.evidence.fetch.fetcher import (
    FetchBudget,
    Fetcher,
    FetchError,
    FetchResponse,
)
from evidencekit.server.evidence.index_words import IndexWords
from evidencekit.server.evidence.parse import (
    Track,
    sniff_captions,
)
from evidencekit.server.evidence.parse.pool import HtmlParser, ParseTimeout
from evidencekit.server.evidence.parse.text import first_language, looks_binary
from evidencekit.server.evidence.retrieval import limits
from evidencekit.server.evidence.retrieval.outcomes import PARTIAL_PRIORITY, failure_status, outcome
from evidencekit.server.evidence.retrieval.page_words import read_page, words_key
from evidencekit.server.evidence.retrieval.result_check import result_violations
from evidencekit.server.evidence.source_urls import shown_url

log = logging.getLogger("evidencekit.retrieval")

PARSER_VERSION = "research-public-retrieval/v1"
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
CAPTION_TYPES = {"text/vtt": "webvtt", "application/x-subrip": "subrip", "application/srt": "subrip",
                 "text/srt": "subrip"}
CONTRACT_MIME_TYPES = HTML_TYPES | {"text/plain"} | set(CAPTION_TYPES)
ACCEPT = {
    "url_text": "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,*/*;q=0.1",
    "published_captions": "text/vtt,application/x-subrip,text/srt,application/srt;q=0.9,"
                          "text/html;q=0.8,text/plain;q=0.5,*/*;q=0.1",
}


def readable(media: str | None) -> bool:
    """Media types whose body we download; anything else is unsupported_media without a download."""
    return media is None or media in CONTRACT_MIME_TYPES or media.startswith("text/")


GENERIC_BINARY = "application/octet-stream"


def readable_captions(media: str | None) -> bool:
    """For published_captions also the generic binary type, as which .srt and .vtt files are often served:
    the body then counts only if it sniffs as captions."""
    return readable(media) or media == GENERIC_BINARY


def _unreadable_captions(media: str, body: bytes) -> bool:
    return not readable(media) and not (media == GENERIC_BINARY and sniff_captions(body) is not None)


_WANTS_BODY = {"url_text": readable, "published_captions": readable_captions}


# WHATWG MIME sniffing: bytes no text has (its "binary data bytes"), and signatures of binary formats
# that may start with text.
_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_BINARY_SIGNATURES = (b"%PDF-", b"%!PS-Adobe-")
_UTF16_BOMS = (b"\xfe\xff", b"\xff\xfe")


def sniff_media(body: bytes) -> str:
    """The media type of a body sent without one: captions, HTML, text, or binary (which we do not read)."""
    if body.startswith(_BINARY_SIGNATURES) or (
            not body.startswith(_UTF16_BOMS) and _BINARY_BYTES.search(body, 0, 1024)):
        return "application/octet-stream"
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    captions = sniff_captions(body)
    if captions is not None:
        return "text/vtt" if captions == "webvtt" else "application/x-subrip"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head or b"<head" in head:
        return "text/html"
    return "text/plain"


def _shown(url: str) -> str:
    """A URL for a log line: without its query string and fragment, which may carry a secret."""
    return url.split("?", 1)[0].split("#", 1)[0]


def same_language(a: str, b: str) -> bool:
    return a.lower().split("-")[0] == b.lower().split("-")[0]


@dataclass
class Draft:
    """What a retrieval has found so far; `finish` turns it into the contract's result."""

    kind: str
    requested_language: str | None
    text: str = ""
    title: str | None = None
    description: str | None = None
    segments: list[dict[str, Any]] = field(default_factory=list)
    markdown: str | None = None
    source_url: str | None = None
    mime_type: str | None = None
    content_kind: str = "none"
    caption_format: str | None = None
    language: str | None = None
    conditions: list[str] = field(default_factory=list)  # partial conditions and warnings, in order
    status: str | None = None  # set when the retrieval ends without usable content
    reason: str | None = None
    retry_after: int | None = None
    failure: str | None = None  # why a fetch failed, for people (the result has no field for it)
    # a page's index words read with it (page_words.read_page), and the digest of the title and text
    # they are of: finish keeps them when its result holds that title and text
    words: IndexWords | None = None
    words_of: bytes = b""

    def end(self, reason: str, status: str | None = None) -> None:
        self.status, self.reason = status or failure_status(reason), reason

    def fetch_failed(self, error: FetchError) -> None:
        self.end(error.reason)
        self.failure = error.detail


class Result(dict[str, Any]):
    """The contract's `result` object, and beside it (not in it) why a fetch failed: `failure`,
    stored with the receipt (jobs.settle_many) for the notes that explain a result."""

    failure: str | None = None


@dataclass(frozen=True)
class Retrieved:
    result: dict[str, Any]  # the contract's `result` object (a Result: with why a fetch failed beside it)
    markdown: str | None  # the main content as markdown (get_documents serves it)
    content_hash: str | None  # sha256 over the content, for evidence revisions; None without content
    # a page's search index words, of the result's title and text (index_words), read beside the page
    index_words: IndexWords | None = None

    @property
    def succeeded(self) -> bool:
        return self.result["status"] in ("ready", "partial")


# The bytes of bodies one engine holds at once, each counted at the byte cap (8 at the 2 MiB cap): a
# body waits for its parse, and with many worker slots on pages past the cap those bodies, with their
# markdown, were most of the server's memory (scripts/bench.py retrieve).
BODIES_IN_FLIGHT_BYTES = 16 * 1024 * 1024
# Retrievals past the capacity, one body each: a worker's spare slots, for workspaces with nothing
# running while one workspace's slow pages fill its regular slots (worker.py).
SPARE_RETRIEVALS = 2


class RetrievalEngine:
    def __init__(self, fetcher: Fetcher, clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 parser: HtmlParser | None = None) -> None:
        self.fetcher = fetcher
        self.clock = clock
        self.parser = parser or HtmlParser(0)
        self.capacity = max(1, BODIES_IN_FLIGHT_BYTES // fetcher.limits.max_bytes)  # retrievals at once
        self.spare_capacity = SPARE_RETRIEVALS
        self._in_flight = asyncio.Semaphore(self.capacity)
        self._spare_in_flight = asyncio.Semaphore(self.spare_capacity)

    async def retrieve(self, url: str, kind: str, language: str | None = None, *, spare: bool = False) -> Retrieved:
        """The result of retrieving `url`; the deadline counts from when the retrieval may start.
        `spare`: in one of the `spare_capacity` places past the capacity."""
        async with self._spare_in_flight if spare else self._in_flight:
            retrieved = await self._retrieve(url, kind, language)
            if kind == "url_text" and retrieved.content_hash is not None and retrieved.index_words is None:
                words = await self.parser.index(retrieved.result["title"], retrieved.result["text"])
                retrieved = dataclasses.replace(retrieved, index_words=words)
            return retrieved

    async def _retrieve(self, url: str, kind: str, language: str | None) -> Retrieved:
        draft = Draft(kind, language)
        budget = self.fetcher.budget()  # the page and its caption track share one deadline and redirect count
        try:
            response = await self.fetcher.fetch(url, ACCEPT[kind], wants_body=_WANTS_BODY[kind], budget=budget)
        except FetchError as error:
            draft.fetch_failed(error)
            return self.finish(draft)
        try:
            if await self._origin_refused(draft, response, budget):
                return self.finish(draft)
            draft.source_url = shown_url(response.url)  # a secret in its query string is not shown
            if kind == "url_text":
                await self._read_document(draft, response, budget)
            else:
                await self._read_captions(draft, response, budget)
        except ParseTimeout:  # the deadline covers reading the body as it covers fetching it
            draft = Draft(kind, language)
            draft.end("timeout")
        except BrokenProcessPool:  # a parse process died twice: retried like any crashed attempt
            raise
        except Exception:  # a reader's bug on these bytes: settled now, not retried until unconfirmed
            log.exception("reading the body of %s failed; settled as unsupported_content", _shown(url))
            draft = Draft(kind, language)
            draft.end("unsupported_content")
        return self.finish(draft)

    # -- origin answers -------------------------------------------------------------------

    async def _origin_refused(self, draft: Draft, response: FetchResponse, budget: FetchBudget) -> bool:
        status = response.status
        if 200 <= status < 300:
            return False
        if status in (401, 403):
            page = (await self.parser.parse(response.body, http_charset=response.charset, deadline=budget.deadline)
                    if response.body else None)
            draft.end("login_required" if page is not None and page.login_wall else "access_denied")
        elif status in (404, 410):
            draft.end("not_found")
        elif status == 429:
            draft.end("rate_limited")
            draft.retry_after = response.retry_after
        else:
            draft.end("unavailable")
        return True

    def _take_media(self, draft: Draft, response: FetchResponse) -> str:
        media = response.media_type or sniff_media(response.body)
        draft.mime_type = media if media in CONTRACT_MIME_TYPES else None
        if response.over_cap:
            draft.conditions.append("response_too_large")
        if response.cut_short:
            draft.conditions.append("source_partial")
        return media

    # -- url_text ------------------------------------------------------------------------

    async def _read_document(self, draft: Draft, response: FetchResponse, budget: FetchBudget) -> None:
        media = self._take_media(draft, response)
        if not readable(media):
            draft.end("unsupported_media")
            return
        declared = first_language(response.content_language)
        if media in HTML_TYPES:
            # the page and its index words in one trip to a parse process (a second one for the
            # words cost a fifth of a drain's rate on a 2-core machine: docs/benchmarks.md)
            read = await self.parser.run(partial(read_page, response.body, http_charset=response.charset,
                                                 content_language=declared, url=shown_url(response.url)),
                                         len(response.body), budget.deadline)
            page, draft.words, draft.words_of = read.page, read.words, read.words_of
            if page.binary:  # bytes that are not text, labelled as HTML
                draft.end("unsupported_content")
                return
            draft.text, draft.markdown = page.text, page.markdown
            draft.title, draft.description, draft.language = page.title, page.description, page.language
            if page.nodes_limited:
                draft.conditions.append("nodes_limited")
            if page.login_wall:  # a password field and little else: a sign-in page, not the content
                draft.end("login_required")
                return
            if page.script_shell and not response.over_cap:  # its text exists only once JavaScript runs
                draft.end("no_text")
                return
        else:
            draft.text = await self.parser.plain_text(response.body, response.charset, budget.deadline)
            if looks_binary(draft.text):
                draft.text = ""
                draft.end("unsupported_content")
                return
            draft.markdown, draft.language = draft.text, declared
        if draft.requested_language and draft.language and not same_language(draft.requested_language, draft.language):
            draft.conditions.append("language_mismatch")
        if draft.text.strip():
            draft.content_kind = "document_text"
        elif "response_too_large" in draft.conditions:
            draft.end("response_too_large", "blocked")
        elif draft.title or draft.description:
            draft.content_kind = "metadata_only"
            draft.end("metadata_only")
        else:
            draft.end("no_text")

    # -- published_captions --------------------------------------------------------------

    async def _read_captions(self, draft: Draft, response: FetchResponse, budget: FetchBudget) -> None:
        media = self._take_media(draft, response)
        if _unreadable_captions(media, response.body):
            draft.end("unsupported_media")
            return
        if media in HTML_TYPES:
            await self._captions_from_page(draft, response, budget)
            return
        fmt = CAPTION_TYPES.get(media) or sniff_captions(response.body)
        if fmt is None:
            draft.end("unsupported_source")
            return
        await self._read_caption_file(draft, response, fmt, None, budget)

    async def _captions_from_page(self, draft: Draft, response: FetchResponse, budget: FetchBudget) -> None:
        page = await self.parser.parse(response.body, http_charset=response.charset,
                                       content_language=response.content_language, deadline=budget.deadline)
        draft.title, draft.description = page.title, page.description
        tracks = [t for t in page.tracks if t.kind in ("captions", "subtitles") and t.src.strip()]
        if not tracks:  # of a page over the byte cap we saw only the start: a track may come later
            draft.end(*(("response_too_large", "blocked") if response.over_cap else ("no_captions",)))
            return
        track = self._choose_track(tracks, draft.requested_language)
        if track is None:
            draft.end("language_mismatch", "empty")
            return
        try:
            base = httpx.URL(response.url).join(page.base_href) if page.base_href else httpx.URL(response.url)
            track_url = str(base.join(track.src.strip()))
            caption = await self.fetcher.fetch(track_url, ACCEPT["published_captions"], wants_body=readable_captions,
                                               budget=budget)
        except FetchError as error:
            draft.fetch_failed(error)
            return
        except (httpx.InvalidURL, ValueError):
            draft.end("invalid_captions")
            return
        if await self._origin_refused(draft, caption, budget):
            return
        draft.source_url = shown_url(caption.url)
        draft.conditions.clear()  # the page's own (its size) no longer matter: the cues come from the track
        media = self._take_media(draft, caption)
        if _unreadable_captions(media, caption.body):
            draft.end("unsupported_media")
            return
        fmt = CAPTION_TYPES.get(media) or sniff_captions(caption.body)
        if fmt is None:
            draft.end("invalid_captions")
            return
        await self._read_caption_file(draft, caption, fmt, track.srclang, budget)

    @staticmethod
    def _choose_track(tracks: list[Track], language: str | None) -> Track | None:
        if language:  # RFC 4647 lookup: the tag itself, then it shortened (en-GB -> en), then a sibling (en-US)
            wanted = language.lower().split("-")
            for size in range(len(wanted), 0, -1):
                found = next((t for t in tracks if t.srclang and t.srclang.lower().split("-") == wanted[:size]), None)
                if found is not None:
                    return found
            return next((t for t in tracks if t.srclang and same_language(t.srclang, language)), None)
        return next((t for t in tracks if t.default), tracks[0])

    async def _read_caption_file(self, draft: Draft, response: FetchResponse, fmt: str, srclang: str | None,
                                 budget: FetchBudget) -> None:
        parsed = await self.parser.captions(response.body, response.charset, fmt, budget.deadline)
        if parsed is None:  # CaptionError
            draft.end("invalid_captions")
            return
        draft.caption_format = parsed.format
        draft.content_kind = "published_caption_file"
        draft.language = srclang or parsed.language or first_language(response.content_language)
        if not parsed.cues:
            draft.content_kind = "none"
            if response.over_cap:  # only the file's first bytes were read
                draft.end("response_too_large", "blocked")
            else:
                draft.end("invalid_captions" if parsed.invalid_cues else "no_captions")
            return
        if parsed.invalid_cues:
            draft.conditions.append("invalid_cues")
        if len(parsed.cues) > limits.MAX_SEGMENTS:
            draft.conditions.append("cues_limited")
        for cue in parsed.cues[: limits.MAX_SEGMENTS]:
            text, cut = limits.clip(cue.text, limits.MAX_SEGMENT_TEXT)
            if cut:
                draft.conditions.append("text_limited")
            draft.segments.append({"start_ms": cue.start_ms, "end_ms": cue.end_ms, "text": text})
        draft.text = "\n".join(segment["text"] for segment in draft.segments)
        draft.markdown = draft.text
        if draft.requested_language and draft.language and not same_language(draft.requested_language, draft.language):
            draft.conditions.append("language_mismatch")

    # -- the result ----------------------------------------------------------------------

    def finish(self, draft: Draft) -> Retrieved:
        retrieved = self.finish_with_clock(draft, self.clock())
        violations = result_violations(retrieved.result)
        if not violations:
            return retrieved
        # A bug here, not the origin's doing; stored as is, it would make the receipt unreadable.
        log.error("result of %s breaks the contract, stored as unavailable: %s", _shown(draft.source_url or ""),
                  "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations))
        failed = Draft(draft.kind, draft.requested_language)
        failed.end("unavailable")
        return self.finish_with_clock(failed, self.clock())

    @staticmethod
    def finish_with_clock(draft: Draft, clock: datetime) -> Retrieved:
        now = clock.astimezone(UTC).isoformat().replace("+00:00", "Z")
        failed = draft.status is not None and draft.status != "empty"
        text, cut = ("", False) if failed else limits.clip(draft.text, limits.MAX_TEXT, at_word=True)
        if cut:
            draft.conditions.append("text_limited")
        conditions = list(dict.fromkeys(draft.conditions))
        if draft.status is None:
            partial_reasons = [c for c in PARTIAL_PRIORITY if c in conditions]
            draft.status, draft.reason = ("partial", partial_reasons[0]) if partial_reasons else ("ready", None)
        outcome(draft.status, draft.reason)  # every result is a row of the mapping table
        warnings = [c for c in conditions if c != draft.reason][: limits.MAX_WARNINGS]
        keep_metadata = not failed
        source_url = draft.source_url if draft.source_url and len(draft.source_url) <= 2048 else None
        result = Result({
            "kind": draft.kind,
            "status": draft.status,
            "text": text,
            "title": limits.clip_optional(draft.title, limits.MAX_TITLE) if keep_metadata else None,
            "description": limits.clip_optional(draft.description, limits.MAX_DESCRIPTION) if keep_metadata else None,
            "segments": [] if failed else draft.segments,
            "provenance": {
                "source_url": source_url,
                "retrieved_at": now,
                "mime_type": draft.mime_type,
                "parser_version": PARSER_VERSION,
                "content_kind": draft.content_kind if not failed else "none",
                "caption_format": draft.caption_format if not failed else None,
                "language": draft.language,
                "language_source": "publisher_declared" if draft.language else "unknown",
                "platform_native_verified": False,
            },
            "reason": draft.reason,
            "warnings": warnings,
            "retry_after_seconds": draft.retry_after,
        })
        result.failure = draft.failure if failed else None
        succeeded = draft.status in ("ready", "partial")
        content_hash = None
        if succeeded:
            content = {k: result[k] for k in ("text", "title", "description", "segments")}
            try:
                content_hash = hashlib.sha256(rfc8785.dumps(content)).hexdigest()
            except rfc8785.CanonicalizationError:  # a number JSON cannot carry: `finish`'s contract check refuses it
                content_hash = None
        markdown = limits.clip(draft.markdown, limits.MAX_MARKDOWN, at_word=True)[0] if draft.markdown else None
        words = (draft.words if content_hash is not None and draft.words is not None
                 and draft.words_of == words_key(result["title"], result["text"]) else None)
        return Retrieved(result, markdown if succeeded else None, content_hash, words)


def cancelled_result(kind: str, language: str | None = None) -> dict[str, Any]:
    """The result a receipt carries when it is cancelled before it settled."""
    draft = Draft(kind, language)
    draft.end("cancelled")
    return RetrievalEngine.finish_with_clock(draft, datetime.now(UTC)).result
