"""A project chooses what "compatible" means (`compatibility`, `compatibility_mode` in
[tool.evidencekit.codegen], or the flags), and `lock`, `check --against` and `diff` judge by it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evidencekit.codegen._breaking import Compatibility, operation_findings
from evidencekit.codegen._config import ConfigError, load_config
from evidencekit.contracts._loader import load_operation
from tests.support import edit_json, library_project

GET_BOOK_INPUT = Path("contracts/get_book/mcp.input.schema.json")
SEARCH_INPUT = Path("contracts/search_books/mcp.input.schema.json")


def codegen(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evidencekit", "codegen", *args], cwd=project, capture_output=True,
                          text=True, timeout=300, check=False)


def set_config(project: Path, **values: str) -> None:
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    lines = "".join(f'{key} = "{value}"\n' for key, value in values.items())
    pyproject.write_text(text.replace("[tool.evidencekit.codegen]\n", "[tool.evidencekit.codegen]\n" + lines))


def open_input(project: Path) -> None:
    edit_json(project / GET_BOOK_INPUT, lambda schema: schema.pop("additionalProperties"))


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True, text=True)


@pytest.fixture
def project(tmp_path: Path) -> Any:
    """The example, its get_book input open, locked and committed (the lock finds what it pinned in git)."""
    with library_project(tmp_path, open_input) as folder:
        git(folder, "init", "-q", "-b", "main")
        git(folder, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "add", "-A")
        git(folder, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "locked")
        yield folder


def add_shelf(project: Path) -> None:
    edit_json(project / GET_BOOK_INPUT, lambda schema: schema["properties"].update(shelf={"type": "string"}))


def test_a_typed_property_added_to_an_open_request_breaks_by_default_and_not_when_lenient(project: Path) -> None:
    add_shelf(project)
    refused = codegen(project, "lock")
    assert refused.returncode == 1 and "compatibility: semantic, backward" in refused.stdout
    assert "BREAKING  property_added  $.shelf" in refused.stdout, refused.stdout
    lenient = codegen(project, "lock", "--compatibility", "lenient")
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert "lenient: assumes old clients send only the properties their schema declares" in lenient.stdout


def test_the_projects_policy_is_read_from_its_config(project: Path) -> None:
    set_config(project, compatibility="lenient")
    add_shelf(project)
    done = codegen(project, "lock")
    assert done.returncode == 0 and "compatibility: lenient, backward" in done.stdout, done.stdout + done.stderr


def test_forward_and_full_modes_guard_new_clients_of_old_servers(project: Path) -> None:
    edit_json(project / SEARCH_INPUT, lambda schema: schema["properties"]["query"].update(maxLength=300))
    assert codegen(project, "lock", "--compatibility-mode", "forward").returncode == 1
    full = codegen(project, "lock", "--compatibility-mode", "full_transitive")
    assert full.returncode == 1 and "(request, forward)" in full.stdout
    assert "breaks new clients of old servers" in full.stdout, full.stdout
    assert codegen(project, "lock").returncode == 0  # backward: old clients send at most 200 characters


def test_bad_settings_are_refused_with_what_is_accepted(project: Path) -> None:
    set_config(project, compatibility_mode="sideways")
    with pytest.raises(ConfigError, match="compatibility_mode must be one of backward, forward, full"):
        load_config(project)
    flag = codegen(project, "diff", "contracts/get_book", "contracts/get_book", "--compatibility", "loose")
    assert flag.returncode == 2 and "invalid choice: 'loose'" in flag.stderr


def test_modes_read_each_schema_both_ways(project: Path, tmp_path: Path) -> None:
    before = load_operation(project / "contracts/search_books")
    edit_json(project / SEARCH_INPUT, lambda schema: schema["properties"]["query"].update(maxLength=100))
    after = load_operation(project / "contracts/search_books")
    backward = operation_findings(before, after)
    forward = operation_findings(before, after, Compatibility.parse("semantic", "forward"))
    assert [f.breaking for f in backward if "input" in f.where] == [True]
    assert [f.breaking for f in forward if "input" in f.where] == [False]


def commit(project: Path, message: str) -> None:
    git(project, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "add", "-A")
    git(project, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", message)


def test_transitive_modes_judge_against_every_version_since_the_last_break(project: Path) -> None:
    """Under lenient, shelf: string -> (removed) -> shelf: integer is compatible step by step, and
    breaks the clients of the first version: only a _transitive mode sees that."""
    def shelf(kind: str | None) -> None:
        def change(schema: dict[str, Any]) -> None:
            schema["properties"].pop("shelf", None)
            if kind:
                schema["properties"]["shelf"] = {"type": kind}
        edit_json(project / GET_BOOK_INPUT, change)

    for step, kind in enumerate(("string", None)):
        shelf(kind)
        assert codegen(project, "lock", "--compatibility", "lenient").returncode == 0
        commit(project, f"step {step}")
    shelf("integer")
    transitive = codegen(project, "lock", "--compatibility", "lenient", "--compatibility-mode", "backward_transitive")
    assert transitive.returncode == 1, transitive.stdout
    assert "mcp input (request) against sha256:" in transitive.stdout
    assert "BREAKING  type_changed  $.shelf: type changed: string -> integer" in transitive.stdout
    assert codegen(project, "lock", "--compatibility", "lenient").returncode == 0  # step by step: compatible
