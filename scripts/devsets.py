"""Lay out main-text development sets the way scripts/eval_extract.py reads them.

Every set becomes OUT/SET/NAME/source.html + OUT/SET/NAME/expected.txt (the reference as plain
text). The sources are public and not shipped here (each under its own licence):

    git clone --depth 1 https://github.com/j-szulc/html-cleaning-dataset-merged /tmp/merged
    git clone --depth 1 https://github.com/codelucas/newspaper /tmp/newspaper
    .venv/bin/python scripts/devsets.py --merged /tmp/merged --newspaper /tmp/newspaper --out /tmp/devsets

From the merged collection: CleanEval (dev and final; gold text with <p>/<h>/<l> line marks),
CleanPortalEval (the same format), Dragnet's pages (gold cut where its comments begin) and the
Google News pages of page-signal (L3S-GN1: the annotated copy of each page, whose headline and
full-text spans, classes x-nc-sel1 and x-nc-sel2, are the reference; supplemental text, related
content and comments are not). From newspaper: its test pages and the text newspaper itself
extracts (another extractor's output, as Readability's expected.html is), where that text has 500
characters or more.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lxml import html as lxml_html  # type: ignore[import-untyped]

# The CleanEval wrapper line: <text id="URL" title="..." encoding="...">
_TEXT_WRAPPER = re.compile(rb"^\s*<text [^>]*>\s*", re.IGNORECASE)
_LINE_MARK = re.compile(r"<(?:p|h|l)>", re.IGNORECASE)
_DRAGNET_COMMENTS = "!@#$%^&*()  COMMENTS"
_GOOGLE_NEWS_MAIN = ("x-nc-sel1", "x-nc-sel2")

# newspaper's shorter references are notes ("LAST PARAGRAPH IS MISSED"), not the page's text.
_NEWSPAPER_SHORTEST = 500

MERGED_SETS = {
    "cleaneval-dev": "cleaneval-dev",
    "cleaneval-final": "cleaneval-final",
    "cleanportaleval": "CleanPortalEval-master",
    "dragnet": "dragnet_data",
    "google-news": "page-signal-master",
}


def cleaneval_gold(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    lines = text.lstrip().splitlines()
    if lines and lines[0].startswith("URL:"):
        lines = lines[1:]
    return html.unescape(_LINE_MARK.sub("\n", "\n".join(lines))).strip()


def dragnet_gold(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").split(_DRAGNET_COMMENTS, 1)[0].strip()


def google_news_gold(raw: bytes) -> str:
    tree = lxml_html.fromstring(raw)
    # The outermost marked spans only: a marked span inside another is already in its text.
    marked = [element for element in tree.iter() if _main_mark(element)]
    pieces = [e.text_content().strip() for e in marked if not any(_main_mark(a) for a in e.iterancestors())]
    return "\n".join(piece for piece in pieces if piece)


def _main_mark(element: Any) -> bool:  # an lxml element
    classes = (element.get("class") or "").split()
    return any(mark in classes for mark in _GOOGLE_NEWS_MAIN)


_GOLD = {
    "cleaneval-dev": cleaneval_gold,
    "cleaneval-final": cleaneval_gold,
    "cleanportaleval": cleaneval_gold,
    "dragnet": dragnet_gold,
    "google-news": google_news_gold,
}


def merged_pages(root: Path, name: str) -> Iterator[tuple[str, bytes, str]]:
    folder = root / MERGED_SETS[name]
    for source in sorted((folder / "input").glob("*.html")):
        gold = folder / "GoldStandard" / f"{source.stem}.txt"
        if not gold.exists():
            continue
        page = _TEXT_WRAPPER.sub(b"", source.read_bytes(), count=1)
        yield source.stem, page, _GOLD[name](gold.read_bytes())


def newspaper_pages(root: Path) -> Iterator[tuple[str, bytes, str]]:
    data = root / "tests" / "data"
    for source in sorted((data / "html").glob("*.html")):
        text = data / "text" / f"{source.stem}.txt"
        if text.exists():
            reference = text.read_text(encoding="utf-8", errors="replace")
            if len(reference) >= _NEWSPAPER_SHORTEST:
                yield source.stem, source.read_bytes(), reference


def write(out: Path, pages: Iterator[tuple[str, bytes, str]]) -> int:
    if out.exists():
        shutil.rmtree(out)
    count = 0
    for name, page, gold in pages:
        if not gold.strip():
            continue  # nothing to compare with
        folder = out / name
        folder.mkdir(parents=True)
        (folder / "source.html").write_bytes(page)
        (folder / "expected.txt").write_text(gold, encoding="utf-8")
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--merged", type=Path, help="a checkout of j-szulc/html-cleaning-dataset-merged")
    parser.add_argument("--newspaper", type=Path, help="a checkout of codelucas/newspaper")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.merged:
        for name in MERGED_SETS:
            print(f"{name}: {write(args.out / name, merged_pages(args.merged, name))} pages")
    if args.newspaper:
        print(f"newspaper: {write(args.out / 'newspaper', newspaper_pages(args.newspaper))} pages")


if __name__ == "__main__":
    main()
