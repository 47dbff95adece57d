"""Which elements are page furniture rather than content: by tag, role, hidden state, class and id.

Class and id values are split into tokens ("site-footer" -> site, footer; camelCase too). A token
marks boilerplate when its first or last part is a boilerplate word, so layout wrappers that only
mention one in the middle ("content-sidebar-wrap") and state modifiers ("has-sidebar") keep their
content. "comment-body" / "comment-content" stay: on a page whose content is a comment they are
the text, and inside a comment section the section itself is dropped already. Nor is an opinion
piece's kind ("article--comment", "tone-comment"), or a token that says the furniture is absent
("ad-free").
"""

from __future__ import annotations

import re
from functools import lru_cache

# Never text a reader wants, wherever they are.
SKIP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "nav", "aside", "iframe",
        "frame", "frameset", "button", "select", "option", "optgroup", "textarea", "input",
        "label", "object", "embed", "canvas", "video", "audio", "map", "dialog", "head", "link",
        "meta", "title", "base", "source", "track", "picture", "img", "datalist", "output",
        "progress", "meter", "menu", "area", "param", "rt", "rp",
    }
)  # fmt: skip
SECTIONING_TAGS = frozenset({"article", "main", "section", "aside", "nav", "blockquote", "figure"})
# Elements whose class or id never disqualify them: a page-wide class ("has-sidebar", "comments-open")
# says nothing about the element itself.
CLASS_EXEMPT_TAGS = frozenset({"html", "body", "main", "article"})
JUNK_ROLES = frozenset(
    {
        "navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar",
        "toolbar", "dialog", "alertdialog", "tablist", "form",
    }
)  # fmt: skip

