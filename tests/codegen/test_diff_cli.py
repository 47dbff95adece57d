"""`codegen diff` on real contract files: what the MCP and REST variants of retrieve differ in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evidencekit.codegen._cli import main
from tests.support import CONTRACTS_DIR

RETRIEVE = CONTRACTS_DIR / "sosoapi_research_evidence_retrieve"


def test_mcp_vs_rest_request_variant(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["diff", str(RETRIEVE / "mcp.input.schema.json"), str(RETRIEVE / "rest.input.schema.json")])
    out = capsys.readouterr().out
    assert rc == 1  # the REST variant's uuid patterns reject inputs the MCP variant accepts
    assert "BREAKING  constraint_tightened  $.workspace_id" in out
    assert "BREAKING  constraint_tightened  $.mutation_id" in out
    assert "3 changes, 2 breaking" in out


def test_mcp_vs_rest_response_variant(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["diff", str(RETRIEVE / "mcp.output.schema.json"), str(RETRIEVE / "rest.output.schema.json")])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.count("additional_properties_loosened") == 6
    assert "ok        constraint_tightened  $.retrieval.id" in out


def test_folder_diff_and_identical_contracts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "sosoapi_research_evidence_retrieve"
    shutil.copytree(RETRIEVE, copy)
    assert main(["diff", str(RETRIEVE), str(copy)]) == 0
    assert capsys.readouterr().out == "no changes\n"
    schema = json.loads((copy / "rest.input.schema.json").read_text())
    schema["required"].append("language")
    (copy / "rest.input.schema.json").write_text(json.dumps(schema))
    assert main(["diff", str(RETRIEVE), str(copy)]) == 1
    out = capsys.readouterr().out
    assert "== rest input (request)\nBREAKING  required_added  $.language: property became required; " in out
    assert out.endswith("1 change, 1 breaking\n")


def test_diff_needs_a_direction_for_unnamed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text('{"type": "string"}')
    b.write_text('{"type": "string", "maxLength": 3}')
    assert main(["diff", str(a), str(b)]) == 2
    assert "--direction" in capsys.readouterr().err
    assert main(["diff", str(a), str(b), "--direction", "response"]) == 0
    assert main(["diff", str(a), str(b), "--direction", "request"]) == 1


def test_folder_diff_reports_a_renamed_tool_as_breaking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old" / "sosoapi_research_evidence_status", tmp_path / "new" / "sosoapi_research_evidence_status"
    shutil.copytree(CONTRACTS_DIR / "sosoapi_research_evidence_status", old)
    shutil.copytree(old, new)
    manifest = json.loads((new / "manifest.json").read_text())
    manifest["mcp"]["tool_name"] = "evidence_status"
    (new / "manifest.json").write_text(json.dumps(manifest))
    assert main(["diff", str(old), str(new)]) == 1
    assert "BREAKING  MCP tool name 'sosoapi_research_evidence_status' -> 'evidence_status'" in capsys.readouterr().out


def test_folders_are_compared_by_the_operation_they_hold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An old version kept under another folder name (status-v1) is still the same operation."""
    old = tmp_path / "status-v1"
    shutil.copytree(CONTRACTS_DIR / "sosoapi_research_evidence_status", old)
    assert main(["diff", str(old), str(CONTRACTS_DIR / "sosoapi_research_evidence_status")]) == 0
    assert main(["diff", str(old), str(CONTRACTS_DIR / "get_documents")]) == 1  # another operation
    assert ("BREAKING  renamed 'sosoapi_research_evidence_status' -> 'get_documents'; breaks old clients: "
            "they call it by its name") in capsys.readouterr().out
