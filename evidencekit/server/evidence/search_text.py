"""The words search_documents indexes and looks for, the same on SQLite and PostgreSQL.

Both databases index the text as this module writes it: folded (case, accents, Hebrew points and
compatibility forms do not matter; the marks of Indic scripts and kana do) and split into words
(combining marks belong to them), each Chinese, Japanese or Korean run cut
into overlapping character pairs. Those scripts write no spaces between words, and a word-level
tokenizer (FTS5's unicode61, PostgreSQL's parser) would index a whole sentence as one word; pairs
let a query of two or more characters match as a phrase of its pairs anywhere in a run, and the
run's last character is indexed alone too, so that every character begins some word and a
one-character query matches as a prefix. Pairs rather than FTS5's trigram tokenizer: trigrams
match nothing shorter than three characters, and most Chinese words are two; and one folding
written here serves both databases, where PostgreSQL has no trigram full-text configuration.
No stop words. The other forms a word takes (stems, compound parts, Hebrew prefix letters) are
search_forms': a Term carries them, and the queries written here ask for them with `guess`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import accumulate, chain

from evidencekit.server.evidence import search_forms

# Han (with extensions and compatibility ideographs), kana, Hangul, bopomofo: scripts without spaces
_CJK = ("\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31bf"
        "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff"
        "\U00020000-\U0003134f")


def _class(test: Callable[[str], bool], codes: Iterable[int]) -> str:
    """A regex class body of the code points in `codes` that pass `test`, as ranges."""
    ranges: list[list[int]] = []
    for code in codes:
        if test(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in ranges)


def _astral() -> Iterable[int]:
    """The code points past U+FFFF where marks are (supplementary planes 1 and 14)."""
    return chain(range(0x10000, 0x20000), range(0xE0100, 0xE01F0))


def _is_mark(char: str) -> bool:
    return unicodedata.category(char)[0] == "M"


@dataclass(frozen=True)
class _Patterns:
    """The regexes words and fold run, each twice: for text of the Basic Multilingual Plane only
    (its classes are looked up in one step) and for any text (a class reaching past U+FFFF is a
    list of ranges tried one by one, four times slower on every character)."""

    word: re.Pattern[str]  # a word: letters, digits and combining marks (Indic vowel signs and
    # viramas, kana voicing marks, Hebrew points, which Python's \w leaves out); "_" is no letter
    word_any: re.Pattern[str]
    accent: re.Pattern[str]  # combining marks after a base whose marks are accents (_diacritic_base)
    accent_any: re.Pattern[str]


@cache  # 130,000 code points looked at: on first use, not at every process's start-up
def _patterns() -> _Patterns:
    marks, astral_marks = _class(_is_mark, range(0x300, 0x10000)), _class(_is_mark, _astral())
    combining = _class(lambda char: unicodedata.combining(char) != 0, range(0x300, 0x10000))
    astral_combining = _class(lambda char: unicodedata.combining(char) != 0, _astral())
    bases = _class(lambda char: not unicodedata.combining(char) and _diacritic_base(char),
                   chain(range(0x900), range(0x1E00, 0x2000)))
    return _Patterns(re.compile(f"[\\w{marks}]+"), re.compile(f"[\\w{marks}{astral_marks}]+"),
                     re.compile(f"(^|[{bases}])[{combining}]+"),
                     re.compile(f"(^|[{bases}])[{combining}{astral_combining}]+"))


def _word_list(text: str) -> list[str]:
    """The words of a folded text, in order."""
    patterns, text = _patterns(), text.replace("_", " ")
    return (patterns.word if _in_bmp(text) else patterns.word_any).findall(text)


_PAST_BMP = re.compile("[\U00010000-\U0010ffff]")


def _in_bmp(text: str) -> bool:
    return text.isascii() or _PAST_BMP.search(text) is None  # (isascii() runs at memory speed)


_CJK_CHAR = re.compile(f"[{_CJK}]")
_RUNS = re.compile(f"([{_CJK}]+)|([^{_CJK}]+)")
MAX_TERMS = 32  # a query's words past these are ignored: each is a term the index must intersect
# A CJK run is a phrase of its pairs, and a phrase costs the index a walk of each pair's positions in
# every document holding them all: a 500-character run, 499 pairs, took 9 s on SQLite and 24 s on
# PostgreSQL over pages of one repeated character. Longer runs are looked for as overlapping pieces
# of this many characters (every piece must match), and a query holds this many index words at most.
MAX_PHRASE_CHARS = 8
MAX_QUERY_WORDS = 64


def _diacritic_base(char: str) -> bool:
    """Whether marks on this character are accents a reader does without: Latin, Greek, Cyrillic,
    Hebrew and Arabic (below U+0900) and Latin and Greek extended. Marks in Indic scripts, Thai or
    kana are letters' parts: क + ि is another syllable than क, パ another word than ハ."""
    return char < "\u0900" or "\u1e00" <= char <= "\u1fff"


