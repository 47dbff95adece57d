"""Each block inside the chosen content judged on its own: the ones a template puts in the
article's box are left out.

The blocks judged are the ones the renderer writes (a paragraph, a heading, a list, a table, a div
with no block inside). What decides is what the page shows of a block whatever its language and
class names: its length, its tag, how much of the content its parent holds, and what its small box
holds. scripts/block_rules.py scores candidate rules (and a learned judge) on the development sets,
each alone, by set; scripts/eval_extract.py has the last word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.action_boxes import action_boxes
from evidencekit.server.evidence.parse.bio_boxes import bio_boxes
from evidencekit.server.evidence.parse.content import OWN_STORY, Measure, is_main_mark
from evidencekit.server.evidence.parse.html_tree import (
    BLOCK_TAGS,
    FIELDS,
    TEXT_OF,
    Element,
    block_of,
    has_field,
    texts_containing,
    visible_field,
)
from evidencekit.server.evidence.parse.posts import grids, post_lists
from evidencekit.server.evidence.parse.render import link_box
from evidencekit.server.evidence.parse.titled_boxes import titled_boxes
from evidencekit.server.evidence.parse.widget_words import text_languages

# Judged as one block however they nest inside (the renderer writes each as one block)
_WHOLE = frozenset({"ul", "ol", "dl", "dir", "pre", "h1", "h2", "h3", "h4", "h5", "h6"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
BOX_OVER = 300  # characters a block's parent may hold beside it and still be the block's own box
# A <time> this long at most, alone on its line (nothing but separators beside it), is a date line
_DATE_LINE = 80
_WORD = re.compile(r"\w")
# A time in a cell, an item or a heading is data (a timetable, a changelog's sections), not a date line
_DATA_TAGS = frozenset({"td", "th", "li", "dd", "dt", "caption", "h1", "h2", "h3", "h4", "h5", "h6"})
# A notice: a © standing as a word, "copyright" before one or a year ("(c)" also marks a team's
# captain), or a licence's name or formula ("CC BY-SA 4.0", "licensed under", "unter der Lizenz");
# in a block this short
_NOTICE = re.compile(r"(?:^|[\s(\[|])©|\bcopyright\s*(?:©|\d{4})|\bcc[ -]by\b|\bcreative\s+commons\b|\bcc[ -]?0\b"
                     r"|\blicen[cs]ed\s+under\b|\b(?:unter\s+der|steht\s+unter\s+der)\s+lizenz\b|\bsous\s+licence\b",
                     re.IGNORECASE)
_NOTICE_CHARS = 200
# The text nodes that hold a sign of one, found by libxml2 for each sign the content's text holds
# (most articles hold none: their text is searched as one string first, not node by node)
# (the words in any case: "Copyright", "COPYRIGHT", "CopyRight")
_NOTICE_SIGNS = ("©", "copyright", "licen", "lizenz", "creative commons", "cc by", "cc-by")
_TEXTS_WITH = {
    "©": etree.XPath(".//text()[contains(., '©')]"),
    "copyright": etree.XPath(".//text()[contains(translate(., 'COPYRIGHT', 'copyright'), 'copyright')]"),
    **{sign: texts_containing(sign) for sign in _NOTICE_SIGNS if sign not in ("©", "copyright")},
}
# Testimonials and endorsements beside a landing page's text: at least this many sibling cards of
# one kind (tag and class; a card, not a paragraph: an interview's quoted paragraphs stay), each
# short and opening with a quotation mark in any language's style
_QUOTE_CARDS = 3
_QUOTE_CARD_CHARS = 600
_QUOTE_OPENERS = frozenset("\"'\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u2018\u2019\u201a\u300c\u300e\u300a")
_OWN_TEXT_BESIDE = 200  # the content's own text beside the cards, at least (else the cards are the page)
# A card is a box: not a paragraph, an item, a heading or a quotation (pull quotes, embedded posts),
# which are the article's, nor a phrase inside a line (a quoted title in <em>)
_CARD_TAGS = BLOCK_TAGS - {"p", "li", "dd", "dt", "tr", "td", "th", "blockquote", *HEADINGS}
# A pointer to another story inside the article ("Read also: <headline>", a related story's card):
# one link away whose text reads as a headline, this long, in a box this short that it fills this
# much of (a labelled paragraph: all but its label), after the article's first prose paragraph, with
# the content's own story beside the pointers (content.OWN_STORY, as beside teaser grids)
_HEADLINE = (20, 200)
_HEADLINE_WORDS = 3
_POINTER_BOX = 350
_POINTER_SHARE, _LABELLED_SHARE = 0.3, 0.6
_LABEL = 30  # characters before the link in a labelled line, at most ("Lesen Sie auch:", "Related article:")
_PROSE = 80
_NOT_AWAY = ("#", "javascript:", "mailto:", "tel:")
_SENTENCE_ENDS = (".", "。", "!", "！")
# A link in these is an entry of a list or a table (sources, a table of contents), not a pointer
_ENTRY_TAGS = frozenset({"li", "td", "th", "dd", "dt", "h1", "caption"})
# A block in a box with a field is a form's prompt ("Sign up for our weekly letter", "Please type
# the code you see") when it is shorter than this
_FORM_PROMPT = 300


def units(found: Measure, chosen: list[Element], leave_out: frozenset[Element]) -> list[Element]:
    """The blocks inside the chosen nodes that the renderer writes, in document order."""
    found_units: list[Element] = []
    info = found.info
    stack: list[Iterator[Element]] = [iter(chosen)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        measured = info.get(element)
        if measured is None or not measured[0] or element in leave_out or link_box(element, measured):
            continue
        if (
            element.tag in _WHOLE
            or element in found.flattened
            or not any(child.tag in BLOCK_TAGS and child in info for child in element)
        ):
            found_units.append(element)
            continue
        stack.append(iter(element))
    return found_units


def box(found: Measure, block: Element, chosen: set[Element]) -> Element:
    """The block's parent when that holds little beside it (a widget, a card), else the block."""
    parent = block.getparent()
    if parent is None or block in chosen:
        return block
    measured = found.info.get(parent)
    return parent if measured is not None and measured[0] <= found.info[block][0] + BOX_OVER else block


