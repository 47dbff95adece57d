"""The order of search_documents' first results, the same on SQLite and PostgreSQL.

Each database picks and orders its matches by its own function (FTS5's bm25, PostgreSQL's
ts_rank_cd), which do not agree: on the relevance set 12 of 212 first pages differed. The first
RERANKED of them are then ordered here, by one BM25 over the words the index holds of each (the
same text on both databases, search_index.IndexWords), so that where both databases hold those
matches they answer them in one order. Column weights follow the index's: a title word counts 4,
a text word 1, a form 0.5 (a title's forms are written more than once), an ending 0.25. A term's
rarity is read among these candidates (every one of them holds the query's terms in some form).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from evidencekit.server.evidence.search_text import Term

RERANKED = 30
K1, B = 1.2, 0.75
TITLE, BODY, FORMS, TAILS = 4.0, 1.0, 0.5, 0.25

# what the index holds of a document (search_index.IndexWords): title words, text words, forms,
# reversed endings, each space-separated
Words = tuple[str, str, str, str]


def _count(padded: str, phrase: tuple[str, ...], prefix: bool = False) -> int:
    """Occurrences of `phrase` (words) in `padded` (" " + words + " "), its last word as a prefix."""
    needle = " " + " ".join(phrase)
    return padded.count(needle if prefix else needle + " ")


def _holds(padded: str, term: Term) -> int:
    """How often a text holds the term: as written, in another form, by its pieces or its parts."""
    found = _count(padded, term.words, term.prefix)
    found += sum(_count(padded, (form,)) for form in term.forms if form != term.words[0])
    for way in term.pieces:
        found = max(found, min(_count(padded, piece) for piece in way))
    for head, tail in term.splits:
        found = max(found, min(sum(_count(padded, (form,)) for form in head),
                               sum(_count(padded, (form,)) for form in tail)))
    return found


def _weighted(words: Words, term: Term) -> float:
    title, body, forms, tails = (" " + text + " " for text in words)
    return (TITLE * _holds(title, term) + BODY * _holds(body, term)
            + FORMS * sum(_count(forms, (form,)) for form in term.forms)
            + TAILS * sum(_count(tails, (tail,), prefix=True) for tail in term.tails))


def scores(found: Sequence[Term], candidates: Mapping[str, Sequence[Words]]) -> dict[str, float]:
    """Each candidate name's BM25 over its best row's words."""
    rows = [(name, words) for name, held in candidates.items() for words in held]
    if not rows:
        return {}
    lengths = [max(1, words[0].count(" ") + words[1].count(" ") + 2) for _, words in rows]
    average = sum(lengths) / len(lengths)
    weighted = [[_weighted(words, term) for term in found] for _, words in rows]
    holding = [sum(1 for row in weighted if row[at] > 0) for at in range(len(found))]
    rarity = [math.log(1 + (len(rows) - held + 0.5) / (held + 0.5)) for held in holding]
    best: dict[str, float] = {}
    for (name, _), length, row in zip(rows, lengths, weighted, strict=True):
        norm = K1 * (1 - B + B * length / average)
        score = sum(idf * tf * (K1 + 1) / (tf + norm) for idf, tf in zip(rarity, row, strict=True) if tf)
        best[name] = max(best.get(name, score), score)
    return best
