"""Panels of tabs and accordions: hidden until a reader opens them, and the page's text all the same
(FAQ answers, a product's details, a guide's steps).

A hidden element (the `hidden` attribute, `display:none`, a class such as "hidden" or "d-none") is
such a panel when it says so (role=tabpanel, a class naming a tab pane, an accordion or a collapse)
or when a control on the page opens it (`aria-controls`, Bootstrap's `data-target`/`data-bs-target`
or a tab link's `href="#id"`). Its class, id and role are read as usual: a hidden menu, share box or
dialog stays furniture.
"""

from __future__ import annotations

from lxml import etree  # type: ignore[import-untyped]

from evidencekit.server.evidence.parse.boilerplate import names_panel
from evidencekit.server.evidence.parse.html_tree import Element

# The values that name the elements a control opens, found by libxml2 (the page is not walked in Python)
_CONTROLS = etree.XPath(
    ".//@aria-controls | .//@data-target | .//@data-bs-target"
    " | .//*[@data-toggle or @data-bs-toggle]/@href"
)
# A panel with a photo or a video and less text than this is a media box's: the text is a caption
_MEDIA = ("img", "picture", "video", "iframe", "object", "embed")
_MEDIA_TEXT = 600
_HOLDS_PANEL = etree.XPath("boolean(.//*[@role='tabpanel'])")


def controlled_ids(body: Element) -> frozenset[str]:
    """The ids that the page's controls open ("faq1" for aria-controls="faq1" or href="#faq1")."""
    ids: set[str] = set()
    for value in _CONTROLS(body):
        for token in str(value).split():
            ids.add(token.lstrip("#"))
    return frozenset(ids)


def is_panel(element: Element, controlled: frozenset[str]) -> bool:
    """A hidden element that is a closed panel of text (see the module docstring), not one of a
    media box's (a photo or a video and its caption, in a "Videos | Photos" box)."""
    name = element.get("id")
    if not (
        (element.get("role") or "").strip().lower() == "tabpanel"
        or names_panel(element.get("class") or "")
        or (name is not None and name in controlled)
    ):
        return False
    if next(element.iter(*_MEDIA), None) is None:
        return True
    return sum(map(len, map(str.strip, element.itertext()))) >= _MEDIA_TEXT


def holds_panels(tablist: Element) -> bool:
    """A role=tablist that holds its panels (jQuery UI's accordion puts them beside its tabs): the
    panels are text, where a list of tabs alone is a strip of labels."""
    return bool(_HOLDS_PANEL(tablist))
