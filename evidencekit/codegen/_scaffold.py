"""`evidencekit init [FOLDER]`: a new project that serves, and passes conformance, at once.

It writes the `[tool.evidencekit.codegen]` table (in a new pyproject.toml), one example contract
(`contracts/greet`, public, over REST and MCP) or a copy of contracts you already have
(`--contracts DIR`), locks and generates them, then writes what is yours to change: the handlers
(one stub per operation, from the generated protocol; the example's with a body that answers), an
app module for `evidencekit serve` and `evidencekit mcp`, and the conformance tests. Nothing it
writes is overwritten by a later `codegen generate`: only `<package>/generated` is the generator's.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from evidencekit.codegen._config import load_config
from evidencekit.codegen._handler_check import stub_method
from evidencekit.contracts._loader import ContractError, load_operations

_EXAMPLE_INPUT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "who to greet"}},
    "required": ["name"],
    "additionalProperties": False,
}
_EXAMPLE_OUTPUT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"greeting": {"type": "string"}},
    "required": ["greeting"],
    "additionalProperties": False,
}
_EXAMPLE_MANIFEST = {
    "operation": "greet",
    "python_name": "greet",
    "title": {"en": "Greet someone"},
    "description": {"en": "Answer with a greeting for the name given."},
    "variants": {"mcp": {"input": "mcp.input.schema.json", "output": "mcp.output.schema.json"}},
    "model_variant": "mcp",
    "rest": {"path": "/greet", "method": "POST", "variant": "mcp"},
    "mcp": {"tool_name": "greet", "variant": "mcp",
            "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                            "openWorldHint": False}},
}
_EXAMPLE_BODY = 'return {"greeting": f"Hello, {payload.name}!"}'


def _json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _pyproject(name: str, package: str) -> str:
    return f'''[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["evidencekit[codegen,testing]"]

# What `evidencekit codegen` reads (docs/toolkit.md in the evidencekit repository lists every key).
[tool.evidencekit.codegen]
contracts = "contracts"
package = "{package}.generated"
title = "{name}"

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["."]
'''


def _handlers(package: str, folder: Path) -> str:
    """Handler stubs for every operation of the generated protocol: its signatures as they are."""
    operations = load_operations(load_config(folder).contracts)
    lines = [
        '"""Your handlers: one async method per operation of the generated `Handlers` protocol. The runtime',
        "has checked each payload against its contract before a method runs, and checks each answer",
        'against every published output schema before it is sent: answer the output as JSON data."""',
        "",
        "from __future__ import annotations",
        "",
        "from evidencekit.server.runtime import RequestContext",
        "",
        f"from {package}.generated.models import (",
        *(f"    {op.class_prefix}{kind}," for op in operations for kind in ("Input", "OutputData")),
        ")",
        "",
        "",
        "class Handlers:",
    ]
    for op in operations:
        method = stub_method(op)  # the stub `codegen generate` appends for an operation added later
        if op.name == "greet" and op.python_name == "greet":
            method[-1] = f"        {_EXAMPLE_BODY}"
        lines += [*method, ""]
    return "\n".join(lines).rstrip() + "\n"


def _app(package: str) -> str:
    return f'''"""The app: `evidencekit serve {package}.app:create` (REST, /mcp, /openapi.json) and
`evidencekit mcp {package}.app:create_stdio` (the tools over stdio). Pass `hooks=ServiceHooks(auth=...)`
to create_app once an operation declares `auth` (evidencekit.server.runtime.Auth).

create_app returns a Starlette app whose routes are the operations: add your own routes, mounts,
middleware and exception handlers to it in `create` (`app.add_route(...)`, `app.mount(...)`,
`app.add_middleware(...)`, `app.add_exception_handler(...)`)."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette

from {package}.generated.app import create_app, create_stdio_server
from {package}.handlers import Handlers


def create() -> Starlette:
    app = create_app(Handlers())
    return app


def create_stdio(credential: str | None) -> Any:
    return create_stdio_server(Handlers(), credential=credential)
'''


