"""The contract's size limits, applied without cutting a character (or its combining marks) in two."""

from __future__ import annotations

import unicodedata

MAX_TEXT = 20_000
# The markdown get_documents serves: the same content as the text with its links and structure, so
# room for the syntax; bounded like every other part of a retrieval (a 2 MB page gave 2 MB of it).
MAX_MARKDOWN = 100_000
MAX_TITLE = 200
MAX_DESCRIPTION = 2_000
MAX_SEGMENTS = 1_000
MAX_SEGMENT_TEXT = 20_000
MAX_WARNINGS = 10

_JOINERS = {"\u200d", "\u200c", "\ufe0e", "\ufe0f"}


def _safe_end(text: str, end: int) -> int:
    """Move `end` back so that text[end] does not continue the character before it."""
    while 0 < end < len(text) and (unicodedata.combining(text[end]) or text[end] in _JOINERS
                                   or text[end - 1] in _JOINERS or "\udc00" <= text[end] <= "\udfff"):
        end -= 1
    return end


def clip(text: str, limit: int, *, at_word: bool = False) -> tuple[str, bool]:
    """`text` cut to at most `limit` characters at a character (or word) boundary; and whether it was cut."""
    if len(text) <= limit:
        return text, False
    end = _safe_end(text, limit)
    if at_word:
        space = text.rfind(" ", max(0, end - 200), end)
        newline = text.rfind("\n", max(0, end - 200), end)
        boundary = max(space, newline)
        if boundary > 0:
            end = boundary
    return text[:end].rstrip(), True


def clip_optional(text: str | None, limit: int) -> str | None:
    """Title and description: None when empty, else cut cleanly to the limit."""
    if text is None:
        return None
    text = " ".join(text.split())
    if not text:
        return None
    clipped, _ = clip(text, limit, at_word=True)
    return clipped or None
