"""WebVTT reader following the W3C parsing rules, counting the cues it cannot read.

Deviations, both lenient: a line holding only whitespace ends a block like an empty one, and
hours may have a single digit ("0:00:01.000").
"""

from __future__ import annotations

import re

from evidencekit.server.evidence.parse.captions import (
    MAX_CUE_MS,
    CaptionError,
    CaptionExtract,
    Cue,
    caption_lines,
    clean_cue_lines,
    is_webvtt_signature,
)
from evidencekit.server.evidence.parse.text import normalize_language

_TIMESTAMP = r"(?:(\d{1,12}):)?([0-5]\d):([0-5]\d)\.(\d{3})"
_TIMING = re.compile(rf"[ \t]*{_TIMESTAMP}[ \t]*-->[ \t]*{_TIMESTAMP}(?:[ \t].*)?")
# Any tag: voice <v Name>, class <c.x>, <i> <b> <u> <ruby> <lang xx>, inline timestamps <00:01.500>.
# As in the spec's tokenizer, a "<" without its ">" runs to the end of the line.
_TAGS = re.compile(r"<[^>]*(?:>|$)")
# Ruby text is a reading aid over the base text; kept, it would garble the line ("漢字かんじ").
_IGNORED_BLOCKS = ("NOTE", "STYLE", "REGION")


def parse_webvtt(body: bytes, http_charset: str | None = None) -> CaptionExtract:
    lines = caption_lines(body, http_charset)
    if not is_webvtt_signature(lines[0]):
        raise CaptionError("not a WebVTT file: it does not start with the WEBVTT signature")
    count = len(lines)
    at = 1
    language = None
    while at < count and lines[at].strip() and "-->" not in lines[at]:
        key, colon, value = lines[at].partition(":")
        if colon and language is None and key.strip().lower() == "language":
            language = normalize_language(value)
        at += 1

    cues: list[Cue] = []
    invalid = 0
    while at < count:
        if not lines[at].strip():
            at += 1
            continue
        block = [lines[at]]
        arrow = "-->" in lines[at]
        at += 1
        while at < count:
            line = lines[at]
            if not line.strip():
                break
            if "-->" in line:
                if arrow or len(block) > 1:
                    break  # a timing line that starts the next cue
                arrow = True
            block.append(line)
            at += 1
        if not arrow:
            if not _is_ignored_block(block[0]):
                invalid += 1
            continue
        timing_at = 0 if "-->" in block[0] else 1
        cue = _cue(block[timing_at], block[timing_at + 1 :])
        if cue is None:
            invalid += 1
        else:
            cues.append(cue)
    return CaptionExtract(format="webvtt", cues=tuple(cues), invalid_cues=invalid, language=language)


def _is_ignored_block(first_line: str) -> bool:
    for word in _IGNORED_BLOCKS:
        if first_line.startswith(word) and (len(first_line) == len(word) or first_line[len(word)] in " \t"):
            return True
    return False


def _cue(timing: str, text_lines: list[str]) -> Cue | None:
    match = _TIMING.fullmatch(timing)
    if match is None:
        return None
    h1, m1, s1, f1, h2, m2, s2, f2 = match.groups()
    start = _milliseconds(h1, m1, s1, f1)
    end = _milliseconds(h2, m2, s2, f2)
    if end <= start or end > MAX_CUE_MS:
        return None
    if any("<rt" in line for line in text_lines):
        text_lines = strip_ruby_text("\n".join(text_lines)).split("\n")
    text = clean_cue_lines(text_lines, _TAGS)
    return Cue(start_ms=start, end_ms=end, text=text) if text else None


def _milliseconds(hours: str | None, minutes: str, seconds: str, fraction: str) -> int:
    return ((int(hours or 0) * 60 + int(minutes)) * 60 + int(seconds)) * 1000 + int(fraction)


def _ruby_text_end(text: str, at: int) -> int:
    """Where the ruby text that starts at `at` ends: after the first `</rt>` (spaces allowed before
    its `>`), at the first `</ruby>` (which stays), or at the end (before a final line break)."""
    size = len(text)
    search = at
    while True:
        close = text.find("</r", search)
        if close == -1:
            return size - 1 if text.endswith("\n") and size - 1 >= at else size
        for name, keeps in (("</rt", False), ("</ruby", True)):
            if text.startswith(name, close):
                end = close + len(name)
                while end < size and text[end].isspace():
                    end += 1
                if end < size and text[end] == ">":
                    return close if keeps else end + 1
        search = close + 1


def strip_ruby_text(text: str) -> str:
    """`text` without its ruby annotations (`<rt>...</rt>`, or up to `</ruby>`), in one pass.

    What the regex `<rt(?:[\\s.][^>]*)?>.*?(?:</rt\\s*>|(?=</ruby\\s*>)|$)` removed, without its
    backtracking: on `<rt ` repeated with no `>` that took time quadratic in the cue's length (25,000
    repetitions froze the server for seconds). Every character is looked at a bounded number of times.
    """
    kept: list[str] = []
    copied = search = 0
    size = len(text)
    while True:
        start = text.find("<rt", search)
        if start == -1:
            break
        after = start + 3
        if after < size and text[after] == ">":
            opened = after + 1
        elif after < size and (text[after].isspace() or text[after] == "."):
            closing = text.find(">", after)
            if closing == -1:
                break  # no `>` after this point: no later `<rt` can open either
            opened = closing + 1
        else:
            search = after  # `<rtc>` and the like
            continue
        end = _ruby_text_end(text, opened)
        kept.append(text[copied:start])
        copied = search = end
        if end >= size:
            break
    kept.append(text[copied:])
    return "".join(kept)
