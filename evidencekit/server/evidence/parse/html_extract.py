"""parse_html: main text, Markdown and declared metadata of an HTML or XHTML page."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse import html_meta
from evidencekit.server.evidence.parse.blocks import judged_out
from evidencekit.server.evidence.parse.boilerplate import (
    names_content,
    names_discussion,
    names_elsewhere,
)
from evidencekit.server.evidence.parse.content import (
    Measure,
    byline_blocks,
    choose,
    discussion_blocks,
    dropped_container,
    gallery_captions,
    headline_text,
    held_text,
    holding_main,
    marked_main,
    measure,
    names_of,
    prune_furniture,
    stripped_length,
    teaser_grids,
    text_outside,
    with_lead,
    wrapped_page,
)
from evidencekit.server.evidence.parse.encoding import html_source
from evidencekit.server.evidence.parse.html_meta import Track
from evidencekit.server.evidence.parse.html_tree import Element, limit_nodes, load_tree
from evidencekit.server.evidence.parse.json_ld import declared_body
from evidencekit.server.evidence.parse.own_links import OwnLinks
from evidencekit.server.evidence.parse.render import render
from evidencekit.server.evidence.parse.text import looks_binary, nfc, nfc_or_none

# Below this much main text, a page with a password field reads as a login wall.
LOGIN_WALL_TEXT = 300
# When the chosen content is this short and the page holds more, the whole page is read instead.
_SHORT_CONTENT = 150
_NEARLY_NOTHING = 25  # ...and when even the whole page without its link boxes is shorter, they are kept
_NOT_TEXT = ("script", "style", "noscript", "template")
# An element left out for its tag or role is read as the page when it holds at least this much
# text, and this many times what was kept outside it (a real sidebar holds less than the article),
# both counted outside links.
_WRAPPED_PAGE = 200
_WRAPPED_SHARE = 4
# A wrapper, whatever its name says: it holds this share of the page's text, and this many times
# what was kept outside it (a related-stories block beside a brief holds less).
_WHOLE_PAGE, _WHOLE_PAGE_OVER_KEPT = 0.8, 20
_CONTAINER_ROUNDS = 3  # containers named like furniture read, one inside another
# The article body declared in JSON-LD replaces the found text when that is under this share of it
_DECLARED_SHARE = 0.5
# A page has text of its own beside a comment section (which is then never its content): this much
# kept, or a post container (named like content) of this much.
_OWN_TEXT, _OWN_POST = 200, 100


@dataclass(frozen=True)
class HtmlExtract:
    text: str
    markdown: str
    title: str | None
    description: str | None
    language: str | None
    tracks: tuple[Track, ...]
    nodes_limited: bool
    login_wall: bool
    base_href: str | None = None  # the first <base href>: what relative URLs (track src) resolve against
    binary: bool = False  # the bytes are not text (an image or archive served as HTML): nothing was read
    script_shell: bool = False  # no text, and the page renders its text with JavaScript only


def parse_html(
    body: bytes,
    *,
    http_charset: str | None = None,
    content_language: str | None = None,
    max_nodes: int = 50_000,
    url: str | None = None,
) -> HtmlExtract:
    """Never raises. login_wall is a heuristic: a password field on a page whose main text is
    shorter than LOGIN_WALL_TEXT characters. url: the page's final URL; relative links in the
    markdown are resolved against it (and the page's <base href>), else kept as written."""
    source = html_source(body, http_charset)  # (the body itself where it is the text's UTF-8)
    if isinstance(source, str) and looks_binary(source):
        return HtmlExtract(text="", markdown="", title=None, description=None, language=None, tracks=(),
                           nodes_limited=False, login_wall=False, binary=True)
    root = load_tree(source)
    declared = declared_body(root)  # (before the node limit, which may prune scripts)
    nodes_limited = limit_nodes(root, max_nodes, prune=prune_furniture)
    base_href = html_meta.base_href(root)
    base_url = _base_url(url, base_href)
    text, markdown = main_content(root, base_url)
    if declared is not None:
        text, markdown = _or_declared(text, markdown, declared, base_url, max_nodes)
    text, markdown = nfc(text), nfc(markdown)
    return HtmlExtract(
        text=text,
        markdown=markdown,
        title=nfc_or_none(html_meta.title(root)),
        description=nfc_or_none(html_meta.description(root)),
        language=html_meta.language(root, content_language),
        tracks=html_meta.tracks(root),
        nodes_limited=nodes_limited,
        login_wall=html_meta.has_password_field(root) and len(text) < LOGIN_WALL_TEXT,
        base_href=base_href,
        script_shell=not text.strip() and html_meta.script_shell(root),
    )


def _or_declared(text: str, markdown: str, declared: str, base_url: str | None, max_nodes: int) -> tuple[str, str]:
    """The article body the page declares in its JSON-LD, read as a page of its own, instead of
    what the main-content search found when that is under half as long: the page showed a teaser,
    or its text is loaded by script, or hidden in markup the search misses."""
    if len(text) >= _DECLARED_SHARE * len(declared):
        return text, markdown  # (the declared HTML is longer than its text: no need to read it)
    root = load_tree(declared)
    limit_nodes(root, max_nodes)
    declared_text, declared_markdown = main_content(root, base_url)
    if len(text) < _DECLARED_SHARE * len(declared_text):
        return declared_text, declared_markdown
    return text, markdown


def _base_url(url: str | None, base_href: str | None) -> str | None:
    if url is None:
        return None
    if not base_href:
        return url
    try:
        joined = urljoin(url, base_href.strip())
    except ValueError:
        return url
    return joined if joined.lower().startswith(("https:", "http:")) else url


def main_content(root: Element, base_url: str | None = None) -> tuple[str, str]:
    found, chosen, leave_out = find_content(root)
    leave_out |= judged_out(found, chosen, leave_out)
    text, markdown = render(
        found, chosen, base_url=base_url, leave_out=leave_out, own_links=OwnLinks(found, chosen).keeps
    )
    if len(text) < _SHORT_CONTENT and found.text_len(found.body) > 2 * len(text) and not headline_text(found, chosen, text):
        # Little or nothing chosen: the page is short or all links. Show what there is, without
        # its boxes of links (navigation) unless they are all there is.
        text, markdown = render(found, [found.body], base_url=base_url)
        if len(text) < _NEARLY_NOTHING:
            text, markdown = render(found, [found.body], drop_link_boxes=False, base_url=base_url)
    return text, markdown


def find_content(root: Element) -> tuple[Measure, list[Element], frozenset[Element]]:
    """The page measured, the content nodes chosen in it, and the elements inside them left out."""
    body = next(root.iter("body"), None)
    exempt: frozenset[Element] = frozenset()
    if body is None:
        body = root
        exempt = frozenset(root.iter("head"))  # the parser left the page in <head> (an unknown tag there)
    marked = marked_main(body)
    exempt |= holding_main(body, marked)
    found = measure(body, exempt=exempt)
    kept = found.text_len(body)
    # Outside links, as a wrapper's text is counted: a box of headlines kept beside a page-wide
    # <form> is not the page's own text
    kept_own = found.text_outside_links(body)
    page = _PageText(body)
    for _ in range(_CONTAINER_ROUNDS):
        # Left out for its tag or role (an unclosed <header> or <noscript>, a page-wide <form>,
        # role=complementary), it holds the page and nothing else was kept: read it as a container,
        # and look again inside it (an unclosed <nav> in an unclosed <header>).
        # (held <= total - kept: no wrapper can hold 4x the kept text outside links and 200
        # characters unless this holds)
        if page.total_under(kept + max(_WRAPPED_SHARE * kept_own, _WRAPPED_PAGE)):
            break
        wrapper, held = wrapped_page(found, max(_WRAPPED_PAGE, _WRAPPED_SHARE * kept_own))
        if wrapper is None or held < _WRAPPED_PAGE or held < _WRAPPED_SHARE * kept_own:
            break
        exempted = measure(body, exempt=exempt | {wrapper})
        if not _gained(exempted, kept):
            break
        found, exempt = exempted, exempt | {wrapper}
        kept, kept_own = found.text_len(body), found.text_outside_links(body)
    held_elsewhere = 0
    for _ in range(_CONTAINER_ROUNDS):
        # Class names (or an <aside>) hid most of the page: a main container named like furniture
        # ("contentWithSidebar"). Read that one element as content and keep filtering inside it
        # (where another may hide most of it again: an unclosed "byline" <div>).
        kept = found.text_len(body)
        if page.raw_at_most(4 * kept + 500):
            break
        container, held = _hidden_container(found, page.exact()[0])
        held_elsewhere = max(held_elsewhere, held)
        if container is None:
            break
        exempted = measure(body, exempt=exempt | {container})
        if not _gained(exempted, kept):
            break
        found, exempt = exempted, exempt | {container}
    kept = found.text_len(body)
    use_classes = not (kept < 500 and not page.raw_at_most(4 * kept + 500) and held_elsewhere <= page.exact()[0] // 2)
    if not use_classes:
        # Ignore classes altogether when nearly nothing is left and no such element explains it.
        found = measure(body, use_classes=False, exempt=exempt)
    captions = gallery_captions(found)
    if captions:
        # The photos' captions hold more text than the page keeps beside them: a gallery told in them
        found = measure(body, use_classes=use_classes, exempt=exempt | captions)
    chosen = with_lead(found, choose(found, marked))
    leave_out = teaser_grids(found, chosen) | discussion_blocks(found, chosen) | byline_blocks(found, chosen)
    return found, chosen, leave_out


def _gained(exempted: Measure, kept: int) -> bool:
    """Reading an element as a container kept at least twice as much text as before (and some)."""
    now = exempted.text_len(exempted.body)
    return now >= 2 * kept and now > kept


def _hidden_container(found: Measure, raw: int) -> tuple[Element | None, int]:
    """The element left out for its class or id (or as an <aside>) to read as a container, if any,
    and the most text that a comment section left out holds (which then keeps class names read).

    Named like related stories, ads or comments (and not also like a post): not the page's content,
    unless what was kept is next to nothing or it holds nearly the whole page (a page wrapped in
    "ad-portal" or "ad-wallpaper"); the largest such element is passed over for the largest other
    one. A comment section is never the content while the page has text or a post of its own (a
    discussion page, a title and a thread, is read as its thread)."""
    kept = found.text_len(found.body)
    elsewhere = [e for e in found.soft_dropped if _named_elsewhere(e)]
    is_elsewhere = set(elsewhere)  # (membership in a list made this quadratic in furniture sections)
    container, held = dropped_container(found, [e for e in found.soft_dropped if e not in is_elsewhere])
    own = (
        kept >= _OWN_TEXT
        or (container is not None and names_content(names_of(container)) and held >= _OWN_POST)
        or _keeps_a_post(found)
    )
    discussion = [e for e in elsewhere if names_discussion(names_of(e))] if own else []
    is_discussion = set(discussion)
    # (a comment section counts by its text outside links: a thread is full of names that link)
    held_discussion = held_text(discussion)
    held_elsewhere = max(dropped_container(found, elsewhere)[1], held_discussion)
    _, held_ads = dropped_container(found, [e for e in elsewhere if e not in is_discussion])
    if kept < _SHORT_CONTENT or (held_ads > _WHOLE_PAGE * raw and held_ads >= _WHOLE_PAGE_OVER_KEPT * kept):
        held_elsewhere = held_discussion
        if held < 500:
            container, held = dropped_container(found, [e for e in found.soft_dropped if e not in is_discussion])
    if container is None:
        return None, held_elsewhere
    names = names_of(container)
    if kept < 500 or names_content(names) or held > raw // 2 or (held >= 1000 and held >= 2 * kept):
        return container, held_elsewhere
    return None, held_elsewhere


def _keeps_a_post(found: Measure) -> bool:
    """A kept element named like a post or an article ("hentry post") holds _OWN_POST characters."""
    return any(
        text >= _OWN_POST and (element.get("class") or element.get("id")) and names_content(names_of(element))
        for element, (text, _) in found.info.items()
        if element is not found.body
    )


def _named_elsewhere(element: Element) -> bool:
    names = names_of(element)
    return names_elsewhere(names) and not names_content(names)


# The UTF-8 bytes _PageText's lower bound does not count: ASCII whitespace (what str.strip() takes
# among ASCII characters) and every byte of a character past ASCII (which may be whitespace too)
_NOT_COUNTED = bytes(code for code in range(256) if code >= 128 or chr(code).isspace())


class _PageText:
    """The page's text lengths (_text_lengths), worked out only when a bound cannot answer: its text
    as libxml2 writes it out, unstripped, holds at least as many characters as the stripped pieces
    (`total`), which hold at least as many as those outside scripts and styles (`raw`); that bound
    less the scripts' and styles' unstripped text is one for `raw` alone; its ASCII characters other
    than whitespace are at most `total`. Most pages are answered by the bounds, at a fraction of
    the cost of the pieces' walk."""

    def __init__(self, body: Element) -> None:
        self.body = body
        self.text = etree.tostring(body, method="text", encoding=str, with_tail=False)
        self.bound = len(self.text)
        self._exact: tuple[int, int] | None = None
        self._raw_bound: int | None = None
        self._least: int | None = None

    def exact(self) -> tuple[int, int]:
        """(raw, total), as _text_lengths counts them."""
        if self._exact is None:
            self._exact = _text_lengths(self.body)
        return self._exact

    def total_under(self, limit: int) -> bool:
        if self.bound < limit:
            return True
        if self._least is None:  # its ASCII characters that are not whitespace, which no strip takes
            # (its UTF-8 without those whitespace bytes and every byte of the other characters: one
            # pass in C, a third of the cost of splitting the text)
            self._least = len(self.text.encode("utf-8", "surrogatepass").translate(None, _NOT_COUNTED))
        return self._least < limit and self.exact()[1] < limit

    def raw_at_most(self, limit: int) -> bool:
        if self.bound <= limit:
            return True
        if self._raw_bound is None:  # the bound less the scripts' and styles' text, unstripped
            self._raw_bound = self.bound - sum(
                len(etree.tostring(inner, method="text", encoding=str, with_tail=False))
                for inner in self.body.iter(*_NOT_TEXT)
                if next(inner.iterancestors(*_NOT_TEXT), None) in (None, self.body))
        return self._raw_bound <= limit or self.exact()[0] <= limit


def _text_lengths(body: Element) -> tuple[int, int]:
    """Characters of text in the page, boilerplate or not: without scripts, styles and noscripts,
    and all of it."""
    whole = stripped_length(body)
    return text_outside(body, _NOT_TEXT, whole), whole
