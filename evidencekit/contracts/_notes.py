"""A handler's notes on one answer (`RequestContext.notes`: what the answer means beyond its JSON,
the next step say) as they travel over REST: one `X-Note` response header per note, beside the
contract's JSON body, which has no place for them. MCP sends them as text content after the JSON.

A header carries printable ASCII: any other character of a note (and `%` itself) is sent
percent-encoded as UTF-8, so `from_header` gives back the note exactly.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

NOTE_HEADER = "X-Note"
_KEPT = "".join(chr(code) for code in range(0x20, 0x7F) if chr(code) != "%")  # printable ASCII but %


def header_value(note: str) -> str:
    return quote(note, safe=_KEPT, errors="surrogatepass")


def from_header(value: str) -> str:
    return unquote(value, errors="replace")
