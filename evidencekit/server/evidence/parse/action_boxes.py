"""Call-to-action boxes inside the chosen content: a short box that asks the reader to subscribe,
sign up, donate, buy or get an app, known by its button's or link's words ("Jetzt abonnieren",
"Subscribe now", "Donate now"), with the promise beside it ("Read everything for 1 euro in the
first month."). The button alone is left out as a widget's line (widget_words); its box's prose
reads as the article's unless the box goes with it."""

from __future__ import annotations

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.content import Measure
from evidencekit.server.evidence.parse.html_tree import TEXT_OF, Element, texts_containing
from evidencekit.server.evidence.parse.titled_boxes import RUN_TAGS
from evidencekit.server.evidence.parse.widget_words import CONVERSIONS, line_words

# The buttons' words as their lowered text holds them (an apostrophe or a hyphen kept)
_PROBES = tuple(sorted({"abonne", "abonnez", "abonner"} | {phrase for phrase in CONVERSIONS
                                                           if not phrase.startswith(("je m", "abonnez", "s abonner"))}))
_BUTTON_TEXTS = etree.XPath(".//a//text() | .//button//text()")
# The text nodes holding a probe in lower case, with a capital, in capitals or title case
_TEXTS_WITH = {probe: texts_containing(probe) for probe in _PROBES}
_BUTTON_CHARS = 40
_BESIDE = 300  # characters a box may hold beside its button (a promise, a price)


def _action_of(text: etree._ElementUnicodeResult, node: Element) -> Element | None:
    """The link or button a text node stands in (itself or up to two wrappers: <a><span>...)."""
    element = text.getparent()
    for _ in range(3):
        if element is None or element is node:
            return None
        if element.tag in ("a", "button"):
            return element
        element = element.getparent()
    return None


def action_boxes(found: Measure, chosen: list[Element]) -> frozenset[Element]:
    """The outermost small boxes (not a paragraph, an item or a heading: the text's run) that hold
    a conversion widget's button, when the content keeps twice their text beside them."""
    tops = set(chosen)
    total = sum(found.info[node][0] for node in chosen)
    boxes: set[Element] = set()
    for node in chosen:
        said = "\n".join(_BUTTON_TEXTS(node)).lower()  # what links and buttons say: a small share of the text
        found_probes = [probe for probe in _PROBES if probe in said]
        # (most articles: no button says one, and no text node is searched)
        actions = {action for probe in found_probes for text in _TEXTS_WITH[probe](node)
                   if (action := _action_of(text, node)) is not None}
        for action in actions:
            text = TEXT_OF(action)
            if len(text) > 3 * _BUTTON_CHARS or line_words(text, digits=False) not in CONVERSIONS:
                continue
            measured = found.info.get(action)
            own = measured[0] if measured is not None else len(text.strip())
            box = found.widest_box(action, own, _BESIDE, tops, RUN_TAGS)
            if box is not None and 3 * found.info[box][0] <= total:
                boxes.add(box)
    return frozenset(boxes)
