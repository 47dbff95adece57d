"""The generator's configuration: found from the working directory up, every mistake named."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evidencekit.codegen._cli import main
from evidencekit.codegen._config import RUNTIME_ERRORS, ConfigError, load_config
from tests.support import REPO


def project(tmp_path: Path, table: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n{table}\n', encoding="utf-8")
    return tmp_path


def test_this_repository_is_configured_like_any_project() -> None:
    config = load_config(REPO)
    assert config.contracts == REPO / "contracts"
    assert config.relative(config.server_dir) == "evidencekit/server/generated"
    assert config.relative(config.client_dir) == "evidencekit/client/generated"
    assert config.errors["409"].read_only is False and config.errors["400"] == RUNTIME_ERRORS["400"]


def test_the_project_is_found_from_a_folder_below_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path, '[tool.evidencekit.codegen]\npackage = "demo_api.generated"')
    (root / "src" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(root / "src" / "deeper")
    config = load_config()
    assert config.root == root.resolve()
    assert config.title == "demo"  # the project's name when no title is given
    assert config.server_dir == root.resolve() / "demo_api" / "generated"
    assert config.docs is None and config.client_package == "demo_api.generated"


@pytest.mark.parametrize(("table", "says"), [
    ("[tool.other]\nx = 1", "no pyproject.toml with [tool.evidencekit.codegen]"),
    ('[tool.evidencekit.codegen]\npackage = "demo-api"', "is not a dotted package name"),
    ('[tool.evidencekit.codegen]\npackage = "demo"\npakage = "x"', "unknown keys ['pakage']"),
    ('[tool.evidencekit.codegen]\npackage = "demo"\n[tool.evidencekit.codegen.errors."200"]\nname = "A"\n'
     'description = "b"', "must be an HTTP error status"),
    ('[tool.evidencekit.codegen]\npackage = "demo"\n[tool.evidencekit.codegen.errors."409"]\nname = "A"',
     "takes name, description, read_only and operations"),
    ('[tool.evidencekit.codegen]\ncontracts = "contracts"', "package must be a non-empty string"),
    ('[tool.evidencekit.codegen]\npackage = "demo"\nhealthz = "/health"', "healthz must be true or false"),
])
def test_a_bad_configuration_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, says: str) -> None:
    monkeypatch.chdir(project(tmp_path, table))
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert says in str(raised.value)


def test_commands_outside_a_project_say_where_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    assert "run from your project's root, or pass --project DIR" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing written


def test_generate_writes_only_under_the_project(tmp_path: Path, contracts_copy: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "demo", '[tool.evidencekit.codegen]\npackage = "demo_api.generated"\n'
                                      'docs = "docs/api"\ntitle = "Demo API"')
    os.replace(contracts_copy, root / "contracts")
    assert main(["generate", "--project", str(root)]) == 0
    written = {path.relative_to(root).parts[0] for path in root.rglob("*") if path.is_file()}
    assert written == {"pyproject.toml", "contracts", "demo_api", "docs"}
    assert (root / "demo_api/generated/app.py").read_text().count("from demo_api.generated.") >= 3
    assert '"title": "Demo API"' in (root / "demo_api/generated/openapi.json").read_text()
    assert main(["check", "--project", str(root)]) == 0


def test_a_project_without_rest_operations_gets_no_client(tmp_path: Path) -> None:
    root = project(tmp_path, '[tool.evidencekit.codegen]\npackage = "ping_api.generated"')
    folder = root / "contracts" / "ping"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "operation": "ping", "python_name": "ping", "title": {"en": "Ping"}, "description": {"en": "Echo."},
        "variants": {"main": {"input": "in.json", "output": "out.json"}}, "model_variant": "main",
        "mcp": {"tool_name": "ping", "variant": "main", "annotations": {"readOnlyHint": True}}}))
    word = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
    (folder / "in.json").write_text(json.dumps(word))
    (folder / "out.json").write_text(json.dumps(word))
    assert main(["lock", "--project", str(root)]) == 0
    assert main(["generate", "--project", str(root)]) == 0
    generated = root / "ping_api" / "generated"
    assert (generated / "app.py").exists() and not (generated / "client.py").exists()
    assert "def rest_bindings(handlers: Handlers) -> list[Binding]:\n    return []" in (generated / "rest.py").read_text()


@pytest.mark.parametrize(("keys", "says"), [
    ('package = "demo_api.generated"\ndocs = "."', "not the project itself"),
    ('package = "demo_api.generated"\nsource_root = ".."', "must be a folder inside the project"),
    ('package = "demo_api.generated"\ndocs = "/tmp/elsewhere"', "must be a folder inside the project"),
    ('package = "demo_api.generated"\ndocs = "contracts/docs"', "overlaps the contracts"),
    ('package = "demo_api.generated"\nclient_package = "demo_api"', "overlap"),
    ('package = "demo_api"\ncontracts = "demo_api/contracts"', "overlaps the contracts"),
])
def test_the_generator_owns_only_folders_of_its_own(tmp_path: Path,
                                                    keys: str, says: str) -> None:
    """It deletes what it did not write in them: never the project, the contracts or hand-written code."""
    root = project(tmp_path / "demo", f"[tool.evidencekit.codegen]\n{keys}")
    with pytest.raises(ConfigError) as raised:
        load_config(root)
    assert says in str(raised.value)


def test_the_openapi_document_of_a_contract_with_refs_is_valid(tmp_path: Path) -> None:
    """$defs, definitions and recursion: every $ref of the document points at something."""
    from openapi_spec_validator import validate

    root = project(tmp_path, '[tool.evidencekit.codegen]\npackage = "tree_api.generated"')
    folder = root / "contracts" / "tree"
    folder.mkdir(parents=True)
    node = {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
    request = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
               "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"], "$defs": {"Node": node}}
    answer = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"count": {"$ref": "#/definitions/Count"}}, "definitions": {"Count": {"type": "integer"}}}
    (folder / "in.json").write_text(json.dumps(request))
    (folder / "out.json").write_text(json.dumps(answer))
    (folder / "manifest.json").write_text(json.dumps({
        "operation": "tree", "python_name": "tree", "title": {"en": "Tree"}, "description": {"en": "Count."},
        "variants": {"main": {"input": "in.json", "output": "out.json"}}, "model_variant": "main",
        "rest": {"path": "/tree", "method": "POST", "variant": "main"}}))
    assert main(["lock", "--project", str(root)]) == 0
    assert main(["generate", "--project", str(root)]) == 0
    document = json.loads((root / "tree_api/generated/openapi.json").read_text())
    validate(document)  # openapi-spec-validator resolves every $ref
    node_ref = document["components"]["schemas"]["TreeInput"]["properties"]["root"]["$ref"]
    assert node_ref == "#/components/schemas/TreeInput/$defs/Node"


def test_a_published_example_its_schema_refuses_is_refused(tmp_path: Path, contracts_copy: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    example = contracts_copy / "sosoapi_research_evidence_status" / "examples" / "mcp.input.json"
    published = json.loads(example.read_text())
    del published["arguments"]["workspace_id"]  # a required field the example leaves out
    example.write_text(json.dumps(published))
    assert main(["lock", "--contracts", str(contracts_copy)]) == 2
    err = capsys.readouterr().err
    assert "published examples that their own schemas refuse" in err and "'workspace_id' is a required property" in err
