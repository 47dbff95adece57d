"""Every setting the code reads is in README.md's settings tables, so the docs keep up with the code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_environment_setting_the_code_reads_is_documented() -> None:
    names: set[str] = set()
    for package in ("server", "client", "evidencekit", "contracts", "codegen"):
        for source in (ROOT / package).rglob("*.py"):
            names |= set(re.findall(r"\b(?:EVIDENCEKIT|SOSOAPI)_[A-Z_]+\b", source.read_text()))
    readme = (ROOT / "README.md").read_text()
    assert names, "no settings found: the pattern is wrong"
    assert sorted(name for name in names if f"`{name}`" not in readme) == []
