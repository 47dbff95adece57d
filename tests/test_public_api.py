"""The toolkit's declared public API (docs/toolkit.md, "Public API"): what its public modules export is
the committed snapshot, every other module is `_`-prefixed, and what a team copies (the example
project, the generated code, the docs' code) imports nothing else."""

from __future__ import annotations

import ast
import difflib
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.public_api import (
    PUBLIC_MODULES,
    ROOT,
    SNAPSHOT,
    UPDATE,
    in_toolkit,
    is_private,
    private_uses,
    python_blocks,
    snapshot,
)

# The public packages whose names are imported when first used (evidencekit/_exports.py).
LAZY = ("evidencekit.server.runtime", "evidencekit.client.runtime", "evidencekit.contracts", "evidencekit.testing")


def test_the_public_api_is_the_snapshot() -> None:
    now, committed = snapshot(), SNAPSHOT.read_text(encoding="utf-8")
    if now != committed:
        diff = "".join(difflib.unified_diff(committed.splitlines(keepends=True), now.splitlines(keepends=True),
                                            "tests/public_api.txt (committed)", "the code"))
        pytest.fail(f"the public API changed:\n{diff}\nIf that is intended, rewrite the snapshot with `{UPDATE}` "
                    "and say what changed in CHANGELOG.md; if not, keep the name or make the module private.")


def test_the_public_modules_are_the_toolkits_unprefixed_ones_each_with_all() -> None:
    package = ROOT / "evidencekit"
    modules = {".".join(("evidencekit", *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")
               for path in package.rglob("*.py")}
    found = sorted(name for name in modules
                   if in_toolkit(name) and not is_private(name) and not name.endswith(".__main__"))
    assert found == sorted(PUBLIC_MODULES), "a new public module: make it private, or add it to tests/public_api.py"
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__"
        for exported in module.__all__:
            assert getattr(module, exported) is not None, f"{name}.{exported}"


def _type_checking_imports(package: str) -> dict[str, tuple[str, str]]:
    """The names a package's `if TYPE_CHECKING:` block imports: name -> (module, name there)."""
    tree = ast.parse(Path(importlib.import_module(package).__file__ or "").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    return {alias.asname or alias.name: (node.module or "", alias.name)
            for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}


def _bound_at_import(package: str) -> set[str]:
    """The names a package's module body binds itself, outside its `if TYPE_CHECKING:` block (read
    from its source: once a lazy name is used it sits in the module's namespace too)."""
    tree = ast.parse(Path(importlib.import_module(package).__file__ or "").read_text(encoding="utf-8"))
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Assign):
            bound |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return bound


@pytest.mark.parametrize("package", LAZY)
def test_each_name_a_package_exports_is_the_one_its_type_checking_import_names(package: str) -> None:
    """Type checkers read the TYPE_CHECKING imports, the interpreter the lazy table: the same objects."""
    module = importlib.import_module(package)
    imported = _type_checking_imports(package)
    eager = {name for name in module.__all__ if name in _bound_at_import(package)}
    assert sorted(imported) == sorted(set(module.__all__) - eager)
    for name, (held_in, held_as) in imported.items():
        assert getattr(module, name) is getattr(importlib.import_module(held_in), held_as), f"{package}.{name}"
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


def _loaded_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` a fresh interpreter holds after running `statement`."""
    code = f"import sys\n{statement}\nprint([name for name in {modules!r} if name in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return list(ast.literal_eval(done.stdout.strip()))


def test_a_public_name_is_imported_without_the_rest_of_its_package() -> None:
    """The conformance gate needs the server's error tree, a client its transport: neither pays for
    the MCP SDK, uvicorn or, for the client, the contract validators."""
    assert _loaded_after("from evidencekit.server.runtime import Forbidden",
                         ("evidencekit.server.runtime._app", "mcp.server", "uvicorn")) == []
    assert _loaded_after("from evidencekit.client.runtime import SyncTransport",
                         ("evidencekit.contracts._validation", "jsonschema_rs", "evidencekit.server")) == []
    assert _loaded_after("from evidencekit.server.runtime import build_app",
                         ("evidencekit.server.runtime._app", "mcp.server")) == ["evidencekit.server.runtime._app",
                                                                                "mcp.server"]


def _python_files(*folders: Path) -> list[Path]:
    return sorted(path for folder in folders for path in folder.rglob("*.py") if "__pycache__" not in path.parts)


def test_the_example_and_the_generated_code_import_only_public_names() -> None:
    files = _python_files(ROOT / "examples" / "library", ROOT / "evidencekit" / "server" / "generated",
                          ROOT / "evidencekit" / "client" / "generated")
    assert any(path.name == "serve.py" for path in files) and any(path.name == "app.py" for path in files)
    uses = [use for path in files for use in private_uses(path.read_text(encoding="utf-8"),
                                                            str(path.relative_to(ROOT)))]
    assert uses == []


def test_the_docs_code_imports_only_public_names() -> None:
    pages = [ROOT / "README.md", ROOT / "examples" / "library" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [(page, line, code) for page in pages for line, code in python_blocks(page.read_text(encoding="utf-8"))]
    assert any(page.name == "toolkit.md" for page, _, _ in blocks)
    uses = [use for page, line, code in blocks for use in private_uses(code, f"{page.relative_to(ROOT)}:{line}")]
    assert uses == []


def test_an_import_past_the_public_api_is_found() -> None:
    source = ("from evidencekit.server.runtime import RequestContext, _serving\n"
              "from evidencekit.server.runtime._errors import Forbidden\n"
              "import evidencekit.testing._serve\n"
              "from evidencekit.commands import help_line\n"
              "from evidencekit.server.evidence.handlers import EvidenceHandlers\n"
              'pytest_plugins = ["evidencekit.testing.conformance", "evidencekit.testing._gate.cli"]\n')
    assert private_uses(source, "x.py") == [
        "x.py: from evidencekit.server.runtime import _serving",
        "x.py: from evidencekit.server.runtime._errors import ...",
        "x.py: import evidencekit.testing._serve",
        "x.py: from evidencekit.commands import help_line",
        "x.py: pytest_plugins: evidencekit.testing._gate.cli",
    ]


def test_the_docs_public_api_section_names_every_public_module_and_name() -> None:
    page = (ROOT / "docs" / "toolkit.md").read_text(encoding="utf-8")
    section = page[page.index("\n## Public API\n"):page.index("\n## ", page.index("\n## Public API\n") + 1)]
    rows = {row.split("|")[1].strip().strip("`"): row for row in section.splitlines() if row.startswith("| `evidencekit.")}
    assert sorted(rows) == sorted(PUBLIC_MODULES)
    missing = [f"{name}.{exported}" for name in PUBLIC_MODULES
               for exported in importlib.import_module(name).__all__ if f"`{exported}`" not in rows[name]]
    assert missing == []
