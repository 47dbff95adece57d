"""The importer takes the published pages into contracts/ exactly as they are committed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evidencekit.contracts._loader import Operation, load_operation, read_json
from evidencekit.server.evidence.page_import import (
    PageError,
    detect_language,
    import_page,
    json_objects,
    read_page,
)
from tests.conftest import (
    SEED_DE_RETRIEVE,
    SEED_FR_STATUS,
    SEED_HE_RETRIEVE_REST,
    SEED_ZH_RETRIEVE,
)
from tests.support import CONTRACTS_DIR

PAGES = [SEED_DE_RETRIEVE, SEED_HE_RETRIEVE_REST, SEED_ZH_RETRIEVE, SEED_FR_STATUS]


def test_each_page_is_read_with_its_facts() -> None:
    de = read_page(SEED_DE_RETRIEVE.read_text())
    assert (de.language, de.surface, de.tool_name) == ("de", "mcp", "sosoapi_research_evidence_retrieve")
    assert de.title == "Eine öffentliche Forschungsquelle lesen"
    assert de.annotations == {"readOnlyHint": False, "destructiveHint": False,
                              "idempotentHint": True, "openWorldHint": True}
    assert (de.profiles, de.transports) == (["full"], ["stdio", "http"])
    assert (de.rest_path, de.capability) == ("/research-api/evidence/retrieve", "agent:research")

    he = read_page(SEED_HE_RETRIEVE_REST.read_text())
    assert (he.language, he.surface, he.rest_method, he.rest_path) == (
        "he", "rest", "POST", "/research-api/evidence/retrieve")
    assert he.published_hash == "sha256:ab393e91e9b7f18a"
    assert he.credential_kinds == ["user_session", "delegated_oauth", "personal_access_token"]
    assert he.minimum_role == "editor"
    assert he.completion_rule.startswith("durable bounded read receipt")
    assert he.input_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"

    # The French page is rendered with the tool name glued to the description.
    fr = read_page(SEED_FR_STATUS.read_text())
    assert (fr.language, fr.tool_name) == ("fr", "sosoapi_research_evidence_status")
    assert fr.description.startswith("Lire le même reçu")
    assert fr.annotations["readOnlyHint"] is True
    assert fr.rest_path == "/research-api/evidence/status"
    assert fr.output_schema["properties"]["retrieval"]["anyOf"][1] == {"type": "null"}


def test_zh_and_de_pages_publish_identical_schemas() -> None:
    de, zh = read_page(SEED_DE_RETRIEVE.read_text()), read_page(SEED_ZH_RETRIEVE.read_text())
    assert (de.input_schema, de.output_schema) == (zh.input_schema, zh.output_schema)
    assert zh.language == "zh"


def test_import_into_an_empty_folder_reproduces_the_committed_contracts(tmp_path: Path) -> None:
    for page in PAGES:
        import_page(page, tmp_path)
    for name in ("sosoapi_research_evidence_retrieve", "sosoapi_research_evidence_status"):
        # Not load_operation: the pages publish no English title, which the committed manifest adds.
        imported = Operation(name, tmp_path / name, read_json(tmp_path / name / "manifest.json"))
        committed = load_operation(CONTRACTS_DIR / name)
        for rel, value in imported.document.items():
            if rel == "manifest.json":
                continue
            assert value == committed.document[rel], rel
            assert (tmp_path / name / rel).read_text() == (CONTRACTS_DIR / name / rel).read_text()
        # Every fact the pages publish matches; the committed manifest adds English and notes.
        assert imported.manifest["model_variant"] == committed.manifest["model_variant"]
        for key in ("mcp", "rest", "variants", "examples"):
            for field, value in imported.manifest[key].items():
                if field != "summary":
                    assert committed.manifest[key][field] == value, (name, key, field)


def test_reimporting_is_idempotent(tmp_path: Path) -> None:
    first = [import_page(page, tmp_path).written for page in PAGES]
    assert all(first[:2])
    again = [import_page(page, tmp_path).written for page in PAGES]
    assert again == [[], [], [], []]


def test_import_keeps_hand_added_manifest_keys(contracts_copy: Path) -> None:
    import_page(SEED_FR_STATUS, contracts_copy)
    manifest = json.loads((contracts_copy / "sosoapi_research_evidence_status" / "manifest.json").read_text())
    assert manifest["title"]["en"] == "Read the retrieval status of a public source"
    assert manifest["auth"]["minimum_role"] == "viewer"


def test_a_page_without_schemas_is_refused() -> None:
    with pytest.raises(PageError, match="expected an input and an output JSON Schema"):
        read_page("MCP-Tool\n\nTitle\n\nsosoapi_x\n\nnothing here\n")


def test_json_objects_handles_flattened_and_pretty_blocks() -> None:
    text = 'Intro\n{\n"a": 1\n}Glued text\n{"b": {"c": [1, 2]}}\nnot json {"x": 1}\n{broken\n'
    assert json_objects(text) == [{"a": 1}, {"b": {"c": [1, 2]}}]


@pytest.mark.parametrize(("text", "language"), [
    ("Required input and the output", "en"),
    ("Erforderlich: die Eingabe und der Wert", "de"),
    ("Champs requis et le reste", "fr"),
    ("שדות הבקשה", "he"),
    ("输入字段", "zh"),
])
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_the_same_page_under_another_name_keeps_the_contract_and_its_hash(contracts_copy: Path,
                                                                          tmp_path: Path) -> None:
    before = load_operation(contracts_copy / "sosoapi_research_evidence_status").contract_hash
    renamed = tmp_path / "status-page-2026-12.txt"
    renamed.write_text(SEED_FR_STATUS.read_text(encoding="utf-8"), encoding="utf-8")
    assert import_page(renamed, contracts_copy).written == []
    assert load_operation(contracts_copy / "sosoapi_research_evidence_status").contract_hash == before


def test_import_names_the_page_that_cannot_be_read_and_writes_nothing(contracts_copy: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from evidencekit.server.evidence.page_import import main

    changed = tmp_path / "changed.txt"
    text = SEED_FR_STATUS.read_text(encoding="utf-8")
    changed.write_text(text.replace('"format": "uuid"', '"format": "uri"', 1), encoding="utf-8")
    broken = tmp_path / "broken.txt"
    broken.write_text("too\nshort\n", encoding="utf-8")
    before = {path: path.read_bytes() for path in contracts_copy.rglob("*.json")}
    assert main(["--contracts", str(contracts_copy), str(changed), str(broken)]) == 2
    assert f"error: {broken}: too short to be a contract page" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in contracts_copy.rglob("*.json")} == before


def _deep(folder: Path) -> Path:
    page = folder / "deep.txt"
    page.write_text("MCP-Tool\n\nTitle\n\nsosoapi_x\n\n{" + '"a":{' * 100_000 + "}" * 100_001 + "\n", encoding="utf-8")
    return page


def _bytes(folder: Path) -> Path:
    page = folder / "latin1.txt"
    page.write_bytes(SEED_FR_STATUS.read_bytes().replace("é".encode(), b"\xe9", 1))
    return page


def _folder(folder: Path) -> Path:
    (folder / "pages").mkdir()
    return folder / "pages"


def _text(name: str, text: str) -> Any:
    def write(folder: Path) -> Path:
        (folder / name).write_text(text, encoding="utf-8")
        return folder / name
    return write


def _retarget(name: str, seed: Path, old: str, new: str) -> Any:
    text = seed.read_text(encoding="utf-8")
    assert text.count(old) == 1
    return _text(name, text.replace(old, new))


@pytest.mark.parametrize(("make", "says"), [
    (_deep, "the JSON block at line 7 nests deeper than 100 levels"),
    (lambda folder: folder / "missing.txt", "file not found"),
    (_folder, "is a directory, not a page"),
    (_bytes, "not UTF-8 text (byte 0xe9 at offset "),
    (_text("prose.txt", "MCP-Tool\n\nTitle\n\nsosoapi_x\n\nno contract in here\n"),
     "expected an input and an output JSON Schema, found 0"),
    (_text("array.json", "[\n1,\n2,\n3\n]\n"), "expected an input and an output JSON Schema, found 0"),
    (_retarget("healthz.txt", SEED_HE_RETRIEVE_REST, "\nPOST /research-api/evidence/retrieve\n", "\nPOST /healthz\n"),
     "rest.path '/healthz' is reserved: every generated app serves the health check there"),
    (_retarget("docs.txt", SEED_FR_STATUS, "}- /research-api/evidence/status:", "}- /docs/status:"),
     "rest.path '/docs/status' is reserved: every generated app serves the interactive documentation there"),
])
def test_a_bad_page_is_one_line_naming_it_and_exit_2(make: Any, says: str, contracts_copy: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A page holding deeply nested JSON was a RecursionError traceback (exit 1); a missing page, a
    folder or a non-UTF-8 one did not say which page (or what) was wrong."""
    from evidencekit.server.evidence.page_import import main

    page = make(tmp_path)
    before = {path: path.read_bytes() for path in contracts_copy.rglob("*.json")}
    assert main(["--contracts", str(contracts_copy), str(SEED_DE_RETRIEVE), str(page)]) == 2
    out, err = capsys.readouterr()
    assert err == f"error: {page}: {err.split(': ', 2)[2]}" and err.count("\n") == 1, err
    assert says in err and "Traceback" not in err + out
    assert {path: path.read_bytes() for path in contracts_copy.rglob("*.json")} == before  # nor the good page


def test_a_manifest_that_is_not_an_object_is_named_before_any_page_is_written(contracts_copy: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from evidencekit.server.evidence.page_import import main

    manifest = contracts_copy / "sosoapi_research_evidence_status" / "manifest.json"
    manifest.write_text("[1, 2]\n", encoding="utf-8")
    before = {path: path.read_bytes() for path in contracts_copy.rglob("*.json")}
    assert main(["--contracts", str(contracts_copy), str(SEED_DE_RETRIEVE), str(SEED_FR_STATUS)]) == 2
    assert capsys.readouterr().err == f"error: {manifest}: manifest must be a JSON object, not list\n"
    assert {path: path.read_bytes() for path in contracts_copy.rglob("*.json")} == before


def test_the_command_refuses_a_deeply_nested_page_without_a_traceback(contracts_copy: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    page = _deep(tmp_path)
    done = subprocess.run([Path(sys.executable).parent / "research-evidence", "import-pages", "--contracts",
                           str(contracts_copy), str(page)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr == f"error: {page}: the JSON block at line 7 nests deeper than 100 levels: no published " \
                          "contract does\n"
