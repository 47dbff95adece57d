"""Boxes inside the chosen content known by their title: a newsletter's sign-up, a "more on this
topic" box, a "was this article helpful?" rating, a share box, an author's bio, in the languages the service meets.
Their titles say what they are where their class names say nothing ("box-7"), and their text (a
teaser's summary, a sign-up's promise) reads as prose. The content's lowered text is tested for a
few rare phrases first, so most articles pay for those substring tests and no walk of their nodes."""

from __future__ import annotations

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.content import Measure
from evidencekit.server.evidence.parse.html_tree import (
    BLOCK_TAGS,
    TEXT_OF,
    Element,
    texts_containing,
)
from evidencekit.server.evidence.parse.widget_words import line_words

# The whole title, lower case, its punctuation read as spaces. Not "Empfehlungen" or "Recommended"
# alone: a report's or a review's own section is titled so.
_TITLES = frozenset({
    "newsletter", "unser newsletter", "der newsletter", "newsletter abonnieren", "zum newsletter",
    "newsletter anmeldung", "newsletter sign up", "newsletter signup", "sign up for our newsletter",
    "subscribe to our newsletter", "get our newsletter", "our newsletter", "the newsletter", "notre newsletter",
    "inscrivez vous à notre newsletter", "abonnez vous à notre newsletter",
    "mehr zum thema", "mehr zu diesem thema", "das könnte sie auch interessieren", "auch interessant",
    "das könnte sie interessieren", "weitere artikel", "lesen sie auch",
    "related", "related articles", "related stories", "related posts", "related content", "you may also like",
    "you might also like", "more on this story", "more on this topic", "read next", "recommended for you", "à lire aussi", "a lire aussi", "lire aussi", "sur le même sujet",
    "wie hilfreich war dieser artikel", "war dieser artikel hilfreich", "was this article helpful",
    "was this helpful", "was this page helpful", "rate this article", "artikel bewerten",
    "bewerten sie diesen artikel", "cet article vous a t il été utile",
    "share this article", "share this story", "diesen artikel teilen", "artikel teilen", "partager cet article",
    "about the author", "about the authors", "über den autor", "über die autorin",
    "über die autoren", "zum autor", "zur autorin", "zu den autoren", "der autor", "die autorin", "die autoren",
    "à propos de l auteur", "à propos de l autrice", "à propos des auteurs", "l auteur", "l autrice",
})
# What the content's text (lower case) holds when a title may be in it, the word the title's text
# node is then found by (in lower case, with a capital, in capitals or title case: contains() for
# each, as translate() would copy every text node of the content), and the language whose words
# the text holds when it may (text_languages; None: any): rare phrases, so that most articles pay
# for a few substring searches of their text and no walk of their nodes
_KEYS = (("newsletter", "newsletter", None), ("zum thema", "thema", "de"), ("diesem thema", "thema", "de"),
         ("auch interess", "interess", "de"), ("sie interessieren", "interessieren", "de"),
         ("weitere artikel", "artikel", "de"), ("lesen sie auch", "lesen", "de"), ("related", "related", "en"),
         ("also like", "like", "en"), ("more on this", "more", "en"), ("read next", "read", "en"),
         ("recommended for", "recommended", "en"), ("lire aussi", "aussi", "fr"), ("même sujet", "sujet", "fr"),
         ("hilfreich", "hilfreich", "de"), ("helpful", "helpful", "en"), ("rate this", "rate", "en"),
         ("bewerten", "bewerten", "de"), ("été utile", "utile", "fr"), ("share this", "share", "en"),
         ("artikel teilen", "teilen", "de"), ("partager cet", "partager", "fr"), ("the author", "author", "en"),
         ("autor", "autor", "de"), ("auteur", "auteur", "fr"), ("autrice", "autrice", "fr"))
_TEXTS_WITH = {word: texts_containing(word) for _, word, _ in _KEYS}
# A title written as one of these stands in the article's run (a section's heading, a paragraph)
RUN_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "dt", "dd", "td", "th", "blockquote", "pre"})
_TITLE_CHARS = 60  # a title this long at most
_BOX_OVER = 400  # characters a box may hold beside its title (a summary or two, a promise, a button's words)


def titled_boxes(found: Measure, chosen: list[Element], lowered: dict[Element, str],
                 spoken: dict[Element, frozenset[str]]) -> frozenset[Element]:
    """The small boxes inside `chosen` whose first text is one of _TITLES, when each holds under half
    of the content's text (a page that is such a box, a newsletter's own page, keeps it).
    lowered: each chosen node's whole text in lower case; spoken: its text_languages."""
    tops = set(chosen)
    half = sum(found.info[node][0] for node in chosen) / 2
    boxes: set[Element] = set()
    for node in chosen:
        whole = lowered[node]
        languages = spoken[node]
        words = dict.fromkeys(word for probe, word, language in _KEYS
                              if (language is None or language in languages) and probe in whole)
        for word in words:
            for text in _TEXTS_WITH[word](node):
                title = _title_block(found, text, node)
                if title is None:
                    continue
                box = _box(found, title, tops)
                if box is not None and found.info[box][0] < half:
                    boxes.add(box)
    return frozenset(boxes)


def _title_block(found: Measure, text: etree._ElementUnicodeResult, node: Element) -> Element | None:
    """The element a title text stands in (climbing through inline wrappers), if it is one of _TITLES."""
    if len(text) > 2 * _TITLE_CHARS:
        return None
    element = text.getparent()
    if text.is_tail:
        return None  # (words after an element: not a title of their own)
    # the words of the element the text stands in (its wrappers may hold what is not kept: buttons)
    if line_words(TEXT_OF(element), digits=False) not in _TITLES:
        return None
    while element is not node and element.tag not in BLOCK_TAGS:
        parent = element.getparent()
        if parent is None or found.info.get(parent) != found.info.get(element):
            break
        element = parent
    measured = found.info.get(element)
    if measured is None or measured[0] > _TITLE_CHARS or element is node:
        return None
    return element


def _box(found: Measure, title: Element, tops: set[Element]) -> Element | None:
    """The box a title heads: the nearest ancestor holding more than the title and at most _BOX_OVER
    characters beside it, that starts with the title's text; else the outermost wrapper holding the
    title alone (a rating's question, its buttons not kept); None when the title stands in the
    article's run with no wrapper of its own (a section headed "Newsletter": the text goes on under it)."""
    own = found.info[title][0]
    # a box holding the title alone (its buttons or fields not kept) is a wrapper already
    element, wrapper = title, (None if title.tag in RUN_TAGS else title)
    for ancestor in title.iterancestors():
        measured = found.info.get(ancestor)
        if ancestor in tops or measured is None or measured[0] > own + _BOX_OVER:
            return wrapper
        if measured[0] > own:
            return ancestor if _starts_with(found, ancestor, element) else wrapper
        element = wrapper = ancestor
    return wrapper


def _starts_with(found: Measure, box: Element, first: Element) -> bool:
    """No kept text in box before `first` (the title opens the box)."""
    if (box.text or "").strip():
        return False
    for child in box:
        if child is first:
            return True
        if found.info.get(child, (0,))[0]:
            return False
        if (child.tail or "").strip():
            return False
    return False