def fold(text: str) -> str:
    """Case, accents and compatibility forms folded away: "Straße" -> "strasse", "Été" -> "ete",
    Hebrew with points as without, full-width Latin as Latin; Devanagari or kana keep their marks."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    if decomposed.isascii():
        return decomposed
    patterns = _patterns()
    accent = patterns.accent if _in_bmp(decomposed) else patterns.accent_any
    return unicodedata.normalize("NFC", accent.sub(r"\1", decomposed))


@dataclass(frozen=True)
class Term:
    """One word of a query: its indexed words in order (a phrase when several), and whether the
    last is matched as a prefix (a lone CJK character); what else finds it, as a guess: its other
    forms (search_forms: inflections, spellings, without prefix letters, a compound's beginning),
    reversed endings of a longer word, and for a CJK phrase its pieces found apart (each a phrase
    of pairs, the last maybe one character matched as a prefix). `source` is the query's word."""

    words: tuple[str, ...]
    prefix: bool = False
    source: str = field(default="", compare=False)
    forms: tuple[str, ...] = field(default=(), compare=False)
    tails: tuple[str, ...] = field(default=(), compare=False)
    pieces: tuple[tuple[tuple[str, ...], ...], ...] = field(default=(), compare=False)
    splits: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = field(default=(), compare=False)

    @property
    def guessable(self) -> bool:
        """Whether anything but its words in a page's words finds it (its forms are looked for in a
        page's forms too, the word itself among them: a compound's beginning, a Hebrew word
        after its prefix letter)."""
        return bool(self.forms or self.tails or self.pieces or self.splits)


def _pairs(run: str) -> list[str]:
    return [run[i:i + 2] for i in range(len(run) - 1)] + [run[-1]]


# A word's places in one text that a phrase can match: PostgreSQL keeps the first 256 of a lexeme
# and drops the rest. The index text holds the same on both databases: a word's later occurrences
# are written as PLACE_HOLDER, which keeps every other word's place (PostgreSQL's parser and FTS5
# both read it as a word) and which no query holds (a query is NFKD-folded: ﬀ becomes ff). Phrase
# work is then bounded too: a page of one character repeated gave FTS5 20,000 places of one pair.
MAX_PLACES = 256
PLACE_HOLDER = "\ufb00"


def words(text: str) -> str:
    """The text as the index holds it: its folded words, separated by spaces, a word past its
    MAX_PLACES-th occurrence written as PLACE_HOLDER."""
    folded = fold(text)
    out = _word_list(folded)
    if not folded.isascii() and _CJK_CHAR.search(folded):  # most pages hold none: their words are split no further
        split: list[str] = []
        for word in out:
            if not _CJK_CHAR.search(word):
                split.append(word)
                continue
            for cjk, other in _RUNS.findall(word):
                if cjk:
                    split.extend(_pairs(cjk))
                else:
                    split.append(other)
        out = split
    if len(out) > MAX_PLACES:
        left = {word: MAX_PLACES for word, count in Counter(out).items() if count > MAX_PLACES}
        if left:  # (a plain dict of places left: a Counter's += costs 4x on a page of few words)
            for at, word in enumerate(out):
                places = left.get(word)
                if places is not None:
                    if places:
                        left[word] = places - 1
                    else:
                        out[at] = PLACE_HOLDER
    return " ".join(out)


def _pieces(run: str) -> list[str]:
    """A CJK run as the phrases a query looks for: itself, or, past MAX_PHRASE_CHARS, overlapping
    pieces of that length (each begins with the last character of the one before, so every pair of
    the run is in one of them)."""
    if len(run) <= MAX_PHRASE_CHARS:
        return [run]
    return [run[at:at + MAX_PHRASE_CHARS] for at in range(0, len(run) - 1, MAX_PHRASE_CHARS - 1)]


MAX_WAYS = 8  # the cuts of a phrase looked for, fewest words first (8 characters have 13)


def _compositions(length: int) -> list[list[int]]:
    """The ways to cut `length` characters into words of 2 to 4 (most Chinese words' lengths)."""
    if length == 0:
        return [[]]
    return [[part, *rest] for part in (2, 3, 4) if part <= length for rest in _compositions(length - part)]


def _cjk_pieces(phrase: str) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """A CJK phrase of four characters or more as the ways it falls back to its pieces when it is
    not found whole: each a cut into words of 2 to 4 characters that a page may hold apart, each
    word a phrase of its pairs. "纺织厂咖啡" -> 纺织 厂咖啡 | 纺织厂 咖啡: a page that holds 纺织厂 and 咖啡."""
    if len(phrase) < 4:
        return ()
    ways = []
    for parts in sorted(_compositions(len(phrase)), key=len)[:MAX_WAYS]:
        if len(parts) < 2:
            continue
        at, words = 0, []
        for part in parts:
            piece = phrase[at:at + part]
            words.append(tuple(piece[i:i + 2] for i in range(len(piece) - 1)))
            at += part
        ways.append(tuple(words))
    return tuple(ways)


def _term(word: str, source: str) -> list[Term]:
    """The terms of one folded word of a query (a CJK run past MAX_PHRASE_CHARS is several)."""
    found = []
    for cjk, other in _RUNS.findall(word):
        if other:
            forms = search_forms.query_forms(other)
            found.append(Term((other,), source=source, forms=forms.words, tails=forms.tails, splits=forms.splits))
        elif len(cjk) == 1:
            found.append(Term((cjk,), prefix=True, source=source))
        else:
            for piece in _pieces(cjk):
                if len(piece) == 1:
                    found.append(Term((piece,), prefix=True, source=source))
                else:
                    found.append(Term(tuple(piece[i:i + 2] for i in range(len(piece) - 1)), source=source,
                                      pieces=_cjk_pieces(piece) if len(cjk) <= MAX_PHRASE_CHARS else ()))
    return found


def terms(query: str) -> list[Term]:
    """The query's terms, in order, each once; at most MAX_TERMS of them, holding at most
    MAX_QUERY_WORDS index words in all (the rest of a long query is ignored). Each names the word
    of the query it comes from, as written (`source`)."""
    found: dict[Term, None] = {}
    for source in _word_list(query):
        for word in _word_list(fold(source)):
            for term in _term(word, source):
                found.setdefault(term, None)
    kept: list[Term] = []
    held = 0
    for term in list(found)[:MAX_TERMS]:
        held += len(term.words)
        if held > MAX_QUERY_WORDS:
            break
        kept.append(term)
    return kept


_TITLE_BODY = "{title_words body_words}"


def _fts5_phrase(words: tuple[str, ...], prefix: bool) -> str:
    return '"' + " ".join(words) + '"' + ("*" if prefix else "")


def _fts5_term(term: Term, guess: bool) -> str:
    exact = f"{_TITLE_BODY} : {_fts5_phrase(term.words, term.prefix)}"
    if not guess:
        return exact
    parts = [exact]
    if term.forms:
        parts.append("{title_words body_words form_words} : (" + " OR ".join(f'"{form}"' for form in term.forms) + ")")
    if term.tails:
        parts.append("{tail_words} : (" + " OR ".join(f'"{tail}"*' for tail in term.tails) + ")")
    for way in term.pieces:
        parts.append(f"{_TITLE_BODY} : (" + " AND ".join(_fts5_phrase(piece, False) for piece in way) + ")")
    for head, tail in term.splits:
        parts.append("{title_words body_words form_words} : ((" + " OR ".join(f'"{form}"' for form in head)
                     + ") AND (" + " OR ".join(f'"{form}"' for form in tail) + "))")
    return "(" + " OR ".join(parts) + ")"


def fts5_query(found: list[Term], *, every: bool, guess: bool = False) -> str:
    """An FTS5 MATCH expression over the title and body words: every term (or any, `every=False`),
    each a quoted phrase; with `guess`, a term is also found by its forms (the index's form_words
    and tail_words columns) and a CJK phrase by its pieces."""
    return (" AND " if every else " OR ").join(_fts5_term(term, guess) for term in found)


# PostgreSQL keeps a page's words and its forms in one tsvector; a form is written with FORM_MARK
# before it and an ending with TAIL_MARK (search_index), so that a query for a word as written asks
# no weight: a tsquery with weights makes the GIN index recheck every matching row's tsvector (a
# word half the pages hold took 0.9 s instead of 60 ms). Forms and endings are letters only, and
# no word of a page starts with these marks but by coincidence (a word such as "0fab").
FORM_MARK, TAIL_MARK = "0f", "0t"


def _ts_phrase(words: tuple[str, ...], prefix: bool) -> str:
    lexemes = [f"'{word}'" for word in words]
    if prefix:
        lexemes[-1] += ":*"
    return "(" + " <-> ".join(lexemes) + ")"


def _ts_any_form(forms: tuple[str, ...]) -> str:
    return "(" + " | ".join(f"'{form}' | '{FORM_MARK}{form}'" for form in forms) + ")"


def _ts_term(term: Term, guess: bool) -> str:
    exact = _ts_phrase(term.words, term.prefix)
    if not guess:
        return exact
    parts = [exact]
    if term.forms:
        parts.append(_ts_any_form(term.forms))
    parts.extend(f"'{TAIL_MARK}{tail}':*" for tail in term.tails)
    for way in term.pieces:
        parts.append("(" + " & ".join(_ts_phrase(piece, False) for piece in way) + ")")
    for head, tail in term.splits:
        parts.append(f"({_ts_any_form(head)} & {_ts_any_form(tail)})")
    return "(" + " | ".join(parts) + ")"


def tsquery(found: list[Term], *, every: bool, guess: bool = False) -> str:
    """The same as a PostgreSQL tsquery text (for to_tsquery with the 'simple' configuration): the
    words as written, and with `guess` their forms (FORM_MARK) and endings (TAIL_MARK) too."""
    return (" & " if every else " | ").join(_ts_term(term, guess) for term in found)


SNIPPET_CHARS = 300
# What the snippets of one answer may fold and search for their terms, in all: past it a snippet is
# its text's start. A page's text is read 2,000 characters at a time and the first match ends the
# read, so an answer of pages that hold their words early costs little; 50 pages that hold none
# (a word only in their titles, 20,000 characters each) cost a tenth of what they did unbounded.
SNIPPET_BUDGET = 150_000
SNIPPET_CHUNK = 2_000


class ScanBudget:
    """The characters an answer's snippets may still read (SNIPPET_BUDGET), shared by them."""

    def __init__(self, chars: int = SNIPPET_BUDGET) -> None:
        self.left = chars


def snippet(text: str, found: list[Term], size: int = SNIPPET_CHARS, budget: ScanBudget | None = None) -> str:
    """About `size` characters of `text` (whitespace collapsed) around the first place a term
    occurs, cut at spaces, with "…" where text was left out; the start of the text when no term
    is found (a match in the title only) or `budget` runs out before one is. Only the window shown
    is collapsed: the text is searched as it is."""
    if len(text) <= 2 * size:
        flat = " ".join(text.split())
        if len(flat) <= size:
            return flat
    budget = budget or ScanBudget()
    at = _first_match(text, _pattern(tuple(found)), found, budget)
    if at is None and any(term.guessable for term in found):  # found by a form only
        at = _first_match(text, _guess_pattern(tuple(found)), found, budget)
    at = at or 0
    before, after, low, high = _around(text, at, size)
    flat = before + after
    if low == 0 and high == len(text) and len(flat) <= size:  # the whole text, collapsed, fits
        return flat
    start = max(0, len(before) - size // 3)
    if start:
        space = flat.find(" ", start, len(before)) if len(before) > start else -1
        start = space + 1 if space >= 0 else start
    end = min(len(flat), start + size)
    if end < len(flat):
        space = flat.rfind(" ", start + size // 2, end)
        end = space if space > 0 else end
    earlier = start > 0 or bool(text[:low].strip())
    later = end < len(flat) or bool(text[high:].strip())
    return ("…" if earlier else "") + flat[start:end] + ("…" if later else "")


def _around(text: str, at: int, size: int) -> tuple[str, str, int, int]:
    """The text before `at` and from it, whitespace collapsed, each as long as a snippet could show
    (read back and forth in growing steps: a long run of spaces costs its length, once), and where
    the two begin and end in `text`."""
    reach = size
    while True:
        low = max(0, at - reach)
        piece = text[low:at]
        before = " ".join(piece.split())
        if before and piece[-1].isspace():
            before += " "
        if len(before) > size or low == 0:
            break
        reach *= 4
    reach = 2 * size
    while True:
        high = min(len(text), at + reach)
        after = " ".join(text[at:high].split())
        if len(after) > 2 * size or high == len(text):
            break
        reach *= 4
    return before, after, low, high


def _unspaced_mark(code: int) -> bool:
    """Whether a combining mark belongs to a letter of a script whose marks fold keeps (Indic,
    Thai, Tibetan, kana...): read alone, a mark has no base for fold to judge it by."""
    return (0x0900 <= code < 0x1AB0 or 0x1B00 <= code < 0x1DC0 or code >= 0x2E80) and not 0xFE20 <= code <= 0xFE2F


class _CharFold(dict[int, str]):
    """Each character folded alone, for `str.translate`: É -> e, Ａ -> a, ß -> ss, a combining accent
    -> "" (a vowel sign of an Indic script kept)."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        folded = fold(char)
        if not folded and unicodedata.combining(char) and _unspaced_mark(code):
            folded = char
        self[code] = folded
        return folded


_CHAR_FOLD = _CharFold()


def _first_match(flat: str, pattern: re.Pattern[str] | None, found: list[Term], budget: ScanBudget) -> int | None:
    """Where in `flat` (a text) `pattern` (of `found`'s words) first matches (None when it does not,
    or not within `budget`), read SNIPPET_CHUNK characters at a time (each piece with the letter
    before it and its marks, for the word-start check, and a margin past it, for a word across the cut)."""
    if pattern is None:
        return None
    margin = 2 * max(len(term.words[0]) + len(term.words) + max(map(len, term.forms), default=0)
                     for term in found) + 8
    for start in range(0, len(flat), SNIPPET_CHUNK):
        if budget.left <= 0:
            return None
        before = 0
        if start:  # back to the last character before the cut that is no combining mark
            before = 1
            while before < start and before < 16 and unicodedata.combining(flat[start - before]):
                before += 1
        piece = flat[start - before:start + SNIPPET_CHUNK + margin]
        budget.left -= len(piece)
        at = _match_in(piece, pattern, before)
        if at is not None:
            return start - before + at
    return None


def _match_in(piece: str, pattern: re.Pattern[str], skip: int) -> int | None:
    """Where in `piece` (from `skip`) the pattern matches its folded text: each character folded
    alone (str.translate over a table of the characters seen), the places mapped back where a
    character folds to more or fewer (ß, a decomposed accent); one regex scan. Linear in the text
    (folding a character at a time in Python took 18 ms for a 20,000-character page)."""
    if piece.isascii():  # folded, ASCII is lowercased: every character keeps its place
        match = pattern.search(piece.lower(), skip)
        return match.start() if match else None
    if all(len(_CHAR_FOLD[ord(char)]) == 1 for char in set(piece)):
        match = pattern.search(piece.translate(_CHAR_FOLD), skip)
        return match.start() if match else None
    match = pattern.search(piece.translate(_CHAR_FOLD), len(piece[:skip].translate(_CHAR_FOLD)))
    if not match:
        return None
    ends = list(accumulate(map(len, map(_CHAR_FOLD.__getitem__, map(ord, piece)))))  # places back
    return bisect_right(ends, match.start())


@lru_cache(maxsize=256)
def _pattern(found: tuple[Term, ...]) -> re.Pattern[str] | None:
    """One regex for every term's text: a Latin (or other spaced script's) word at a word's start,
    a CJK one anywhere."""
    spaced: list[str] = []
    unspaced: list[str] = []
    for term in found:
        needle = re.escape(term.words[0] + "".join(word[-1] for word in term.words[1:]))
        (unspaced if _CJK_CHAR.match(term.words[0]) else spaced).append(needle)
    parts = ([r"(?<![^\W_])(?:" + "|".join(spaced) + ")"] if spaced else []) + (
        ["(?:" + "|".join(unspaced) + ")"] if unspaced else [])
    return re.compile("|".join(parts)) if parts else None


@lru_cache(maxsize=256)
def _guess_pattern(found: tuple[Term, ...]) -> re.Pattern[str] | None:
    """One regex for what finds the terms by a guess: a form at a word's start (a stem, a
    compound's beginning), an ending or a Hebrew form inside a word, a CJK phrase's first piece."""
    starts: list[str] = []
    inside: list[str] = []
    for term in found:
        for form in term.forms:
            if len(form) >= search_forms.MIN_STEM:
                (inside if search_forms.is_hebrew(form) else starts).append(re.escape(form))
        inside.extend(re.escape(tail[::-1]) for tail in term.tails if len(tail) >= search_forms.MIN_HEAD)
        for way in term.pieces:
            first = way[0]
            inside.append(re.escape(first[0] + "".join(pair[-1] for pair in first[1:])))
        for head, tail in term.splits:
            starts.extend(re.escape(form) for form in (*head, *tail) if len(form) >= search_forms.MIN_HEAD)
    parts = ([r"(?<![^\W_])(?:" + "|".join(starts) + ")"] if starts else []) + (
        ["(?:" + "|".join(inside) + ")"] if inside else [])
    return re.compile("|".join(parts)) if parts else None
