"""Lists of posts beside the text (a comment thread, reviews, a guest book), known by their shape,
whatever they are named: three or more sibling boxes of one kind (tag and class), each short and
signed, with a name and a date line apart from its text ("jdoe · 3 days ago", "Anna Lee 12 May 2024")."""

from __future__ import annotations

from itertools import islice

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.bylines import is_byline_line
from evidencekit.server.evidence.parse.content import BLOCK_TAGS, Measure
from evidencekit.server.evidence.parse.html_tree import Element

_POSTS = 3  # sibling boxes of one kind, at least
_POST_CHARS = 600  # a post longer than this is an answer or an entry, not a comment or a review
# A post is a box, not a paragraph, an item of text, a cell or a quotation (embedded posts are the
# article's own)
_POST_TAGS = frozenset({"div", "article", "section", "li", "dd", "aside", "footer"})
_PROSE = 80  # characters of a paragraph between the posts that makes them the article's own (interleaved)
_SAMPLE = 12  # boxes of the kind read for signatures, at most (a grid of thousands costs as 12)
_SIGNATURE_NODES = 40  # elements of a post read for its signature, at most
_NAME_CHARS, _NAME_WORDS = 40, 4
_DATE_CHARS = 60
_SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")
_MANY_CHILDREN = etree.XPath(f".//*[count(*) >= {_POSTS}]")


def posts(found: Measure, grid: Element) -> list[Element]:
    """The posts among grid's children: the most numerous kind of box, when at least _POSTS of them
    and two thirds of that kind are short and signed; else none."""
    info = found.info
    kinds: dict[tuple[str, str | None], list[Element]] = {}
    for child in grid:
        if child.tag in _POST_TAGS and child in info:
            kinds.setdefault((child.tag, child.get("class")), []).append(child)
    items = max(kinds.values(), key=len, default=[])
    if len(items) < _POSTS:
        return []
    if _interleaved(found, items):
        return []
    sample = items[:_SAMPLE]
    signed = sum(1 for item in sample if 0 < info[item][0] <= _POST_CHARS and signed_box(found, item))
    return items if signed >= _POSTS and 3 * signed >= 2 * len(sample) else []


def _interleaved(found: Measure, items: list[Element]) -> bool:
    """A paragraph of prose among the items: they are set in the article's run of text."""
    last = items[-1]
    for sibling in items[0].itersiblings():
        if sibling is last:
            return False
        if sibling.tag == "p" and found.info.get(sibling, (0,))[0] >= _PROSE:
            return True
    return False


def signed_box(found: Measure, item: Element) -> bool:
    """A box holding a block of its own text and, apart from it, a name and a date line: each a
    short element with no element inside that holds text (a username's link, a <time>)."""
    if not any(child.tag in BLOCK_TAGS and child in found.info for child in item):
        return False  # a line of text, not a box (a changelog's dated item)
    name = date = False
    for node in islice(item.iterdescendants(etree.Element), _SIGNATURE_NODES):
        if node not in found.info or any(True for _ in node.iterchildren(etree.Element)):
            continue
        text = "".join(node.itertext()).strip()
        if not text:
            continue
        if len(text) <= _DATE_CHARS and is_byline_line(text):
            date = True
        elif len(text) <= _NAME_CHARS and len(text.split()) <= _NAME_WORDS and not text.endswith(_SENTENCE_ENDS):
            name = True
        if name and date:
            return True
    return False


def post_lists(found: Measure, chosen: list[Element], own_text: int) -> frozenset[Element]:
    """The posts of lists inside the chosen content, when it keeps own_text characters or more of
    its own beside them (a discussion page's thread is its text)."""
    out: set[Element] = set()
    info = found.info
    for node in chosen:
        for grid in ([node] if len(node) >= _POSTS else []) + _MANY_CHILDREN(node):
            if out and (grid in out or any(ancestor in out for ancestor in grid.iterancestors())):
                continue
            out.update(posts(found, grid))
    if not out:
        return frozenset()
    total = sum(info[node][0] for node in chosen)
    return frozenset(out) if total - sum(info[item][0] for item in out) >= own_text else frozenset()
