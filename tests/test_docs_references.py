"""Every repository path README.md and docs/ name (`tests/...`, `scripts/...`, `server/...`, ...)
is there: a doc that points at a file that does not exist sends a reader nowhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
NAMED = re.compile(r"`((?:tests|scripts|docs|server|client|codegen|contracts|evidencekit|examples)/[\w./-]*[\w/])`")


def test_every_path_the_docs_name_exists() -> None:
    missing = []
    for page in (page for page in PAGES if page.exists()):
        for path in NAMED.findall(page.read_text(encoding="utf-8")):
            if not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert missing == []
