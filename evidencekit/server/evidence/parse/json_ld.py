"""The article body a page declares in its JSON-LD (schema.org `articleBody`), as HTML to read.

Publishers put an article's whole text in its structured data while the page itself may show a
teaser (a paywall, text loaded by script) or bury it in markup the main-content search misses.
"""

from __future__ import annotations

import html
import json
import re
from collections import deque

from evidencekit.server.evidence.parse.html_tree import Element

# A script's type as XPath's normalize-space() and translate() of those letters would read it
_BLANKS = re.compile(r"[ \t\r\n]+")
_TYPE_LETTERS = str.maketrans("APLICTONJSD", "aplictonjsd")


def _ld_json_scripts(root: Element) -> list[Element]:
    """The page's JSON-LD scripts (type "application/ld+json", spaced or capitalised anyhow),
    found by libxml2's walk of the script elements alone (an XPath testing each one cost 2.5x)."""
    return [script for script in root.getroottree().iter("script")
            if "+" in (kind := script.get("type") or "")  # (no "+": not that type; most scripts have no type)
            and _BLANKS.sub(" ", kind).strip(" ").translate(_TYPE_LETTERS) == "application/ld+json"]


_KEY = "articleBody"
_NODES_WALKED = 10_000  # JSON values looked at per script: a bounded cost for hostile data
_MARKUP = re.compile(r"<(?:p|br|div|h[1-6]|ul|ol|li|blockquote|table|figure|section)\b", re.IGNORECASE)
_INLINE_MARKUP = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n|\r\n\s*\r\n")


def declared_body(root: Element) -> str | None:
    """The page's own articleBody in its JSON-LD scripts, as an HTML document (None when there is
    none): of the bodies nearest the top of the data (not a related article's in `hasPart` or
    `mentions`), the longest. Scripts that are not valid JSON, or nest too deep to read, are passed
    over."""
    best, best_depth = "", _NODES_WALKED
    for script in _ld_json_scripts(root):
        source = script.text
        if not source or _KEY not in source:
            continue
        try:
            data = json.loads(source)
        except (ValueError, RecursionError):
            continue
        for depth, body in _bodies(data):
            if depth < best_depth or (depth == best_depth and len(body) > len(best)):
                best, best_depth = body, depth
    if not best.strip():
        return None
    # (a lone surrogate escape, "\ud800", is valid JSON but no text the tree can hold)
    best = best.encode("utf-8", "replace").decode("utf-8")
    return f"<html><body>{_as_html(best)}</body></html>"


def _bodies(data: object) -> list[tuple[int, str]]:
    """Every string articleBody in data with its depth (objects in lists and @graph included),
    walked breadth first without recursion."""
    found: list[tuple[int, str]] = []
    queue: deque[tuple[int, object]] = deque([(0, data)])
    walked = 0
    while queue and walked < _NODES_WALKED:
        depth, value = queue.popleft()
        walked += 1
        if isinstance(value, dict):
            body = value.get(_KEY)
            if isinstance(body, str) and body.strip():
                found.append((depth, body))
            queue.extend((depth + 1, v) for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            queue.extend((depth, v) for v in value if isinstance(v, (dict, list)))  # (a list is no level)
    return found


def _as_html(body: str) -> str:
    """Block markup kept as it is (some sites put the body's HTML in it, some with its entities
    escaped once more); plain text, or text with inline markup only (<strong>, <em>, <a>), made
    paragraphs at its blank lines (else its lines): plain text escaped, its entities decoded first,
    as some sites leave them in."""
    inline = _INLINE_MARKUP.search(body) is not None
    if not inline:
        decoded = html.unescape(body)
        if _MARKUP.search(decoded) and _INLINE_MARKUP.search(decoded):
            return decoded  # "&lt;p&gt;...": markup escaped as text
        body = decoded
    elif _MARKUP.search(body):
        return body
    pieces = _PARAGRAPH_BREAK.split(body)
    if len(pieces) == 1:
        pieces = body.splitlines()
    escape = (lambda piece: piece) if inline else html.escape
    return "".join(f"<p>{escape(piece.strip())}</p>" for piece in pieces if piece.strip())
