"""Render chosen content nodes as plain text and as Markdown in one walk.

Each block (paragraph, heading, list, table, code block, quote) is produced once as a pair
(text, markdown); the two outputs join the same blocks with a blank line. Boilerplate inside the
content (elements the measuring walk left out) and link-heavy lists and boxes are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice
from urllib.parse import urljoin

from evidencekit.server.evidence.parse.bylines import MAX_CHARS as _DATE_CHARS
from evidencekit.server.evidence.parse.bylines import is_byline_line
from evidencekit.server.evidence.parse.content import Measure
from evidencekit.server.evidence.parse.html_tree import BLOCK_TAGS, Element
from evidencekit.server.evidence.parse.text import collapse_text, remove_controls
from evidencekit.server.evidence.parse.widget_words import LINE_CHARS, widget_line

_HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_PROSE_HEADING = 300  # characters: a "heading" longer than this is a paragraph in a heading's type
# ...and so are two or more in a row below the headline's rank that are sentences of this many words
# or more (each ends with its stop): old pages set their paragraphs in <h4>. A section's title has
# no stop, and a lone sentence in a heading is a standfirst or a footnote, which references drop.
_SENTENCE_HEADING = 12
_SENTENCE_END = re.compile(r"[.!?…][\"'”’»)\]]*$")
_LISTS = frozenset({"ul", "ol", "dl", "dir"})
_QUOTES = frozenset({"blockquote"})
# Boxes dropped when most of their text is link text (related links, tag lists, teasers), with the
# share of link text that drops them: a paragraph must be (almost) nothing but a link.
_LINK_BOXES = {
    "ul": 0.6, "ol": 0.6, "dl": 0.6, "div": 0.6, "section": 0.6, "table": 0.6, "header": 0.6,
    "td": 0.6,
    "p": 0.95, "span": 0.8,  # a span only when it holds two links or more
}  # fmt: skip
# ...but not a box that holds this much text outside its links: a post in a layout cell among links
_PROSE_IN_BOX = 1500
_LIST_ITEMS = frozenset({"li", "dt", "dd"})
_EMPHASIS = {"em": "*", "i": "*", "strong": "**", "b": "**"}
_CODE = frozenset({"code", "kbd", "samp", "tt"})
_MARKED_INLINE = frozenset({"a", *_EMPHASIS, *_CODE})
_CODE_LANGUAGE = re.compile(r"(?:^|\s)(?:lang|language|highlight-source|highlight)-([\w+#.]+)")
# Permalink anchors next to headings ("¶" in Sphinx, "§" in rustdoc, "#" elsewhere).
_PERMALINKS = frozenset({"¶", "§", "#", "🔗", "⚓"})
_BACKTICKS = re.compile(r"`+")
_UNSAFE_TARGET = re.compile(r"[\s()<>]")
_URL_CONTROLS = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")
_LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_TABLE_ROWS = frozenset({"thead", "tbody", "tfoot"})

Block = tuple[str, str]


def link_box(element: Element, measured: tuple[int, int], limits: dict[str, float] = _LINK_BOXES) -> bool:
    """Whether a kept element, measured (text, link characters), is a box of links the renderer
    leaves out (related links, tag lists, teasers); limits: the share of link text per tag."""
    text, links = measured
    limit = limits.get(element.tag)
    if limit is None or text == 0 or links <= limit * text or text - links >= _PROSE_IN_BOX:
        return False
    # A <span> holding one link is a link inside a sentence, not a box of links.
    return element.tag != "span" or next(islice(element.iter("a"), 1, None), None) is not None


def render(
    found: Measure,
    nodes: list[Element],
    *,
    drop_link_boxes: bool = True,
    base_url: str | None = None,
    leave_out: frozenset[Element] = frozenset(),
    own_links: Callable[[Element], bool] | None = None,
) -> tuple[str, str]:
    """base_url: what relative link targets are resolved against (the page's final URL, joined with
    its <base href>); without one they are kept as written. leave_out: elements inside nodes that
    are not written (teaser grids inside the content). own_links: asked of each box of links left
    out whether it is written all the same (own_links.py: a linked sentence, a list of sources)."""
    renderer = _Renderer(found, drop_link_boxes, base_url, leave_out, own_links)
    for node in nodes:
        renderer.end_block()
        renderer.element(node)
    blocks, levels = _without_widget_lines(*_without_repeats(renderer.finish(), renderer.levels, renderer.containers))
    blocks, levels = _without_date_lines(blocks, levels)
    blocks, levels = _without_empty_sections(*_prose_headings(blocks, levels))
    # The headline (h1) is the page's title, not its text: it stays in the markdown only, unless it
    # is all the text there is.
    text = "\n\n".join(b[0] for b, level in zip(blocks, levels, strict=True) if level != 1)
    return text or "\n\n".join(b[0] for b in blocks), "\n\n".join(b[1] for b in blocks)


_REPEAT_MIN = 80  # characters: shorter blocks ("Share", "1 of 8", a dateline) may rightly repeat


def _without_repeats(
    blocks: list[Block], levels: list[int], containers: list[Element | None]
) -> tuple[list[Block], list[int]]:
    """Drop paragraphs that repeat, word for word, ones written from another container, when the
    paragraph before or after them (short blocks between not counted) repeats too: a second copy of
    the text for another screen size, a slideshow's text written twice. A single repeated paragraph,
    or a repeat within one container (a refrain), stays."""
    seen: dict[str, Element | None] = {}
    long_blocks: list[int] = []  # indices of paragraphs long enough to count
    repeated: set[int] = set()
    for index, (block, level, container) in enumerate(zip(blocks, levels, containers, strict=True)):
        text = block[0]
        if level or len(text) < _REPEAT_MIN:
            continue
        long_blocks.append(index)
        if text in seen and seen[text] is not container:
            repeated.add(index)
        seen.setdefault(text, container)
    dropped = {
        index
        for position, index in enumerate(long_blocks)
        if index in repeated
        and (
            (position > 0 and long_blocks[position - 1] in repeated)
            or (position + 1 < len(long_blocks) and long_blocks[position + 1] in repeated)
        )
    }
    if not dropped:
        return blocks, levels
    kept = [i for i in range(len(blocks)) if i not in dropped]
    return [blocks[i] for i in kept], [levels[i] for i in kept]


# A block's markdown that opens so is a list, a table or a quotation, whose lines are data or quoted
_NOT_PLAIN = ("- ", "* ", "|", ">", "`")


def _without_widget_lines(blocks: list[Block], levels: list[int]) -> tuple[list[Block], list[int]]:
    """Drop short plain blocks, and lines of plain blocks (after a <br>), that say only a widget's
    words (widget_words): an advertisement's label, a share bar, a call to action ("Read more...",
    "Report this comment"). Not a heading (a section headed "Advertising"), a list or a table."""
    dropped: set[int] = set()
    changed: dict[int, Block] = {}
    for index, ((text, markdown), level) in enumerate(zip(blocks, levels, strict=True)):
        if level or markdown.startswith(_NOT_PLAIN):
            continue
        if len(text) <= LINE_CHARS and widget_line(text):
            dropped.add(index)
        elif "\n" in text:
            lines, marked = text.split("\n"), markdown.split("\n")
            if len(lines) != len(marked):  # (the text's lines are the markdown's, one for one)
                continue
            kept = [n for n, line in enumerate(lines) if len(line) > LINE_CHARS or not widget_line(line)]
            if not kept:
                dropped.add(index)
            elif len(kept) < len(lines):
                changed[index] = ("\n".join(lines[n] for n in kept), "\n".join(marked[n] for n in kept))
    if not dropped and not changed:
        return blocks, levels
    kept_blocks = [i for i in range(len(blocks)) if i not in dropped]
    return [changed.get(i, blocks[i]) for i in kept_blocks], [levels[i] for i in kept_blocks]


def _prose_headings(blocks: list[Block], levels: list[int]) -> tuple[list[Block], list[int]]:
    """Headings in a row that are sentences (see _SENTENCE_HEADING) written as paragraphs."""
    prose = [level > 1 and _sentence(text) for (text, _), level in zip(blocks, levels, strict=True)]
    if sum(prose) < 2:
        return blocks, levels
    blocks, levels = list(blocks), list(levels)
    for index, is_prose in enumerate(prose):
        if is_prose and ((index and prose[index - 1]) or (index + 1 < len(prose) and prose[index + 1])):
            text, markdown = blocks[index]
            blocks[index] = (text, markdown[levels[index] + 1 :])  # (without its "#### ")
            levels[index] = 0
    return blocks, levels


def _sentence(text: str) -> bool:
    return text.count(" ") + 1 >= _SENTENCE_HEADING and _SENTENCE_END.search(text) is not None


# More date lines than this: a thread's or a log's entries, which keep their dates
_MOST_DATE_LINES = 4


def _without_date_lines(blocks: list[Block], levels: list[int]) -> tuple[list[Block], list[int]]:
    """Drop plain blocks that are only a date or time, a reading time, or both ("December 27,
    2007, 5:19 pm", "Published - Sunday, December 30, 2007"), by their words: the lines content.py's
    byline_blocks does not read, written from an inline element (a <span> or <em> between blocks)
    or a cell. Not a byline ("By Jane Doe, March 3"): Dragnet's and Readability's references keep
    those. Not when there are more than _MOST_DATE_LINES."""
    dropped = [
        index
        for index, ((text, markdown), level) in enumerate(zip(blocks, levels, strict=True))
        if not level and len(text) <= _DATE_CHARS and not markdown.startswith(_NOT_PLAIN)
        and is_byline_line(text, names=False)
    ]
    if not dropped or len(dropped) > _MOST_DATE_LINES:
        return blocks, levels
    kept = [i for i in range(len(blocks)) if i not in dropped]
    return [blocks[i] for i in kept], [levels[i] for i in kept]


_KICKER_RANK = 4  # the smallest heading a kicker is set in (h5 and h6 hold credits and bylines)


def _without_empty_sections(blocks: list[Block], levels: list[int]) -> tuple[list[Block], list[int]]:
    """Drop headings left with nothing under them ("Related posts" over a dropped link list):
    a heading followed by a heading of the same or a higher rank, or by nothing. The text's first
    block is kept when a higher rank follows it, other than the page's headline (h1): a kicker over
    the title ("Flood" over "The market moves uphill"), a blog post's title over its date, unless
    it is a row of links (a breadcrumb) or set in h5/h6. Over an h1 stand the site's section
    names and dates."""
    if all(levels):
        return blocks, levels
    kept: list[Block] = []
    kept_levels: list[int] = []
    next_level = 0  # rank of the heading after the current block; 0: a block that is not one
    ended = True
    first = len(blocks) - 1
    for index, (block, level) in enumerate(zip(reversed(blocks), reversed(levels), strict=True)):
        if level and (ended or (next_level and next_level <= level)) and not (
            index == first and 1 < next_level < level <= _KICKER_RANK and block[1].count("](") < 2
        ):  # (a kicker or a post's title over a subtitle or a date; not a breadcrumb, a row of links)
            continue
        kept.append(block)
        kept_levels.append(level)
        next_level = level
        ended = False
    kept.reverse()
    kept_levels.reverse()
    return kept, kept_levels


def _fence(code: str, minimum: int) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    return "`" * max(minimum, longest + 1)


class _Renderer:
    def __init__(
        self, found: Measure, drop_link_boxes: bool, base_url: str | None = None,
        leave_out: frozenset[Element] = frozenset(), own_links: Callable[[Element], bool] | None = None,
    ) -> None:
        self.base_url = base_url
        self.leave_out = leave_out
        self.own_links = own_links
        self.in_heading = False
        self.info = found.info
        self.link_boxes = _LINK_BOXES if drop_link_boxes else {}
        self.flattened = found.flattened
        self.blocks: list[Block] = []
        self.levels: list[int] = []  # per block: its heading rank (1-6), or 0
        self.containers: list[Element | None] = []  # per block: the parent of the element it came from
        self.container: Element | None = None
        self.lines: list[Block] = []
        self.text: list[str] = []
        self.markdown: list[str] = []

    # -- output state ---------------------------------------------------------------------
    def end_line(self) -> None:
        raw_text, raw_markdown = "".join(self.text), "".join(self.markdown)
        text = collapse_text(raw_text)
        if text:  # most lines have no markup: their markdown is their text, collapsed once
            self.lines.append((text, text if raw_markdown == raw_text else collapse_text(raw_markdown)))
        self.text = []
        self.markdown = []

    def end_block(self) -> None:
        self.end_line()
        if self.lines:
            self.emit("\n".join(t for t, _ in self.lines), "\n".join(m for _, m in self.lines))
            self.lines = []

    def emit(self, text: str, markdown: str, level: int = 0) -> None:
        self.blocks.append((text, markdown))
        self.levels.append(level)
        self.containers.append(self.container)

    def add(self, text: str, markdown: str | None = None) -> None:
        self.text.append(text)
        self.markdown.append(escape_text(text) if markdown is None else markdown)

    def finish(self) -> list[Block]:
        self.end_block()
        return self.blocks

    def capture(self, element: Element) -> list[Block]:
        """The blocks of element's content, rendered apart from the current output."""
        saved = (self.blocks, self.levels, self.containers, self.lines, self.text, self.markdown)
        self.blocks, self.levels, self.containers, self.lines, self.text, self.markdown = [], [], [], [], [], []
        self.children(element)
        blocks = self.finish()
        self.blocks, self.levels, self.containers, self.lines, self.text, self.markdown = saved
        return blocks

    # -- block level ----------------------------------------------------------------------
    def skipped(self, element: Element) -> bool:
        measured = self.info.get(element)
        if measured is None or element in self.leave_out:
            return True
        if not link_box(element, measured, self.link_boxes):
            return False
        return self.own_links is None or not self.own_links(element)

    def children(self, element: Element) -> None:
        if element.text:
            self.add(element.text)
        for child in element:
            if child.tag.__class__ is str and not self.skipped(child):
                self.element(child)
            if child.tail:
                self.add(child.tail)

    def block(self, element: Element) -> None:
        self.end_block()
        outer, self.container = self.container, element.getparent()
        if element in self.flattened:
            self.add("".join(element.itertext()))
        else:
            self.children(element)
        self.end_block()
        self.container = outer

    def element(self, element: Element) -> None:
        tag = element.tag
        if element in self.flattened:
            self.add("".join(element.itertext()))
        elif tag == "br":
            if self.lines and not "".join(self.text).strip():
                self.end_block()  # a blank line made of two <br>: a paragraph break
            else:
                self.end_line()
        elif tag in _HEADING_LEVELS:
            self.heading(element, _HEADING_LEVELS[tag])
        elif tag == "pre":
            self.code_block(element)
        elif tag in _LISTS:
            self.list(element)
        elif tag == "table":
            self.table(element)
        elif tag in _QUOTES:
            self.quote(element)
        elif tag in BLOCK_TAGS:
            self.block(element)
        elif tag in _MARKED_INLINE and not any(child.tag in BLOCK_TAGS for child in element):
            self.inline(element)
        else:
            self.children(element)  # <span>, <font>...; or a link wrapping blocks (a teaser card)

    def heading(self, element: Element, level: int) -> None:
        self.end_block()
        self.in_heading = True
        text, markdown = self.inline_parts(element)
        self.in_heading = False
        if len(text) > _PROSE_HEADING:
            self.emit(text, markdown, 0)  # prose set in a heading's type (old pages style with <h4>)
        elif text:
            self.emit(text, "#" * level + " " + markdown, level)

    def code_block(self, element: Element) -> None:
        self.end_block()
        parts: list[str] = []
        self.preformatted(element, parts)
        code = remove_controls("".join(parts).replace("\r\n", "\n").replace("\r", "\n"))
        lines = [line.rstrip() for line in code.split("\n")]
        while lines and not lines[0]:
            lines.pop(0)
        while lines and not lines[-1]:
            lines.pop()
        if not lines:
            return
        code = "\n".join(lines)
        fence = _fence(code, 3)
        self.emit(code, f"{fence}{self.code_language(element)}\n{code}\n{fence}")

    def preformatted(self, element: Element, parts: list[str]) -> None:
        """Text of a <pre> as written, without its furniture (copy buttons); <br> is a newline and
        sibling <code> blocks (one per language variant) start on their own line."""
        if element.text:
            parts.append(element.text)
        previous = None
        for child in element:
            tag = child.tag
            if tag == "br":
                parts.append("\n")
            elif child in self.flattened:
                parts.append("".join(child.itertext()))
            elif tag.__class__ is str and child in self.info:
                if tag == "code" and previous == "code" and parts and not parts[-1].endswith("\n"):
                    parts.append("\n")
                self.preformatted(child, parts)
                previous = tag
            if child.tail:
                parts.append(child.tail)

    @staticmethod
    def code_language(element: Element) -> str:
        """From a class such as "language-python" on the <pre>, its <code>, or the two wrappers
        around it ("highlight-python" in Sphinx, "highlight-source-python" on GitHub)."""
        parent = element.getparent()
        grandparent = parent.getparent() if parent is not None else None
        for node in (*element.iterchildren("code"), element, parent, grandparent):
            match = _CODE_LANGUAGE.search(node.get("class") or "") if node is not None else None
            if match:
                return match.group(1)
        return ""

    def list(self, element: Element) -> None:
        if not any(child.tag in _LIST_ITEMS for child in element):
            self.block(element)  # a list with no items: old pages indent text with <ul>
            return
        self.end_block()
        ordered = element.tag == "ol"
        number = _start_number(element)
        texts: list[str] = []
        markdowns: list[str] = []
        for item in element:
            if item.tag.__class__ is not str or self.skipped(item):
                continue
            blocks = self.capture(item)
            if not blocks:
                continue
            if element.tag == "dl":
                texts.append("\n".join(t for t, _ in blocks))
                markdowns.append("\n".join(m for _, m in blocks))
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            indent = " " * len(marker)
            lines = "\n".join(m for _, m in blocks).split("\n")
            markdowns.append(marker + lines[0] + "".join("\n" + (indent + line if line else "") for line in lines[1:]))
            texts.append("\n".join(t for t, _ in blocks))
        if texts:
            self.emit("\n".join(texts), "\n".join(markdowns))

    def quote(self, element: Element) -> None:
        self.end_block()
        blocks = self.capture(element)
        if blocks:
            markdown = "\n\n".join(m for _, m in blocks)
            quoted = "\n".join("> " + line if line else ">" for line in markdown.split("\n"))
            self.emit("\n\n".join(t for t, _ in blocks), quoted)

    def table(self, element: Element) -> None:
        cells = [
            [cell for cell in row if cell.tag in ("td", "th") and cell in self.info]
            for row in _rows(element)
            if not (row.__class__ is not list and self.skipped(row))
        ]
        cells = [row for row in cells if row]
        widths = [sum(_span(cell) for cell in row) for row in cells]
        layout = any(self.info[cell][0] > 500 or next(cell.iter("table"), None) is not None for row in cells for cell in row)
        if not cells or max(widths) < 2 or layout:
            self.block(element)  # a layout table: its cells are just containers
            return
        self.end_block()
        for caption in element.iterchildren("caption"):
            self.block(caption)
        width = max(widths)
        texts: list[str] = []
        markdowns: list[str] = []
        for row in cells:
            text_cells: list[str] = []
            markdown_cells: list[str] = []
            for cell in row:
                text, markdown = self.inline_parts(cell)
                for _ in range(_span(cell)):
                    text_cells.append(text)
                    markdown_cells.append(markdown.replace("|", "\\|"))
                    text, markdown = "", ""
            if any(text_cells):
                texts.append(" | ".join(text_cells).strip())
            markdown_cells += [""] * (width - len(markdown_cells))
            markdowns.append("| " + " | ".join(markdown_cells) + " |")
            if len(markdowns) == 1:
                markdowns.append("|" + " --- |" * width)
        if texts:
            self.emit("\n".join(texts), "\n".join(markdowns))

    # -- inline level ---------------------------------------------------------------------
    def collect(self, element: Element) -> tuple[str, str]:
        """Element content as raw (text, markdown) strings, rendered apart from the current line."""
        saved = (self.text, self.markdown)
        self.text, self.markdown = [], []
        self.inline_children(element)
        raw = ("".join(self.text), "".join(self.markdown))
        self.text, self.markdown = saved
        return raw

    def inline_parts(self, element: Element) -> tuple[str, str]:
        """Element content on one line: (text, markdown), whitespace collapsed."""
        text, markdown = self.collect(element)
        return collapse_text(text), collapse_text(markdown)

    def inline_children(self, element: Element) -> None:
        if element.text:
            self.add(element.text)
        for child in element:
            if child.tag.__class__ is str and not self.skipped(child):
                if child in self.flattened:
                    self.add("".join(child.itertext()))
                elif child.tag == "br" or child.tag in BLOCK_TAGS:
                    self.add(" ")
                    self.inline_children(child)
                    self.add(" ")
                else:
                    self.inline(child)
            if child.tail:
                self.add(child.tail)

    def inline(self, element: Element) -> None:
        tag = element.tag
        wrap = _EMPHASIS.get(tag)
        href = linked = _web_href(element.get("href") or "") if tag == "a" else ""
        if href.startswith("#") and self.in_heading:
            href = ""  # a heading's link to itself (a permalink): the heading is the text
        elif href and self.base_url is not None:
            href = _resolved(self.base_url, href)
        if wrap is None and not linked and tag not in _CODE:
            self.inline_children(element)
            return
        raw_text, raw_markdown = self.collect(element)
        text = collapse_text(raw_text)
        lead = " " if raw_text[:1].isspace() else ""
        trail = " " if raw_text[-1:].isspace() else ""
        if not text or (linked and text in _PERMALINKS):
            self.add(lead or trail)
            return
        if tag in _CODE:
            fence = _fence(text, 1)
            pad = " " if text.startswith("`") or text.endswith("`") else ""
            markdown = f"{fence}{pad}{text}{pad}{fence}"
        else:
            markdown = collapse_text(raw_markdown)
            if wrap is not None:
                markdown = f"{wrap}{markdown}{wrap}"
        if href:  # the label's brackets were escaped with the rest of the page's text
            markdown = f"[{markdown}]({_link_target(href)})"
        self.add(lead + text + trail, lead + markdown + trail)


# Page text that would read as markdown syntax for a link, an image or raw HTML ("[x](javascript:...)",
# "<img onerror=...>") is written escaped, so only the links the page really has are live.
_MARKDOWN_ACTIVE = re.compile(r"([\\\[\]<])")


def escape_text(text: str) -> str:
    """Text for markdown: what would read as a link, an image or raw HTML escaped (also caption cues,
    transcript.py)."""
    # four substring tests cost a fortieth of one search with the character class
    if "[" in text or "]" in text or "<" in text or "\\" in text:
        return _MARKDOWN_ACTIVE.sub(r"\\\1", text)
    return text


def _web_href(raw: str) -> str:
    """The href when it leads to the web or to mail, or is relative; "" for javascript:, data:, file:...

    Control characters go first, as a browser's URL parser drops them (`java\tscript:` is javascript:)."""
    href = _URL_CONTROLS.sub("", raw).strip()  # and any Unicode space: the link target drops it too
    scheme = _SCHEME.match(href)
    return "" if scheme and scheme.group(1).lower() not in _LINK_SCHEMES else href


def _link_target(href: str) -> str:
    """The href as written; in <...> when spaces or parentheses would end a bare target."""
    if not _UNSAFE_TARGET.search(href):
        return href
    return "<" + " ".join(href.split()).replace("<", "%3C").replace(">", "%3E") + ">"


def _start_number(element: Element) -> int:
    try:
        return max(0, min(int(element.get("start", "1").strip()), 999_999_999))
    except ValueError:
        return 1


def _span(cell: Element) -> int:
    try:
        return max(1, min(int(cell.get("colspan", "1").strip()), 50))
    except ValueError:
        return 1


_Rows = list[Element | list[Element]]  # a row: a <tr>, or the cells standing without one


def _rows(table: Element) -> _Rows:
    """The table's rows in reading order: <thead>'s first and <tfoot>'s last wherever they stand
    in the markup; cells standing directly in <table> or a row group (no <tr>) make a row of their
    own, as a browser would make them."""
    head: _Rows = []
    body: _Rows = []
    foot: _Rows = []
    _collect_rows(table, table, body, (head, body, foot))
    return head + body + foot


def _collect_rows(table: Element, parent: Element, rows: _Rows, sections: tuple[_Rows, _Rows, _Rows]) -> None:
    """parent's rows into `rows`, a row group's (table's thead, tbody, tfoot) into its section of
    (head, body, foot) where it stands. (Module-level, not a closure calling itself: such a closure
    and its cell make a reference cycle, freed only when the garbage collector runs.)"""
    head, body, foot = sections
    loose: list[Element] = []
    for child in parent:
        if child.tag in ("td", "th"):
            loose.append(child)
            continue
        if loose:
            rows.append(loose)
            loose = []
        if child.tag == "tr":
            rows.append(child)
        elif parent is table and child.tag in _TABLE_ROWS:
            _collect_rows(table, child, head if child.tag == "thead" and not head else foot if child.tag == "tfoot"
                          else body, sections)
    if loose:
        rows.append(loose)


def _resolved(base: str, href: str) -> str:
    """href joined to base; kept as written when the two do not join into a web or mail URL."""
    try:
        joined = urljoin(base, href)
    except ValueError:
        return href
    return joined if _web_href(joined) else href
