"""The layout holds: the toolkit never imports the evidence service, nothing imports the repository's
top-level links, and every module is on one side.

The import graph is grimp's (import-linter's), read from the package's real folders: every import
statement, at module level and inside functions. The contracts themselves are pyproject.toml's
[tool.importlinter] table, which `lint-imports` checks here as a maintainer would run it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evidencekit"

# What another team installs and uses unchanged, and the research-evidence service (its generated
# code and its command, offered to `evidencekit` through entry points): the sources and the
# forbidden modules of pyproject.toml's first [tool.importlinter] contract, read from there.
_CONTRACT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"][0]
TOOLKIT = tuple(_CONTRACT["source_modules"])
SERVICE = tuple(_CONTRACT["forbidden_modules"])
# Packages that only hold the two sides (empty __init__.py files).
CONTAINERS = ("evidencekit", "evidencekit.server", "evidencekit.client")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("evidencekit", cache_dir=None)


def within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def test_every_package_is_a_real_folder_not_a_link() -> None:
    links = [str(path.relative_to(ROOT)) for path in PACKAGE.rglob("*") if path.is_symlink()]
    assert links == []


def test_the_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "NO_COLOR": "1"}, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 kept, 0 broken" in run.stdout


def test_every_module_is_on_one_side(graph: grimp.ImportGraph) -> None:
    ours = {name for name in graph.modules if within(name, ("evidencekit",))}
    assert len(ours) == len(list(PACKAGE.rglob("*.py"))), "the graph reads every module of the package"
    unplaced = sorted(name for name in ours if name not in CONTAINERS and not within(name, TOOLKIT + SERVICE))
    assert unplaced == []
    for name in CONTAINERS[1:]:
        assert graph.find_modules_directly_imported_by(name) == set(), f"{name} only holds its sub-packages"


def test_the_toolkit_has_modules_on_every_part(graph: grimp.ImportGraph) -> None:
    for package in TOOLKIT:
        assert any(within(name, (package,)) for name in graph.modules), package


def test_the_graph_sees_imports_inside_functions(graph: grimp.ImportGraph) -> None:
    # the service's command imports the client's inside a function only
    assert graph.direct_import_exists(importer="evidencekit.server.evidence.cli",
                                      imported="evidencekit.client.evidence.cli")
