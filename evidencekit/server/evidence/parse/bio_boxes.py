"""An author's bio inside the chosen content, in a box apart from the article's run: "Anna Schmidt
ist Redakteurin im Ressort Lokales ...", "Jane Doe is a senior reporter covering ...", "Marie
Dupont est journaliste ...", with the author's photo or alone. Known by its shape where its class
says nothing ("box-3"): it opens with a name and a verb of being or working, and its first sentence
names a newsroom's trade. A bio box with a title ("About the author", "Die Autorin") is
titled_boxes'. A bio written as a paragraph of the run stays, as does an article about a reporter."""

from __future__ import annotations

import re

from evidencekit.server.evidence.parse.content import Measure
from evidencekit.server.evidence.parse.html_tree import TEXT_OF, Element, block_of, texts_containing

# A newsroom's trades as a lowered text holds them ("redakteur" is also "Redakteurin", "journalist"
# also "Journalistin" and "journaliste", "orrespond" "Korrespondent" and "correspondant"), and the
# language whose words a text holds when it may name one (text_languages): found in the content's
# text first, then node by node
_TRADES = (("redakteur", "de"), ("volontär", "de"), ("journalist", None), ("reporter", None), ("orrespond", None),
           ("olumnist", None), ("editor", "en"), ("rédact", "fr"), ("chroniqueu", "fr"))
_TEXTS_WITH = {trade: texts_containing(trade) for trade, _ in _TRADES}
_NAME_WORD = r"[A-ZÀ-ÖØ-ÞĀ-Ž][\w'’-]*\.?"
_PARTICLE = r"(?:von|van|de|der|den|du|da|di|le|la|ten|ter|al|bin)"
# A name of two to four words (initials and particles among them), then a verb of being or working
_OPENS_AS_BIO = re.compile(
    rf"\s*{_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+)?{_NAME_WORD}){{1,3}},?\s+"
    r"(?:ist|war|arbeitet|schreibt|lebt|leitet|berichtet|is|was|writes|covers|works|lives|joined|reports|est|était"
    r"|travaille|écrit|couvre)\b")
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s")
_BIO_CHARS = 400  # a bio this long at most
_BESIDE = 120  # characters a bio's box may hold beside it (a title, "All articles", the name again)
_DATA_TAGS = frozenset({"li", "td", "th", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "caption"})


def bio_boxes(found: Measure, chosen: list[Element], lowered: dict[Element, str],
              spoken: dict[Element, frozenset[str]]) -> frozenset[Element]:
    """The boxes inside `chosen` that hold an author's bio and little else, when the bio's parent
    holds under half of the content's text (a box apart from the run). lowered: each chosen node's
    whole text in lower case; spoken: its text_languages."""
    tops = set(chosen)
    half = sum(found.info[node][0] for node in chosen) / 2
    boxes: set[Element] = set()
    for node in chosen:
        whole, languages = lowered[node], spoken[node]
        for trade, language in _TRADES:
            if (language is not None and language not in languages) or trade not in whole:
                continue  # (most articles name no trade: no node of theirs is searched)
            for text in _TEXTS_WITH[trade](node):
                block = block_of(text, node)
                if block is None or block is node or block in boxes or not _is_bio(found, block, trade):
                    continue
                parent = block.getparent()  # (a bio box's own wrapper, or the run's container)
                if parent is not None and found.info.get(parent, (0,))[0] < half:
                    # (its photo, a title, a link to the author's page beside it)
                    box = found.widest_box(block, found.info[block][0], _BESIDE, tops)
                    boxes.add(block if box is None else box)
    return frozenset(boxes)


def _is_bio(found: Measure, block: Element, trade: str) -> bool:
    measured = found.info.get(block)
    if measured is None or not measured[0] or measured[0] > _BIO_CHARS or block.tag in _DATA_TAGS:
        return False
    text = TEXT_OF(block)
    if not _OPENS_AS_BIO.match(text):
        return False
    return trade in _FIRST_SENTENCE.split(text.strip(), 1)[0].lower()
