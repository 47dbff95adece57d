"""The article body a page declares in its JSON-LD (schema.org `articleBody`), as HTML to read.

Publishers put an article's whole text in its structured data while the page itself may show a
teaser (a paywall, text loaded by script) or bury it in markup the main-content search misses.
"""

from __future__ import annotations

import html
import json
import re

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.html_tree import Element

_LD_JSON = etree.XPath(
    "//script[translate(normalize-space(@type), 'APLICTONJSD+', 'aplictonjsd+') = 'application/ld+json']"
)
_KEY = "articleBody"
_NODES_WALKED = 10_000  # JSON values looked at per script: a bounded cost for hostile data
_MARKUP = re.compile(r"<(?:p|br|div|h[1-6]|ul|ol|li|blockquote)\b", re.IGNORECASE)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n|\r\n\s*\r\n")


def declared_body(root: Element) -> str | None:
    """The longest articleBody of the page's JSON-LD scripts, as an HTML document (None when there
    is none). Scripts that are not valid JSON, or nest too deep to read, are passed over."""
    best = ""
    for script in _LD_JSON(root):
        source = script.text
        if not source or _KEY not in source:
            continue
        try:
            data = json.loads(source)
        except (ValueError, RecursionError):
            continue
        for body in _bodies(data):
            if len(body) > len(best):
                best = body
    if not best.strip():
        return None
    return f"<html><body>{_as_html(best)}</body></html>"


def _bodies(data: object) -> list[str]:
    """Every string articleBody in data (objects in lists and @graph included), walked without
    recursion."""
    found: list[str] = []
    stack = [data]
    walked = 0
    while stack and walked < _NODES_WALKED:
        value = stack.pop()
        walked += 1
        if isinstance(value, dict):
            body = value.get(_KEY)
            if isinstance(body, str):
                found.append(body)
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))
    return found


def _as_html(body: str) -> str:
    """Markup kept as markup (some sites put the body's HTML in it); plain text escaped, its blank
    lines (else its lines) made paragraphs. Entities some sites leave in plain text are decoded."""
    if _MARKUP.search(body):
        return body
    text = html.unescape(body)
    pieces = _PARAGRAPH_BREAK.split(text)
    if len(pieces) == 1:
        pieces = text.splitlines()
    return "".join(f"<p>{html.escape(piece.strip())}</p>" for piece in pieces if piece.strip())
