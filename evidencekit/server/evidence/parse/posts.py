"""Lists of posts beside the text (a comment thread, reviews, a guest book), known by their shape,
whatever they are named: three or more sibling boxes of one kind (tag and class), each short and
signed, with a name and a date line apart from its text ("jdoe · 3 days ago", "Anna Lee 12 May 2024")."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.bylines import is_byline_line
from evidencekit.server.evidence.parse.html_tree import BLOCK_TAGS, Element

if TYPE_CHECKING:
    from evidencekit.server.evidence.parse.content import Measure

_POSTS = 3  # sibling boxes of one kind, at least
_POST_CHARS = 600  # a post longer than this is an answer or an entry, not a comment or a review
# A post is a box, not a paragraph, an item of text, a cell or a quotation (embedded posts are the
# article's own)
_POST_TAGS = frozenset({"div", "article", "section", "li", "dd", "aside", "footer"})
_PROSE = 80  # characters of a paragraph between the posts that makes them the article's own (interleaved)
_SAMPLE = 6  # boxes of the kind read for signatures, at most (a grid of thousands costs as 6)
_SIGNATURE_NODES = 40  # elements of a post read for its signature, at most
_NAME_CHARS, _NAME_WORDS = 40, 4
_DATE_CHARS = 60
_SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# (a third child element, not a count of them: libxml2 builds the node set count() counts, for
# every element; half the time on the development sets' pages)
_MANY_CHILDREN = etree.XPath(f"descendant::*[*[{_POSTS}]]")


def grids(node: Element) -> list[Element]:
    """node and the elements inside it with three children or more (where a list of cards or posts
    may be), in document order: found once for the rules that look for either."""
    found: list[Element] = [node] if len(node) >= _POSTS else []
    found.extend(_MANY_CHILDREN(node))
    return found


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
    sample = items[:_SAMPLE]
    unsigned_at_most = len(sample) // 3  # (two thirds signed, at least)
    unsigned = 0
    for item in sample:
        if not (0 < info[item][0] <= _POST_CHARS and signed_box(found, item)):
            unsigned += 1
            if unsigned > unsigned_at_most or len(sample) - unsigned < _POSTS:
                return []
    return [] if _interleaved(found, items) else items


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
    short element with no element inside that holds text (a username's link, a <time>); no heading."""
    if not any(child.tag in BLOCK_TAGS and child in found.info for child in item):
        return False  # a line of text, not a box (a changelog's dated item)
    name = date = False
    info = found.info
    for node in islice(item.iterdescendants(etree.Element), _SIGNATURE_NODES):
        if node.tag in _HEADINGS:
            return False  # an entry under its title (a blog's front page), not a comment
        measured = info.get(node)
        if measured is None or not 0 < measured[0] <= _DATE_CHARS or len(node):
            continue  # (a leaf's measure is its own text's length)
        text = (node.text or "").strip()
        if is_byline_line(text):
            date = True
        elif len(text) <= _NAME_CHARS and len(text.split()) <= _NAME_WORDS and not text.endswith(_SENTENCE_ENDS):
            name = True
        if name and date:
            return True
    return False


def post_lists(
    found: Measure, chosen: list[Element], own_text: int, lists: dict[Element, list[Element]]
) -> frozenset[Element]:
    """The posts of lists inside the chosen content (lists: each chosen node's grids()), when it
    keeps own_text characters or more of its own before them (a discussion page's thread is its
    text, whatever blurb follows it)."""
    out: list[Element] = []  # in document order
    taken: set[Element] = set()
    for node in chosen:
        for grid in lists[node]:
            if taken and any(ancestor in taken for ancestor in (grid, *grid.iterancestors())):
                continue
            found_here = posts(found, grid)
            out.extend(found_here)
            taken.update(found_here)
    if not out or _text_before(found, chosen, out[0]) < own_text:
        return frozenset()
    return frozenset(taken)


def _text_before(found: Measure, chosen: list[Element], element: Element) -> int:
    """Characters of the chosen content's kept blocks before element (document order: the walk
    enters only element's ancestors)."""
    lineage = set(element.iterancestors())
    total = 0
    for node in chosen:
        if node is element:
            return total
        if node not in lineage:
            total += found.info[node][0]
            continue
        stack = [iter(node)]
        while stack:
            child = next(stack[-1], None)
            if child is None or child is element:
                if child is element:
                    return total
                stack.pop()
                continue
            if child in lineage:
                stack.append(iter(child))
            elif child in found.info:
                total += found.info[child][0]
    return total