def judged_out(found: Measure, chosen: list[Element], leave_out: frozenset[Element]) -> frozenset[Element]:
    """The elements inside the chosen content judged not to be its text (leave_out: what other
    rules leave out already): forms' prompts, date lines by their markup, copyright notices,
    testimonial cards, pointers to other stories, signed posts (a thread, reviews), boxes known by
    their titles (a newsletter's, "more on this topic", a rating), call-to-action boxes, authors' bios."""
    lists = {node: grids(node) for node in chosen}
    lowered = {node: TEXT_OF(node).lower() for node in chosen}  # (searched for notices' and titles' words)
    spoken = {node: text_languages(text) for node, text in lowered.items()}
    return (form_prompts(found, chosen, leave_out) | time_lines(found, chosen) | notices(found, chosen, lowered)
            | quote_cards(found, chosen, lists) | story_pointers(found, chosen, leave_out)
            | post_lists(found, chosen, _OWN_TEXT_BESIDE, lists) | titled_boxes(found, chosen, lowered, spoken)
            | action_boxes(found, chosen) | bio_boxes(found, chosen, lowered, spoken))


def form_prompts(found: Measure, chosen: list[Element], leave_out: frozenset[Element]) -> frozenset[Element]:
    """A form's prompt (a short
    block, not a heading, in a small box that holds a text field or a choice: a newsletter
    sign-up, a comment form's terms, a CAPTCHA's instructions), unless its parent holds half of the
    content's text (a short page's text beside its form). The box's heading stays unless the
    renderer finds it left with nothing under it: over several forms, headings name what a shop
    sells, and dropping them cost a shop's page more than sign-ups gave.

    Looked for from the fields up, so the cost is in the forms' neighbourhoods, not the content."""
    tops = set(chosen)
    outermost: list[Element] = []  # the largest small box around each field
    for node in chosen:
        for field in node.iter(*FIELDS):
            if not visible_field(field):
                continue
            small = None
            for ancestor in field.iterancestors():
                measured = found.info.get(ancestor)
                if measured is not None:
                    if measured[0] > _FORM_PROMPT + BOX_OVER:
                        break
                    small = ancestor
                if ancestor in tops:
                    break
            if small is not None and small not in outermost:
                outermost.append(small)
    if not outermost:
        return frozenset()
    half = sum(found.info[node][0] for node in chosen) / 2
    prompts: set[Element] = set()
    for block in units(found, outermost, leave_out):
        parent = block.getparent()
        if (
            found.info[block][0] < _FORM_PROMPT
            and block.tag not in HEADINGS
            and (parent is None or found.info.get(parent, (0,))[0] < half)
            and has_field(box(found, block, tops))
        ):
            prompts.add(block)
    return frozenset(prompts)


def has(element: Element, tags: tuple[str, ...]) -> bool:
    """Whether element or anything in it has one of tags (a walk in libxml2)."""
    return next(element.iter(*tags), None) is not None


