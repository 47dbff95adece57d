"""The toolkit never imports the evidence service, and nothing imports a top-level package of ours.

Every import statement is read (module level and inside functions, relative ones resolved), so a
later change cannot cross the boundary quietly. The lists below are the layout: a new toolkit
package is added to TOOLKIT, a new service package to SERVICE.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evidencekit"

# What another team installs and uses unchanged.
TOOLKIT = ("evidencekit.codegen", "evidencekit.contracts", "evidencekit.server.runtime",
           "evidencekit.client.runtime", "evidencekit.testing", "evidencekit.cli", "evidencekit.commands",
           "evidencekit.completion", "evidencekit.fish_completion", "evidencekit.argparse_adapter",
           "evidencekit.__main__")
# The research-evidence service, its generated code and its command (server.evidence.cli), which it
# offers to `evidencekit` through entry points.
SERVICE = ("evidencekit.server.evidence", "evidencekit.server.generated", "evidencekit.client.evidence",
           "evidencekit.client.generated")
OURS_AT_TOP = ("contracts", "codegen", "server", "client")
# Packages that only hold the two sides (empty __init__.py files).
CONTAINERS = ("evidencekit", "evidencekit.server", "evidencekit.client")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):  # rglob does not follow the links: walk them by hand
        found[module_name(path)] = path
    for link in ("contracts", "codegen", "server", "client"):
        for path in sorted((PACKAGE / link).resolve().rglob("*.py")):
            relative = path.relative_to((PACKAGE / link).resolve())
            found[module_name(PACKAGE / link / relative)] = path
    return found


def imports(module: str, path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


MODULES = modules()


def test_every_module_is_on_one_side() -> None:
    unplaced = [name for name in MODULES if name not in CONTAINERS and not within(name, TOOLKIT + SERVICE)]
    assert unplaced == []
    for name in CONTAINERS[1:]:
        assert imports(name, MODULES[name]) == [], f"{name} only holds its sub-packages"


def test_the_toolkit_has_modules_on_every_part() -> None:
    for package in TOOLKIT:
        assert any(within(name, (package,)) for name in MODULES), package


@pytest.mark.parametrize("module", sorted(name for name in MODULES if within(name, TOOLKIT)))
def test_a_toolkit_module_imports_no_service_module(module: str) -> None:
    crossing = [f"line {line}: {name}" for line, name in imports(module, MODULES[module]) if within(name, SERVICE)]
    assert crossing == [], f"{module} imports the service"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_nothing_imports_a_top_level_package_of_ours(module: str) -> None:
    top = [f"line {line}: {name}" for line, name in imports(module, MODULES[module])
           if name.split(".")[0] in OURS_AT_TOP]
    assert top == []


def test_the_checker_sees_a_crossing(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("def later():\n    from evidencekit.server.evidence.store import db\n"
                      "from . import handlers\n")
    found = [name for _, name in imports("evidencekit.server.runtime.probe", source)]
    assert "evidencekit.server.evidence.store.db" in found
    assert within("evidencekit.server.runtime.handlers", TOOLKIT)
    assert any(within(name, SERVICE) for name in found)
