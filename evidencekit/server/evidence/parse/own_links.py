"""Blocks inside the chosen content that are all links and still the text's own: the renderer
leaves a box of links out (related stories, tag lists), but a paragraph that is one linked
sentence, or a list of sources the text cites on other sites, is part of what the author wrote.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice
from urllib.parse import urlsplit

from evidencekit.server.evidence.parse.content import Measure
from evidencekit.server.evidence.parse.html_tree import Element
from evidencekit.server.evidence.parse.render import link_box

# A sentence: it ends with its stop (a closing quote or bracket may follow), and has some words
_SENTENCE = re.compile(r"[.!…][\"'”’»)\]]*$")
_SENTENCE_WORDS = 6
# A list of sources: items linking to other sites, each title this many words on average
_SOURCE_WORDS = 4
_SOURCES_AT_LEAST = 2  # items
_SOURCE_SITES = 2  # other sites the items link to, at least
_SITE_LINKS_READ = 2000  # links read to find the page's own site, at most


def own_links(found: Measure, chosen: list[Element]) -> frozenset[Element]:
    """The paragraphs and lists inside the chosen content that the renderer would leave out as
    boxes of links, but that are the text's own: a paragraph that is one linked sentence ("Read
    the commission's full report on the flood."), a list whose items link to other sites than the
    page's own, with titles of some words (the sources a text cites, not a related-stories list
    of the site's own pages or a row of sharing buttons)."""
    kept: set[Element] = set()
    site: list[str | None] = []  # the page's own host, found once when a list asks for it
    texts_end: dict[Element, set[Element]] = {}  # parent -> its children before its last text block
    for node in chosen:
        for element in node.iter("p", "ul", "ol"):
            measured = found.info.get(element)
            if measured is None or not link_box(element, measured):
                continue
            if element.tag == "p":
                if _linked_sentence(element) and _text_after(found, element, texts_end):
                    kept.add(element)
            else:
                if not site:
                    site.append(_own_host(found.body, chosen))
                if _sources(found, element, site[0]):
                    kept.add(element)
    return frozenset(kept)


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
    """One link, and a statement: a headline that links to a story is not one, and often asks."""
    if next(islice(paragraph.iter("a"), 1, None), None) is not None:
        return False
    text = " ".join("".join(paragraph.itertext()).split())
    return len(text.split()) >= _SENTENCE_WORDS and _SENTENCE.search(text) is not None


def _sources(found: Measure, listing: Element, site: str | None) -> bool:
    items = [item for item in listing if item.tag == "li" and found.info.get(item, (0,))[0]]
    if len(items) < _SOURCES_AT_LEAST:
        return False
    words = 0
    hosts: set[str] = set()
    for item in items:
        links = list(item.iter("a"))
        if not links:
            return False
        for link in links:
            host = _host(link.get("href") or "")
            if host is None or host == site:
                return False  # a page of the site's own (related stories), or no web link
            hosts.add(host)
        words += len("".join(item.itertext()).split())
    # (the sites vary: one or two other sites are a partner's or a sister site's recommendations)
    return len(hosts) >= max(_SOURCE_SITES, len(items) / 2) and words >= _SOURCE_WORDS * len(items)


def _host(href: str) -> str | None:
    """The site an absolute web link goes to; None for a relative link or another scheme."""
    href = href.strip()
    if not href.lower().startswith(("http://", "https://", "//")):
        return None
    try:
        host = urlsplit(href if not href.startswith("//") else "http:" + href).hostname
    except ValueError:
        return None
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
