"""Lines that are only a widget's words, in the languages the service meets: an advertisement's
label left standing in the article ("Anzeige", "ADVERTISEMENT", "Story continues below
advertisement") or a share bar's ("Share this story", "Teilen · Drucken · Merken", "Partager sur
Facebook"). Read on the rendered blocks (render.py), so a page pays for a few short strings, not a
walk of its content."""

from __future__ import annotations

import re

# A label: the whole line (lower case, its punctuation read as spaces) is one of these
_AD_LABELS = frozenset({
    "advertisement", "advertisements", "advertising", "advert", "sponsored", "sponsored content", "paid content",
    "advertisement continue reading below", "story continues below advertisement", "continue reading below",
    "article continues below advertisement", "advertisement scroll to continue with content",
    "anzeige", "werbung", "gesponsert", "weiterlesen nach der anzeige", "artikel wird unter der werbung fortgesetzt",
    "publicité", "publicite", "sponsorisé", "pubblicità", "pubblicita", "sponsorizzato", "publicidad",
    "patrocinado", "publicidade", "reklama", "reklame", "reklam", "reclame", "advertentie", "annonse",
    "annons", "mainos", "реклама", "פרסומת", "广告", "広告", "广告位",
})
# A share bar: every word one of these (numbers aside: its counts), one of them what it does or
# where it shares to; a word alone only when it is the verb ("Share", "Teilen", "Drucken")
_SHARE_VERBS = frozenset((
    "share", "tweet", "print", "email", "mail", "teilen", "drucken", "merken", "versenden", "partager",
    "imprimer", "envoyer", "condividi", "stampa", "compartir", "imprimir", "compartilhar", "delen", "printen",
    "udostępnij", "drukuj", "поделиться", "שתפו", "שתף", "分享", "打印",
))
_SHARE_ACTIONS = _SHARE_VERBS | frozenset(("facebook", "twitter", "whatsapp", "pinterest", "linkedin"))
_SHARE_WORDS = _SHARE_ACTIONS | frozenset((
    "e", "shares", "sharing", "this", "article", "story", "page", "post", "on", "via", "to", "with", "your",
    "friends", "x", "save", "copy", "link", "url", "reddit", "telegram", "xing", "flipboard", "messenger",
    "threads", "bluesky", "mastodon", "bookmark", "artikel", "den", "diesen", "auf", "per", "kopieren", "le",
    "lien", "cet", "sur", "par", "questo", "articolo", "este", "artículo", "en", "dit",
))
LINE_CHARS = 120  # longer lines are never only a widget's words
_NOT_WORD = re.compile(r"[\W_]+")


def widget_line(text: str) -> bool:
    """text (a line LINE_CHARS long at most) says only an advertisement's label or a share bar's words."""
    words = _NOT_WORD.sub(" ", text.lower()).strip()
    if words in _AD_LABELS:
        return True
    found = [word for word in words.split() if not word.isdigit()]
    return (bool(found) and all(word in _SHARE_WORDS for word in found)
            and any(word in _SHARE_ACTIONS for word in found)
            and (len(found) > 1 or found[0] in _SHARE_VERBS))
