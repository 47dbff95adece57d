"""Bylines, date lines and reading-time lines, known by their shape in every language the service reads.

A short block that is only a byline ("By Jane Doe", "Par Jean Dupont", "מאת דנה לוי", "作者：李明"),
a date or time ("Publié le 12/03/2024 à 10h15"), a reading time ("Lesezeit: 4 Minuten"), or some of
them together ("By Jane Doe · 5 min read") is furniture, whatever its element is named. Prose that
only starts with a byline's word ("By 2030 the city plans ...", "Par ailleurs, ...") or mentions a
date is not: every word of the line must be accounted for.

How a line is read (is_byline_line):
1. dates and reading times (the patterns of LANGUAGES, all languages at once) become a mark, and
   so do times of day (a weaker mark: a time alone is a schedule's, not a date line);
2. separators (, ; : | · • – — / and brackets) become spaces;
3. every word left must be a mark, a word that goes with dates ("Published", "am", "le", "à", a
   weekday), or part of a byline: a lead ("By", "Von", "מאת", "作者") and a name after it
   (capitalized words, with particles such as "van" or "de" among them and "and" between names;
   Hebrew words; two to four Han characters or katakana);
4. the line needs a date, a reading time or a byline, and at most MAX_CHARS characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    by: tuple[str, ...]  # byline leads, before a name (several words allowed)
    dated: tuple[str, ...]  # words that go with a date or time, weekdays among them
    months: tuple[str, ...]  # month names and abbreviations
    reading: tuple[str, ...]  # reading-time patterns: N stands for a number, MIN for a minute word
    ago: tuple[str, ...] = ()  # relative dates: N and a unit
    joins: tuple[str, ...] = ()  # particles inside a name ("van", "de") and words between names ("and")
    after: tuple[str, ...] = ()  # words after a name that end a byline ("报道")


# Abbreviations with their dot are matched as words (the dot is optional after every month name).
LANGUAGES: dict[str, Language] = {
    "en": Language(
        by=("by", "written by", "words by", "story by", "posted by", "author", "authors"),
        dated=("published", "updated", "posted", "last", "modified", "first", "on", "at", "date",
               "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
               "mon", "tue", "tues", "wed", "thu", "thurs", "fri", "sat", "sun"),
        months=("january", "february", "march", "april", "may", "june", "july", "august", "september",
                "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
                "sept", "oct", "nov", "dec"),
        reading=(r"N -?MIN\.? read(?:ing)?(?: time)?", r"reading time:? (?:about )?N ?MIN\.?"),
        ago=(r"N (?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?) ago",),
        joins=("and", "&", "van", "de", "der", "den", "von", "du", "da", "di", "del", "la", "le", "st.", "mc"),
    ),
    "de": Language(
        by=("von", "text", "autor", "autorin", "ein beitrag von", "geschrieben von"),
        dated=("veröffentlicht", "aktualisiert", "zuletzt", "geändert", "erstellt", "erschienen", "stand",
               "am", "um", "vom", "uhr", "datum", "montag", "dienstag", "mittwoch", "donnerstag", "freitag",
               "samstag", "sonnabend", "sonntag"),
        months=("januar", "jänner", "februar", "märz", "april", "mai", "juni", "juli", "august", "september",
                "oktober", "november", "dezember", "jan", "feb", "mär", "apr", "jun", "jul", "aug", "sep", "sept",
                "okt", "nov", "dez"),
        reading=(r"lese(?:zeit|dauer):? (?:ca\. )?N ?MIN\.?", r"N ?MIN\.? lese(?:zeit|dauer)"),
        ago=(r"vor N (?:sekunden|minuten|min\.?|stunden|std\.?|tagen|wochen|monaten|jahren)",),
        joins=("und", "von", "zu", "vom", "der"),
    ),
    "fr": Language(
        by=("par", "écrit par", "rédigé par", "texte", "auteur", "autrice", "propos recueillis par"),
        dated=("publié", "publiée", "mis", "mise", "à", "jour", "modifié", "modifiée", "actualisé", "le",
               "en", "ligne", "date", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
        months=("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
                "octobre", "novembre", "décembre", "janv", "févr", "fév", "avr", "juil", "sept", "oct",
                "nov", "déc"),
        reading=(r"N ?MIN\.? de lecture", r"(?:temps de )?lecture:? N ?MIN\.?"),
        ago=(r"il y a N (?:secondes?|minutes?|min|heures?|h|jours?|semaines?|mois|ans?)",),
        joins=("et", "de", "du", "des", "la", "le", "d'"),
    ),
    "es": Language(
        by=("por", "escrito por", "autor", "autora", "texto"),
        dated=("publicado", "publicada", "actualizado", "actualizada", "el", "a", "las", "la", "fecha",
               "lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
        months=("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
                "setiembre", "octubre", "noviembre", "diciembre", "ene", "abr", "ago", "dic"),
        reading=(r"N ?MIN\.? de lectura", r"(?:tiempo de )?lectura:? (?:de )?N ?MIN\.?"),
        ago=(r"hace N (?:segundos?|minutos?|min|horas?|h|días?|semanas?|meses|mes|años?)",),
        joins=("y", "de", "del", "la", "las", "los"),
    ),
    "it": Language(
        by=("di", "a cura di", "scritto da", "autore", "autrice", "testo"),
        dated=("pubblicato", "pubblicata", "aggiornato", "aggiornata", "il", "alle", "ore", "data", "del",
               "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"),
        months=("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
                "ottobre", "novembre", "dicembre", "gen", "mag", "giu", "lug", "ago", "set", "ott", "dic"),
        reading=(r"N ?MIN\.? di lettura", r"(?:tempo di )?lettura:? N ?MIN\.?"),
        ago=(r"N (?:secondi|minuti|min|ore|giorni|settimane|mesi|anni) fa",),
        joins=("e", "di", "de", "del", "della", "da"),
    ),
    "nl": Language(
        by=("door", "geschreven door", "tekst", "auteur"),
        dated=("gepubliceerd", "bijgewerkt", "geplaatst", "aangepast", "laatst", "op", "om", "uur", "datum",
               "maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"),
        months=("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september",
                "oktober", "november", "december", "mrt", "okt"),
        reading=(r"N ?MIN\.? lee(?:stijd|sduur)", r"lee(?:stijd|sduur):? N ?MIN\.?", r"N ?MIN\.? lezen"),
        ago=(r"N (?:seconden|minuten|min|uur|dagen|weken|maanden|jaar) geleden",),
        joins=("en", "van", "de", "der", "den", "ter", "ten", "het", "'t"),
    ),
    "pt": Language(
        by=("por", "escrito por", "autor", "autora", "texto"),
        dated=("publicado", "publicada", "atualizado", "atualizada", "em", "às", "as", "de", "data",
               "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo"),
        months=("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro",
                "outubro", "novembro", "dezembro", "fev", "set", "out", "dez"),
        reading=(r"N ?MIN\.? de leitura", r"(?:tempo de )?leitura:? N ?MIN\.?"),
        ago=(r"há N (?:segundos?|minutos?|min|horas?|h|dias?|semanas?|meses|mês|anos?)",),
        joins=("e", "de", "da", "do", "das", "dos"),
    ),
    "he": Language(
        by=("מאת", "כתב", "כתבה", "כתבת"),
        dated=("פורסם", "פורסמה", "עודכן", "עודכנה", "עדכון", "תאריך", "בשעה", "ב", "ב-", "יום", "ראשון",
               "שני", "שלישי", "רביעי", "חמישי", "שישי", "שבת"),
        months=("ינואר", "פברואר", "מרץ", "מרס", "אפריל", "מאי", "יוני", "יולי", "אוגוסט", "ספטמבר",
                "אוקטובר", "נובמבר", "דצמבר"),
        reading=(r"זמן קריאה:? N ?MIN", r"N ?MIN קריאה"),
        ago=(r"לפני N (?:דקות|שעות|ימים|שבועות|חודשים|שנים)",),
    ),
    "zh": Language(
        by=("作者", "记者", "本报记者", "文", "撰文", "编辑", "责任编辑", "記者", "編輯", "責任編輯"),
        dated=("发布时间", "发布于", "发表于", "发布日期", "更新时间", "更新于", "时间", "日期", "发布", "更新",
               "發佈時間", "發表於", "更新時間", "上午", "下午", "星期一", "星期二", "星期三", "星期四",
               "星期五", "星期六", "星期日", "星期天", "周一", "周二", "周三", "周四", "周五", "周六", "周日"),
        months=(),
        reading=(r"(?:阅读|閱讀)(?:时间|时长|時間)?[:：]? ?约? ?N ?分钟", r"约? ?N ?分钟(?:阅读|读完|閱讀)"),
        ago=(r"N ?(?:秒|分钟|小时|天|周|个月|年)前",),
        after=("报道", "報導", "摄", "攝"),
    ),
    "ja": Language(
        by=("文", "著者", "執筆", "執筆者", "筆者", "記者", "取材・文"),
        dated=("公開日", "更新日", "投稿日", "最終更新日", "公開", "更新", "投稿", "配信", "日時", "月", "火",
               "水", "木", "金", "土", "日"),
        months=(),
        reading=(r"(?:この記事は)?約? ?N ?分で読めます", r"読了(?:時間|目安)[:：]? ?約? ?N ?分"),
        ago=(r"N ?(?:秒|分|時間|日|週間|か月|ヶ月|年)前",),
    ),
}

MAX_CHARS = 200  # a longer line is prose, or more than a byline
_MAX_SPACES = 24  # ...and so is one of more words than this
_MAX_NAME_WORDS = 5  # words in one name, particles not counted ("Jean-Luc de La Fontaine")
_MAX_HEBREW_NAME = 4  # Hebrew words after a lead ("מאת דנה לוי ויוסי כהן"): Hebrew has no capitals
_MAX_NAMES = 4  # names after one lead, between commas or joined by "and"
_MAX_PARTICLES = 3  # "van der", "de la"
_MINUTE = r"(?:minutes?|minuten?|minuti|minuto|minutos?|min|mins|דקות|דקה|ד')"
_NUMBER = r"\d{1,3}(?:\s?[-–]\s?\d{1,3})?"
_LIST = re.compile(r"[,;|·•/，、；／]|\s[-–—&]\s")  # between names: kept as a comma
_SEPARATORS = re.compile(r"[:()\[\]{}«»\"“”„：（）「」【】《》–—]|\.(?=\s|$)")
_STRONG, _WEAK, _COMMA = " \x01 ", " \x02 ", " , "  # a date or reading time; a time of day; a list's comma
_SKIPPED = frozenset({_STRONG.strip(), _WEAK.strip(), _COMMA.strip()})
_CJK_NAME = re.compile(r"[\u3400-\u9fff\u30a0-\u30ff々]{2,4}")
_HEBREW_WORD = re.compile("[\u05d0-\u05ea][\u05d0-\u05ea'\"׳״-]*")
_NAME_MARKS = frozenset("'’.-")


def _compile(group: Callable[[set[str]], str] | None = None) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """group: what writes the month names as one group (_trie)."""
    months = {m for language in LANGUAGES.values() for m in language.months}
    month = r"(?:ב-?)?" + (group or _trie)(months) + r"\b\.?"
    day = r"\d{1,2}(?:st|nd|rd|th|er|º|°)?\.?"
    year = r"\d{4}"
    dates = [
        rf"{day}\s*(?:de\s+)?{month}(?:,?\s*(?:de\s+)?{year})?",  # 3 mars 2024, 3. März 2024, 3 de marzo de 2024
        rf"{month}\s*(?:\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s*{year})?|(?:de\s+)?{year})",  # March 3, 2024; March 2024
        r"\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})",  # 12/03/2024, 3.3.24
        r"\d{4}[./-]\d{1,2}[./-]\d{1,2}(?:T\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
        r"(?:\d{4}\s*年\s*)?\d{1,2}\s*月\s*\d{1,2}\s*日",  # 2024年3月3日
    ]
    phrases = [p for language in LANGUAGES.values() for p in (*language.reading, *language.ago)]
    phrases = [p.replace(" ", r"\s*").replace("MIN", _MINUTE).replace("N", _NUMBER) for p in phrases]
    strong = re.compile(r"(?<!\w)(?:" + "|".join(phrases + dates) + r")(?!\w)", re.IGNORECASE)
    weak = re.compile(
        r"(?<!\w)(?:\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?|h|uhr|hrs|uur)?|\d{1,2}[.h]\d{2}\s*(?:uhr|h)"
        r"|\d{1,2}h\d{2}|\d{1,2}\s*(?:[ap]\.?m\.?|uhr)|\d{1,2}\s*[时時]\s*\d{1,2}\s*分)"
        r"(?:\s*(?:utc|gmt|cet|cest|mez|mesz|et|est|edt|pt|pst|pdt|bst))?(?!\w)",
        re.IGNORECASE,
    )
    return strong, weak


def _trie(words: set[str]) -> str:
    """One group matching any of words, the longest first, their shared beginnings written once
    (the regex engine tries an alternation's branches one by one: 150 month names at every word)."""
    if "" in words and len(words) == 1:
        return ""
    heads: dict[str, set[str]] = {}
    for word in words:
        if word:
            heads.setdefault(word[0], set()).add(word[1:])
    branches = [re.escape(head) + _trie(rests) for head, rests in sorted(heads.items())]
    group = "(?:" + "|".join(branches) + ")"
    return group + "?" if "" in words else group


_DATES, _TIMES = _compile()
_LEADS = frozenset(" ".join(lead.split()) for language in LANGUAGES.values() for lead in language.by)
_LONGEST_LEAD = max(len(lead.split()) for lead in _LEADS)
_CJK_LEADS = tuple(lead for lead in _LEADS if len(lead) >= 2 and _CJK_NAME.fullmatch(lead))  # "记者王芳"
_DIGIT = re.compile(r"\d")
_ASCII_DIGIT = re.compile("[0-9]")  # (\d in ASCII text: a range sre skips along in a loop of its own)
# A lead's first word at the start, as one group (_trie): sre tries an alternation's 51 branches
# one by one. Only ever asked whether it matches, for which the branches' order does not count.
_LEAD_START = re.compile(r"\W*" + _trie({lead.split()[0] for lead in _LEADS}), re.IGNORECASE)
_FILLERS = frozenset(word for language in LANGUAGES.values() for word in language.dated)
_JOINS = frozenset(word for language in LANGUAGES.values() for word in language.joins)
_AFTER = frozenset(word for language in LANGUAGES.values() for word in language.after)
# Never a word of a name: a date's word, a particle or an article ("By The Numbers")
_NOT_NAMES = _FILLERS | _JOINS | _LEADS | {"the", "a", "an", "der", "die", "das", "les", "los", "il", "lo", "het", "een"}


def is_byline_line(text: str, names: bool = True) -> bool:
    """Whether text (one block's, lines joined by newlines) is only a byline, a date or time, a
    reading time, or some of them (see the module docstring); names=False: only a date or time, a
    reading time, or both (no byline)."""
    if len(text) > MAX_CHARS or text.count(" ") > _MAX_SPACES:
        text = " ".join(text.split())  # (as the reader sees it: a template's indentation is not the line's)
        if len(text) > MAX_CHARS or text.count(" ") > _MAX_SPACES:
            return False
    if not text.strip():
        return False
    digits = _has_digit(text)
    if not digits and (not names or not _LEAD_START.match(text)):
        return False  # (no date nor reading time, and no lead: most lines end here, before the patterns)
    # every date, time and reading-time pattern holds a digit: a line without one has nothing for
    # them to mark (a sentence that opens with "A" or "By" cost the two searches 100 µs)
    marked = _TIMES.sub(_WEAK, _DATES.sub(_STRONG, text)) if digits else text
    found = _STRONG in marked
    marked = _SEPARATORS.sub(" ", _LIST.sub(_COMMA, marked))
    words = [w for w in marked.split() if w in _SKIPPED or any(c.isalnum() for c in w)]
    at = 0
    while at < len(words):
        word = words[at]
        if word in _SKIPPED or word.casefold() in _FILLERS:
            at += 1
            continue
        if not names:
            return False
        end = _byline_end(words, at)
        if end is None:
            return False
        found, at = True, end
    return found


def _has_digit(text: str) -> bool:
    return (_ASCII_DIGIT if text.isascii() else _DIGIT).search(text) is not None


def _byline_end(words: list[str], at: int) -> int | None:
    """Where a byline starting at words[at] ends (a lead, then names), or None when none starts there."""
    for size in range(min(_LONGEST_LEAD, len(words) - at), 0, -1):
        if " ".join(words[at : at + size]).casefold() in _LEADS:
            start = at + size + (at + size < len(words) and words[at + size] == ",")  # "文/张伟"
            end = _names_end(words, start)
            if end is not None:
                return end
    word = words[at]
    for lead in _CJK_LEADS:  # a lead written together with the name: "记者王芳"
        if word.startswith(lead) and _CJK_NAME.fullmatch(word[len(lead) :]):
            return _names_end(words, at + 1, first_end=at + 1)
    return None


def _names_end(words: list[str], at: int, first_end: int | None = None) -> int | None:
    """Where the names from words[at] end (None when no name is there): names between commas or
    joined by "and", then a closing word ("报道")."""
    end = _name_end(words, at) if first_end is None else first_end
    if end is None:
        return None
    names = 1
    while end + 1 < len(words) and names < _MAX_NAMES and (words[end] == "," or words[end].casefold() in _JOINS):
        following = _name_end(words, end + 1)
        if following is None:
            break
        end, names = following, names + 1
    if end < len(words) and words[end] in _AFTER:
        end += 1
    return end


def _name_end(words: list[str], at: int) -> int | None:
    """Where one name from words[at] ends, or None when none starts there."""
    if at >= len(words) or not _name_word(words[at]) or _not_a_name(words[at]):
        return None
    first = words[at]
    if _CJK_NAME.fullmatch(first):  # family and given name may stand apart: "山田 太郎"
        following = words[at + 1] if at + 1 < len(words) else ""
        return at + 2 if _CJK_NAME.fullmatch(following) and following not in _AFTER else at + 1
    if _HEBREW_WORD.fullmatch(first):
        end = at + 1
        while end < len(words) and end - at < _MAX_HEBREW_NAME and _HEBREW_WORD.fullmatch(words[end]):
            if words[end] in _FILLERS:
                break
            end += 1
        return end
    end, count = at + 1, 1
    while end < len(words) and count < _MAX_NAME_WORDS:
        particles = 0
        while end + particles < len(words) and particles < _MAX_PARTICLES and words[end + particles].casefold() in _JOINS:
            particles += 1
        after = end + particles
        if after >= len(words) or not _latin_name_word(words[after]):
            break
        end, count = after + 1, count + 1
    return end


def _not_a_name(word: str) -> bool:
    """A word of a date, a particle or an article: never a name's first word (Hebrew words are not
    told apart so: "שני" is a weekday and a name)."""
    return word.casefold() in _NOT_NAMES and not _HEBREW_WORD.fullmatch(word)


def _latin_name_word(word: str) -> bool:
    """A capitalized word of letters (initials, hyphens and apostrophes allowed) that is no date's word."""
    return word[0].isupper() and all(c.isalpha() or c in _NAME_MARKS for c in word) and word.casefold() not in _NOT_NAMES


def _name_word(word: str) -> bool:
    """A capitalized word of letters, a Hebrew word, or two to four Han characters or katakana."""
    if _HEBREW_WORD.fullmatch(word) or _CJK_NAME.fullmatch(word):
        return True
    return word[0].isupper() and all(c.isalpha() or c in _NAME_MARKS for c in word)
