"""Every setting the code reads is in docs/settings.md's tables, so the docs keep up with the code;
every page the README links to exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_environment_setting_the_code_reads_is_documented() -> None:
    names: set[str] = set()
    for package in ("server", "client", "evidencekit", "contracts", "codegen"):
        for source in (ROOT / package).rglob("*.py"):
            names |= set(re.findall(r"\b(?:EVIDENCEKIT|SOSOAPI)_[A-Z_]+\b", source.read_text()))
    rows = [row for row in (ROOT / "docs" / "settings.md").read_text().splitlines() if row.startswith("| `")]
    documented = {name for row in rows for name in re.findall(r"`([A-Z_]+)`", row.split("|")[1])}
    assert names, "no settings found: the pattern is wrong"
    assert sorted(names - documented) == []


def test_every_page_the_readme_and_docs_link_to_exists() -> None:
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to a missing {target}"
