"""The other forms a word is found by: what a reader of each language takes for the same word.

search_text indexes a page's words as written (case and accents folded). Beside them the index
holds, per page, the forms its words take for a reader (`page_forms`), and a query word asks for
its own forms too (`query_forms`); a match by a form is a guess, and ranks after exact matches:

- Inflections of the Latin-script languages the service meets, by their Snowball stemmers
  (PyStemmer: Snowball's C stemmers): "spectacles" and "spectacle" share "spectacl", "Schulen" and
  "Schule" share "schul". A page is stemmed in the languages its common words show
  (`page_languages`; every one of them when it shows none), a query in each of them, as a query of
  one or two words shows no language.
- German compounds: a long word of a German page is also found by its beginnings ("Wind",
  "Windkraft" find "Windkraftanlagen"), and every long Latin-script word by its endings
  ("Anlagen", "Anlage" find it; "bees" finds "honeybees"), written reversed (`tails`) so that an
  ending is a prefix the index looks up.
- Hebrew: the prefix letters ו ה ב כ ל מ ש (one or two of them) taken off ("בירושלים" is found by
  "ירושלים"), and the plene spelling's doubled yod and vav read as one ("הספרייה", "הספריה").
- German transliterated umlauts: "Buergermeister" is looked for as "burgermeister" too.

CJK phrases fall back to their pieces in search_text (Term.pieces). Everything here is computed in
Python, so SQLite and PostgreSQL hold and are asked the same forms.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import Stemmer

# The Snowball languages a page is stemmed in, and the common words that show each.
_COMMON = {
    "english": "the and of to is in that for with are was this it on as be by from have not",
    "german": "der die und das ist nicht mit den von zu ein eine sich auch dem im des fur auf werden",
    "french": "le la les et des est une du dans pour que qui pas sur au avec ce il sont aux",
    "spanish": "el los las y del en por una con para es que se lo al como mas pero sus",
    "italian": "il di che della per una sono gli con non le un alla delle nel dei anche",
    "dutch": "de het een van en dat niet zijn voor met op ook te aan worden door naar",
    "portuguese": "o os do da em um uma para com nao que se dos das no na mais como",
}
LANGUAGES = tuple(_COMMON)
_SHOWN_BY = {word: [lang for lang, words in _COMMON.items() if word in words.split()]
             for words in _COMMON.values() for word in words.split()}

MIN_STEM = 3  # a stem shorter than this finds too much ("be" for "bee" in French)
MIN_HEAD = 4  # a compound's beginning or ending at least this long
MIN_COMPOUND = 10  # a German word at least this long is read as a possible compound
MIN_TAILED = 7  # a word at least this long is found by its endings
MIN_TAIL_QUERY = 3
_LATIN = re.compile(r"[a-z\u00df-\u024f]+")  # folded: lowercase, accents mostly gone
_HEBREW = re.compile(r"[\u05d0-\u05ea]+")
_HEBREW_PREFIXES = "ובהכלמש"
_PLENE = re.compile(r"(?<=[\u05d0-\u05ea])(\u05d9\u05d9|\u05d5\u05d5)(?=[\u05d0-\u05ea])")
_UMLAUT_SPELLED = re.compile(r"(?<=[a-z])(ae|oe|ue)")


@cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


def page_languages(words: Iterable[str]) -> tuple[str, ...]:
    """The languages a page's words show by their common words: each that shows at least half as
    many as the one that shows most (at least 3); all of them when none does."""
    shown: Counter[str] = Counter()
    for word, count in Counter(words).items():  # (counted in C: a page repeats its words)
        for language in _SHOWN_BY.get(word, ()):
            shown[language] += count
    if not shown or shown.most_common(1)[0][1] < 3:
        return LANGUAGES
    most = shown.most_common(1)[0][1]
    return tuple(language for language in LANGUAGES if shown[language] * 2 >= most)


def stems(word: str, languages: Iterable[str]) -> set[str]:
    """The word's Snowball stems in `languages` that differ from it and are long enough to mean it."""
    found = set()
    for language in languages:
        stem = _stemmer(language).stemWord(word)
        if stem != word and len(stem) >= MIN_STEM:
            found.add(stem)
    return found


_FINAL = str.maketrans("כמנפצ", "ךםןףץ")


def _hebrew_spellings(word: str) -> set[str]:
    """The word with its doubled yod and vav read as one, and its skeleton: yod and vav after the
    first letter left out (plene and defective spelling alike: תיאטרון, תאטרון -> תאטרן)."""
    skeleton = word[0] + word[1:].replace("\u05d9", "").replace("\u05d5", "")
    found = {_PLENE.sub(lambda m: m.group(1)[0], word)}
    if len(skeleton) >= 3:
        found.add(skeleton)
    return found


