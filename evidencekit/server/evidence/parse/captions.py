"""What a caption file reads to, shared by the WebVTT and SubRip readers, and format sniffing."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal

from evidencekit.server.evidence.parse.encoding import decode_text
from evidencekit.server.evidence.parse.text import nfc, normalize_newlines, remove_controls

CaptionFormat = Literal["webvtt", "subrip"]


# Cue times are JSON integers in the contract, which allows up to 2^53 - 1 ms; a later cue is invalid.
MAX_CUE_MS = 2**53 - 1


@dataclass(frozen=True)
class Cue:
    start_ms: int
    end_ms: int
    text: str


@dataclass(frozen=True)
class CaptionExtract:
    format: CaptionFormat
    cues: tuple[Cue, ...]
    invalid_cues: int
    language: str | None


class CaptionError(ValueError):
    """The bytes are not a caption file of the expected format at all."""


_SRT_TIMING_START = re.compile(r"\s*\d+:\d{1,2}:\d{1,2}[,.]\d{1,3}\s*-->")


def caption_lines(body: bytes, http_charset: str | None) -> list[str]:
    """Decoded lines: byte order mark dropped, CRLF and CR read as LF, control characters removed,
    NFC."""
    return nfc(remove_controls(normalize_newlines(decode_text(body, http_charset)))).split("\n")


def is_webvtt_signature(first_line: str) -> bool:
    return first_line.startswith("WEBVTT") and (len(first_line) == 6 or first_line[6] in " \t")


def clean_cue_lines(lines: list[str], tags: re.Pattern[str]) -> str:
    """Cue text without markup: tags removed, character references decoded, blank lines dropped."""
    kept = []
    for line in lines:
        if "<" in line or "{" in line:
            line = tags.sub("", line)
        line = html.unescape(line).strip()
        if line:
            kept.append(line)
    return "\n".join(kept)


def sniff_captions(body: bytes) -> CaptionFormat | None:
    """"webvtt" for a WEBVTT signature, "subrip" for an index line then a SubRip timing line."""
    lines = caption_lines(body[:4096], None)
    if is_webvtt_signature(lines[0]):
        return "webvtt"
    for at, line in enumerate(lines):
        if not line.strip():
            continue
        following = lines[at + 1] if at + 1 < len(lines) else ""
        index = line.strip()
        if index.isascii() and index.isdigit() and _SRT_TIMING_START.match(following):
            return "subrip"
        return None
    return None
