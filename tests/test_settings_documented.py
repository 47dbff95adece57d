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


IMPORT_ALL = r'''
import importlib, json, os, pkgutil

read = set()


class Recording(dict):
    def get(self, key, default=None):
        read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        read.add(key)
        return super().__contains__(key)


os.environ = Recording(os.environ)
import evidencekit

failed = {}
for module in pkgutil.walk_packages(evidencekit.__path__, "evidencekit."):
    if not module.name.endswith("__main__"):
        try:
            importlib.import_module(module.name)
        except Exception as exc:
            failed[module.name] = repr(exc)
print(json.dumps({"read": sorted(name for name in read if name.startswith(("EVIDENCEKIT_", "SOSOAPI_", "DATABASE_URL"))),
                  "failed": failed}))
'''


def test_no_module_reads_a_setting_when_it_is_imported() -> None:
    """Caches built at import read EVIDENCEKIT_AUTH_CACHE_SECONDS then (an app factory called later,
    with the setting in place, kept the import's value), and other settings were read on every
    request. Settings are read where a process or an app starts (the CLI, create_app:
    evidencekit.server.evidence.settings), never by importing a module, toolkit or service."""
    import json
    import subprocess
    import sys

    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "EVIDENCEKIT_AUTH_CACHE_SECONDS": "0"}
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True, timeout=300,
                          check=False, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["failed"] == {} and seen["read"] == [], seen
