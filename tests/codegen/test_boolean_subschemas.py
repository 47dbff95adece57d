"""A boolean subschema (`"x": true`, `"y": false`) is a schema like any other: the generator, its
reference docs, the differ and the conformance gate take it (the docs' field table crashed on it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidencekit.cli import main as evidencekit
from evidencekit.codegen._fields import field_rows
from evidencekit.codegen._schema_diff import diff_schemas
from evidencekit.testing._serve import serve_app
from tests.support import edit_json, library_project

TOKEN = "boolean-librarian"


def with_booleans(project: Path) -> None:
    def request(schema: dict[str, Any]) -> None:
        schema["properties"].update(hint=True, never=False)

    def answer(schema: dict[str, Any]) -> None:
        schema["properties"]["extra"] = True
        schema["$defs"]["Book"]["properties"]["note"] = True

    edit_json(project / "contracts/search_books/mcp.input.schema.json", request)
    edit_json(project / "contracts/search_books/mcp.output.schema.json", answer)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"\n', 'version = "0.1.0"\ndocs = "docs"\n'))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with library_project(tmp_path_factory.mktemp("booleans"), with_booleans) as folder:
        yield folder


def test_generate_and_its_docs_take_boolean_subschemas(project: Path) -> None:
    page = next((project / "docs").rglob("search_books*.md")).read_text()
    assert "`hint`" in page and "`any` optional" in page and "`never`" in page and "`never` optional" in page
    rows = {row.path: row.type for row in field_rows({"properties": {"a": True, "b": False}, "items": True})}
    assert rows == {"$": "any", "a": "any", "b": "never", "$[]": "any"}


def test_the_differ_reads_boolean_subschemas() -> None:
    (opened,) = diff_schemas({"properties": {"x": False}}, {"properties": {"x": True}}, "request")
    assert not opened.breaking and opened.kind == "constraint_loosened"
    (closed,) = diff_schemas({"properties": {"x": True}}, {"properties": {"x": False}}, "request")
    assert closed.breaking


def test_the_gate_passes_a_server_of_such_contracts(project: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from library_api.generated.app import create_app
    from library_api.handlers import SAMPLE_BOOKS, Catalogue
    from library_api.serve import hooks_for

    monkeypatch.chdir(project)
    with serve_app(create_app(Catalogue(SAMPLE_BOOKS), hooks_for(TOKEN))) as base:
        code = evidencekit(["conformance", "--url", base, "--mcp-url", f"{base}/mcp", "--max-examples", "10",
                            "--header", f"Authorization: Bearer {TOKEN}", "--seed", "5", "--strict",
                            "--operation", "search_books"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
