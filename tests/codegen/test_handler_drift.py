"""Drift between the contracts and a project's handlers is caught by `codegen generate` and `check`
(mypy against the regenerated protocol), before anything is served; an operation added after
`init` gets a stub, which `check` flags until it is implemented."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evidencekit.codegen import handler_check
from evidencekit.codegen.cli import main as codegen
from evidencekit.codegen.scaffold import main as init


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("init") / "demo"
    assert init([str(project)]) == 0
    return project


@pytest.fixture
def project(made: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "demo"
    shutil.copytree(made, copy)
    return copy


def run(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = codegen([*args, "--project", str(project)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def rewrite(path: Path, **changes: object) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}, indent=2))


def test_a_required_output_field_the_contract_dropped_is_named_with_its_handler(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(project, capsys, "check")[0] == 0  # as init made it: the handler matches
    greet = project / "contracts" / "greet"
    rewrite(greet / "mcp.output.schema.json", properties={}, required=[])
    rewrite(greet / "manifest.json", version="2")
    assert run(project, capsys, "lock", "--accept-breaking", "--reason", "no greeting any more")[0] == 0
    code, _, err = run(project, capsys, "generate")
    assert code == 1 and 'Handlers.greet: Extra key "greeting"' in err, err
    code, _, err = run(project, capsys, "check")
    assert code == 1, err
    line = next(line for line in err.splitlines() if "Handlers.greet" in line)
    assert line.startswith("demo/handlers.py:") and '"greeting"' in line and "GreetOutputData" in line


def test_an_operation_added_after_init_gets_a_stub_that_check_flags(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(project / "contracts" / "greet", project / "contracts" / "farewell")
    manifest = json.loads((project / "contracts" / "farewell" / "manifest.json").read_text())
    rewrite(project / "contracts" / "farewell" / "manifest.json", operation="farewell", python_name="farewell",
            rest={**manifest["rest"], "path": "/farewell"}, mcp={**manifest["mcp"], "tool_name": "farewell"})
    assert run(project, capsys, "lock")[0] == 0
    code, out, err = run(project, capsys, "generate")
    assert code == 0, err  # the stub type-checks
    assert "appended a stub for farewell" in out
    handlers = (project / "demo" / "handlers.py").read_text()
    assert "async def farewell(self, payload: FarewellInput, context: RequestContext) -> FarewellOutputData:" \
        in handlers
    code, _, err = run(project, capsys, "check")
    assert code == 1 and "Handlers.farewell: still a stub (raises NotImplementedError)" in err, err
    (project / "demo" / "handlers.py").write_text(handlers.replace(
        'raise NotImplementedError("farewell: answer with the FarewellOutputData of the contract")',
        'return {"greeting": f"Goodbye, {payload.name}!"}'))
    code, out, err = run(project, capsys, "check")
    assert code == 0 and "Handlers matches the generated Handlers protocol" in out, err
    assert run(project, capsys, "generate")[0] == 0
    assert (project / "demo" / "handlers.py").read_text().count("async def farewell") == 1  # appended once


def test_without_mypy_the_type_check_is_skipped_in_one_line(
        project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handler_check, "mypy_installed", lambda: False)
    code, out, _ = run(project, capsys, "check")
    assert code == 0
    assert [line for line in out.splitlines() if "mypy" in line] == [handler_check.MYPY_MISSING]


def test_a_handlers_module_of_another_shape_is_named_not_failed(project: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The default names `Handlers`; a project whose class is called otherwise (the library example's
    `Catalogue`) is told how to name it, and its check does not fail for it."""
    path = project / "demo" / "handlers.py"
    path.write_text(path.read_text().replace("class Handlers:", "class Greeter:"))
    code, out, err = run(project, capsys, "check")
    assert code == 0, err
    assert "demo/handlers.py has no class Handlers" in out and 'handlers = "module:Class"' in out
