"""The conformance gate is the toolkit's: the library example (another domain, its own contracts),
locked, generated and served by its own app, conforms over REST, MCP over HTTP and MCP over stdio."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidencekit.cli import main as evidencekit
from evidencekit.codegen._cli import main as codegen
from evidencekit.testing._serve import serve_app
from tests.support import REPO

EXAMPLE = REPO / "examples" / "library"
TOKEN = "gate-librarian-token"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("gate-library") / "library"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("generated", "contracts.lock.json", "__pycache__",
                                                                 ".venv", ".pytest_cache", ".hypothesis"))
    assert codegen(["lock", "--project", str(root)]) == 0 and codegen(["generate", "--project", str(root)]) == 0
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.split(".")[0] == "library_api"]:
            del sys.modules[name]


def test_the_library_example_conforms(library: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from library_api.generated.app import create_app
    from library_api.handlers import SAMPLE_BOOKS, Catalogue
    from library_api.serve import hooks_for

    monkeypatch.chdir(library)  # the contracts: the project's [tool.evidencekit.codegen]
    with serve_app(create_app(Catalogue(SAMPLE_BOOKS), hooks_for(TOKEN))) as base:
        code = evidencekit(["conformance", "--url", base, "--mcp-url", f"{base}/mcp", "--max-examples", "8",
                            "--header", f"Authorization: Bearer {TOKEN}", "--seed", "11", "--strict",
                            "--require-success",
                            "--mcp-stdio", f"{sys.executable} -m library_api.serve stdio",
                            "--env", f"LIBRARY_API_TOKEN={TOKEN}",
                            "--env", f"PYTHONPATH={os.pathsep.join([str(library), *sys.path])}"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "conforms: 0 violations (rest 0, mcp-http 0, mcp-stdio 0)" in out
    assert out.count("  ok    ") == 9 and "note:" not in out  # every operation answered with success


def test_read_only_against_the_library(library: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from library_api.generated.app import create_app
    from library_api.handlers import SAMPLE_BOOKS, Catalogue
    from library_api.serve import hooks_for

    monkeypatch.chdir(library)
    catalogue = Catalogue(SAMPLE_BOOKS)
    with serve_app(create_app(catalogue, hooks_for(TOKEN))) as base:
        code = evidencekit(["conformance", "--url", base, "--max-examples", "8", "--read-only",
                            "--header", f"Authorization: Bearer {TOKEN}"])
    out, _ = capsys.readouterr()
    assert code == 0, out
    assert len(catalogue.books) == len(SAMPLE_BOOKS)  # add_book never ran
    assert "add_book" in out and "skipped: not called: --read-only" in out
