"""What a page declares about itself: title, description, language, media tracks, password fields."""

from __future__ import annotations

from dataclasses import dataclass

from evidencekit.server.evidence.parse.html_tree import Element
from evidencekit.server.evidence.parse.text import collapse_text, first_language, normalize_language

_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_MEDIA = frozenset({"video", "audio"})
_SVG = frozenset({"svg"})


@dataclass(frozen=True)
class Track:
    src: str
    kind: str
    srclang: str | None
    label: str | None
    default: bool


def _text_or_none(value: str | None) -> str | None:
    if value is None:
        return None
    return collapse_text(value) or None


def _inside(root: Element, containers: frozenset[str], wanted: str) -> set[Element]:
    """Every `wanted` element with an ancestor among `containers`, in one walk of the tree: asking
    each element for its ancestors took time quadratic in the nesting (thousands of unclosed
    <track>s nest, and each walked all of them)."""
    found: set[Element] = set()
    covered: set[Element] = set()  # containers already walked as part of an outer one
    for container in root.iter(*containers):
        if container in covered:
            continue
        for element in container.iter(wanted, *containers):
            if element.tag == wanted:
                found.add(element)
            else:
                covered.add(element)
    return found


def title(root: Element) -> str | None:
    tooltips: set[Element] | None = None  # an SVG <title> is a tooltip
    for element in root.iter("title"):
        if not _in_head(element, root):  # (most pages' first title: no walk for SVGs)
            if tooltips is None:
                tooltips = _inside(root, _SVG, "title")
            if element in tooltips:
                continue
        found = _text_or_none("".join(element.itertext()))
        if found:
            return found
    return _meta(root, "og:title")


def _in_head(element: Element, root: Element) -> bool:
    """A child of the root's <head>, which no <svg> holds."""
    parent = element.getparent()
    return parent is not None and parent.tag == "head" and parent.getparent() is root


def description(root: Element) -> str | None:
    return _meta(root, "description") or _meta(root, "og:description")


def _meta(root: Element, name: str) -> str | None:
    for element in root.iter("meta"):
        key = element.get("name") or element.get("property") or ""
        if key.strip().lower() == name:
            found = _text_or_none(element.get("content"))
            if found:
                return found
    return None


def language(root: Element, content_language: str | None) -> str | None:
    """<html lang> / xml:lang, else <meta http-equiv=content-language>, else the HTTP header."""
    for key in ("lang", "xml:lang", _XML_LANG):
        found = normalize_language(root.get(key))
        if found:
            return found
    for element in root.iter("meta"):
        if (element.get("http-equiv") or "").strip().lower() == "content-language":
            found = first_language(element.get("content"))
            if found:
                return found
    return first_language(content_language)


def tracks(root: Element) -> tuple[Track, ...]:
    """Every <track> with a src inside <video>/<audio>; a missing kind is "subtitles" as in HTML."""
    found = []
    in_media = _inside(root, _MEDIA, "track")
    for element in root.iter("track"):
        src = (element.get("src") or "").strip()
        if not src or element not in in_media:
            continue
        found.append(
            Track(
                src=src,
                kind=(element.get("kind") or "").strip().lower() or "subtitles",
                srclang=normalize_language(element.get("srclang")),
                label=_text_or_none(element.get("label")),
                default=element.get("default") is not None,
            )
        )
    return tuple(found)


def base_href(root: Element) -> str | None:
    """The href of the document's first <base> that has one (HTML: the document base URL)."""
    for element in root.iter("base"):
        href = (element.get("href") or "").strip()
        if href:
            return href
    return None


def has_password_field(root: Element) -> bool:
    return any((element.get("type") or "").strip().lower() == "password" for element in root.iter("input"))


# Where single-page apps mount: an element with one of these ids, or one of these attributes.
_APP_ROOT_IDS = frozenset({"root", "app", "__next", "___gatsby", "__nuxt", "svelte", "main-app", "application"})
_MOUNTS_CHECKED = 8
_APP_ROOT_ATTRIBUTES = ("data-reactroot", "ng-app", "ng-version", "data-server-rendered", "data-v-app")


def script_shell(root: Element) -> bool:
    """True when the page is an application shell that renders its text with JavaScript: it has
    scripts, and a <noscript> notice or an empty mount point (#root, #app, #__next...)."""
    if next(root.iter("script"), None) is None:
        return False
    if next(root.iter("noscript"), None) is not None:
        return True
    checked = 0
    for element in root.iter("div", "main", "section", "app-root"):
        mount = element.tag == "app-root" or element.get("id") in _APP_ROOT_IDS
        mount = mount or any(element.get(name) is not None for name in _APP_ROOT_ATTRIBUTES)
        if mount:
            if not any(piece.strip() for piece in element.itertext()):
                return True
            checked += 1
            if checked >= _MOUNTS_CHECKED:  # an app has one mount point; nested look-alikes cost depth x size
                return False
    return False
