"""Blocks inside the chosen content that are all links and still the text's own: the renderer
leaves a box of links out (related stories, tag lists), but a paragraph that is one linked
sentence or that links only to other sites than the page's own (a place, a video, a document the
text points to), or a list of sources the text cites on other sites, is part of what the author
wrote.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice

from evidencekit.server.evidence.parse.content import Measure
from evidencekit.server.evidence.parse.html_tree import Element
from evidencekit.server.evidence.parse.render import link_box

# A sentence: it ends with its stop (a closing quote or bracket may follow), and has some words
_SENTENCE = re.compile(r"[.!…][\"'”’»)\]]*$")
_SENTENCE_WORDS = 6
_PICTURES = ("img", "picture", "video", "iframe")
# A list of sources: items linking to other sites, each title this many words on average
_SOURCE_WORDS = 4
_SOURCES_AT_LEAST = 2  # items
_SOURCE_SITES = 2  # other sites the items link to, at least
_AUTHORITY_END = re.compile(r"[/?#\\]")
_SITE_LINKS_READ = 2000  # links read to find the page's own site, at most


class OwnLinks:
    """Which boxes of links inside the chosen content are the text's own, asked by the renderer of
    each box it would leave out (so the page is not walked again): a paragraph that is one linked
    sentence ("Read the commission's full report on the flood.") or whose links all go to other
    sites than the page's own, with more of the text after it, a list whose items link to other
    sites than the page's own, with titles of some words (the sources a text cites, not a
    related-stories list of the site's own pages or a row of sharing buttons)."""

    def __init__(self, found: Measure, chosen: list[Element]) -> None:
        self.found = found
        self.chosen = chosen
        self.site: list[str | None] = []  # the page's own site, found once when a box asks for it
        self.texts_end: dict[Element, set[Element]] = {}  # parent -> its children before its last text block

    def keeps(self, element: Element) -> bool:
        """element: a box of links the renderer would leave out."""
        if element.tag == "p":
            return (_linked_sentence(element) or self._away(element)) and _text_after(
                self.found, element, self.texts_end
            )
        if element.tag not in ("ul", "ol"):
            return False
        hosts = _source_sites(self.found, element)
        return bool(hosts) and self._own_site() not in hosts

    def _own_site(self) -> str | None:
        if not self.site:
            self.site.append(_own_host(self.found.body, self.chosen))
        return self.site[0]

    def _away(self, paragraph: Element) -> bool:
        """Every link of paragraph goes to another site than the page's own (known), and it holds
        no picture (a linked picture and line are an advertisement)."""
        if next(paragraph.iter(*_PICTURES), None) is not None:
            return False
        hosts: set[str] = set()
        for link in paragraph.iter("a"):
            host = _host(link.get("href") or "")
            if host is None:
                return False
            hosts.add(host)
        site = self._own_site() if hosts else None
        return site is not None and site not in hosts


def _text_after(found: Measure, element: Element, texts_end: dict[Element, set[Element]]) -> bool:
    """A block of the text's own after element among its siblings (not a box of links): the
    sentence stands in the text's run, not at its end as a promotion. Each parent's children are
    read once, however many of them are asked about."""
    parent = element.getparent()
    if parent is None:
        return False
    before = texts_end.get(parent)
    if before is None:
        children = list(parent)
        last = next(
            (
                index
                for index in range(len(children) - 1, -1, -1)
                if (measured := found.info.get(children[index])) is not None
                and measured[0]
                and not link_box(children[index], measured)
            ),
            0,
        )
        before = texts_end[parent] = set(children[:last])
    return element in before


def _linked_sentence(paragraph: Element) -> bool:
    """One link, and a statement, with no picture: a headline that links to a story is not one,
    and often asks; a linked picture and line are a teaser or an advertisement."""
    if next(islice(paragraph.iter("a"), 1, None), None) is not None or next(paragraph.iter(*_PICTURES), None) is not None:
        return False
    text = " ".join("".join(paragraph.itertext()).split())
    return len(text.split()) >= _SENTENCE_WORDS and _SENTENCE.search(text) is not None


def _source_sites(found: Measure, listing: Element) -> set[str]:
    """The sites a list's items link to when it may be a list of sources (every item links to
    another site, the sites vary, the titles have some words); else an empty set."""
    items = [item for item in listing if item.tag == "li" and found.info.get(item, (0,))[0]]
    if len(items) < _SOURCES_AT_LEAST:
        return set()
    words = 0
    hosts: set[str] = set()
    for item in items:
        links = list(item.iter("a"))
        if not links:
            return set()
        for link in links:
            host = _host(link.get("href") or "")
            if host is None:
                return set()  # a page of the site's own (a relative link), or no web link
            hosts.add(host)
        words += len("".join(item.itertext()).split())
    # (the sites vary: one or two other sites are a partner's or a sister site's recommendations)
    if len(hosts) < max(_SOURCE_SITES, len(items) / 2) or words < _SOURCE_WORDS * len(items):
        return set()
    return hosts


def _host(href: str) -> str | None:
    """The site an absolute web link goes to; None for a relative link or another scheme."""
    href = href.strip()
    lowered = href[:8].lower()
    if lowered.startswith("//"):
        rest = href[2:]
    elif lowered.startswith("http://"):
        rest = href[7:]
    elif lowered.startswith("https://"):
        rest = href[8:]
    else:
        return None
    # the authority, without credentials and port ("user@host:8080")
    host = _AUTHORITY_END.split(rest, 1)[0].rpartition("@")[2].partition(":")[0].lower().rstrip(".")
    if not host:
        return None
    # the site's domain: its last two labels, three under a two-letter country's second level
    # ("nbcnews.com" for "worldnews.nbcnews.com", "bbc.co.uk")
    labels = host.split(".")
    keep = 3 if len(labels) >= 3 and len(labels[-1]) == 2 and len(labels[-2]) <= 3 else 2
    return ".".join(labels[-keep:])


def _own_host(body: Element, chosen: list[Element]) -> str | None:
    """The site most of the page's absolute links outside the chosen content go to: the site's
    own (its navigation, its sections), when the page writes its links out whole."""
    inside = {link for node in chosen for link in islice(node.iter("a"), _SITE_LINKS_READ)}
    hosts: Counter[str] = Counter()
    for count, link in enumerate(body.iter("a")):
        if count >= _SITE_LINKS_READ:
            break
        if link in inside:
            continue
        host = _host(link.get("href") or "")
        if host is not None:
            hosts[host] += 1
    return hosts.most_common(1)[0][0] if hosts else None
