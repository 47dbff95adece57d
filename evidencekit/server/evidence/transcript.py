"""A caption track as a document (search_documents, get_documents): its cue text, and its cues as
markdown lines with their timestamps.

A settled published_captions retrieval keeps both in its evidence revision (worker.content_of), in
place of the contract's `text` (every cue's text, cut at 20,000 characters) and a copy of it:
`text` is the cue text, a cue a line, without timestamps (what the search index holds and snippets
are cut from); `markdown` a line per cue, `[HH:MM:SS] text` (the cue's start). Each holds whole
cues, at most MAX_TRANSCRIPT characters (the bound of a page's markdown). get_documents serves the
lines under the document's title (`markdown`), or after the page's own markdown when the same URL
is also stored as a page (`after_page`; store/served_documents.py). Migration 0015 rewrote the
revisions stored before (store/caption_documents.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evidencekit.server.evidence.parse.render import escape_text
from evidencekit.server.evidence.retrieval.limits import MAX_MARKDOWN

MAX_TRANSCRIPT = MAX_MARKDOWN
TRANSCRIPT_HEADING = "## Transcript"


def timestamp(milliseconds: int) -> str:
    """`[HH:MM:SS]` of a cue's start (hours past 99 take more digits)."""
    seconds = max(0, int(milliseconds)) // 1000
    return f"[{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}]"


def _whole_lines(lines: Iterable[str], limit: int) -> str:
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + (1 if kept else 0) > limit:
            break
        size += len(line) + (1 if kept else 0)
        kept.append(line)
    return "\n".join(kept)


def _cues(segments: Iterable[Mapping[str, Any]]) -> Iterable[tuple[int, str]]:
    """Each cue's start and its text on one line (a cue's own line breaks read as spaces)."""
    for segment in segments:
        line = " ".join(str(segment.get("text") or "").split())
        if line:
            yield int(segment.get("start_ms") or 0), line


def cue_text(segments: Iterable[Mapping[str, Any]], limit: int = MAX_TRANSCRIPT) -> str:
    """What the document's text is: the cues' text, a cue a line, no timestamps."""
    return _whole_lines((line for _, line in _cues(segments)), limit)


def cue_lines(segments: Iterable[Mapping[str, Any]], limit: int = MAX_TRANSCRIPT) -> str:
    """The markdown of the cues: `[HH:MM:SS] text`, a cue a line, the text escaped as a page's is."""
    return _whole_lines((f"{timestamp(start)} {escape_text(line)}" for start, line in _cues(segments)), limit)


def markdown(title: str, uri: str, lines: str) -> str:
    """A caption document as get_documents serves it: its title (the page's, for a track a page
    publishes; else the caption file's URL) over its cue lines."""
    heading = escape_text(title) if title.strip() else f"Transcript of {escape_text(uri)}"
    return f"# {heading}\n\n{lines}"


def after_page(page_markdown: str, lines: str) -> str:
    """A page stored with its captions under one name: the page's markdown, then the cue lines."""
    return f"{page_markdown}\n\n{TRANSCRIPT_HEADING}\n\n{lines}"