def time_lines(found: Measure, chosen: list[Element]) -> frozenset[Element]:
    """<time> elements inside the chosen content that stand alone on their line (only separators
    beside them, up to the blocks around), with what wraps nothing else around them: a date line by
    its markup, however it is worded ("wczoraj o 14:05", "Tuesday"), where bylines.py reads a line by
    its words. Not in a cell, an item or a heading, where a time is data."""
    lines: set[Element] = set()
    for node in chosen:
        for stamp in node.iter("time"):
            measured = found.info.get(stamp)
            if measured is None or not measured[0] or measured[0] > _DATE_LINE:
                continue
            line = stamp
            parent = line.getparent()
            while parent is not None and parent.tag not in BLOCK_TAGS and parent is not node and _alone_in(line, parent):
                line, parent = parent, parent.getparent()
            if parent is None or parent.tag in _DATA_TAGS or any(a.tag in _DATA_TAGS for a in parent.iterancestors()):
                continue
            if _alone_on_line(line):
                lines.add(line)
    return frozenset(lines)


def _alone_in(element: Element, parent: Element) -> bool:
    """element is all parent holds: no words in parent's own text, and no other child."""
    if _WORD.search(parent.text or "") or _WORD.search(element.tail or ""):
        return False
    return all(child is element for child in parent if child.tag.__class__ is str)


def _alone_on_line(element: Element) -> bool:
    """No words between element and the blocks (or line breaks) before and after it."""
    if _WORD.search(element.tail or ""):
        return False
    following = element.getnext()
    if following is not None and following.tag.__class__ is str and following.tag not in BLOCK_TAGS and following.tag != "br":
        return False
    previous = element.getprevious()
    if previous is None:
        return not _WORD.search(element.getparent().text or "")
    if _WORD.search(previous.tail or ""):
        return False
    return previous.tag.__class__ is not str or previous.tag in BLOCK_TAGS or previous.tag == "br"


def notices(found: Measure, chosen: list[Element], lowered: dict[Element, str]) -> frozenset[Element]:
    """Short blocks inside the chosen content that carry a copyright or licence notice ("© 2024
    Example Media", "Copyright 2007 PR Newswire. All rights reserved."), known by its sign in every
    language, and that stand apart from the article's run: their parent holds under half of the
    content's text (a notice written as the article's last paragraph stays, as the development
    sets' references keep it). Not a heading; prose that mentions copyright, or a longer block with
    a notice in it (a book's description), stays."""
    half = sum(found.info[node][0] for node in chosen) / 2
    found_blocks: set[Element] = set()
    for node in chosen:
        whole = lowered[node]
        texts = [text for sign in _NOTICE_SIGNS if sign in whole for text in _TEXTS_WITH[sign](node)]
        for text in texts:
            block = block_of(text, node)
            measured = found.info.get(block) if block is not None else None
            if (
                block is not None
                and measured is not None
                and measured[0] < _NOTICE_CHARS
                and block.tag not in HEADINGS
                and found.info.get(block.getparent(), (0,))[0] < half
                and _NOTICE.search("".join(block.itertext()))
            ):
                found_blocks.add(block)
    return frozenset(found_blocks)


def quote_cards(found: Measure, chosen: list[Element], lists: dict[Element, list[Element]]) -> frozenset[Element]:
    """Testimonials beside the text: a box's children of one kind (tag and class), three or more,
    two thirds of them short cards that open with a quotation mark ("“Working with them was a
    pleasure” — a client"), when the content keeps text of its own beside them, outside what the
    page marks as its main content (there they are the page's, as its author says). Cards, not
    paragraphs, items or quotations: an interview's quoted paragraphs, a list of reactions, pull
    quotes and embedded posts are its text."""
    cards_out: set[Element] = set()
    info = found.info
    total = sum(info[node][0] for node in chosen)
    for node in chosen:
        if _in_marked_main(node):  # the page's author put them in its main content: they stay with it
            continue
        for grid in lists[node]:  # (posts.grids: three children or more, as many as cards need)
            kinds: dict[tuple[str, str | None], list[Element]] = {}
            for child in grid:
                if child.tag in _CARD_TAGS and child in info:
                    kinds.setdefault((child.tag, child.get("class")), []).append(child)
            cards = max(kinds.values(), key=len, default=[])
            if len(cards) < _QUOTE_CARDS or cards[0] in cards_out:
                continue
            quoted = sum(1 for card in cards if info[card][0] <= _QUOTE_CARD_CHARS and _quoted(card))
            if quoted < _QUOTE_CARDS or 3 * quoted < 2 * len(cards):
                continue
            if total - sum(info[card][0] for card in cards) >= _OWN_TEXT_BESIDE:
                cards_out.update(cards)
    return frozenset(cards_out)


def _in_marked_main(node: Element) -> bool:
    """node is, or is inside, what the page marks as its main content (content.marked_main's marks)."""
    return is_main_mark(node) or any(is_main_mark(ancestor) for ancestor in node.iterancestors())


