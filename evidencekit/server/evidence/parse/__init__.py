"""Read fetched bodies: HTML/XHTML pages to main text and Markdown, plain text, WebVTT and SubRip captions.

Every reader is total: any bytes give a result (the caption readers raise CaptionError only when
the bytes are not a caption file of that format at all).
"""

from evidencekit.server.evidence.parse.captions import (
    CaptionError,
    CaptionExtract,
    Cue,
    sniff_captions,
)
from evidencekit.server.evidence.parse.captions_srt import parse_subrip
from evidencekit.server.evidence.parse.captions_vtt import parse_webvtt
from evidencekit.server.evidence.parse.encoding import decode_html, decode_text
from evidencekit.server.evidence.parse.html_extract import HtmlExtract, parse_html
from evidencekit.server.evidence.parse.html_meta import Track
from evidencekit.server.evidence.parse.plain_text import parse_plain_text

__all__ = [
    "CaptionError",
    "CaptionExtract",
    "Cue",
    "HtmlExtract",
    "Track",
    "decode_html",
    "decode_text",
    "parse_html",
    "parse_plain_text",
    "parse_subrip",
    "parse_webvtt",
    "sniff_captions",
]
