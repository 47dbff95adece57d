"""Drift between the contracts and a project's handlers is caught by `codegen generate` and `check`
(mypy against the regenerated protocol), before anything is served; an operation added after
`init` gets a stub, which `check` flags until it is implemented."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from evidencekit.codegen import _handler_check as handler_check
from evidencekit.codegen._cli import main as codegen
from evidencekit.codegen._scaffold import main as init


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


def test_a_handler_reading_an_optional_field_without_narrowing_it_is_refused(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An optional field the caller left out is MISSING, not None: `is not None` lets it through to
    code that fails when it runs (a 500), `is MISSING` narrows it (docs/toolkit.md, "Public API")."""
    greet = project / "contracts" / "greet"
    schema = json.loads((greet / "mcp.input.schema.json").read_text())
    rewrite(greet / "mcp.input.schema.json",
            properties={**schema["properties"], "mark": {"type": "string", "maxLength": 3}})
    rewrite(greet / "manifest.json", version="2")  # outside git, the lock cannot tell what changed
    assert run(project, capsys, "lock", "--accept-breaking", "--reason", "an optional mark")[0] == 0
    handlers = project / "demo" / "handlers.py"
    made = handlers.read_text()
    body = 'return {"greeting": f"Hello, {payload.name}!"}'
    assert body in made
    handlers.write_text(made.replace(body, 'mark = payload.mark if payload.mark is not None else "!"\n'
                                           '        return {"greeting": "Hello, " + payload.name + mark}'))
    code, _, err = run(project, capsys, "generate")
    assert code == 1, err
    line = next(line for line in err.splitlines() if "Handlers.greet" in line)
    assert line.startswith("demo/handlers.py:") and '"MISSING"' in line, line
    handlers.write_text(made.replace(body, 'mark = "!" if payload.mark is MISSING else payload.mark\n'
                                           '        return {"greeting": "Hello, " + payload.name + mark}').replace(
        "from evidencekit.server.runtime import RequestContext", "from evidencekit.server.runtime import MISSING, RequestContext"))
    code, _, err = run(project, capsys, "generate")
    assert code == 0, err


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


def configure(project: Path, line: str) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('title = "demo"\n', f'title = "demo"\n{line}\n'))


def append_to(project: Path, tmp_path: Path, text: bytes) -> tuple[Path, list[str] | Exception]:
    from evidencekit.contracts._loader import load_operations
    file = tmp_path / "h.py"
    file.write_bytes(text)
    try:
        return file, handler_check.append_stubs(handler_check.HandlersModule("h", "H", file, True),
                                                load_operations(project / "contracts"), "demo.generated")
    except Exception as exc:  # noqa: BLE001 - the refusal, whatever its class
        return file, exc


@pytest.mark.parametrize("text", [
    b'"""doc"""\nfrom __future__ import annotations\n\nclass H:\n    async def other(self):\n        return {}\n\n'
    b'import os\n',  # an import after the class
    b"import os\n\nclass H:\n  async def other(self):\n    return {}\n",  # 2 spaces
    b"import os\n\nclass H:\n\tasync def other(self):\n\t\treturn {}\n",  # tabs
    b"import os\r\n\r\nclass H:\r\n    async def other(self):\r\n        return {}\r\n",  # CRLF
], ids=["import-after", "two-spaces", "tabs", "crlf"])
def test_appended_stubs_leave_the_file_whole(project: Path, tmp_path: Path, text: bytes) -> None:
    file, appended = append_to(project, tmp_path, text)
    assert appended == ["greet"]
    written = file.read_bytes()
    tree = ast.parse(written)
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    assert [node.name for node in cls.body] == ["other", "greet"]
    assert written.index(b"from demo.generated.models import GreetInput") < written.index(b"class H:")
    if b"\r\n" in text:
        assert written.count(b"\n") == written.count(b"\r\n")
    assert append_to(project, tmp_path, written)[1] == []  # appended once


@pytest.mark.parametrize("text", [
    b"import os\n\nclass H: pass\n",  # a body on the class line
    b"from base import Base\n\nclass H(Base):\n    async def other(self):\n        return {}\n",  # greet inherited?
    b"from impl import greet_impl\n\nclass H:\n    greet = greet_impl\n",  # assigned
], ids=["one-line", "base-class", "assigned"])
def test_stubs_are_not_appended_where_they_could_break_or_shadow(project: Path, tmp_path: Path, text: bytes) -> None:
    file, appended = append_to(project, tmp_path, text)
    assert file.read_bytes() == text
    assert appended == [] or type(appended).__name__ == "StubsNotAppended", appended


def test_a_class_that_cannot_take_stubs_is_given_the_code_to_paste(project: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "demo" / "handlers.py"
    path.write_text(path.read_text().replace("class Handlers:", "class Handlers(Base):").replace(
        "\n\nclass", "\n\nclass Base:\n    pass\n\n\nclass").replace("    async def greet", "    async def other"))
    before = path.read_text()
    code, out, _ = run(project, capsys, "generate")
    assert path.read_text() == before
    assert "no stub appended for greet (Handlers has bases" in out and "async def greet(self, payload: GreetInput" in out


def test_only_the_handler_class_is_judged_and_its_return_types_really_are(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "demo" / "handlers.py"
    original = path.read_text()
    path.write_text(original + "\n\ndef unrelated() -> int:\n    return 'not an int'\n")
    code, out, err = run(project, capsys, "check")
    assert code == 0 and "Handlers matches the generated Handlers protocol" in out, err  # not the class's error
    path.write_text(original.replace("from __future__ import annotations\n",
                                     "from __future__ import annotations\n\nfrom typing import Any\n")
                    .replace("-> GreetOutputData:", "-> dict[str, Any]:").replace('"greeting"', '"greting"'))
    code, _, err = run(project, capsys, "check")
    assert code == 1 and "Handlers.greet: does not match the generated protocol" in err and "CheckedAnswer" in err, err


def test_a_class_a_package_re_exports_is_checked_where_it_is_defined(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = project / "demo" / "handlers_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .catalogue import Catalogue\n\n__all__ = [\"Catalogue\"]\n")
    (package / "catalogue.py").write_text((project / "demo" / "handlers.py").read_text().replace(
        "class Handlers:", "class Catalogue:"))
    configure(project, 'handlers = "demo.handlers_pkg:Catalogue"')
    code, out, err = run(project, capsys, "check")
    assert code == 0 and "Catalogue matches the generated Handlers protocol" in out, err
    catalogue = package / "catalogue.py"
    catalogue.write_text(catalogue.read_text().replace('"greeting"', '"greting"'))
    code, _, err = run(project, capsys, "check")
    assert code == 1 and "demo/handlers_pkg/catalogue.py:" in err and 'Catalogue.greet: Extra key "greting"' in err, err


def test_handlers_check_false_turns_the_stubs_and_the_type_check_off(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "demo" / "handlers.py"
    path.write_text(path.read_text().replace('"greeting"', '"greting"').replace("async def greet", "async def hi"))
    before = path.read_text()
    configure(project, "handlers_check = false")
    code, out, err = run(project, capsys, "generate")
    assert code == 0 and path.read_text() == before and "stub" not in out, err
    code, out, err = run(project, capsys, "check")
    assert code == 0 and "Handlers" not in out + err, err
