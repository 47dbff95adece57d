from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evidencekit.codegen._lock import lock_problems
from evidencekit.contracts._loader import (
    ContractError,
    load_operation,
    load_operations,
)
from tests.support import CONTRACTS_DIR

EXPECTED = {"get_documents", "search_documents", "sosoapi_research_evidence_retrieve",
            "sosoapi_research_evidence_status"}


def test_every_published_operation_is_a_contract() -> None:
    operations = {op.name: op for op in load_operations(CONTRACTS_DIR)}
    assert set(operations) == EXPECTED
    assert set(operations["sosoapi_research_evidence_retrieve"].variants) == {"mcp", "rest"}
    assert operations["sosoapi_research_evidence_status"].rest["path"] == "/research-api/evidence/status"


def test_contract_hash_has_the_published_form_and_is_locked() -> None:
    operations = load_operations(CONTRACTS_DIR)
    for op in operations:
        assert re.fullmatch(r"sha256:[0-9a-f]{16}", op.contract_hash)
    assert lock_problems(operations, CONTRACTS_DIR) == []


def test_hash_ignores_formatting_but_not_content(contracts_copy: Path) -> None:
    folder = contracts_copy / "sosoapi_research_evidence_status"
    before = load_operation(folder).contract_hash
    schema_path = folder / "mcp.input.schema.json"
    schema = json.loads(schema_path.read_text())
    schema_path.write_text(json.dumps(schema, separators=(",", ":")))  # RFC 8785: same canonical JSON
    assert load_operation(folder).contract_hash == before
    schema["properties"]["mutation_id"]["format"] = "uri"
    schema_path.write_text(json.dumps(schema))
    assert load_operation(folder).contract_hash != before


def test_a_contract_change_without_a_lock_update_is_reported(contracts_copy: Path) -> None:
    folder = contracts_copy / "get_documents"
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["title"]["en"] = "Fetch documents"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    problems = lock_problems(load_operations(contracts_copy), contracts_copy)
    assert len(problems) == 1
    assert "contracts/get_documents changed" in problems[0] and "manifest.json" in problems[0]


def test_broken_contract_names_the_file(contracts_copy: Path) -> None:
    bad = contracts_copy / "get_documents" / "mcp.output.schema.json"
    bad.write_text("{not json")
    with pytest.raises(ContractError) as caught:
        load_operations(contracts_copy)
    assert str(bad) in str(caught.value) and "invalid JSON" in str(caught.value)


def _edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(("file", "change", "message"), [
    ("mcp.output.schema.json", lambda s: s["properties"].__setitem__("extra", {"$ref": "#/definitions/Nope"}),
     "$.properties.extra: $ref '#/definitions/Nope' points at nothing in this schema"),
    ("mcp.output.schema.json", lambda s: s["properties"].__setitem__("extra", {"$ref": "https://example.com/s.json"}),
     "is not local; contracts must be self-contained"),
    ("mcp.input.schema.json", lambda s: s.__setitem__("type", "strnig"), "not a valid JSON Schema at $.type"),
    ("manifest.json", lambda m: m["variants"]["mcp"].pop("input"), "$.variants.mcp.input: missing required key 'input'"),
    ("manifest.json", lambda m: m.__setitem__("variants", ["mcp"]), "$.variants: ['mcp'] is not of type 'object'"),
    ("manifest.json", lambda m: m["title"].pop("en"), "$.title.en: missing required key 'en'"),
    ("manifest.json", lambda m: m["mcp"].pop("tool_name"), "$.mcp.tool_name: missing required key 'tool_name'"),
    ("manifest.json", lambda m: m["rest"].pop("method"), "$.rest.method: missing required key 'method'"),
])
def test_a_malformed_contract_is_refused_with_the_file_and_the_place(contracts_copy: Path, file: str, change,  # type: ignore[no-untyped-def]
                                                                     message: str) -> None:
    path = contracts_copy / "sosoapi_research_evidence_status" / file
    _edit(path, change)
    with pytest.raises(ContractError) as caught:
        load_operations(contracts_copy)
    assert caught.value.path == str(path) and message in caught.value.message


def test_names_the_generated_code_and_surfaces_key_on_must_be_unique(contracts_copy: Path) -> None:
    _edit(contracts_copy / "get_documents" / "manifest.json", lambda m: m.__setitem__("python_name", "status"))
    with pytest.raises(ContractError) as caught:
        load_operations(contracts_copy)
    assert "python_name 'status' is also used by" in caught.value.message


def test_a_folder_without_contracts_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="no contracts here"):
        load_operations(tmp_path)


@pytest.mark.parametrize("auth", [{"capabilty": "agent:research"}, {}, {"minimum_role": ""}])
def test_an_auth_block_that_would_make_an_operation_public_by_mistake_is_refused(
        contracts_copy: Path, auth: dict[str, str]) -> None:
    """The runtime enforces `auth` as written: a typo or an empty block must not open an operation."""
    path = contracts_copy / "sosoapi_research_evidence_status" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["auth"] = auth
    path.write_text(json.dumps(manifest))
    with pytest.raises(ContractError, match=r"\$\.auth"):
        load_operation(path.parent)


def test_integers_beyond_two_to_the_53_are_hashed_exactly(contracts_copy: Path) -> None:
    """RFC 8785 numbers are IEEE doubles: a schema's maximum of 2^63 - 1 is hashed as its decimal
    text, not refused, and a neighbouring value hashes apart from it."""
    from evidencekit.contracts._loader import canonical_json

    path = contracts_copy / "sosoapi_research_evidence_status" / "mcp.input.schema.json"
    schema = json.loads(path.read_text())
    hashes = []
    for maximum in (9223372036854775807, 9223372036854775806):
        schema["properties"]["count"] = {"type": "integer", "maximum": maximum}
        path.write_text(json.dumps(schema))
        hashes.append(load_operation(path.parent).contract_hash)
    assert hashes[0] != hashes[1]
    assert canonical_json({"a": 2**63 - 1, "b": 2**53 - 1, "c": True}) == b'{"a":"9223372036854775807","b":9007199254740991,"c":true}'
