"""Each block inside the chosen content judged on its own: the ones a template puts in the
article's box are left out.

The blocks judged are the ones the renderer writes (a paragraph, a heading, a list, a table, a div
with no block inside). What decides is what the page shows of a block whatever its language and
class names: its length, its tag, how much of the content its parent holds, and what its small box
holds. scripts/block_rules.py scores candidate rules (and a learned judge) on the development sets,
each alone, by set; scripts/eval_extract.py has the last word.
"""

from __future__ import annotations

from collections.abc import Iterator

from evidencekit.server.evidence.parse.content import BLOCK_TAGS, Measure
from evidencekit.server.evidence.parse.html_tree import Element
from evidencekit.server.evidence.parse.render import link_box

# Judged as one block however they nest inside (the renderer writes each as one block)
_WHOLE = frozenset({"ul", "ol", "dl", "dir", "pre", "h1", "h2", "h3", "h4", "h5", "h6"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
BOX_OVER = 300  # characters a block's parent may hold beside it and still be the block's own box
# A text field or a choice: what a sign-up, a comment form or a search box asks for (a button
# alone is a gallery's or a player's, beside captions that may be the text)
FIELDS = ("input", "select", "textarea")
# A block in a box with a field is a form's prompt ("Sign up for our weekly letter", "Please type
# the code you see") when it is shorter than this
_FORM_PROMPT = 300


def units(found: Measure, chosen: list[Element], leave_out: frozenset[Element]) -> list[Element]:
    """The blocks inside the chosen nodes that the renderer writes, in document order."""
    found_units: list[Element] = []
    info = found.info
    stack: list[Iterator[Element]] = [iter(chosen)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        measured = info.get(element)
        if measured is None or not measured[0] or element in leave_out or link_box(element, measured):
            continue
        if (
            element.tag in _WHOLE
            or element in found.flattened
            or not any(child.tag in BLOCK_TAGS and child in info for child in element)
        ):
            found_units.append(element)
            continue
        stack.append(iter(element))
    return found_units


def box(found: Measure, block: Element, chosen: set[Element]) -> Element:
    """The block's parent when that holds little beside it (a widget, a card), else the block."""
    parent = block.getparent()
    if parent is None or block in chosen:
        return block
    measured = found.info.get(parent)
    return parent if measured is not None and measured[0] <= found.info[block][0] + BOX_OVER else block


def left_out(found: Measure, chosen: list[Element], leave_out: frozenset[Element]) -> frozenset[Element]:
    """The blocks inside the chosen content judged not to be its text: a form's prompt (a short
    block, not a heading, in a small box that holds a text field or a choice: a newsletter
    sign-up, a comment form's terms, a CAPTCHA's instructions), unless its parent holds half of the
    content's text (a short page's text beside its form). The box's heading stays unless the
    renderer finds it left with nothing under it: over several forms, headings name what a shop
    sells, and dropping them cost a shop's page more than sign-ups gave.

    Looked for from the fields up, so the cost is in the forms' neighbourhoods, not the content."""
    tops = set(chosen)
    outermost: list[Element] = []  # the largest small box around each field
    for node in chosen:
        for field in node.iter(*FIELDS):
            if not _visible_field(field):
                continue
            small = None
            for ancestor in field.iterancestors():
                measured = found.info.get(ancestor)
                if measured is not None:
                    if measured[0] > _FORM_PROMPT + BOX_OVER:
                        break
                    small = ancestor
                if ancestor in tops:
                    break
            if small is not None and small not in outermost:
                outermost.append(small)
    if not outermost:
        return frozenset()
    half = sum(found.info[node][0] for node in chosen) / 2
    prompts: set[Element] = set()
    for block in units(found, outermost, leave_out):
        parent = block.getparent()
        if (
            found.info[block][0] < _FORM_PROMPT
            and block.tag not in HEADINGS
            and (parent is None or found.info.get(parent, (0,))[0] < half)
            and has_field(box(found, block, tops))
        ):
            prompts.add(block)
    return frozenset(prompts)


def has(element: Element, tags: tuple[str, ...]) -> bool:
    """Whether element or anything in it has one of tags (a walk in libxml2)."""
    return next(element.iter(*tags), None) is not None


def has_field(element: Element) -> bool:
    """A field a reader fills in or a choice in element."""
    return any(_visible_field(field) for field in element.iter(*FIELDS))


def _visible_field(field: Element) -> bool:
    return field.tag != "input" or (field.get("type") or "").strip().lower() != "hidden"  # (a page's state)