_WORDS = frozenset(
    {
        "nav", "navbar", "navigation", "navlinks", "menu", "menubar", "submenu", "megamenu",
        "crumbs", "footer", "sidebar", "sidebars", "widget", "widgets", "banner", "adverts",
        "advertising", "ad", "ads", "adslot", "adunit", "dfp", "sponsor", "sponsored", "promo",
        "promotion", "promoted", "share", "sharing", "sharebar", "social", "socials", "related",
        "comment", "comments", "replies", "respond", "subscribe", "subscription", "signup",
        "popup", "modal", "overlay", "lightbox", "skip", "skiplink", "pagination", "pager",
        "toolbar", "masthead", "topbar", "dropdown", "tags", "tagcloud", "byline", "author",
        "recommended", "recommendations", "trending", "popular", "signature", "relatedposts",
        "sociallinks", "caption", "captions", "credits", "copyright", "attribution",
    }
)  # fmt: skip
# Words that mark furniture in any part of a token ("onetrust-consent-sdk"): no content wrapper
# is named after them.
_ANYWHERE_WORDS = frozenset(
    {
        "cookie", "cookies", "consent", "gdpr", "onetrust", "cookiebot", "advert",
        "advertisement", "adsense", "sharedaddy", "disqus", "outbrain", "taboola", "newsletter",
        "breadcrumb", "breadcrumbs",
    }
)  # fmt: skip
# Furniture only as the last part of a token: "image-credit", but not "credit-card-offers" ("credit"
# alone is in _WHOLE_TOKENS).
_LAST_WORDS = frozenset({"meta", "bio", "actions", "buttons", "icons", "credit"})
_WHOLE_TOKENS = frozenset(
    {
        "sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text", "screen-reader-only",
        "element-invisible", "offscreen",
        "site-header", "global-header", "top-header", "skip-link", "skip-to-content", "noprint",
        "mw-editsection", "credit",
    }
)  # fmt: skip
# Hidden for now, as a closed tab or accordion panel is: furniture unless it is such a panel (content.py)
_HIDDEN_TOKENS = frozenset({"hidden", "hide", "d-none", "is-hidden", "invisible"})
# Furniture also at the end of a word written without separators ("postcomments", "socialshare").
_JOINED_LAST = ("comments", "sharing", "sidebar")
# ...and at the start of one ("commentsblock", "commentslist"), but for a comment's own text
# ("commentsbody": see the module docstring). Not "comment": "commentary" is an opinion piece.
_JOINED_FIRST = ("comments",)
_JOINED_FIRST_KEPT = frozenset(f"comments{part}" for part in ("body", "content", "text"))
# As an id, "header" names the page header; as a class it often styles a heading's anchor.
_WHOLE_IDS = frozenset({"header"})
_MODIFIERS = ("has-", "with-", "no-", "is-", "show-", "hide-", "hidden-", "visible-")
# A place next to the page's header or footer ("above-footer") is not that furniture; anything else
# after the prefix is read as it is ("below-post-share").
_PLACES = ("above-", "below-", "before-", "after-")
_PLACED_NEXT_TO = frozenset({"footer", "header", "site-footer", "site-header", "nav", "navigation", "menu"})
_PREFIXES = frozenset({"c", "o", "l", "u", "m", "js", "wp", "g", "t", "jp", "td"})
_COMMENT_CONTENT = frozenset({"body", "content", "text"})
_POSITIVE = frozenset(
    {
        "article", "body", "content", "entry", "hentry", "main", "page", "post", "text", "blog",
        "story", "prose", "markdown", "richtext",
    }
)  # fmt: skip
_NEGATIVE = frozenset(
    {
        "meta", "foot", "footnote", "media", "contact", "scroll", "shoutbox", "shopping", "tool",
        "tools", "combx", "teaser", "card", "more", "date", "caption", "header", "hero",
    }
)  # fmt: skip
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_PARTS = re.compile(r"[-_]+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def _parts(token: str) -> list[str]:
    parts = [part for part in _PARTS.split(token) if part]
    while len(parts) > 1 and parts[0] in _PREFIXES:
        del parts[0]
    return parts


# "comment" is an opinion piece in British and German newsrooms' templates: as the piece's kind
# ("tone-comment") or as a modifier of the article's own block ("article--comment") it names the
# piece, not a comment
_KIND_PARTS = frozenset({"tone", "type", "genre", "format", "kind"})
# A token that says the furniture is absent ("ad-free", "navigation-free", "sidebar-less")
_ABSENT = frozenset({"free", "less"})


def _names_opinion(raw: str) -> bool:
    if not raw.endswith("comment"):
        return False
    block, modifier, _ = raw.rpartition("--")
    if modifier:
        parts = _parts(block)
        if parts and parts[-1] in _POSITIVE:
            return True
    parts = _parts(raw)
    return len(parts) > 1 and parts[-1] == "comment" and parts[-2] in _KIND_PARTS


def _names_absence(parts: list[str]) -> bool:
    return len(parts) > 1 and parts[-1] in _ABSENT


@lru_cache(maxsize=4096)
def marks_boilerplate(value: str, is_id: bool = False) -> bool:
    """True when a class or id value names page furniture (see the module docstring)."""
    return _marks(value, is_id, widget_last=True)


FURNITURE, COMMENT_BOX = 1, 2


@lru_cache(maxsize=4096)
def name_reading(value: str, is_id: bool = False) -> int:
    """FURNITURE when marks_boilerplate(value, is_id), | COMMENT_BOX when names_comment_box(value):
    both in one cached look-up, for the walk that reads every class and id."""
    return (FURNITURE if _marks(value, is_id, widget_last=True) else 0) | (
        COMMENT_BOX if names_comment_box(value) else 0
    )


_COMMENT = frozenset({"comment", "comments"})


def names_comment_box(value: str) -> bool:
    """True when a class or id value names a comment ("comment-body", "commentText",
    "commentsblock"), not as a page's state ("has-comments"): narrower than names_discussion, whose
    other words ("discussion", "responses", "feedback") name sections of papers and posts too."""
    for raw in _CAMEL.sub(r"\1-\2", value).lower().split():
        if raw.startswith(_MODIFIERS) or _names_opinion(raw):
            continue
        parts = _parts(raw)
        if not _COMMENT.isdisjoint(parts) or any(part.startswith(_JOINED_FIRST) for part in parts):
            return True
    return False


@lru_cache(maxsize=4096)
def marks_only_widget(value: str, is_id: bool = False) -> bool:
    """True when a class or id value names furniture only by ending a token in "widget": page
    builders name their content blocks so ("elementor-widget"), as some sidebars do theirs."""
    return _marks(value, is_id, widget_last=True) and not _marks(value, is_id, widget_last=False)


@lru_cache(maxsize=4096)
def marks_only_text_widget(value: str, is_id: bool = False) -> bool:
    """True when a class or id value names furniture only by a widget word, first or last in a
    token, and names a text widget ("widget widget_text", "widget_sow-editor": a page builder's
    block may hold the whole article)."""
    return (
        any(_names_text_widget(raw) for raw in value.lower().split())
        and _marks(value, is_id, widget_last=True)
        and not _marks(value, is_id, widget_last=True, widgets=False)
    )


_TEXT_KINDS = frozenset({"text", "editor", "sow"})


def _names_text_widget(raw: str) -> bool:
    parts = _parts(raw)
    return len(parts) > 1 and parts[0] in _WIDGET and parts[1] in _TEXT_KINDS


@lru_cache(maxsize=4096)
def marks_only_caption(value: str, is_id: bool = False) -> bool:
    """True when a class or id value names furniture only by calling it a caption, a credit or an
    attribution: galleries and photo posts put the text of the page in one, and so does a theme's
    broken caption markup."""
    return _marks(value, is_id, widget_last=True) and not _marks(value, is_id, widget_last=True, captions=False)


@lru_cache(maxsize=4096)
def names_caption(value: str) -> bool:
    """True when a class or id value calls the element a caption ("caption", "slide-captions"), not a
    credit or an attribution."""
    return any(
        not _CAPTION_WORD.isdisjoint(_parts(raw)) for raw in _CAMEL.sub(r"\1-\2", value).lower().split()
    )


_CAPTION_WORD = frozenset({"caption", "captions"})
_WIDGET = frozenset({"widget", "widgets"})
# A post's taxonomy classes (WordPress's post_class beside "hentry"): "tag-tax-credits",
# "category-social", "author-admin" name what the post is about, not furniture.
_TAXONOMY = ("tag-", "category-", "author-")
_CAPTION = frozenset({"caption", "captions", "credits", "attribution"})


@lru_cache(maxsize=4096)
def marks_only_hidden(value: str, is_id: bool = False) -> bool:
    """True when a class or id value names furniture only by hiding the element ("tab-pane hidden",
    "is-hidden"): a closed panel of tabs or an accordion is hidden so, and holds the page's text."""
    return _marks(value, is_id, widget_last=True) and not _marks(value, is_id, widget_last=True, hidden=False)


_PANEL_PARTS = frozenset({"accordion", "collapse", "collapsible", "tabpanel", "faq", "answer", "expandable"})
_PANEL_TOKENS = frozenset({"tab-pane", "tab-panel", "tab-content", "tabcontent", "tabs-panel", "tabs-content"})


@lru_cache(maxsize=4096)
def names_panel(value: str) -> bool:
    """True when a class value names a panel of tabs or an accordion ("tab-pane", "accordion__body",
    "faq-answer", Bootstrap's "collapse")."""
    for raw in _CAMEL.sub(r"\1-\2", value).lower().split():
        if raw in _PANEL_TOKENS or not _PANEL_PARTS.isdisjoint(_parts(raw)):
            return True
    return False


def _marks(
    value: str, is_id: bool, widget_last: bool, captions: bool = True, hidden: bool = True, widgets: bool = True
) -> bool:
    words = _WORDS if captions else _WORDS - _CAPTION
    words = words if widgets else words - _WIDGET
    tokens = _CAMEL.sub(r"\1-\2", value).lower().split()
    post = not is_id and "hentry" in tokens  # a post's classes name its tags and author: any word
    for raw in tokens:
        if post and raw.startswith(_TAXONOMY):
            continue
        if raw in _WHOLE_TOKENS or (is_id and raw in _WHOLE_IDS) or (hidden and raw in _HIDDEN_TOKENS):
            return True
        if raw.startswith(_MODIFIERS) or _names_opinion(raw):
            continue
        if raw.startswith(_PLACES):
            raw = raw.partition("-")[2]
            if raw in _PLACED_NEXT_TO:
                continue
        parts = _parts(raw)
        if not parts or _names_absence(parts):
            continue
        first, last = parts[0], parts[-1]
        if first in ("comment", "comments") and last in _COMMENT_CONTENT:
            continue
        if first in words or (last in words and (widget_last or last not in _WIDGET)):
            return True
        if len(parts) > 1 and last in _LAST_WORDS:
            return True
        if last.endswith(_JOINED_LAST) and last not in _JOINED_LAST:
            return True  # written as one word: "postcomments", "articlecomments"
        if first.startswith(_JOINED_FIRST) and first not in _JOINED_FIRST and first not in _JOINED_FIRST_KEPT:
            return True
        if not _ANYWHERE_WORDS.isdisjoint(parts):
            return True
    return False


@lru_cache(maxsize=4096)
def class_weight(value: str) -> int:
    """Readability's class weight: +25 for a content-like name, -25 for a peripheral one."""
    weight = 0
    for raw in _CAMEL.sub(r"\1-\2", value).lower().split():
        parts = set(_parts(raw))
        if parts & _POSITIVE:
            weight = max(weight, 25)
        if parts & _NEGATIVE or parts & _WORDS or parts & _ANYWHERE_WORDS:
            weight -= 25
    return max(-50, min(25, weight))


_DISCUSSION = frozenset(
    {"comment", "comments", "replies", "respond", "responses", "discussion", "disqus", "reactions", "feedback"}
)


@lru_cache(maxsize=4096)
def names_content(value: str) -> bool:
    """True when a class or id value also names the main content ("contentWithSidebar",
    "post-widget"), and no discussion ("entry-comments")."""
    return not names_discussion(value) and any(
        set(_parts(raw)) & _POSITIVE for raw in _CAMEL.sub(r"\1-\2", value).lower().split()
    )


@lru_cache(maxsize=4096)
def names_discussion(value: str) -> bool:
    """True when a class or id value names comments or replies ("commentsblock" too)."""
    for raw in _CAMEL.sub(r"\1-\2", value).lower().split():
        if _names_opinion(raw):
            continue
        parts = _parts(raw)
        if not _DISCUSSION.isdisjoint(parts) or any(part.startswith(_JOINED_FIRST) for part in parts):
            return True
    return False


# Named like content that belongs elsewhere: never read as the page's own text, however long.
_ELSEWHERE = frozenset(
    {
        "related", "relatedposts", "recommended", "recommendations", "trending", "popular", "promo",
        "promotion", "promoted", "sponsor", "sponsored", "ad", "ads", "adslot", "adunit", "advert",
        "adverts", "advertising", "advertisement", "outbrain", "taboola", "teaser", "teasers", "more",
        "share", "sharing", "social", "subscribe", "subscription", "newsletter", "signup", "cookie",
        "cookies", "consent", "nav", "navbar", "navigation", "menu", "breadcrumb", "breadcrumbs",
        "pagination", "pager", "tags", "tagcloud", "byline", "author", "bio",
    }
)  # fmt: skip


@lru_cache(maxsize=4096)
def names_elsewhere(value: str) -> bool:
    """True when a class or id value names a discussion, or content from elsewhere (related
    stories, promotions, sharing, navigation): what a main container named like furniture is not."""
    if names_discussion(value):
        return True
    for raw in _CAMEL.sub(r"\1-\2", value).lower().split():
        parts = _parts(raw)
        if not _ELSEWHERE.isdisjoint(parts) and not _names_absence(parts):
            return True
    return False


def hidden_style(style: str) -> bool:
    return _HIDDEN_STYLE.search(style) is not None
