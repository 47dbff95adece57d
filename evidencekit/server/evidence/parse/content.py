"""Find the main content of a page.

One walk over the tree measures every kept element (text and link characters, boilerplate
subtrees left out) and scores paragraphs into their ancestors as Readability does. The content is
then the best-scored node, widened to its enclosing <article>/<main> when it is most of it, or to
the parent of repeated similar blocks (forum posts, sections), plus good siblings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import islice

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.boilerplate import (
    CLASS_EXEMPT_TAGS,
    COMMENT_BOX,
    FURNITURE,
    JUNK_ROLES,
    SECTIONING_TAGS,
    SKIP_TAGS,
    class_weight,
    hidden_style,
    marks_boilerplate,
    marks_only_caption,
    marks_only_hidden,
    marks_only_text_widget,
    marks_only_widget,
    name_reading,
    names_caption,
    names_elsewhere,
)
from evidencekit.server.evidence.parse.bylines import MAX_CHARS as _BYLINE_CHARS
from evidencekit.server.evidence.parse.bylines import is_byline_line
from evidencekit.server.evidence.parse.html_tree import BLOCK_TAGS, Element, has_field
from evidencekit.server.evidence.parse.panels import holds_panels, is_panel
from evidencekit.server.evidence.parse.posts import posts

_PARAGRAPHS = frozenset({"p", "pre", "td", "blockquote", "dd"})
# Left out for their tag, but the parser may have made them wrap the page: an unclosed <noscript>
# or <nav>. With <header>, <form> and furniture roles, what wrapped_page() looks at.
WRAPPING_TAGS = frozenset({"noscript", "nav"})
# Landmark roles a page may be wrapped in; a dialog, search box, menu or toolbar holds no page.
_WRAPPING_ROLES = frozenset({"complementary", "banner", "contentinfo", "navigation", "form"})
_WRAPPED_BLOCKS = 3  # block elements at least in a wrapper that holds a page (not one notice)
# Containers scored as a paragraph when they hold text but no block child (Readability's div-to-p).
_TEXT_CONTAINERS = frozenset({"div", "section", "article", "span", "font", "center", "main"})
_BASE_SCORES = {
    "div": 5, "pre": 3, "td": 3, "blockquote": 3, "address": -3, "ol": -3, "ul": -3, "dl": -3,
    "dd": -3, "dt": -3, "li": -3, "form": -3, "h1": -5, "h2": -5, "h3": -5, "h4": -5, "h5": -5,
    "h6": -5, "th": -5,
}  # fmt: skip
_DIVIDERS = (1.0, 2.0, 6.0, 9.0, 12.0)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HEADLINES = frozenset({"h1", "h2"})
_CODE = frozenset({"pre", "code"})
_PHOTOS = frozenset({"img", "picture", "video", "iframe"})
_SENTENCE_END = re.compile(r"\.( |$)")
# Widening to an enclosing <article>/<main> takes this much real content outside the best node.
_WIDEN_FOR = 200
_CONTENT_BLOCKS = frozenset({"p", "pre", "blockquote", "ul", "ol", "dl", "table"})
_SCRIPTS = ("script", "style", "template")
MAX_DEPTH = 120  # deeper subtrees are read as plain text, so recursion stays bounded


@dataclass
class Measure:
    body: Element
    info: dict[Element, tuple[int, int]] = field(default_factory=dict)  # kept element -> (text, link chars)
    flattened: set[Element] = field(default_factory=set)
    scores: dict[Element, float] = field(default_factory=dict)
    semantic: list[Element] = field(default_factory=list)  # article, main, role=main, itemprop=articleBody
    soft_dropped: list[Element] = field(default_factory=list)  # left out for a class or id alone, or as <aside>/<footer>
    tag_dropped: list[Element] = field(default_factory=list)  # left out for a wrapping tag, a role or a hidden state (see WRAPPING_TAGS)
    comment_boxes: list[Element] = field(default_factory=list)  # named like comments (see the walk), in document order
    photo_captions: list[Element] = field(default_factory=list)  # <figcaption>s of photos, left out
    _container_sizes: dict[Element, int] = field(default_factory=dict)

    def text_len(self, element: Element) -> int:
        return self.info[element][0]

    def container_size(self, element: Element) -> int:
        """_container_size of an element left out, worked out once."""
        size = self._container_sizes.get(element)
        if size is None:
            size = self._container_sizes[element] = _container_size(element)
        return size

    def link_density(self, element: Element) -> float:
        text, links = self.info[element]
        return links / text if text else 1.0

    def text_outside_links(self, element: Element) -> int:
        text, links = self.info[element]
        return text - links

    def widest_box(self, element: Element, own: int, beside: int, tops: set[Element],
                   stop_tags: frozenset[str] = frozenset()) -> Element | None:
        """The outermost kept ancestor of element, below `tops` and not one of stop_tags, that
        holds at most `beside` characters more than element's `own` (a widget's box around its
        button, a bio's around its text); None when its parent is none such."""
        box = None
        for ancestor in element.iterancestors():
            held = self.info.get(ancestor)
            if ancestor in tops or held is None or held[0] > own + beside or ancestor.tag in stop_tags:
                break
            box = ancestor
        return box


def measure(body: Element, *, use_classes: bool = True, exempt: frozenset[Element] = frozenset()) -> Measure:
    """exempt: elements read as plain containers, whatever their tag (one of WRAPPING_TAGS, <aside>,
    <footer>, <header>, <form>), role, class and id say; their descendants are read as usual.
    Callers put holding_main(body, marked_main(body)) among them (computed once per page, not per pass)."""
    walker = _Walker(Measure(body), use_classes, exempt)
    walker.walk(body, 0, False)
    return walker.result


# Where the main content may be marked, found by libxml2: <main> elements and the id, role and
# itemprop attributes (an XPath testing the elements' attributes took 4x as long on generated pages,
# 8% of parse_html; one testing the values too, translate() and all, 3x that), in document order,
# each attribute right after its element
_MAY_MARK_MAIN = etree.XPath(".//main | .//@id | .//@role | .//@itemprop")


def marked_main(body: Element) -> list[Element]:
    """The elements a page marks as its main content, in document order: <main>, role=main,
    itemprop=articleBody, and the id a skip link ("Skip to content") points at, spelled
    main-content, main_content, mainContent or maincontent."""
    marked: list[Element] = []
    for found in _MAY_MARK_MAIN(body):
        if getattr(found, "is_attribute", False):  # an attribute's value (an lxml "smart string")
            if not _marks_main(found.attrname, found):
                continue
            element = found.getparent()
        else:
            element = found
        if not marked or marked[-1] is not element:  # (an element's attributes follow it)
            marked.append(element)
    return marked


def is_main_mark(element: Element) -> bool:
    """Whether `element` is one that marked_main finds: a <main>, or an element whose id, role or
    itemprop marks it as the page's main content."""
    return element.tag == "main" or any(_marks_main(name, element.get(name) or "") for name in _MARKING)


_MARKING = ("id", "role", "itemprop")  # the attributes that may mark an element as the main content


def _marks_main(name: str, value: str) -> bool:
    if name == "id":
        return len(value) >= 11 and value.lower().replace("-", "").replace("_", "") == "maincontent"
    return value == ("main" if name == "role" else "articleBody")


def holding_main(body: Element, marked: list[Element]) -> frozenset[Element]:
    """The elements around the marked main content (marked_main(body)): their class, id or tag
    does not leave them out (an article inside a "share_wrapper", a layout table with the id
    "secondary-navigation")."""
    holding: set[Element] = set()
    for element in marked:
        for ancestor in element.iterancestors():
            if ancestor is body or ancestor in holding:
                break
            holding.add(ancestor)
    return frozenset(holding)


