"""The field tables in the reference docs are the tables the published pages show."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evidencekit.codegen._fields import field_rows, markdown_table
from evidencekit.contracts._loader import load_operation
from tests.conftest import SEED_DE_RETRIEVE, SEED_HE_RETRIEVE_REST, SEED_ZH_RETRIEVE
from tests.support import CONTRACTS_DIR

REQUIRED_WORDS = {"Im Elternobjekt erforderlich", "חובה באובייקט האב", "在父对象中必填"}
OPTIONAL_WORDS = {"Optional / Element", "רשות / פריט", "可选／项目"}


def published_tables(page: Path) -> list[list[tuple[str, str, str, bool, str]]]:
    tables: list[list[tuple[str, str, str, bool, str]]] = []
    for line in page.read_text().splitlines():
        cells = line.split("\t")
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        path = re.match(r"`([^`]*)`(.*)$", cells[0])
        kind = re.match(r"`([^`]*)`(.*)$", cells[1])
        assert path and kind
        required = kind.group(2).strip()
        assert required in REQUIRED_WORDS | OPTIONAL_WORDS, required
        row = (path.group(1), path.group(2).strip(), kind.group(1).replace("\\|", "|"),
               required in REQUIRED_WORDS, cells[2])
        if row[0] == "$":
            tables.append([])
        tables[-1].append(row)
    return tables


@pytest.mark.parametrize(("page", "variant"), [
    (SEED_DE_RETRIEVE, "mcp"), (SEED_ZH_RETRIEVE, "mcp"), (SEED_HE_RETRIEVE_REST, "rest"),
])
def test_rows_match_the_published_tables(page: Path, variant: str) -> None:
    schemas = load_operation(CONTRACTS_DIR / "sosoapi_research_evidence_retrieve").variants[variant]
    published = published_tables(page)
    assert len(published) == 2
    for table, schema in zip(published, (schemas.input_schema, schemas.output_schema), strict=True):
        ours = [
            (r.path, r.branch, r.type, r.required,
             " ".join(f"`{c}`".replace("|", "\\|") for c in r.constraints) or "—")
            for r in field_rows(schema)
        ]
        assert ours == table


def test_markdown_table_escapes_pipes_and_marks_optional() -> None:
    table = markdown_table({"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string", "pattern": "^(x|y)$"}, {"type": "null"}]}}})
    assert "| `a` | `string \\| null` optional | — |" in table
    assert '| `a` anyOf 1 | `string` optional | `pattern: "^(x\\|y)$"` |' in table
