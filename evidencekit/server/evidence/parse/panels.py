"""Panels of tabs and accordions: hidden until a reader opens them, and the page's text all the same
(FAQ answers, a product's details, a guide's steps).

A hidden element (the `hidden` attribute, `display:none`, a class such as "hidden" or "d-none") is
such a panel when it says so (role=tabpanel, a class naming a tab pane, an accordion or a collapse)
or when the control just before it opens it (`aria-controls`, Bootstrap's `data-target` or
`data-bs-target`, a toggle's `href="#id"`: an accordion's question before its answer). Its class,
id and role are read as usual: a hidden menu, share box or dialog stays furniture.
"""

from __future__ import annotations

from itertools import islice

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.boilerplate import names_panel
from evidencekit.server.evidence.parse.html_tree import Element

# A panel with a photo or a video and less text than this is a media box's: the text is a caption
_MEDIA = ("img", "picture", "video", "iframe", "object", "embed")
_MEDIA_TEXT = 600
_HOLDS_PANEL = etree.XPath("boolean(.//*[@role='tabpanel'])")
_CONTROL_NODES = 20  # elements of the previous sibling looked at for the control (a heading and its button)
_TARGETS = ("data-target", "data-bs-target")
_TOGGLES = ("data-toggle", "data-bs-toggle")


def is_panel(element: Element) -> bool:
    """A hidden element that is a closed panel of text (see the module docstring), not one of a
    media box's (a photo or a video and its caption, in a "Videos | Photos" box)."""
    name = element.get("id")
    if not (
        (element.get("role") or "").strip().lower() == "tabpanel"
        or names_panel(element.get("class") or "")
        or (name is not None and _opened_before(element, name.strip()))
    ):
        return False
    if next(element.iter(*_MEDIA), None) is None:
        return True
    return sum(map(len, map(str.strip, element.itertext()))) >= _MEDIA_TEXT


def _opened_before(element: Element, name: str) -> bool:
    """A control in the element just before this one opens it (looked for there only, not over the
    page: hidden elements with an id are many on some pages)."""
    previous = element.getprevious()
    while previous is not None and previous.tag.__class__ is not str:
        previous = previous.getprevious()  # (a comment between them)
    if previous is None or not name:
        return False
    anchor = "#" + name
    for node in islice(previous.iter(), _CONTROL_NODES):
        if name in (node.get("aria-controls") or "").split():
            return True
        if any(node.get(key) == anchor for key in _TARGETS):
            return True
        if node.get("href") == anchor and any(node.get(key) is not None for key in _TOGGLES):
            return True
    return False


def holds_panels(tablist: Element) -> bool:
    """A role=tablist that holds its panels (jQuery UI's accordion puts them beside its tabs): the
    panels are text, where a list of tabs alone is a strip of labels."""
    return bool(_HOLDS_PANEL(tablist))