def _quoted(card: Element) -> bool:
    return TEXT_OF(card).lstrip()[:1] in _QUOTE_OPENERS


def story_pointers(found: Measure, chosen: list[Element], leave_out: frozenset[Element]) -> frozenset[Element]:
    """Pointers to other stories inside the article: a box holding one link away whose text reads
    as a headline (several words, not a sentence) and fills much of it ("Lesen Sie auch: <headline>",
    a related story's card: its headline, a photo, a line of summary), after the article's first
    prose paragraph, when the content keeps a story of its own beside them. Not an entry of a list
    or a table (a list of sources, a table of contents), not a linked sentence (a reference written
    as the text's own), not the page's title (a permalink heading comes before the prose)."""
    info = found.info
    pointers: list[Element] = []
    for node in chosen:
        after_prose = False  # (document order: a paragraph comes before the links inside it)
        for element in node.iter("p", "a"):
            if element.tag == "p":
                after_prose = after_prose or _prose(found, element)
            elif after_prose:
                box = _pointer_box(found, node, element, leave_out)
                if box is not None:
                    pointers.append(box)
    # Several in a row are a list of links written as paragraphs (a reading list, a link roundup):
    # the page's text
    alone = set(pointers)
    pointers = [box for box in pointers if not {_neighbour(found, box, -1), _neighbour(found, box, 1)} & alone]
    if not pointers:
        return frozenset()
    total = sum(info[node][0] for node in chosen)
    if total - sum(info[box][0] for box in pointers) < OWN_STORY:
        return frozenset()  # the pointers are the page (an index of stories)
    return frozenset(pointers)


def _pointer_box(found: Measure, node: Element, link: Element, leave_out: frozenset[Element]) -> Element | None:
    """The box a link to another story fills, or None when the link is no such pointer."""
    measured = found.info.get(link)
    if measured is None or not _HEADLINE[0] <= measured[0] <= _HEADLINE[1]:
        return None
    href = (link.get("href") or "").lstrip()[:11].lower()
    if not href or href.startswith(_NOT_AWAY):
        return None
    box: Element | None = None
    for ancestor in link.iterancestors():
        if ancestor is node:
            break
        if ancestor.tag in _ENTRY_TAGS or ancestor in leave_out:
            return None
        held = found.info.get(ancestor)
        if held is None or held[0] > _POINTER_BOX:
            break
        if ancestor.tag in BLOCK_TAGS:  # a box, not a phrase inside a line
            box = ancestor
    holds_blocks = any(child.tag in BLOCK_TAGS for child in link.iterdescendants())
    if box is None and holds_blocks:
        box = link  # a card that is one link
    if box is None or box.tag in _ENTRY_TAGS or box.tag in HEADINGS:
        return None  # (a heading that links away alone: a post's title on a page of posts)
    text = TEXT_OF(link).strip()
    if len(text.split()) < _HEADLINE_WORDS or (text.endswith(_SENTENCE_ENDS) and not holds_blocks):
        return None
    length = found.info[box][0]
    if box.tag == "p":  # a labelled line: the link is all of it but a short label before it
        return box if measured[0] >= _LABELLED_SHARE * length and _ends_line(link, box) else None
    others = sum(1 for other in box.iter("a") if other is not link and found.info.get(other, (0,))[0] >= _HEADLINE[0])
    return box if not others and measured[0] >= _POINTER_SHARE * length else None


def _prose(found: Measure, paragraph: Element) -> bool:
    measured = found.info.get(paragraph)
    return measured is not None and measured[0] >= _PROSE and measured[1] < 0.25 * measured[0]


def _ends_line(link: Element, line: Element) -> bool:
    """A line that is a short label and the link: nothing but punctuation after the link ("(review)",
    "[STUDY]" and "... to the list." make it a line of the text), and no sentence."""
    after: list[str] = []
    node = link
    while node is not line and node is not None:
        after.append(node.tail or "")
        for sibling in node.itersiblings():
            after.append(TEXT_OF(sibling) + (sibling.tail or ""))
        node = node.getparent()
    if _WORD.search("".join(after)):
        return False
    text = TEXT_OF(line)
    label = text[: max(text.find(TEXT_OF(link)), 0)]
    return len(label.strip()) <= _LABEL and not text.rstrip().endswith(_SENTENCE_ENDS)


def _neighbour(found: Measure, block: Element, step: int) -> Element | None:
    """The nearest sibling with text before (step -1) or after (step 1) block."""
    siblings = block.itersiblings(preceding=step < 0)
    return next((sibling for sibling in siblings if found.info.get(sibling, (0,))[0]), None)
