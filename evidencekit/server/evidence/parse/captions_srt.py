"""SubRip reader: blocks split here, each read by pysrt, and every block that yields no cue counted.

pysrt.from_string drops malformed blocks silently (or raises on the first one), so the file is cut
into blocks here and each is handed to pysrt's item reader. A block starts at a timing line
(with the index line before it); a blank line or the next timing line ends it, so a missing blank
line between two cues does not merge them.
"""

from __future__ import annotations

import re

import pysrt  # type: ignore[import-untyped]  # pysrt ships no type information

from evidencekit.server.evidence.parse.captions import (
    MAX_CUE_MS,
    CaptionError,
    CaptionExtract,
    Cue,
    caption_lines,
    clean_cue_lines,
)

# Formatting tags (<i>, <b>, <u>, <font color=...>) and ASS overrides such as {\an8}. A "<" that
# does not open a tag ("a < b") is text.
_TAGS = re.compile(r"</?[A-Za-z][^<>]*>|\{\\[^{}]*\}")
# pysrt reads any four numbers, and an empty start as zero; a timestamp must at least look like one.
_TIMING = re.compile(r"\s*(\d{1,9}:\d{1,2}:\d{1,2}[,.]\d{1,3})\s*-->\s*(\d{1,9}:\d{1,2}:\d{1,2}[,.]\d{1,3})(?:\s.*)?")


def parse_subrip(body: bytes, http_charset: str | None = None) -> CaptionExtract:
    lines = caption_lines(body, http_charset)
    if not any("-->" in line for line in lines):
        raise CaptionError("not a SubRip file: it has no timing line")
    cues: list[Cue] = []
    invalid = 0
    for block in _blocks(lines):
        cue = _cue(block)
        if cue is None:
            invalid += 1
        else:
            cues.append(cue)
    return CaptionExtract(format="subrip", cues=tuple(cues), invalid_cues=invalid, language=None)


def _blocks(lines: list[str]) -> list[list[str]]:
    blocks: list[list[str]] = []
    block: list[str] = []
    timed = False
    for line in lines:
        if not line.strip():
            if block:
                blocks.append(block)
                block = []
                timed = False
            continue
        if "-->" in line:
            if block and (timed or len(block) > 1 or not _is_index(block[-1])):
                # A cue began without a blank line before it; its index line, if any, moves with it.
                carried = [block.pop()] if _is_index(block[-1]) else []
                if block:
                    blocks.append(block)
                block = carried
            timed = True
        block.append(line)
    if block:
        blocks.append(block)
    return blocks


def _is_index(line: str) -> bool:
    index = line.strip()
    return index.isascii() and index.isdigit()


def _cue(block: list[str]) -> Cue | None:
    timing_at = 0 if "-->" in block[0] else 1
    if timing_at >= len(block) or not _TIMING.fullmatch(block[timing_at]):
        return None  # text without a timing line, or a timing line without timestamps
    try:
        item = pysrt.SubRipItem.from_lines(block)
    except (pysrt.Error, ValueError):
        return None
    start = int(item.start.ordinal)
    end = int(item.end.ordinal)
    if start < 0 or end <= start or end > MAX_CUE_MS:
        return None
    text = clean_cue_lines(item.text.split("\n"), _TAGS)
    return Cue(start_ms=start, end_ms=end, text=text) if text else None