class _Walker:
    def __init__(self, result: Measure, use_classes: bool, exempt: frozenset[Element]) -> None:
        self.result = result
        self.use_classes = use_classes
        self.exempt = exempt
        self.path: list[Element] = []

    def keep(self, element: Element, tag: str, in_section: bool, in_code: bool) -> int:
        """0: boilerplate, 1: content, 2: content that marks itself as the main content."""
        exempt = element in self.exempt  # read as a plain container: its tag, role, class and id aside
        if (tag in SKIP_TAGS and not (tag == "button" and _opens_panel(element))) or (
            ":" in tag and tag.rpartition(":")[2] in SKIP_TAGS
        ):
            if exempt and (tag in WRAPPING_TAGS or tag == "head"):
                pass
            elif tag != "aside":
                if tag in WRAPPING_TAGS:
                    self.result.tag_dropped.append(element)
                return 0  # the second test: XHTML read as HTML keeps prefixes ("svg:svg")
            elif not exempt:
                if self.use_classes:
                    self.result.soft_dropped.append(element)  # a theme may put the content in one
                return 0
        if tag == "header" and not in_section and not exempt and not _article_header(element):
            self.result.tag_dropped.append(element)
            return 0
        if tag == "footer" and not exempt:
            parent = element.getparent()
            if parent is None or parent.tag not in ("blockquote", "figure"):
                if self.use_classes:
                    self.result.soft_dropped.append(element)  # a page may put a transcript in one
                return 0
        if tag == "figcaption" and not exempt and _is_photo_caption(element):
            self.result.photo_captions.append(element)
            return 0  # a photo caption or credit; captions of code listings and tables stay
        if tag == "form" and not exempt and len(list(islice(element.iter("p"), 3))) < 3:
            self.result.tag_dropped.append(element)
            return 0  # a form is furniture unless it wraps a page of paragraphs (ASP.NET style)
        kind = 2 if tag in ("article", "main") else 1
        if in_code:
            return kind  # highlighters name spans "comment", "tag", "meta": that is code, not furniture
        for key, value in element.items():
            if key == "class" or key == "id":
                reading = name_reading(value, key == "id")
                if (
                    reading & FURNITURE
                    and self.use_classes
                    and tag not in CLASS_EXEMPT_TAGS
                    and not exempt
                    and not (marks_only_widget(value, key == "id") and _holds_prose(element, _WIDGET_PROSE))
                    and not (marks_only_text_widget(value, key == "id") and _holds_prose(element, _WIDGET_WRAPPER_PROSE, False))
                    and not (marks_only_caption(value, key == "id") and (_holds_caption_prose(element) or _caption_without_photo(element, value)))
                    and not (marks_only_hidden(value, key == "id") and is_panel(element))
                    and not (key == "id" and _named_after_its_heading(element, value))
                ):
                    self.result.soft_dropped.append(element)
                    return 0
                if reading & COMMENT_BOX and tag != "p" and not exempt:
                    # (a paragraph style, "MsoCommentText", is no comment box; an element exempt
                    # holds the page's marked main content)
                    self.result.comment_boxes.append(element)
            elif key == "role":
                role = value.strip().lower()
                if role in JUNK_ROLES and not exempt and not (role == "tablist" and holds_panels(element)):
                    if role in _WRAPPING_ROLES:
                        self.result.tag_dropped.append(element)
                    return 0
                if role == "main":
                    kind = 2
            elif key == "hidden" or (key == "style" and hidden_style(value)):
                if tag not in CLASS_EXEMPT_TAGS and not exempt and not is_panel(element):
                    if len(list(islice(element.iter("p", "br"), _WRAPPED_BLOCKS))) == _WRAPPED_BLOCKS:
                        # (a wrapper a script shows once the page has loaded may hold the whole
                        # page; hidden menus and templates, without paragraphs or line breaks, are
                        # not measured)
                        self.result.tag_dropped.append(element)
                    return 0
            elif key == "itemprop" and value.strip() == "articleBody":
                kind = 2
        return kind

    def walk(self, element: Element, depth: int, in_section: bool, in_code: bool = False) -> tuple[int, int]:
        result = self.result
        self.path.append(element)
        text = element.text
        text_len = len(text.strip()) if text else 0
        link_len = 0
        block_len = 0  # text in block children (at least 1 per block child)
        block_links = 0
        for child in element:
            tag = child.tag
            if tag.__class__ is str:
                kind = self.keep(child, tag, in_section, in_code)
                if kind:
                    if kind == 2:
                        result.semantic.append(child)
                    if depth >= MAX_DEPTH:
                        child_text, child_links = len("".join(child.itertext()).strip()), 0
                        result.info[child] = (child_text, 0)
                        result.flattened.add(child)
                    else:
                        child_text, child_links = self.walk(
                            child,
                            depth + 1,
                            in_section or tag in SECTIONING_TAGS or kind == 2,
                            in_code or tag in _CODE,
                        )
                    text_len += child_text
                    link_len += child_links
                    if tag in BLOCK_TAGS:
                        block_len += child_text or 1
                        block_links += child_links
            tail = child.tail
            if tail:
                text_len += len(tail.strip())
        tag = element.tag
        if tag == "a" and element.get("href") is not None:
            link_len = text_len
        result.info[element] = (text_len, link_len)
        if text_len >= 25 and link_len * 2 < text_len:
            if tag in _PARAGRAPHS or (block_len == 0 and tag in _TEXT_CONTAINERS):
                self.score(element, text_len, 0, _text_sample(element))
            elif tag == "li":
                self.score(element, text_len, 1, _text_sample(element))  # counts for the list's container
            elif tag in _TEXT_CONTAINERS:
                # Loose text beside block children (an article written as text and <br>s, with a
                # spacer or a share row among them): its own text and inline children are a paragraph.
                loose = text_len - block_len
                if loose >= 25 and (link_len - block_links) * 2 < loose:
                    self.score(element, loose, -1, _loose_text(element))  # the element is the container
        self.path.pop()
        return text_len, link_len

    def score(self, element: Element, text_len: int, skip: int, text: str) -> None:
        points = 1 + text.count(",") + text.count("，") + text.count("、") + min(text_len // 100, 3)
        scores = self.result.scores
        ancestors = self.path[-2 - skip :: -1][: len(_DIVIDERS)]
        for level, ancestor in enumerate(ancestors):
            if ancestor not in scores:
                scores[ancestor] = self.base_score(ancestor)
            scores[ancestor] += points / _DIVIDERS[level]

    @staticmethod
    def base_score(element: Element) -> float:
        score = float(_BASE_SCORES.get(element.tag, 0))
        for key in ("class", "id"):
            value = element.get(key)
            if value:
                score += class_weight(value)
        return score


# Removed before the node limit is applied: never content, wherever it stands. Kept: media elements
# (their <track>s are read), <aside> (it may hold the content), and what later checks read (<input>
# for login walls, <script>/<noscript> for application shells).
_PRUNED_TAGS = SKIP_TAGS - {
    "video", "audio", "source", "track", "head", "title", "meta", "link", "base", "aside", "input", "script",
    "noscript",
}  # fmt: skip
_PRUNED_BY_CLASS = frozenset({"ul", "ol", "menu", "header", "footer"})


def prune_furniture(root: Element) -> None:
    """Remove navigation, menus, styles and the like from the page body; their tails stay. Linear:
    removed subtrees are not entered, and each parent's text is rebuilt once."""
    body = next(root.iter("body"), None)
    if body is None:
        return
    doomed: dict[Element, set[Element]] = {}  # parent -> its children to remove
    stack = [iter(body)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        tag = element.tag
        if tag.__class__ is not str:
            continue
        if _pruned(element, tag):
            doomed.setdefault(element.getparent(), set()).add(element)
        else:
            stack.append(iter(element))
    for parent, gone in doomed.items():
        _remove_keeping_tails(parent, gone)


def _pruned(element: Element, tag: str) -> bool:
    role = (element.get("role") or "").strip().lower()
    if tag in _PRUNED_TAGS or (role in JUNK_ROLES and not (role == "tablist" and holds_panels(element))):
        return True
    return tag in _PRUNED_BY_CLASS and any(
        marks_boilerplate(element.get(key) or "", key == "id") for key in ("class", "id")
    )


def _remove_keeping_tails(parent: Element, gone: set[Element]) -> None:
    pending = [parent.text or ""]  # text that ends up before the next kept child
    kept: Element | None = None
    for child in list(parent):
        if child in gone:
            pending.append(child.tail or "")
            parent.remove(child)
            continue
        _attach(parent, kept, pending)
        pending, kept = [child.tail or ""], child
    _attach(parent, kept, pending)


def _attach(parent: Element, kept: Element | None, pieces: list[str]) -> None:
    text = "".join(pieces) or None
    if kept is None:
        parent.text = text
    else:
        kept.tail = text


def dropped_container(found: Measure, among: list[Element]) -> tuple[Element | None, int]:
    """Of among (elements of found.soft_dropped: left out for a class or id alone, or as an <aside>),
    the one that holds the most text with little link text, and that text's length: a main
    container named like furniture ("contentWithSidebar", a "widget" wrapper, a slideshow in an
    <aside>). Each element's size is worked out once per Measure, however often it is asked."""
    return _largest(among, found.container_size)


def _has_blocks(element: Element, count: int) -> bool:
    return len(list(islice(element.iter(*BLOCK_TAGS), count + 1))) > count  # the element itself and count more


def held_text(elements: list[Element]) -> int:
    """The most text outside links and code that one of elements holds."""
    return _largest(elements, _text_outside_links)[1]


def wrapped_page(found: Measure, at_least: int = 0) -> tuple[Element | None, int]:
    """The element left out for its tag, role or hidden state alone that holds the most text outside
    links, and that text's length: an unclosed <header> or <noscript>, a page-wide <form>, a
    role=complementary wrapper the parser made hold the page, a wrapper hidden until a script shows it.
    at_least: what the caller takes, at least (an element that cannot hold as much is not measured)."""
    # All its text bounds an element's text outside links and code, and is cheaper to read: the
    # largest are measured first, until no other can hold more (hidden elements are many on some pages)
    best, best_len = None, max(0, at_least - 1)
    for bound, element in sorted(((stripped_length(e), e) for e in found.tag_dropped), key=_first, reverse=True):
        if bound <= best_len:
            break
        if _has_blocks(element, _WRAPPED_BLOCKS):
            length = _text_outside_links(element)
            if length > best_len:
                best, best_len = element, length
    return (best, best_len) if best is not None else (None, 0)


def _first(pair: tuple[int, Element]) -> int:
    return pair[0]


# A gallery's captions are its text when there are this many, with this much text together outside
# links, and this many times what the rest of the page keeps outside links (a story's photos, even a
# slideshow of twenty after a short story, are captioned beside a text of its own)
_GALLERY_PHOTOS, _GALLERY_TEXT, _GALLERY_SHARE = 3, 500, 2


def gallery_captions(found: Measure) -> frozenset[Element]:
    """The photo captions left out (<figcaption>s in a <figure> with a photo) when they are the
    page's text: a gallery or a slideshow told in its captions."""
    captions = found.photo_captions
    if len(captions) < _GALLERY_PHOTOS:
        return frozenset()
    held = sum(_text_outside_links(caption) for caption in captions)
    if held < _GALLERY_TEXT or held < _GALLERY_SHARE * found.text_outside_links(found.body):
        return frozenset()
    return frozenset(captions)


def _largest(elements: list[Element], size: Callable[[Element], int]) -> tuple[Element | None, int]:
    best, best_len = None, 0
    for element in elements:
        length = size(element)
        if length > best_len:
            best, best_len = element, length
    return best, best_len


def _container_size(element: Element) -> int:
    """All the text of an element left out (it was never measured), scripts' too, as a long-tuned
    threshold reads it; 0 when 30% of it or more is link text."""
    text = sum(len(piece.strip()) for piece in element.itertext())
    return 0 if _link_text(element) >= 0.3 * text else text


def _text_outside_links(element: Element) -> int:
    """The text of an element outside links and code (a wrapper that holds the navigation too)."""
    return text_outside(element, _SCRIPTS) - _link_text(element)


def _link_text(element: Element) -> int:
    return sum(len("".join(a.itertext()).strip()) for a in element.iter("a"))


def text_outside(element: Element, code: tuple[str, ...], whole: int | None = None) -> int:
    """Characters of text in element outside the elements named in code (each code element counted
    once, not again for each one nested in it: the walks run in libxml2). whole: stripped_length(element)
    when the caller has it already."""
    return (stripped_length(element) if whole is None else whole) - sum(
        stripped_length(inner)
        for inner in element.iter(*code)
        if inner is not element and next(inner.iterancestors(*code), None) in (None, element)
    )


def stripped_length(element: Element) -> int:
    """Characters of element's text pieces, each stripped (map over builtins: no Python frame a
    piece, a tenth of parse_html's time on long pages as a generator expression)."""
    return sum(map(len, map(str.strip, element.itertext())))


def names_of(element: Element) -> str:
    """An element's class and id, as the name checks of boilerplate.py read them."""
    return f"{element.get('class', '')} {element.get('id', '')}"


def _loose_text(element: Element) -> str:
    """The text of an element outside its block children (a bounded sample, as _sample)."""

    def pieces() -> Iterator[str]:
        yield element.text or ""
        for child in element:
            if child.tag.__class__ is str and child.tag not in BLOCK_TAGS:
                yield from child.itertext()
            yield child.tail or ""

    return _sample(pieces())


# Scoring reads an element's text for its commas: a sample is enough, and reading every nested
# element's whole text again at each of its ancestors costs time in depth x size.
_SAMPLE_CHARS, _SAMPLE_PIECES = 4000, 400


def _sample(pieces: Iterable[str]) -> str:
    first = list(islice(pieces, _SAMPLE_PIECES))
    joined = "".join(first)
    # most elements hold less than the sample: one join, no Python step a piece
    return joined if len(joined) < _SAMPLE_CHARS else _first_chars(first)


def _text_sample(element: Element) -> str:
    """_sample of element's text: its own text alone when it has no children (most paragraphs)."""
    return _sample(element.itertext()) if len(element) else element.text or ""


def _first_chars(pieces: list[str]) -> str:
    taken: list[str] = []
    size = 0
    for piece in pieces:
        taken.append(piece)
        size += len(piece)
        if size >= _SAMPLE_CHARS:
            break
    return "".join(taken)


_PROSE_PARAGRAPH = 80  # characters
_WIDGET_PROSE = 1  # paragraphs in a block named only as a widget (a page builder's text block)
# ...and in a text widget named so by a token's first word ("widget widget_text"): a sidebar's holds
# one or two, an article wrapped in a page builder's widget more
_WIDGET_WRAPPER_PROSE = 3


def _holds_prose(element: Element, need: int = 2, in_items: bool = True) -> bool:
    """need paragraphs of text or more, with little link text: a page builder's text block.
    in_items=False: not counting paragraphs in list items (a list of teasers' summaries)."""
    found = 0
    for paragraph in islice(element.iter("p"), 50):
        if not in_items and _in_item(paragraph, element):
            continue
        text = "".join(paragraph.itertext()).strip()
        if len(text) >= _PROSE_PARAGRAPH:
            links = sum(len("".join(a.itertext())) for a in paragraph.iter("a"))
            if links < 0.3 * len(text):
                found += 1
                if found >= need:
                    return True
    return False


def _in_item(node: Element, within: Element) -> bool:
    for ancestor in node.iterancestors():
        if ancestor is within:
            return False
        if ancestor.tag == "li":
            return True
    return False


# A caption or credit this long outside links is not one: a theme's broken caption markup holds the post
_CAPTION_RUN = 600  # characters
_CAPTION_NODES = 400  # elements read at most (a bounded cost per marked element, however they nest)


def _holds_caption_prose(element: Element) -> bool:
    """Prose paragraphs, or more text outside links and scripts than any caption or credit holds."""
    if _holds_prose(element):
        return True
    text = links = 0
    for node in islice(element.iter(), _CAPTION_NODES):
        tag = node.tag
        if node is not element and node.tail:
            text += len(node.tail.strip())
        if tag.__class__ is not str or tag in _SCRIPTS or not node.text:
            continue
        size = len(node.text.strip())
        text += size
        if tag == "a":
            links += size
    return text - links >= _CAPTION_RUN


_PHOTO_NEAR = 40  # elements looked at for a photo, in the block and in its parent


def _caption_without_photo(element: Element, value: str) -> bool:
    """A box named as a caption (not a credit) that holds a prose paragraph and has no photo in it
    or beside it (in its parent): a slideshow's text apart from its photos, or a theme's name for
    the article's own text. Not a paragraph so named: that is a video's or a photo's caption line,
    wherever the player or the photo stands."""
    if element.tag == "p" or not names_caption(value) or not _holds_prose(element, 1):
        return False
    parent = element.getparent()
    for node in islice((parent if parent is not None else element).iter(), _PHOTO_NEAR):
        if node.tag in _PHOTOS or node.tag in ("figure", "picture", "noscript"):
            return False
    return True


_SLUG_GAPS = re.compile(r"[\W_]+")
_HEADINGS_LOOKED_AT = 3  # children: a section's heading comes first
_SECTIONS_LOOKED_AT = 12
_HEADING_NODES = 32  # elements in a heading whose text is read for the slug check, at most


def _named_after_its_heading(element: Element, value: str) -> bool:
    """An id made from the element's own heading, as docs and Markdown generators make them for
    every section ("sharing-with-a-single-developer" for "Sharing with a single developer"), when
    the parent or a sibling is named so too and is no furniture by its name: it names the section's
    subject, not its place on the page (a lone <div id="comments"><h3>Comments</h3> is a comment
    section, and so is one beside <div id="related"><h2>Related</h2>)."""
    if not _slug_of_heading(element, value):
        return False
    parent = element.getparent()
    if parent is None:
        return False
    return any(
        neighbour is not element and _plainly_named_after_its_heading(neighbour)
        for neighbour in (parent, *islice(parent, _SECTIONS_LOOKED_AT))
    )


def _plainly_named_after_its_heading(element: Element) -> bool:
    value = element.get("id")
    return bool(value) and not marks_boilerplate(value, True) and _slug_of_heading(element, value)


def _slug_of_heading(element: Element, value: str) -> bool:
    """Whether value is the slug of element's heading (the element itself, or a first child)."""
    heading = element if element.tag in _HEADINGS else next(
        (child for child in islice(element, _HEADINGS_LOOKED_AT) if child.tag in _HEADINGS), None
    )
    if heading is None:
        return False
    budget = 4 * len(value) + 64  # raw heading text a slug this long can come from, spaces and all
    pieces: list[str] = []
    for count, node in enumerate(heading.iter(), 1):
        if count > _HEADING_NODES:
            return False  # a heading of many elements is no slug's source (and is not walked on)
        if node.text and node.tag.__class__ is str:
            pieces.append(node.text)
            budget -= len(node.text)
        if node is not heading and node.tail:
            pieces.append(node.tail)
            budget -= len(node.tail)
        if budget < 0:
            return False  # a heading far longer than the id
    slug = _SLUG_GAPS.sub("-", "".join(pieces).lower()).strip("-")
    name = _SLUG_GAPS.sub("-", value.lower()).strip("-")
    if not slug or not name.startswith(slug):
        return False
    rest = name[len(slug):]
    return not rest or (rest[0] == "-" and rest[1:].isdigit())  # "-1": a generator's duplicate


def _opens_panel(button: Element) -> bool:
    """An accordion's button in a heading (the ARIA pattern, `<h3><button aria-expanded=false
    aria-controls=...>`): its text is the heading's, a FAQ's question."""
    parent = button.getparent()
    return (
        parent is not None
        and parent.tag in _HEADINGS
        and (button.get("aria-controls") is not None or button.get("aria-expanded") is not None)
    )


def _is_photo_caption(caption: Element) -> bool:
    figure = caption.getparent()
    return figure is not None and figure.tag == "figure" and bool(_PHOTOS.intersection(e.tag for e in figure.iter()))


def choose(found: Measure, marked: Sequence[Element] = ()) -> list[Element]:
    """The content node(s) in document order. marked: marked_main(found.body)."""
    body = found.body
    final = {
        element: score * (1.0 - found.link_density(element))
        for element, score in found.scores.items()
        if element in found.info
    }
    if not final:
        semantic = [s for s in found.semantic if found.text_len(s) >= 25]
        if semantic:
            return [max(semantic, key=found.text_len)]
        return [body]
    ranked = sorted(final, key=final.__getitem__, reverse=True)
    if _outweighed(found, final, ranked[0]):
        del final[ranked[0]]
        ranked = ranked[1:]
    inside, over_cards = _inside_marked_main(found, final, ranked[0], marked) if marked else (None, False)
    # taken for the page's mark over cards outside it: widened within the marks, not to the cards
    within = frozenset(marked) if inside is not None and over_cards else frozenset()
    displaced = None  # what the text before it was preferred to: no rival is taken from inside it
    if inside is None:
        displaced = _list_of_posts(found, ranked[0])
        if displaced is not None:
            inside = _text_before(found, final, ranked, displaced, _TEXT_OVER_POSTS)
        elif _box_of_its_own(found, ranked[0]) or _titled_cards(found, ranked[0]):
            displaced = ranked[0]
            inside = _text_before(found, final, ranked, displaced, _HEADLINE_OVER_BOX, _led_by_headline)
    if inside is not None:
        ranked.remove(inside)
        ranked.insert(0, inside)
    top = ranked[0]
    top_score = final[top]
    rivals = [e for e in ranked[1:5] if final[e] >= 0.75 * top_score]
    if within:
        rivals = [e for e in rivals if _within_marks(e, within)]
    if inside is not None and displaced is not None:
        rivals = [e for e in rivals if not _holds(displaced, e)]
    top = _common_ancestor(found, top, rivals)
    top = _single_child_parent(found, top)
    top = _repeated_blocks_parent(found, top)
    first = _first_of_stacked_articles(found, top)
    if first is not None:
        return [first]  # alone: its siblings are the next stories
    widened = _semantic_container(found, top)
    if widened is not top or top is body:
        return [widened]
    return _with_siblings(found, top, max(top_score, final.get(top, 0.0)), final, within=within)


# A short block that wins on its class name or its many short lines (a landing page's list of
# headlines) gives way to a block elsewhere with this share of its score, this many times its text
# and little of that in links
_SHORT_WINNER, _OUTWEIGHED_SCORE, _OUTWEIGHED_TEXT, _RIVAL_LINKS = 500, 0.4, 4, 0.2


def _outweighed(found: Measure, final: dict[Element, float], top: Element) -> bool:
    """Whether the best-scored block is short and another, neither inside it nor around it, holds
    four times its text at a fair share of its score."""
    text = found.text_len(top)
    if text >= _SHORT_WINNER or len(final) < 2:
        return False
    floor = _OUTWEIGHED_SCORE * final[top]
    around = set(top.iterancestors())
    for element, score in final.items():
        if (score >= floor and found.text_len(element) >= _OUTWEIGHED_TEXT * text
                and found.link_density(element) < _RIVAL_LINKS and element not in around
                and not any(ancestor is top for ancestor in element.iterancestors())):
            return True
    return False


# A text before a list of posts (posts.py) is preferred to it at this share of its score: each post
# repeats the commas the score counts
_TEXT_OVER_POSTS = 0.3
# ...and a text led by the page's headline to a box of its own after it (_box_of_its_own: a FAQ,
# an author's bio; or cards under a title: testimonials), at the same share
_HEADLINE_OVER_BOX = 0.3
_HEADLINE_DEPTH = 6  # levels a text that holds its headline is looked into (a wrapper around a wrapper)
_TEXT_BEFORE_RIVAL = 200  # characters outside links, at least: a text, not a title over the thread
_POST_LEVELS = 4  # the best block may be the list, a post, or a post's part, this many levels down
_RIVALS_LOOKED_AT = 50  # best-scored blocks looked at for the text


def _list_of_posts(found: Measure, top: Element) -> Element | None:
    """The list of posts that top is, or lies in."""
    node = top
    for _ in range(_POST_LEVELS):
        if node is found.body or node not in found.info:
            break
        if posts(found, node):
            return node
        node = node.getparent()
    return None


def _text_before(
    found: Measure, final: dict[Element, float], ranked: list[Element], rival: Element, share: float,
    kind: Callable[[Measure, Element], bool] | None = None,
) -> Element | None:
    """The best block before rival (the best block, or a list of posts it lies in), neither in it
    nor around it, that holds a text of its own at this share of the best score (and is of this
    kind): an article above its unnamed comment thread, or led by the page's headline above a box
    of its own (a FAQ, an author's bio)."""
    floor = share * final[ranked[0]]
    around = set(rival.iterancestors())
    for element in islice(ranked, 1, _RIVALS_LOOKED_AT):
        if final[element] < floor:
            break
        if element in around or _holds(rival, element) or found.text_outside_links(element) < _TEXT_BEFORE_RIVAL:
            continue
        if kind is None or kind(found, element):
            return element if _before(element, rival) else None
    return None


_BRIEF_PARAGRAPHS = 2  # sentences' paragraphs under the headline that make a text, however short
_SENTENCE_CLOSE = re.compile(r"[.!?。！？…][\"'”’»)]*$")


def headline_text(found: Measure, chosen: list[Element], text: str) -> bool:
    """The chosen content (rendered as text) is a text under the page's headline (led by its <h1>)
    with paragraphs of sentences: a brief, however short, not a stub that the whole page should
    stand in for."""
    if not chosen or not _led_by_headline(found, chosen[0]):
        return False
    sentences = sum(1 for block in text.split("\n\n") if _SENTENCE_CLOSE.search(block.rstrip()))
    return sentences >= _BRIEF_PARAGRAPHS


def _titled_cards(found: Measure, element: Element) -> bool:
    """Several blocks alike under a heading of their own below the headline (testimonials, features)."""
    heading = _leading_heading(found, element)
    return heading is not None and heading.tag != "h1" and _of_cards(found, element)


def _holds_headline(found: Measure, element: Element) -> bool:
    heading = _leading_heading(found, element, _HEADLINE_DEPTH)
    return heading is not None and bool(heading.tag == "h1")


def _led_by_headline(found: Measure, element: Element) -> bool:
    """element opens with the page's headline (an <h1>), or comes right after it."""
    heading = _leading_heading(found, element, _HEADLINE_DEPTH)
    if heading is not None:
        return bool(heading.tag == "h1")
    previous = next((e for e in element.itersiblings(preceding=True) if e in found.info and found.text_len(e)), None)
    return previous is not None and previous.tag == "h1"


def _holds(box: Element, element: Element) -> bool:
    """element is box or inside it."""
    return element is box or any(ancestor is box for ancestor in element.iterancestors())


def _before(first: Element, second: Element) -> bool:
    """first comes before second in document order (neither holds the other)."""
    lineage: dict[Element, Element] = {}  # each ancestor of first -> its child on the way down to first
    child = first
    for ancestor in first.iterancestors():
        lineage[ancestor] = child
        child = ancestor
    child = second
    for ancestor in second.iterancestors():
        if ancestor in lineage:
            return bool(ancestor.index(lineage[ancestor]) < ancestor.index(child))
        child = ancestor
    return False


_MARKED_SHARE = 0.5  # of the best score: a block in the page's marked main content is preferred at this
# ... and at this share when the best block outside is one of several alike (testimonials, reviews,
# FAQ entries, cards): each repeats the page's commas, so a short text in <main> scores below them
_MARKED_SHARE_OVER_CARDS = 0.1


def _inside_marked_main(
    found: Measure, final: dict[Element, float], top: Element, marked: Sequence[Element]
) -> tuple[Element | None, bool]:
    """The best block inside what the page marks as its main content, when the best block of all
    is outside every mark (neither in one nor around one) and this one has a fair share of its
    score: an old-browser notice in the footer outscoring a video page's short description; or,
    when the best block is one of several alike (a testimonial, a review, a FAQ entry), a tenth of
    it: a practice's short "about us" in <main> beside its patients' quotes. (It then takes the
    lead; what widens a best block widens it as usual.) Also whether the best block was cards."""
    kept = [m for m in marked if m in found.info]
    if not kept:
        return None, False
    around = set(top.iterancestors())
    around.add(top)
    if any(m in around for m in kept):
        return None, False  # the best block is in a marked main
    under_top = set(top.iter())
    if any(m in under_top for m in kept):
        return None, False  # the best block holds one
    best: Element | None = None
    cards = _of_cards(found, top)
    best_score = (_MARKED_SHARE_OVER_CARDS if cards else _MARKED_SHARE) * final[top]
    covered: set[Element] = set()  # (each element looked at once, however the marks nest)
    for m in kept:  # document order: an outer mark comes before the marks inside it
        if m in covered:
            continue
        for element in m.iter():
            covered.add(element)
            score = final.get(element)
            if score is not None and score >= best_score:
                best, best_score = element, score
    return best, cards


_LEAD_PROSE = 80  # characters: a paragraph this long in a header with the page's <h1> is its lead
_HEADER_ELEMENTS = 200  # an article's header is small: a larger one is read no further (nor entered twice)


def _article_header(element: Element) -> bool:
    """A <header> outside any sectioning element that is an article's, not the site's: it holds an
    <h1> and a paragraph of prose (a standfirst) and no navigation, among its first elements."""
    headline = prose = False
    for node in islice(element.iter(), _HEADER_ELEMENTS):
        tag = node.tag
        if tag == "nav":
            return False
        if tag == "h1":
            headline = True
        elif tag == "p" and not prose:
            text = "".join(node.itertext()).strip()
            if len(text) >= _LEAD_PROSE:
                links = sum(len("".join(a.itertext())) for a in node.iter("a"))
                prose = links < 0.2 * len(text)
    return headline and prose


def _within_marks(element: Element, marks: frozenset[Element]) -> bool:
    return element in marks or any(ancestor in marks for ancestor in element.iterancestors())


_CARDS_LOOKED_AT = 5  # children with text a block is tried by (each try reads all its siblings)


def _of_cards(found: Measure, top: Element) -> bool:
    """Whether a block is one of several alike (_repeated_blocks_parent) or holds them (judged by
    its first few children with text: a page of 10,000 blocks costs as little as one of 10)."""
    if _repeated_blocks_parent(found, top) is not top:
        return True
    with_text = (child for child in top if child in found.info and found.text_len(child) >= 25)
    return any(_repeated_blocks_parent(found, child) is top for child in islice(with_text, _CARDS_LOOKED_AT))


_STACKED_ARTICLE = 500  # characters: an article this long, after another as long, is stacked


def _first_of_stacked_articles(found: Measure, top: Element) -> Element | None:
    """News sites load the next story below the first (and the one after): when the best node is in
    the second or a later of sibling <article>s that each hold a story (and open with a headline,
    as the first does), the page's own is the first."""
    article = top if top.tag == "article" else next(top.iterancestors("article"), None)
    if article is None or article not in found.info:
        return None
    parent = article.getparent()
    if parent is None or parent not in found.info:
        return None
    stacked = [
        child for child in parent
        if child.tag == "article" and child in found.info and found.text_len(child) >= _STACKED_ARTICLE
    ]
    if len(stacked) < 2 or stacked[0] is article or article not in stacked:
        return None
    if not (_first_text_is_heading(found, stacked[0], _HEADLINES) and _first_text_is_heading(found, article, _HEADLINES)):
        return None  # stories open with their headlines; answers and posts in a thread need not
    return stacked[0]


def _common_ancestor(found: Measure, top: Element, close: list[Element]) -> Element:
    """Readability: when three near-best candidates share an ancestor with the best, take it."""
    if len(close) < 3:
        return top
    lineages = [set(element.iterancestors()) for element in close]
    for ancestor in top.iterancestors():
        if ancestor is found.body or ancestor not in found.info:
            break
        if sum(ancestor in lineage for lineage in lineages) >= 3:
            return ancestor
    return top


def _kept_children(found: Measure, element: Element) -> list[Element]:
    return [child for child in element if child in found.info]


def _single_child_parent(found: Measure, top: Element) -> Element:
    """Climb while the best node is all its parent holds but for headings (a section's list)."""
    while top is not found.body:
        parent = top.getparent()
        if parent is None or parent not in found.info:
            break
        if any(child is not top and child.tag not in _HEADINGS for child in _kept_children(found, parent)):
            break
        top = parent
    return top


def _repeated_blocks_parent(found: Measure, top: Element) -> Element:
    """Forum posts, answers, chapters: when the best node is one of several similar siblings
    that hold text, the content is all of them. Siblings are alike by their tag and class (looked
    for three levels up); plain ones, with no class, only by a template's shape (five levels up)."""
    node = top
    for level in range(5):
        parent = node.getparent()
        if node is found.body or parent is None or parent not in found.info:
            break
        similar = [
            sibling
            for sibling in _kept_children(found, parent)
            if found.text_len(sibling) >= 25 and _alike(node, sibling)
        ] if _can_repeat(node, level) else []
        if len(similar) >= 3:
            total = sum(found.text_len(s) for s in similar)
            links = sum(found.info[s][1] for s in similar)
            if total >= 1.5 * found.text_len(node) and links < 0.3 * total:
                return parent
        node = parent
    return top


def _plain(node: Element) -> bool:
    return node.get("class") is None and node.tag not in ("section", "article")


def _can_repeat(node: Element, level: int) -> bool:
    """Whether siblings could be like node by design: plain <div>s are alike by accident, unless
    a template built them to one shape three deep."""
    return len(_shape(node)) >= 3 if _plain(node) else level < 3


def _alike(node: Element, sibling: Element) -> bool:
    if _plain(node):
        return sibling.get("class") is None and _shape(sibling) == _shape(node)
    return (sibling.tag, sibling.get("class")) == (node.tag, node.get("class"))


def _shape(element: Element) -> tuple[str, ...]:
    """The tags down an element's only-child chain (div > center > table), up to three deep: plain
    blocks built alike by a page's template, not alike by accident."""
    tags = [element.tag]
    while len(tags) < 3:
        children = list(islice(element.iterchildren(etree.Element), 2))
        if len(children) != 1:
            break
        element = children[0]
        tags.append(element.tag)
    return tuple(tags)


def _semantic_container(found: Measure, top: Element) -> Element:
    """Widen to the nearest enclosing article/main when it holds substantial real content outside
    the best node (not when that is only a headline, a summary line, dates and captions); narrow to
    the one article inside the best node when that article is most of it."""
    semantic = set(found.semantic)
    top_len = found.text_len(top)
    for ancestor in top.iterancestors():
        if ancestor is found.body or ancestor not in found.info:
            break
        if ancestor in semantic:
            share = 0.5 if ancestor.tag == "main" or ancestor.get("role") == "main" else 0.4
            if top_len >= share * found.text_len(ancestor) and _content_outside(found, ancestor, top) >= _WIDEN_FOR:
                return ancestor
            return top
    inner = {
        s
        for s in found.semantic
        if s.tag == "article" and s is not top and any(a is top for a in s.iterancestors())
    }
    outermost = [s for s in inner if inner.isdisjoint(s.iterancestors())]
    if len(outermost) == 1 and found.text_len(outermost[0]) >= 0.6 * top_len:
        return outermost[0]
    return top


def _same_kind_section(found: Measure, top: Element, sibling: Element) -> bool:
    """A section of the same document as the best node (a reference page's Synopsis and Description
    beside its long Options): the same tag and class, a heading of its own, little link text."""
    if sibling.tag != top.tag or sibling.get("class") != top.get("class"):
        return False
    if top.tag not in ("section", "article") and not top.get("class"):
        return False  # plain <div>s are alike by accident
    text, links = found.info[sibling]
    heading = next((child for child in sibling if child.tag in _HEADINGS and child in found.info), None)
    return heading is not None and text > found.text_len(heading) and links < 0.3 * text


_FORM_TAGS = frozenset({"form", "input", "textarea", "select"})
_SECTION_BODY = 40  # characters under its heading, at least: a section, not a label over a date or a widget
_SECTION_LINKS = 0.3  # share of link text a sibling section may hold (a box of links is no section)


def _section_rank(found: Measure, siblings: list[Element], top: Element) -> int:
    """The rank (1-6) of the heading that leads top: the heading sibling right before it, or its
    own first text; 0 when none does, or when top is a whole post (an <article>, a block named as
    a blog's entry or post, or one whose heading links to a page: a post's title, its permalink),
    after which come the blog's sections (comments, trackbacks), not the post's."""
    if top.tag == "article" or _names_a_post(top):
        return 0
    heading = _leading_heading(found, top)
    if heading is None:
        index = next(i for i, sibling in enumerate(siblings) if sibling is top)
        heading = siblings[index - 1] if index and siblings[index - 1].tag in _HEADINGS else None
    if heading is None or any(not (a.get("href") or "#").lstrip().startswith("#") for a in heading.iter("a")):
        return 0
    return int(heading.tag[1])


_POST_NAMES = frozenset({"entry", "hentry", "post", "article", "story", "blog"})


def _names_a_post(element: Element) -> bool:
    return any(
        not _POST_NAMES.isdisjoint(_SLUG_GAPS.split(value.lower()))
        for value in (element.get("class"), element.get("id"))
        if value
    )


def _leading_heading(found: Measure, element: Element, depth: int = 3) -> Element | None:
    """The heading whose text is element's first kept text, looked for a few levels down."""
    if element.tag in _HEADINGS:
        return element if found.text_len(element) else None
    if depth == 0 or (element.text and element.text.strip()):
        return None
    for child in element:
        if child in found.info and found.text_len(child):
            return _leading_heading(found, child, depth - 1)
        if child.tail and child.tail.strip():
            return None
    return None


def _parallel_section(found: Measure, top_rank: Callable[[], int], pending: list[Element], sibling: Element) -> bool:
    """A section beside the best node's, led by a heading of its rank (a product's Details and
    Dimensions beside its Description, a recipe's Ingredients and Method under its headline): the
    page's other sections of the same document, with little link text. When the best node is led
    by the headline (h1), its sections are led by the next rank (h2): what the page put under
    its headline, not a footer's columns."""
    best = top_rank()
    heading = (pending[-1] if pending else _leading_heading(found, sibling)) if best else None
    if heading is None:
        return False
    rank = int(heading.tag[1])
    if rank != best and not (best == 1 and rank == 2):
        return False
    text, links = found.info[sibling]
    body = text if pending else text - found.text_len(heading)
    return body >= _SECTION_BODY and links < _SECTION_LINKS * text and not _discussion_or_form(sibling)


_NAMES_LOOKED_AT = 40  # elements of a sibling section whose names are read, at most


def _discussion_or_form(element: Element) -> bool:
    """A blog's comments, trackbacks or reply form after its post, or a box from elsewhere
    (related posts), by the names of its first elements or a field or form in it."""
    for node in islice(element.iter(), _NAMES_LOOKED_AT):
        if node.tag in _FORM_TAGS:
            return True
        names = names_of(node)
        if names.strip() and names_elsewhere(names):
            return True
    return False


def _teasers(found: Measure, element: Element) -> bool:
    """A grid or list of teasers (related stories, reviews, more from the site): two or more
    headings or titles that are links."""
    linked = 0
    for heading in element.iter(*_HEADINGS):
        if _links_away(found, heading):
            linked += 1
            if linked >= 2:
                return True
    return False


def _content_outside(found: Measure, container: Element, inner: Element) -> int:
    """Characters of paragraph, list, table and code text in container but not in inner, counting
    only blocks of some length with little link text, each once (not a list in a counted table).
    A single block before inner is a summary line under the headline, and does not count."""
    before: list[int] = []
    after = 0
    seen_inner = False
    stack = [iter(container)]  # a walk in document order that does not enter inner or counted blocks
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        if element is inner:
            seen_inner = True
            continue
        measured = found.info.get(element)
        if measured is None:
            continue  # boilerplate (or not an element): nothing inside it counts
        tag = element.tag
        if tag in _CONTENT_BLOCKS or (
            tag in _TEXT_CONTAINERS and not any(child.tag in BLOCK_TAGS for child in element)
        ):
            text, links = measured
            if text >= 80 and links < 0.3 * text:
                if seen_inner:
                    after += text
                else:
                    before.append(text)
                continue
        stack.append(iter(element))
    return after + (sum(before) if len(before) >= 2 else 0)


def _with_siblings(
    found: Measure, top: Element, top_score: float, final: dict[Element, float],
    within: frozenset[Element] = frozenset(),
) -> list[Element]:
    """top and the siblings that continue it (within: only those inside these marks, when top
    was taken for being in one over cards outside them)."""
    parent = top.getparent()
    if parent is None:
        return [top]
    threshold = max(10.0, top_score * 0.2)
    top_class = top.get("class")
    chosen: list[Element] = []
    pending_headings: list[Element] = []
    siblings = _kept_children(found, parent)
    top_rank = cache(lambda: _section_rank(found, siblings, top))  # worked out when a section first asks
    # A text that holds its headline holds its sections: a short box after it with a heading of its
    # own, or questions under their headings, is the page's (an author's bio, a blurb, a FAQ)
    whole = cache(lambda: _holds_headline(found, top))
    after = False
    for sibling in siblings:
        if sibling is top:
            keep = after = True
        elif sibling.tag in _HEADINGS:
            pending_headings.append(sibling)
            continue
        elif (within and not _within_marks(sibling, within)) or _teasers(found, sibling):
            keep = False
        elif _same_kind_section(found, top, sibling):
            keep = True
        elif after and not pending_headings and whole() and _box_of_its_own(found, sibling):
            keep = False
        elif _parallel_section(found, top_rank, pending_headings, sibling):
            keep = True
        else:
            bonus = top_score * 0.2 if top_class and sibling.get("class") == top_class else 0.0
            score = final.get(sibling)
            keep = score is not None and score + bonus >= threshold
            if not keep and sibling.tag == "p":
                length, links = found.info[sibling]
                if length > 80:
                    keep = links < 0.25 * length
                elif length > 0 and links == 0:
                    keep = _SENTENCE_END.search("".join(sibling.itertext())) is not None
        if keep:
            chosen.extend(pending_headings)
            chosen.append(sibling)
        pending_headings = []
    return chosen + _closing_section(found, siblings, chosen)


_OWN_BOX = 500  # characters: a box this short with a heading of its own is a bio or a blurb
_DATA_TAGS = ("ul", "ol", "dl", "table", "pre")  # a section's data (details, dimensions, steps)
_QUESTION_ENDS = ("?", "？", "؟")
_QUESTIONS = 3
_TITLES_LOOKED_AT = 30  # headings of a box read for questions, at most


def _box_of_its_own(found: Measure, box: Element) -> bool:
    """A box that opens with a heading of its own below the headline (h2-h6; after an <h1>, another
    story), and is short prose (no list, table or code: a section's data), or holds questions under
    headings (a FAQ)."""
    heading = _leading_heading(found, box)
    if heading is None or heading.tag == "h1":
        return False
    if found.text_len(box) <= _OWN_BOX:
        return next(box.iter(*_DATA_TAGS), None) is None
    questions = 0
    for title in islice(box.iter(*_HEADINGS), _TITLES_LOOKED_AT):
        if title in found.info and "".join(title.itertext()).rstrip().endswith(_QUESTION_ENDS):
            questions += 1
            if questions >= _QUESTIONS:
                return True
    return False


_CLOSING_LINE = 200  # characters: a short line under the content's last heading ("Admission free")


def _closing_section(found: Measure, siblings: list[Element], chosen: list[Element]) -> list[Element]:
    """The content's closing section when it is a minor heading and one short line without links
    right after the chosen blocks, and the last of their parent's ("Info" over the museum's
    address): dropped as too short to score, it ends the text. A lone heading left after them (its
    section was dropped) is not kept: the renderer would drop it."""
    if len(siblings) < 3 or siblings[-3] is not chosen[-1]:
        return []
    heading, line = siblings[-2], siblings[-1]
    if heading.tag not in _HEADINGS or heading.tag in _HEADLINES or line.tag in _HEADINGS:
        return []
    text, links = found.info[line]
    if not 0 < text <= _CLOSING_LINE or links or any(child.tag in BLOCK_TAGS for child in line.iterdescendants()):
        return []
    if any(after.tag not in _SCRIPTS for after in line.itersiblings(etree.Element)):
        return []  # a box left out after it (a sign-up form under "Newsletter"): the line is its prompt
    return [heading, line]


# The lead (standfirst, "Vorspann", teaser paragraph) before the chosen content: sought this many
# ancestor levels up, among blocks of this many characters, with under this share of link text.
_LEAD_LEVELS = 3
_LEAD_MIN, _LEAD_MAX = 80, 1200
_SHORT_LEAD_MIN = 40  # right under the headline, a sentence this long is its lead (_lead_under_headline)
_TEASER = re.compile(r"teaser", re.IGNORECASE)
_LEAD_LINKS = 0.2
_LEAD_SENTENCE = re.compile(r"[.!?。！？…](?:[\s\"'”’»)]|$)")


def with_lead(found: Measure, chosen: list[Element]) -> list[Element]:
    """The chosen content with the nearest sentence-like, link-poor block before it (within a few
    ancestor levels) put back: a lead paragraph styled apart from the body is often a sibling or
    cousin of it that scores too little to be kept. Short blocks (bylines, dates, subheadings)
    between are passed over; the headline (h1), a link list or a long block ends the search. When
    the content begins with its own heading, only a lead right under the page's headline (a landing
    page's hero over its feature sections, a guide's introduction over its chapters), and not when
    that heading links to another page or heads a post (an <article>, a box named post or entry):
    what stands before posts is the site's (a blog's description)."""
    first = chosen[0]
    heading = _leading_heading(found, first, MAX_DEPTH)
    if heading is not None and (_links_away(found, heading) or _in_a_post(heading, first)):
        return chosen
    node = first
    for _ in range(_LEAD_LEVELS):
        parent = node.getparent()
        if node is found.body or parent is None or parent not in found.info or parent.tag == "tr":
            break  # (cells before the content in its row are a column beside it, not above it)
        for sibling in reversed(_kept_before(found, parent, node)):
            verdict = False if _teasers(found, sibling) else _lead_verdict(found, sibling)
            if verdict is not None:
                if verdict is False or (heading is not None and not _hero_lead(found, verdict)):
                    return chosen
                return [verdict, *chosen]
        node = parent
    return chosen


def _in_a_post(heading: Element, top: Element) -> bool:
    """heading stands in an <article> or a box named like a post, up to `top`."""
    if heading is top:
        return False
    for node in heading.iterancestors():
        if node.tag == "article" or _names_a_post(node):
            return True
        if node is top:
            return False
    return False


def _hero_lead(found: Measure, block: Element) -> bool:
    """The kept block before `block` among its parent's children is the page's headline (h1), and
    their box holds no field to fill in (a newsletter's name and promise over its sign-up form)."""
    parent = block.getparent()
    if parent is None or has_field(parent):
        return False
    blocks = _kept_blocks(found, parent)
    at = next((at for at, kept in enumerate(blocks) if kept is block), 0)
    return at > 0 and blocks[at - 1].tag == "h1"


def _first_text_is_heading(found: Measure, element: Element, headings: frozenset[str] = _HEADINGS) -> bool | None:
    """None when element (kept) holds no text at all."""
    if element.tag in headings and found.text_len(element):
        return True
    if element.text and element.text.strip():
        return False
    for child in element:
        if child in found.info:  # not boilerplate, a comment or a script
            verdict = _first_text_is_heading(found, child, headings)
            if verdict is not None:
                return verdict
        if child.tail and child.tail.strip():
            return False
    return None


def _kept_before(found: Measure, parent: Element, child: Element) -> list[Element]:
    before = []
    for sibling in parent:
        if sibling is child:
            break
        if sibling in found.info:
            before.append(sibling)
    return before


def _lead_verdict(found: Measure, element: Element) -> Element | bool | None:
    """The lead block in element (its last text block), False to stop looking, None to pass over.
    Each element is looked at once, and its own children only (the cost stays linear in depth)."""
    text, links = found.info[element]
    if element.tag == "h1" or (text < _LEAD_MIN and next(element.iter("h1"), None) is not None):
        return _under_headline(found, element)  # the headline: a lead comes after it, what stands before is the site's
    if text < _LEAD_MIN or element.tag in _HEADINGS or names_elsewhere(names_of(element)):
        return None  # a byline, a date, a subheading, an author's bio
    if links > _LEAD_LINKS * text:
        return False
    blocks = _kept_blocks(found, element)
    if blocks and element.tag not in _PARAGRAPHS:
        if _photo_among(element) and text < _LEAD_MAX:
            return None  # a photo and its caption
        for child in reversed(blocks):  # a header holding headline, lead and byline: the lead alone
            verdict = _lead_verdict(found, child)
            if verdict is False and child.tag == "h1":  # reached the headline: a short lead under it?
                return _under_headline(found, element)
            if verdict is not None:
                return verdict
        return None
    if next(element.iter(*_PHOTOS), None) is not None and text < _LEAD_MAX:
        return None
    if text > _LEAD_MAX:
        return False
    return element if _LEAD_SENTENCE.search(_kept_text(found, element)) else False


def _kept_blocks(found: Measure, element: Element) -> list[Element]:
    """element's children that are kept blocks, in order."""
    return [child for child in element if child in found.info and child.tag in BLOCK_TAGS]


def _under_headline(found: Measure, element: Element) -> Element | bool:
    """The lead right after a headline among element's kept children (_lead_under_headline), or
    False: the search for a lead ends at the headline."""
    blocks = _kept_blocks(found, element)
    return next((block for before, block in zip(blocks, blocks[1:], strict=False)
                 if before.tag == "h1" and _lead_under_headline(found, block)), False)


def _lead_under_headline(found: Measure, element: Element) -> bool:
    """A lead known by its place, right under the headline: a paragraph of one sentence or more
    without links, shorter than a lead elsewhere needs ("Three districts get new lanes by 2026."),
    or named a teaser, as German sites name their lead ("article-teaser"; a teaser elsewhere is
    another story's). Not a byline, a date or a subheading, which end without a sentence's stop."""
    text, links = found.info[element]
    if links or not _SHORT_LEAD_MIN <= text <= _LEAD_MAX or element.tag in _HEADINGS:
        return False
    if any(child.tag in BLOCK_TAGS for child in element if child in found.info):
        return False
    if next(element.iter(*_PHOTOS, "time"), None) is not None:
        return False
    if names_elsewhere(_TEASER.sub("", names_of(element))):
        return False
    return _LEAD_SENTENCE.search(_kept_text(found, element).rstrip()[-2:]) is not None


def _photo_among(element: Element) -> bool:
    """A photo among element's children or grandchildren."""
    for child in element:
        if child.tag in _PHOTOS or any(grandchild.tag in _PHOTOS for grandchild in child):
            return True
    return False


def _kept_text(found: Measure, element: Element) -> str:
    """The text of element's kept parts (not its scripts or boilerplate), a bounded sample."""
    return _sample(_kept_pieces(found, element))


# (module-level, not a closure calling itself: such a closure and its cell make a reference cycle,
# which kept the Measure, and with it the page's whole tree, alive until the garbage collector ran)
def _kept_pieces(found: Measure, node: Element, breaks: bool = False) -> Iterator[str]:
    """breaks: a <br> as a newline."""
    yield node.text or ""
    for child in node:
        if breaks and child.tag == "br":
            yield "\n"
        elif child in found.info:
            yield from _kept_pieces(found, child, breaks)
        yield child.tail or ""


# The grids are left out when the content has more text than they have together, or a story of
# its own this long beside them; else they are the content (an index page, a docs landing page).
_TEASER_BOX_SHARE, OWN_STORY = 0.5, 400
_TEASER_TEXT = 400  # characters per linked heading, at most: a summary, not a section
_TEASERS_AT_MOST = 200  # linked headings looked at (each one's ancestors are walked)


def teaser_grids(found: Measure, chosen: list[Element]) -> frozenset[Element]:
    """Grids and lists of teasers inside the chosen content (more stories, related posts: two or
    more headings that link to other pages, each with a short summary at most), when the content
    has more text than they have together or a story of its own beside them."""
    grids: set[Element] = set()
    for node in chosen:
        counts: dict[Element, int] = {}
        linked = 0
        for heading in node.iter(*_HEADINGS):
            if heading is node or not _links_away(found, heading):
                continue
            linked += 1
            if linked > _TEASERS_AT_MOST:
                return frozenset()  # a page of links under headings (an index): nothing to leave out
            for ancestor in heading.iterancestors():
                if ancestor is node:
                    break
                counts[ancestor] = counts.get(ancestor, 0) + 1
        if not counts:
            continue
        found_here: list[Element] = []
        stack = [iter(node)]  # document order; a grid's inside is not entered (the outermost grid counts)
        while stack:
            box = next(stack[-1], None)
            if box is None:
                stack.pop()
                continue
            count = counts.get(box, 0)
            if count < 2 or box not in found.info:
                continue  # no two linked headings inside: nothing to find under it
            text = found.info[box][0]
            if text <= _TEASER_TEXT * count and _lowest(box, counts, count):
                found_here.append(box)
                continue
            stack.append(iter(box))
        in_grids = sum(found.info[box][0] for box in found_here)
        outside = found.info[node][0] - in_grids
        if found_here and (in_grids <= _TEASER_BOX_SHARE * found.info[node][0] or outside >= OWN_STORY):
            grids.update(found_here)
    return frozenset(grids)


# A comment section inside the chosen content is left out when the content has this much text of
# its own beside it, counted outside links (on a page whose content is one comment, it is the text)
_OWN_BESIDE_DISCUSSION = 200
_DISCUSSION_BLOCKS = 2  # blocks named like comments, at least: a thread, not one block that is the post


def discussion_blocks(found: Measure, chosen: list[Element]) -> frozenset[Element]:
    """Blocks inside the chosen content named like comments ("comments-body", "commentText": names
    that boilerplate.py keeps, as a comment may be a page's text), when there are several and the
    content holds text of its own beside them: a blog's thread rendered inside its post's box."""
    if not found.comment_boxes:
        return frozenset()
    nodes = set(chosen)
    inside: dict[Element, list[Element]] = {node: [] for node in chosen}
    # element -> the chosen node under which what is below it may be taken (None: outside every
    # chosen node, or inside a block taken already); each element's verdict is worked out once,
    # so the cost stays linear however deep the blocks nest and however many nodes were chosen
    open_below: dict[Element, Element | None] = {}
    for element in found.comment_boxes:  # document order: an outer block comes before its inner ones
        if element not in found.info:
            continue  # left out after all (for its role or a hidden style)
        walked: list[Element] = []
        verdict: Element | None = None  # (the root reached: outside every chosen node)
        for ancestor in element.iterancestors():
            if ancestor in nodes:
                verdict = ancestor
                break
            if ancestor in open_below:
                verdict = open_below[ancestor]
                break
            walked.append(ancestor)
        for ancestor in walked:
            open_below[ancestor] = verdict
        open_below[element] = None  # taken, or out: nothing under it is taken
        if verdict is not None:
            inside[verdict].append(element)
    blocks: set[Element] = set()
    for node, found_here in inside.items():
        if len(found_here) < _DISCUSSION_BLOCKS:
            continue
        own = found.text_outside_links(node) - sum(found.text_outside_links(e) for e in found_here)
        if own >= _OWN_BESIDE_DISCUSSION:
            blocks.update(found_here)
    return frozenset(blocks)


# Blocks that may be a byline or date line on their own (not headings: a changelog's dates are its sections)
_LINE_BLOCKS = frozenset({"p", "div", "header", "address", "section", "li", "dd", "center"})
# An article has a byline and a date or two; content with more such lines is a thread or a log
# whose posts and entries keep theirs
_MOST_LINES = 4


def byline_blocks(found: Measure, chosen: list[Element]) -> frozenset[Element]:
    """Short blocks inside the chosen content (or chosen themselves) that are only a byline, a
    date or time, a reading time, or some of them ("Par Jean Dupont, le 3 mars 2024", "5 min
    read"), named so or not: bylines.py reads them by their shape. None when there are more than
    _MOST_LINES. Only blocks with no block inside are read, each once (their texts do not overlap)."""
    lines: set[Element] = set()
    stack = [iter(chosen)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        measured = found.info.get(element)
        if measured is None or element in found.flattened:
            continue
        if (
            element.tag in _LINE_BLOCKS
            and 0 < measured[0] <= _BYLINE_CHARS
            and not any(child.tag in BLOCK_TAGS and child in found.info for child in element)
        ):
            if is_byline_line(_line_text(found, element)):
                lines.add(element)
                if len(lines) > _MOST_LINES:
                    return frozenset()
            continue
        stack.append(iter(element))
    return frozenset(lines)


def _line_text(found: Measure, element: Element) -> str:
    """The text of element's kept parts, a <br> read as a newline (a bounded sample, as _sample)."""
    return _sample(_kept_pieces(found, element, breaks=True))


def _links_away(found: Measure, heading: Element) -> bool:
    """A heading that is a link to another page (not a heading's link to its own anchor, as docs
    sections have)."""
    measured = found.info.get(heading)
    if measured is None or not measured[0] or measured[1] < 0.8 * measured[0]:
        return False
    return not all((a.get("href") or "").lstrip().startswith("#") for a in heading.iter("a"))


def _lowest(box: Element, counts: dict[Element, int], count: int) -> bool:
    """No child of box holds as many of the linked headings (the grid, not a wrapper around it)."""
    return all(counts.get(child, 0) < count for child in box)
