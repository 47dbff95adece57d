"""Parse HTML or XHTML text into an lxml tree, and cut a tree down to its first N elements."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from itertools import islice
from typing import Any

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type information
from parsel.selector import create_root_node

Element = Any  # an lxml element; lxml has no type stubs here

# Elements that start a block of their own (the renderer writes each as one)
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dir",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hgroup", "hr", "html", "li", "main", "menu", "nav", "ol", "p",
        "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
        "caption", "legend", "dialog", "search",
    }
)  # fmt: skip

# An element's whole text (libxml2's string value: every descendant text, kept or not)
TEXT_OF = etree.XPath("string(.)")


def block_of(text: Any, top: Element) -> Element | None:
    """The nearest block element (BLOCK_TAGS) a text node found under `top` stands in: its parent's
    for an element's text, its parent's parent's for a tail; `top` itself when none is below it."""
    block = text.getparent()
    if text.is_tail:
        block = block.getparent()
    while block is not None and block is not top and block.tag not in BLOCK_TAGS:
        block = block.getparent()
    return block


def texts_containing(word: str) -> Any:
    """An XPath of the text nodes under an element holding `word` in lower case, with a capital, in
    capitals or in title case: contains() for each form, as translate() would copy every text node."""
    forms = dict.fromkeys((word, word.capitalize(), word.upper(), word.title()))
    return etree.XPath(".//text()[" + " or ".join(f'contains(., "{form}")' for form in forms) + "]")


_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_XHTML_HINT = re.compile(r"""^\s*<\?xml|<html[^>]*\sxmlns\s*=\s*["']http://www\.w3\.org/1999/xhtml""")
_SELF_CLOSED = re.compile(
    r"<(script|style|div|span|p|a|iframe|textarea|title|section|ul|ol|li|td|i|b|em|strong|video|audio)"
    r"(\s[^<>]*?)?/>",
    re.IGNORECASE,
)
_XML_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, recover=False, huge_tree=False
)


def load_tree(source: str | bytes) -> Element:
    """The root element of a page's text, or of its UTF-8 bytes (encoding.html_source's). XHTML is
    read as XML when well-formed (so "<div/>" and "<script/>" close), and everything else, or XHTML
    that is not well-formed, with the HTML parser."""
    if isinstance(source, bytes):
        # (the first 2,048 characters are within the first 8,192 bytes)
        if not _xhtml_hinted(source[:8192].decode("utf-8", "ignore")[:2048]) and _parsed_alike(source):
            return _html_root(body=source)
        source = source.decode("utf-8", "replace")
    return _text_tree(source)


def _text_tree(text: str) -> Element:
    if _xhtml_hinted(text[:2048]):
        root = _xml_root(text)
        if root is not None:
            return root
        # Not well-formed (often an HTML entity such as &nbsp;): read it as HTML, but keep
        # XHTML's self-closed elements closed, or "<script/>" would swallow the page, and keep
        # CDATA sections as text (the HTML parser drops them).
        text = _SELF_CLOSED.sub(r"<\1\2></\1>", text)
        text = cdata_as_text(text)
    return _html_root(text)


def _html_root(text: str = "", body: bytes = b"") -> Element:
    """parsel's reading of HTML text, or of UTF-8 bytes (NUL bytes out, huge trees allowed), with
    lxml's plain HTML parser: lxml.html's (what Selector takes) looks up a Python class for every
    element it hands out, ~15% of parse_html's time, and nothing here uses what those classes add."""
    try:
        return create_root_node(text, etree.HTMLParser, huge_tree=True, body=body, encoding="utf-8")
    except (etree.Error, ValueError):
        return etree.fromstring("<html/>", etree.HTMLParser())


def _xhtml_hinted(head: str) -> bool:
    # (the pattern has no literal to start from: sre tries it at every character, ~30 µs a page;
    # both its branches hold one of these strings, found at memory speed)
    return ("xmlns" in head or "<?xml" in head) and _XHTML_HINT.search(head) is not None


def _parsed_alike(utf8: bytes) -> bool:
    """parsel reads these bytes as the text they hold: no NUL bytes (from text it takes them out
    after stripping, from bytes before), and stripping the bytes' ASCII whitespace strips all the
    text's whitespace (U+001C-U+001F and the non-ASCII spaces are whitespace to str.strip() alone)."""
    # (the ends found in a slice: most pages end in a newline, and bytes.strip() would copy the page)
    first = utf8[:64].lstrip()[:1] or utf8.lstrip()[:1]
    last = utf8[-64:].rstrip()[-1:] or utf8.rstrip()[-1:]
    return bool(first) and b"\x00" not in utf8 and _plain_end(first[0]) and _plain_end(last[0])


def _plain_end(byte: int) -> bool:
    return byte < 0x80 and not 0x1C <= byte <= 0x1F


def _xml_root(text: str) -> Element | None:
    try:
        root = etree.fromstring(_XML_DECLARATION.sub("", text, count=1).encode("utf-8"), _XML_PARSER)
    except (etree.Error, ValueError):
        return None
    if not isinstance(root.tag, str) or etree.QName(root).localname.lower() != "html":
        return None
    if next(root.iter(etree.Entity), None) is not None:
        return None  # HTML entities (&nbsp;) left unresolved: the HTML parser knows them
    for element in root.iter(etree.Element):
        if element.tag.startswith("{"):
            element.tag = etree.QName(element).localname
    return root


_ELEMENTS = etree.XPath("count(descendant-or-self::*)")


def limit_nodes(root: Element, max_nodes: int, prune: Callable[[Element], None] | None = None) -> bool:
    """Keep only the first max_nodes elements in document order; True when some were removed.
    When there are more, `prune` (which removes what is never content: navigation, scripts...) runs
    first, so that furniture before the article does not use up the limit."""
    if _ELEMENTS(root) <= max(1, max_nodes):
        return False  # (counted in libxml2: walking them in Python made a proxy object of each)
    beyond = next(islice(root.iter(etree.Element), max(1, max_nodes), None), None)
    if beyond is None:
        return False
    if prune is not None:
        prune(root)
        beyond = next(islice(root.iter(etree.Element), max(1, max_nodes), None), None)
        if beyond is None:
            return False
    node = beyond
    while True:
        parent = node.getparent()
        if parent is None:
            break
        first = parent.index(node) + (0 if node is beyond else 1)
        del parent[first:]
        node = parent
    return True


def cdata_as_text(text: str) -> str:
    """CDATA sections (`<![CDATA[...]]>`) replaced by their content as escaped text, in one pass.

    The regex `<!\\[CDATA\\[(.*?)\\]\\]>` did the same in time quadratic in the page's length when
    sections never close (an 805-byte gzipped body took 50 s): a section with no `]]>` after it
    ends the search, as no later one can close either.
    """
    kept: list[str] = []
    copied = 0
    while True:
        start = text.find("<![CDATA[", copied)
        if start == -1:
            break
        end = text.find("]]>", start + 9)
        if end == -1:
            break
        kept.append(text[copied:start])
        kept.append(html.escape(text[start + 9:end], quote=False))
        copied = end + 3
    kept.append(text[copied:])
    return "".join(kept)


# A text field or a choice: what a sign-up, a comment form or a search box asks for (a button
# alone is a gallery's or a player's, beside captions that may be the text)
FIELDS = ("input", "select", "textarea")


def has_field(element: Element) -> bool:
    """A field a reader fills in or a choice in element."""
    return any(visible_field(field) for field in element.iter(*FIELDS))


def visible_field(field: Element) -> bool:
    return field.tag != "input" or (field.get("type") or "").strip().lower() != "hidden"  # (a page's state)
