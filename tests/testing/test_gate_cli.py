"""`evidencekit conformance` on the command line: exit 2 with one clear message for bad usage (flags,
the contracts folder, the lock, pins), exit 3 with one line for a target that cannot be reached."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from evidencekit.cli import main as evidencekit
from evidencekit.contracts._loader import LOCK_NAME, load_operation
from tests.support import CONTRACTS_DIR

CLOSED = "http://127.0.0.1:9"  # nothing listens on the discard port


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = evidencekit(["conformance", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("args", "says"), [
    ([], "name a target: --url BASE, --mcp-url URL or --mcp-stdio COMMAND"),
    (["--url", CLOSED, "--contracts", "no/such/folder"], "--contracts no/such/folder: no such folder"),
    (["--url", CLOSED, "--operation", "nothing_here"], "--operation nothing_here: no such operation"),
    (["--url", CLOSED, "--header", "no colon"], "expected 'NAME: VALUE'"),
    (["--url", CLOSED, "--header", "Authorization: Bearer ${GATE_UNSET_VARIABLE}"],
     "--header names ${GATE_UNSET_VARIABLE}, which is not set"),
    (["--url", CLOSED, "--set", "nothing_has_this=1"], "--set nothing_has_this: no input property"),
    (["--url", CLOSED, "--set", "workspace_id=not-a-uuid"], "refuses it: 'not-a-uuid' is not a 'uuid'"),
    (["--url", CLOSED, "--set", "=1"], "expected [OPERATION:]NAME=VALUE"),
    (["--url", CLOSED, "--max-examples", "0"], "--max-examples must be at least 1"),
    (["--url", CLOSED, "--operation", "get_documents", "--set", "sosoapi_research_evidence_status:workspace_id=x"],
     "sosoapi_research_evidence_status is not among the operations chosen"),
    (["--url", CLOSED, "--set", "no_such_operation:workspace_id=x"], "no operation 'no_such_operation'"),
], ids=["no-target", "no-contracts", "unknown-operation", "bad-header", "unset-variable", "pin-names-nothing",
        "pin-refused", "bad-pin", "no-examples", "pin-of-an-operation-not-chosen", "pin-of-no-operation"])
def test_bad_usage_is_exit_2_naming_the_problem(capsys: pytest.CaptureFixture[str], args: list[str],
                                                says: str) -> None:
    if "--contracts" not in args:
        args = [*args, "--contracts", str(CONTRACTS_DIR)]
    code, out, err = run(capsys, *args)
    assert code == 2 and says in err and err.count("\n") == 1, err
    assert out == ""


def test_a_missing_or_stale_lock_is_bad_usage(capsys: pytest.CaptureFixture[str], contracts_copy: Path) -> None:
    schema = contracts_copy / "get_documents" / "mcp.input.schema.json"
    changed = json.loads(schema.read_text())
    changed["properties"]["names"]["maxItems"] = 21
    schema.write_text(json.dumps(changed))
    code, _, err = run(capsys, "--url", CLOSED, "--contracts", str(contracts_copy))
    assert code == 2 and "the lock does not pin these contracts" in err
    assert "get_documents: the contract is sha256:" in err and "run `evidencekit codegen lock`" in err
    (contracts_copy / LOCK_NAME).unlink()
    code, _, err = run(capsys, "--url", CLOSED, "--contracts", str(contracts_copy))
    assert code == 2 and f"{LOCK_NAME}: file not found" in err


def test_a_surface_none_of_the_chosen_operations_is_published_on_is_bad_usage(
        capsys: pytest.CaptureFixture[str], contracts_copy: Path) -> None:
    manifest = contracts_copy / "get_documents" / "manifest.json"
    published = json.loads(manifest.read_text())
    del published["rest"]
    manifest.write_text(json.dumps(published))
    lock = json.loads((contracts_copy / LOCK_NAME).read_text())
    lock["operations"]["get_documents"]["contract_hash"] = load_operation(manifest.parent).contract_hash
    (contracts_copy / LOCK_NAME).write_text(json.dumps(lock))
    code, _, err = run(capsys, "--url", CLOSED, "--contracts", str(contracts_copy), "--operation", "get_documents")
    assert code == 2 and "rest: no chosen operation of" in err and "is published there" in err


def test_the_contracts_default_to_the_projects(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "--url", CLOSED)
    assert code == 2 and "--contracts DIR is needed: no pyproject.toml with [tool.evidencekit.codegen]" in err
    monkeypatch.chdir(CONTRACTS_DIR / "get_documents")  # below this project's root: its contracts
    code, _, err = run(capsys, "--url", CLOSED)
    assert code == 3, err


def test_without_the_testing_extra_it_says_what_to_install(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "hypothesis_jsonschema" else find(name, *rest))
    code, _, err = run(capsys, "--url", CLOSED)
    assert code == 2 and "pip install 'evidencekit[testing]'" in err


@pytest.mark.parametrize(("target", "says"), [
    (["--url", CLOSED], "rest unreachable: cannot reach http://127.0.0.1:9/"),
    (["--mcp-url", CLOSED + "/mcp"], "mcp-http unreachable: http://127.0.0.1:9/mcp did not start an MCP session"),
    (["--mcp-stdio", "no-such-command-for-the-gate --stdio"],
     "mcp-stdio unreachable: cannot start no-such-command-for-the-gate --stdio: No such file or directory"),
    (["--mcp-stdio", f"{sys.executable} -c \"import sys; sys.exit('cannot open the database')\""],
     "did not start an MCP session: JSON-RPC error -32000: Connection closed; its stderr ends: cannot open the "
     "database"),
], ids=["rest", "mcp-http", "stdio-not-found", "stdio-exits"])
def test_an_unreachable_target_is_one_line_and_exit_3(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      target: list[str], says: str) -> None:
    report = tmp_path / "junit.xml"
    code, out, err = run(capsys, "--contracts", str(CONTRACTS_DIR), *target, "--timeout", "5",
                         "--junit", str(report))
    assert code == 3, out + err
    assert says in err and err.count("\n") == 1, err
    assert "UNREACHABLE" in out and "does not conform: 0 violations, 1 unreachable" in out
    assert 'type="unreachable"' in report.read_text()


def test_the_command_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert evidencekit(["--help"]) == 0
    assert "conformance (--url BASE | --mcp-url URL | --mcp-stdio CMD)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        evidencekit(["conformance", "--help"])
    helped = capsys.readouterr().out
    assert done.value.code == 0 and "exit codes: 0 conforms, 1 violations, 2 usage, 3 unreachable" in helped
    assert "Toolkit-protocol checks" in helped and "--read-only" in helped
