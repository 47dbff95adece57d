"""Lines that are only a widget's words, in the languages the service meets: an advertisement's
label left standing in the article ("Anzeige", "ADVERTISEMENT", "Story continues below
advertisement"), a share bar's ("Share this story", "Teilen · Drucken · Merken", "Partager sur
Facebook") or a call to action's ("Read more »", "Jetzt abonnieren", "Report this comment"). Read
on the rendered blocks (render.py), so a page pays for a few short strings, not a walk of its
content."""

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
# A call to action or a pointer elsewhere, the whole line: a button's or a link's words standing
# alone ("Read more", "Jetzt abonnieren", "Report this comment", "Lire la suite"). Phrases only:
# a word alone ("Download", "Comments", "Next") is also a section's title or a table's label, and
# so are "Get started" and "Contact us" in bold on a landing page (the references keep them).
_ACTIONS = frozenset({
    "read more", "read on", "read the full story", "read full story", "full story", "continue reading",
    "keep reading", "read full article", "read the full article", "read the rest", "read the rest of this entry",
    "view more", "see more", "show more", "load more", "learn more", "find out more", "click here",
    "click to order", "order now", "buy now", "shop now", "add to cart", "add to basket", "add to bag",
    "add to wishlist", "subscribe now", "sign up now", "sign up today", "join now", "register now",
    "download now", "download the app", "get the app", "donate now", "try it free",
    "start free trial", "start your free trial", "book a demo", "request a demo",
    "post a comment", "leave a comment", "add a comment", "write a comment", "add comment", "post comment",
    "report this comment", "report comment", "report abuse", "view larger", "larger picture",
    "view larger image", "view gallery", "view all", "see all", "back to top", "return to top", "top of page",
    "previous article", "next article", "previous post", "next post", "print this page", "print this article",
    "email this article", "sign in to comment", "log in to comment", "log in to reply", "newsletter sign up",
    "sign up for our newsletter", "subscribe to our newsletter", "read comments", "view comments",
    "show comments", "hide comments", "more stories", "more news",
    "weiterlesen", "mehr lesen", "mehr erfahren", "jetzt mehr erfahren", "mehr dazu", "mehr anzeigen",
    "jetzt abonnieren", "jetzt lesen", "jetzt kaufen", "in den warenkorb", "jetzt bestellen", "jetzt registrieren",
    "jetzt anmelden", "newsletter abonnieren", "zum newsletter", "jetzt spenden",
    "kommentar schreiben", "kommentar melden", "kommentare anzeigen", "kommentare lesen", "nach oben",
    "zurück nach oben", "zum seitenanfang", "alle anzeigen", "alle artikel", "bild vergrößern", "zur startseite",
    "zum artikel", "zum beitrag", "artikel lesen", "app herunterladen", "jetzt herunterladen", "jetzt testen",
    "kostenlos testen", "gratis testen", "hier klicken", "zum shop", "jetzt entdecken",
    "lire la suite", "en savoir plus", "lire plus", "je m abonne", "abonnez vous", "inscrivez vous",
    "ajouter au panier", "faire un don", "voir plus", "voir tout", "haut de page",
    "retour en haut", "lire l article",
})
# What a conversion widget's button says, the whole of it (action_boxes: the box goes with it).
# Words alone among them ("Subscribe", "Donate") are a button's only inside such a box.
CONVERSIONS = frozenset({
    "subscribe", "subscribe now", "subscribe today", "sign up", "sign up now", "sign up today", "join now",
    "register now", "donate", "donate now", "download the app", "get the app", "buy now", "order now",
    "try it free", "start free trial", "start your free trial", "get access", "get full access",
    "abonnieren", "jetzt abonnieren", "abo abschließen", "jetzt abo abschließen", "jetzt anmelden",
    "jetzt registrieren", "jetzt spenden", "app herunterladen", "jetzt herunterladen", "jetzt kaufen",
    "jetzt bestellen", "jetzt testen", "kostenlos testen", "gratis testen", "weiterlesen mit abo",
    "je m abonne", "abonnez vous", "s abonner", "faire un don", "essayer gratuitement",
})
# A photo's credit on a line of its own, outside any <figure> ("Foto: Max Muster / dpa", "Photo by
# Jane Doe/Reuters", "Bild: Getty Images", "Credit: NASA/ESA"): the word, then its name (after "by"
# or "von", a capital: "Bilder von der Feier" is a title), this short
_CREDIT = re.compile(
    r"[(\[]?\s*(?:fotos?|photos?|bild(?:er)?|images?|credits?|pictures?|illustration|grafik|fotocredit|bildquelle|"
    r"(?:photo|image|foto|bild)\s*credits?)\s*(?::\s*\S|©|(?-i:\s+(?:[Bb]y|von)\s+[A-ZÄÖÜ]))", re.IGNORECASE)
_CREDIT_CHARS, _CREDIT_WORDS = 80, 10
_CREDIT_WORDS_FIRST = ("foto", "photo", "bild", "image", "credit", "picture", "illustration", "grafik")
LINE_CHARS = 120  # longer lines are never only a widget's words
_NOT_WORD = re.compile(r"[\W_]+")
_NOT_WORD_OR_DIGIT = re.compile(r"[\W\d_]+")


def line_words(text: str, digits: bool = True) -> str:
    """text's words in lower case, one space between (its punctuation, and its digits unless
    `digits`, read as spaces): what the phrases here are written as."""
    return (_NOT_WORD if digits else _NOT_WORD_OR_DIGIT).sub(" ", text.lower()).strip()


def widget_line(text: str) -> bool:
    """text (a line LINE_CHARS long at most) says only an advertisement's label, a share bar's
    words, a call to action or a photo's credit."""
    words = line_words(text)
    if words in _AD_LABELS or words in _ACTIONS:
        return True
    if (len(text) <= _CREDIT_CHARS and words.startswith(_CREDIT_WORDS_FIRST) and text.count(" ") < _CREDIT_WORDS
            and _CREDIT.match(text.lstrip())):
        return True
    found = [word for word in words.split() if not word.isdigit()]
    return (bool(found) and all(word in _SHARE_WORDS for word in found)
            and any(word in _SHARE_ACTIONS for word in found)
            and (len(found) > 1 or found[0] in _SHARE_VERBS))


# A language's two commonest words, spaced, as a lowered text holds them: a text without either is
# not searched for that language's phrases (titled_boxes, bio_boxes). A phrase a text lacks costs a
# scan of all of it; a word it holds stops the scan near its start.
_LANGUAGE_WORDS = {"de": (" und ", " der "), "en": (" the ", " and "), "fr": (" de ", " la ")}
LANGUAGES = frozenset(_LANGUAGE_WORDS)
# A text this long in one of LANGUAGES holds its two commonest words (a page's text in Chinese,
# Hebrew or Russian holds none, and is then not searched for those languages' phrases at all)
_TELLS_CHARS = 2_000


def text_languages(lowered: str) -> frozenset[str]:
    """The languages of LANGUAGES whose phrases `lowered` may hold; all of them when it holds none
    of their words and is too short to tell, none when it is long enough."""
    found = frozenset(language for language, words in _LANGUAGE_WORDS.items() if any(word in lowered for word in words))
    return found or (LANGUAGES if len(lowered) < _TELLS_CHARS else frozenset())