def _hebrew_forms(word: str) -> set[str]:
    """The word without one or two prefix letters, without a plural ending (ים, ות: the letter
    before it written final), each in its spellings."""
    bases = {word}
    for cut in (1, 2):  # the article ה comes last: nothing follows it but the word
        if (len(word) - cut >= 3 and all(letter in _HEBREW_PREFIXES for letter in word[:cut])
                and "\u05d4" not in word[:cut - 1]):
            bases.add(word[cut:])
    for base in list(bases):
        if len(base) >= 5 and base.endswith(("\u05d9\u05dd", "\u05d5\u05ea")):
            bases.add(base[:-3] + base[-3].translate(_FINAL))
    found = set(bases)
    for base in bases:
        found |= _hebrew_spellings(base)
    found.discard(word)
    return found


def _s_stem(word: str) -> str:
    """An English plural's singular, the conservative way (Harman's S-stemmer): honeybees -> honeybee."""
    if word.endswith("ies") and not word.endswith(("eies", "aies")) and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")) and len(word) > 4:
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")) and len(word) > 3:
        return word[:-1]
    return word


def is_hebrew(word: str) -> bool:
    return bool(_HEBREW.fullmatch(word))


def _reverse(word: str) -> str:
    return word[::-1]


@dataclass(frozen=True)
class PageForms:
    """A page's forms as the index holds them: words its words are also found by (not its words
    themselves), and its long words' endings reversed, each space-separated."""

    forms: str
    tails: str


TITLE_REPEATS = 3  # a title's forms are written this many more times: a form in the title counts more


def _forms_of(words: set[str], languages: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """The forms and reversed endings of `words` (distinct indexed words) in `languages`."""
    forms: set[str] = set()
    tails: set[str] = set()
    german = "german" in languages
    for word in words:
        if _LATIN.fullmatch(word):
            word_stems = stems(word, languages)
            forms |= word_stems
            if german and len(word) >= MIN_COMPOUND:  # a beginning, up to the word less an ending
                forms.update(word[:cut] for cut in range(MIN_HEAD, len(word) - 1))
            if len(word) >= MIN_TAILED:
                tails.update(_reverse(form) for form in {word, _s_stem(word), *word_stems})
        elif _HEBREW.fullmatch(word):
            forms |= _hebrew_forms(word)
    return forms, tails


def page_forms(title_words: list[str], body_words: list[str]) -> PageForms:
    """The forms of a page's indexed words (search_text.words, split): each once, the title's
    TITLE_REPEATS times more, as the index weighs a title's words above the text's."""
    distinct = set(title_words) | set(body_words)
    languages = page_languages(title_words + body_words)
    forms, tails = _forms_of(distinct, languages)
    title_forms, title_tails = _forms_of(set(title_words), languages)
    forms -= distinct
    title_forms -= distinct
    return PageForms(" ".join([*sorted(forms), *sorted(title_forms) * TITLE_REPEATS]),
                     " ".join([*sorted(tails), *sorted(title_tails) * TITLE_REPEATS]))


@dataclass(frozen=True)
class QueryForms:
    """What a query word is also looked for as: other words (in a page's words or its forms),
    reversed endings of a page's long words, and for a compound its two parts found apart (each
    part's forms)."""

    words: tuple[str, ...]
    tails: tuple[str, ...]
    splits: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()


MIN_SPLIT = 8  # a query word at least this long may be a compound of two parts ...
MIN_PART = 3  # ... each at least this long ("Nacht|bus")


def _part_forms(part: str) -> tuple[str, ...]:
    return (part, *sorted(stems(part, LANGUAGES) - {part}))


def _splits(word: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """A long Latin word's splits into two parts (a linking s dropped: "Schulessen" -> schul, essen;
    "Arbeitsamt" -> arbeit, amt), each part with its forms."""
    if len(word) < MIN_SPLIT:
        return ()
    found: dict[tuple[str, str], None] = {}
    for cut in range(MIN_PART, len(word) - MIN_PART + 1):
        head, tail = word[:cut], word[cut:]
        found[(head, tail)] = None
        if head.endswith("s") and len(head) > MIN_PART:
            found[(head[:-1], tail)] = None
    return tuple((_part_forms(head), _part_forms(tail)) for head, tail in found)


def query_forms(word: str) -> QueryForms:
    """A folded query word's forms: the word itself (a page's form may be it), its stems in every
    language, its umlaut spelled out read as one, its Hebrew forms; its endings when it is Latin."""
    if _HEBREW.fullmatch(word):
        return QueryForms((word, *sorted(_hebrew_forms(word))), ())
    if not _LATIN.fullmatch(word):
        return QueryForms((), ())
    spelled = _UMLAUT_SPELLED.sub(lambda m: m.group(1)[0], word) if len(word) >= 5 else word
    found = {word, spelled, *stems(word, LANGUAGES), *stems(spelled, LANGUAGES)}
    ordered = (word, *sorted(found - {word}))
    tails: tuple[str, ...] = ()
    if len(word) >= MIN_TAIL_QUERY:
        endings = {form for form in (word, _s_stem(word), *stems(word, LANGUAGES)) if len(form) >= MIN_TAIL_QUERY}
        tails = tuple(sorted(_reverse(form) for form in endings))
    return QueryForms(ordered, tails, _splits(spelled))