def _conftest(package: str) -> str:
    return f'''"""The conformance plugin's target: this project's app, served on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from evidencekit.testing import Target, serve_app

from {package}.app import create

pytest_plugins = ["evidencekit.testing.conformance"]


@pytest.fixture(scope="session")
def conformance_target() -> Iterator[Target]:
    with serve_app(create()) as base_url:
        yield Target(base_url)
'''


_TESTS = '''"""Every operation on REST and MCP, against its contracts: generated valid and invalid inputs."""

from evidencekit.testing.conformance import test_mcp_conformance, test_rest_conformance  # noqa: F401
'''


def init(folder: Path, package: str, contracts: Path | None = None) -> list[str]:
    """Write the project into `folder`; the files written, from the folder."""
    from evidencekit.codegen._cli import main as codegen

    if (folder / "pyproject.toml").exists() or (folder / "contracts").exists() or (folder / package).exists():
        raise ContractError(folder, f"pyproject.toml, contracts/ or {package}/ is there already: init starts a new "
                                    "project (add [tool.evidencekit.codegen] to an existing one by hand: docs/toolkit.md)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(_pyproject(folder.resolve().name, package), encoding="utf-8")
    if contracts is None:
        example = folder / "contracts" / "greet"
        _json(example / "manifest.json", _EXAMPLE_MANIFEST)
        _json(example / "mcp.input.schema.json", _EXAMPLE_INPUT)
        _json(example / "mcp.output.schema.json", _EXAMPLE_OUTPUT)
    else:
        shutil.copytree(contracts, folder / "contracts", ignore=shutil.ignore_patterns("contracts.lock.json"))
    (folder / package).mkdir()
    (folder / package / "__init__.py").write_text("", encoding="utf-8")
    for step in ("lock", "generate"):
        if codegen([step, "--project", str(folder)]) != 0:
            raise ContractError(folder / "contracts", f"codegen {step} failed (above)")
    (folder / package / "handlers.py").write_text(_handlers(package, folder), encoding="utf-8")
    (folder / package / "app.py").write_text(_app(package), encoding="utf-8")
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "tests" / "conftest.py").write_text(_conftest(package), encoding="utf-8")
    (folder / "tests" / "test_conformance.py").write_text(_TESTS, encoding="utf-8")
    return ["pyproject.toml", "contracts/", f"{package}/generated/", f"{package}/handlers.py", f"{package}/app.py",
            "tests/conftest.py", "tests/test_conformance.py"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidencekit init", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", default=".", type=Path, help="the new project's folder (default: here)")
    parser.add_argument("--package", default=None,
                        help="the Python package to write (default: the folder's name, as an identifier)")
    parser.add_argument("--contracts", type=Path, default=None,
                        help="a folder of contracts to start from (default: one example, contracts/greet)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    folder: Path = args.folder
    package = args.package or re.sub(r"\W+", "_", folder.resolve().name.lower()).strip("_") or "api"
    if not package.isidentifier() or package[0].isdigit():
        print(f"evidencekit init: {package!r} is not a Python package name: pass --package", file=sys.stderr)
        return 2
    try:
        written = init(folder, package, args.contracts)
    except ContractError as exc:
        print(f"evidencekit init: {exc}", file=sys.stderr)
        return 2
    where = "" if folder == Path(".") else f"cd {folder} && "
    print("wrote " + ", ".join(written))
    print("next (from the project's folder, with evidencekit[codegen,testing] installed):")
    print(f"  {where}evidencekit serve {package}.app:create --port 8080 &")
    print("  evidencekit conformance --url http://127.0.0.1:8080 --mcp-url http://127.0.0.1:8080/mcp "
          f'--mcp-stdio "evidencekit mcp {package}.app:create_stdio"')
    print(f"  python -m pytest        # the same checks, in your test suite; then edit {package}/handlers.py")
    return 0
