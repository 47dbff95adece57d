"""text/plain bodies, kept as they are apart from encoding, newlines and control characters."""

from __future__ import annotations

from evidencekit.server.evidence.parse.encoding import decode_text
from evidencekit.server.evidence.parse.text import nfc, normalize_newlines, remove_controls


def parse_plain_text(body: bytes, http_charset: str | None = None) -> str:
    text = nfc(remove_controls(normalize_newlines(decode_text(body, http_charset))))
    return "\n".join(line.rstrip() for line in text.split("\n"))
