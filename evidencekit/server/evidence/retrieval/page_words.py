"""A page and its search-index words read in one trip to a parse process.

The words (index_words.entry_words) are of the title and text the result will hold: the page's,
clipped as `RetrievalEngine.finish` clips them. They come back with a digest of that title and text;
the engine uses them only when its result holds the same two (else it reads the words again), so a
later change to the draft cannot leave the index out of step with the stored text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from evidencekit.server.evidence.index_words import IndexWords, entry_words
from evidencekit.server.evidence.parse import HtmlExtract
from evidencekit.server.evidence.parse.pool import parse_within
from evidencekit.server.evidence.retrieval import limits


@dataclass(frozen=True)
class PageRead:
    page: HtmlExtract
    words: IndexWords | None  # None when the page has no text to index
    words_of: bytes  # words_key of the title and text the words were read from


def words_key(title: str | None, text: str) -> bytes:
    return hashlib.blake2b(f"{title}\0{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


def read_page(body: bytes, *, http_charset: str | None, content_language: str | None, url: str | None) -> PageRead:
    """parse_within for a url_text result, and the index words of its title and text as clipped."""
    page = parse_within(body, limits.MAX_TEXT, http_charset=http_charset, content_language=content_language,
                        markdown_limit=limits.MAX_MARKDOWN, url=url)
    text = limits.clip(page.text, limits.MAX_TEXT, at_word=True)[0]
    if page.binary or page.login_wall or not text.strip():  # settled without content: nothing to index
        return PageRead(page, None, b"")
    title = limits.clip_optional(page.title, limits.MAX_TITLE)
    return PageRead(page, entry_words(title, text), words_key(title, text))
