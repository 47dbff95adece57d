"""The contract is more than its schemas: `diff`, `lock` and `check --against` judge what an old
client relies on in the manifest and the project's policy (auth, the request limit, the REST
success status, the MCP tool's promises and text content, the variant a surface serves), each way round."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evidencekit.codegen._cli import main
from tests.codegen.test_compatibility_policy import codegen, commit, git, open_input
from tests.support import LIBRARY_EXAMPLE, edit_json, library_project

Edit = Callable[[dict[str, Any]], None]


def _auth(**values: Any) -> Edit:
    return lambda manifest: manifest.__setitem__("auth", values)


def _limit(value: int) -> Edit:
    return lambda manifest: manifest.__setitem__("max_request_bytes", value)


def _statuses(*values: int) -> Edit:
    return lambda manifest: manifest["rest"].__setitem__("success_statuses", list(values))


def _hint(name: str, value: bool) -> Edit:
    return lambda manifest: manifest["mcp"]["annotations"].__setitem__(name, value)


def _text(value: str) -> Edit:
    return lambda manifest: manifest["mcp"].__setitem__("text_content", value)


def _public(manifest: dict[str, Any]) -> None:
    manifest.pop("auth", None)


def _nothing(manifest: dict[str, Any]) -> None:
    pass


KINDS = ["personal_access_token", "delegated_oauth"]
# (operation, the old manifest's edit, the new one's, a line diff prints, whether it breaks old clients)
CASES = [
    ("get_book", _nothing, _auth(capability="catalog:read"),
     "BREAKING  auth added; breaks old clients: a call without a credential is now refused (401)", True),
    ("add_book", _nothing, _public, "ok        auth removed: the operation is public", False),
    ("add_book", _nothing, _auth(capability="catalog:write", minimum_role="editor"),
     "BREAKING  auth minimum_role 'editor' added; breaks old clients: a caller without 'editor' is now "
     "refused (403)", True),
    ("add_book", _auth(capability="catalog:write", minimum_role="editor"), _nothing,
     "ok        auth minimum_role 'editor' removed", False),
    ("add_book", _nothing, _auth(capability="catalog:admin"),
     "BREAKING  auth capability 'catalog:write' -> 'catalog:admin'", True),
    ("add_book", _nothing, _auth(capability="catalog:write", credential_kinds=KINDS),
     "BREAKING  auth credential_kinds any -> ['personal_access_token', 'delegated_oauth']", True),
    ("add_book", _auth(capability="catalog:write", credential_kinds=KINDS),
     _auth(capability="catalog:write", credential_kinds=KINDS[:1]),
     "BREAKING  auth credential_kinds delegated_oauth removed; breaks old clients: a delegated_oauth credential "
     "is now refused (403)", True),
    ("add_book", _auth(capability="catalog:write", credential_kinds=KINDS[:1]),
     _auth(capability="catalog:write", credential_kinds=KINDS), "ok        auth credential_kinds delegated_oauth added",
     False),
    ("get_book", _nothing, _limit(1024), "BREAKING  max_request_bytes 65,536 -> 1,024; breaks old clients: a request "
                                         "of 1,025 to 65,536 bytes is now refused (413)", True),
    ("get_book", _limit(1024), _nothing, "ok        max_request_bytes 1,024 -> 65,536", False),
    ("get_book", _nothing, _statuses(201),
     "BREAKING  REST success status 200 -> 201; breaks old clients: a client that expects 200", True),
    ("get_book", _statuses(201), _statuses(201, 200),
     "ok        REST success_statuses [201] -> [201, 200] (answers still sent with 201)", False),
    ("get_book", _nothing, _hint("readOnlyHint", False),
     "BREAKING  MCP tool no longer read-only (readOnlyHint); breaks old clients: a client that runs read-only "
     "tools without asking now runs one that writes", True),
    ("get_book", _hint("readOnlyHint", False), _nothing, "ok        MCP tool now read-only (readOnlyHint)", False),
    ("add_book", _nothing, _hint("destructiveHint", True),
     "BREAKING  MCP tool no longer not destructive (destructiveHint)", True),
    ("add_book", _hint("destructiveHint", True), _nothing, "ok        MCP tool now not destructive (destructiveHint)",
     False),
    ("add_book", _nothing, _hint("openWorldHint", True), "BREAKING  MCP tool no longer closed world (openWorldHint)",
     True),
    ("get_book", _nothing, _text("handler"),
     "BREAKING  MCP text content json -> handler; breaks old clients: a client that reads the result's JSON from "
     "its text content now gets the handler's text", True),
    ("get_book", _text("handler"), _nothing, "BREAKING  MCP text content handler -> json; breaks old clients: a client "
                                             "that reads the handler's text now gets the result's JSON", True),
    ("get_book", _nothing, _text("pretty"), "ok        MCP text content json -> pretty (the same JSON, laid out "
                                            "otherwise)", False),
]


def _pair(tmp_path: Path, operation: str, old_edit: Edit, new_edit: Edit) -> tuple[Path, Path]:
    folders = []
    for side, edit in (("old", old_edit), ("new", new_edit)):
        folder = tmp_path / side / operation
        shutil.copytree(LIBRARY_EXAMPLE / "contracts" / operation, folder)
        edit_json(folder / "manifest.json", edit)
        folders.append(folder)
    return folders[0], folders[1]


@pytest.mark.parametrize(("operation", "old_edit", "new_edit", "line", "breaking"), CASES,
                         ids=[case[3].split(";")[0].strip() for case in CASES])
def test_each_policy_change_has_its_verdict_both_ways(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      operation: str, old_edit: Edit, new_edit: Edit, line: str,
                                                      breaking: bool) -> None:
    old, new = _pair(tmp_path, operation, old_edit, new_edit)
    assert main(["diff", str(old), str(new)]) == (1 if breaking else 0)
    assert line in capsys.readouterr().out


def test_forward_mode_turns_a_loosening_into_the_break(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _pair(tmp_path, "add_book", _nothing, _public)
    assert main(["diff", str(old), str(new), "--compatibility-mode", "forward"]) == 1
    assert ("BREAKING  auth removed: the operation is public; breaks new clients of old servers: an old server "
            "refuses a call without a credential (401)") in capsys.readouterr().out


def test_a_surface_moved_to_a_stricter_variant_breaks_its_clients(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """REST clients meet the schemas of the variant REST serves: switching it is a schema change."""
    def with_rest_variant(serve: str) -> Edit:
        def edit(manifest: dict[str, Any]) -> None:
            manifest["variants"]["rest"] = {"input": "rest.input.schema.json", "output": "mcp.output.schema.json"}
            manifest["rest"]["variant"] = serve
        return edit

    old, new = _pair(tmp_path, "get_book", with_rest_variant("mcp"), with_rest_variant("rest"))
    for folder in (old, new):
        schema = json.loads((folder / "mcp.input.schema.json").read_text())
        schema["properties"]["id"]["maxLength"] = 3
        (folder / "rest.input.schema.json").write_text(json.dumps(schema))
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "== rest surface (mcp -> rest) input (request)\nBREAKING  " in out, out


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """The example, its get_book input open, locked and committed (the lock finds what it pinned in git)."""
    with library_project(tmp_path, open_input) as folder:
        git(folder, "init", "-q", "-b", "main")
        commit(folder, "locked")
        yield folder


def _set_limit(project: Path, value: int) -> None:
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace("[tool.evidencekit.codegen]\n",
                                      f"[tool.evidencekit.codegen]\nmax_request_bytes = {value}\n"))


def test_lock_refuses_auth_added_and_accepts_auth_removed(project: Path) -> None:
    manifest = project / "contracts/get_book/manifest.json"
    edit_json(manifest, _auth(capability="catalog:read"))
    refused = codegen(project, "lock")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "contracts/get_book: policy: BREAKING  auth added; breaks old clients" in refused.stdout
    edit_json(manifest, _public)
    edit_json(project / "contracts/add_book/manifest.json", _public)
    accepted = codegen(project, "lock")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "contracts/add_book: policy: ok        auth removed: the operation is public" in accepted.stdout


def test_the_projects_request_limit_lowered_is_a_break_and_raised_is_not(project: Path) -> None:
    git(project, "add", "-f", "contracts/contracts.lock.json")  # the example ignores it; a team commits it
    commit(project, "the lock")
    _set_limit(project, 1024)
    stale = codegen(project, "check")
    assert stale.returncode == 1
    assert "contracts/get_book: max_request_bytes locked 65536, now 1024 (the project's max_request_bytes)" \
        in stale.stderr, stale.stderr
    refused = codegen(project, "lock")
    assert refused.returncode == 1
    assert ("contracts/get_book: policy: BREAKING  max_request_bytes 65,536 -> 1,024; breaks old clients: a request "
            "of 1,025 to 65,536 bytes is now refused (413)") in refused.stdout, refused.stdout
    commit(project, "a lower default, not locked")
    against = codegen(project, "check", "--against", "HEAD~1")
    assert against.returncode == 1
    assert "max_request_bytes 65,536 -> 1,024" in against.stderr and "[NOT ACKNOWLEDGED]" in against.stderr
    git(project, "checkout", "-q", "HEAD~1", "--", "pyproject.toml")
    _set_limit(project, 131072)
    raised = codegen(project, "lock")
    assert raised.returncode == 0, raised.stdout + raised.stderr
    assert "policy: ok        max_request_bytes 65,536 -> 131,072" in raised.stdout


def test_a_lock_written_before_the_request_limits_were_recorded_says_so(project: Path) -> None:
    lock = project / "contracts/contracts.lock.json"
    document = json.loads(lock.read_text())
    for entry in document["operations"].values():
        entry.pop("max_request_bytes")
    lock.write_text(json.dumps(document, indent=2) + "\n")
    stale = codegen(project, "check")
    assert stale.returncode == 1
    assert "records no max_request_bytes for add_book, get_book, search_books (a lock written by an earlier " \
           "evidencekit" in stale.stderr, stale.stderr
    assert codegen(project, "lock").returncode == 0
    assert codegen(project, "check").returncode == 0


def test_declaring_the_default_success_status_changes_nothing(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """No `success_statuses` and `[200]` are the same statuses: the differ reports no change."""
    old, new = _pair(tmp_path, "get_book", _nothing, _statuses(200))
    assert main(["diff", str(old), str(new)]) == 0
    assert "success_statuses" not in capsys.readouterr().out
