"""The project's handlers against the generated `Handlers` protocol: drift caught before serving.

The handlers are the class `handlers = "module:Class"` names in `[tool.evidencekit.codegen]`
(default: what `evidencekit init` writes, `<package without .generated>.handlers:Handlers`).
`codegen generate` appends a stub (raising NotImplementedError) for every operation the class has
no method for; `codegen generate` and `codegen check` then type-check the module with mypy against
the generated package (a required output field the contract dropped and a handler still sends is
`Handlers.greet: Extra key "greeting" for TypedDict "GreetOutputData"`), and `check` flags every
stub left. Only the handlers module and the generated package are read: everything else they import
counts as Any, so the check takes about a second, and a fraction of one with mypy's cache.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from evidencekit.codegen.config import CodegenConfig, ConfigError
from evidencekit.contracts.loader import Operation

STUB_DOC = "raises NotImplementedError"
MYPY_MISSING = "note: mypy is not installed: handlers not type-checked against the generated protocol " \
               "(pip install mypy to check them)"


@dataclass(frozen=True)
class HandlersModule:
    """Where the project's handlers are: `module:cls`, in `file` (`configured`: named in pyproject)."""

    module: str
    cls: str
    file: Path
    configured: bool


def handlers_module(config: CodegenConfig) -> HandlersModule | None:
    """The handlers the configuration names; None when the default names no file there (nothing to
    check yet: `init` writes it after generating). ConfigError when a configured one is missing."""
    spec = config.handlers
    configured = spec is not None
    if spec is None:
        if not config.package.endswith(".generated"):
            return None
        spec = config.package.removesuffix(".generated") + ".handlers:Handlers"
    module, _, cls = spec.partition(":")
    file = config.package_dir(module).with_suffix(".py")
    if not file.is_file() and (config.package_dir(module) / "__init__.py").is_file():
        file = config.package_dir(module) / "__init__.py"
    if not file.is_file():
        if configured:
            raise ConfigError(config.root / "pyproject.toml", f"handlers = {spec!r}: no {config.relative(file)}")
        return None
    return HandlersModule(module, cls or "Handlers", file, configured)


def _class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next((node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name), None)


def _methods(cls: ast.ClassDef) -> dict[str, ast.AsyncFunctionDef | ast.FunctionDef]:
    return {node.name: node for node in cls.body if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)}


def _is_stub(method: ast.AsyncFunctionDef | ast.FunctionDef) -> bool:
    body = [node for node in method.body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]  # docstrings
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def stub_method(op: Operation) -> list[str]:
    """A method for `op` as `init` writes it: the generated signature, a body that raises."""
    return [
        f"    async def {op.python_name}(self, payload: {op.class_prefix}Input, context: RequestContext) "
        f"-> {op.class_prefix}OutputData:",
        f'        raise NotImplementedError("{op.python_name}: answer with the {op.class_prefix}OutputData '
        'of the contract")',
    ]


def _parsed(handlers: HandlersModule) -> tuple[str, ast.Module, ast.ClassDef | None]:
    text = handlers.file.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ConfigError(handlers.file, f"line {exc.lineno}: {exc.msg}") from None
    return text, tree, _class(tree, handlers.cls)


def append_stubs(handlers: HandlersModule, operations: list[Operation], package: str) -> list[str]:
    """Append a stub to the handlers class for every operation it has no method for, with an import
    of the types the stubs name; the operations given a stub."""
    text, tree, cls = _parsed(handlers)
    if cls is None:
        return []
    missing = [op for op in operations if op.python_name not in _methods(cls)]
    if not missing:
        return []
    lines = text.splitlines()
    end = cls.end_lineno or len(lines)
    added = [line for op in missing for line in ("", *stub_method(op))]
    lines[end:end] = added
    names = sorted({f"{op.class_prefix}{kind}" for op in missing for kind in ("Input", "OutputData")})
    imports = [f"from {package}.models import {', '.join(names)}"]
    if not re.search(r"^from \S+ import .*\bRequestContext\b|^\s+RequestContext,", text, re.M):
        imports.append("from evidencekit.server.runtime.context import RequestContext")
    last_import = max((node.end_lineno or 0 for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)),
                      default=0)
    lines[last_import:last_import] = imports
    handlers.file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [op.python_name for op in missing]


def stubs(handlers: HandlersModule, config: CodegenConfig) -> list[str]:
    """A line for every method of the handlers class that is still a stub."""
    _, _, cls = _parsed(handlers)
    where = config.relative(handlers.file)
    return [f"{where}:{method.lineno}: {handlers.cls}.{name}: still a stub ({STUB_DOC}): implement it"
            for name, method in (_methods(cls) if cls else {}).items() if _is_stub(method)]


_ERROR = re.compile(r"^(?P<file>.+?):(?P<line>\d+): error: (?P<message>.*?)(?:  \[[a-z-]+\])?$")


def _method_at(cls: ast.ClassDef | None, line: int) -> str | None:
    for name, method in (_methods(cls) if cls else {}).items():
        if method.lineno <= line <= (method.end_lineno or method.lineno):
            return name
    return None


def mypy_installed() -> bool:
    return importlib.util.find_spec("mypy") is not None


def type_problems(handlers: HandlersModule, operations: list[Operation], config: CodegenConfig) -> list[str] | None:
    """mypy's errors in the handlers module and in its agreement with the generated protocol, a line
    each naming the handler; None when mypy is not installed."""
    if not mypy_installed():
        return None
    _, _, cls = _parsed(handlers)
    if cls is None:
        return [f"{config.relative(handlers.file)}: no class {handlers.cls} (set handlers = \"module:Class\" "
                "in [tool.evidencekit.codegen])"]
    where = config.relative(handlers.file)
    with tempfile.TemporaryDirectory(prefix="evidencekit-handlers-") as scratch:
        check = Path(scratch) / "_evidencekit_handlers_check.py"
        body = ["from __future__ import annotations", "",
                f"from {config.package}.handlers import Handlers as _Protocol",
                f"from {handlers.module} import {handlers.cls} as _Handlers", ""]
        line_of: dict[int, str] = {}
        for op in operations:
            body += ["", f"def _{op.python_name}(handlers: _Handlers, protocol: _Protocol) -> None:",
                     f"    method = protocol.{op.python_name}"]
            line_of[len(body) + 1] = op.python_name
            body += [f"    method = handlers.{op.python_name}", "    del method", ""]
        check.write_text("\n".join(body) + "\n", encoding="utf-8")
        settings = Path(scratch) / "mypy.ini"
        settings.write_text("\n".join([
            "[mypy]", "follow_imports = skip", "ignore_missing_imports = True",
            f"cache_dir = {config.root / '.mypy_cache' / 'evidencekit-handlers'}",
            f"[mypy-{config.package}.*]", "follow_imports = silent", ""]), encoding="utf-8")
        env = {**os.environ, "MYPYPATH": str(config.source_root)}
        ran = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(settings), "--no-error-summary",
                              "--no-pretty", "--no-color-output", "--show-error-codes",
                              str(handlers.file), str(check)],
                             cwd=config.root, env=env, capture_output=True, text=True, check=False)
    problems = []
    for line in ran.stdout.splitlines():
        found = _ERROR.match(line)
        if found is None:
            continue
        number, message = int(found["line"]), found["message"]
        if Path(found["file"]).name == check.name:
            name = line_of.get(number)
            problems.append(f"{where}: {handlers.cls}.{name}: does not match the generated protocol: {message}")
        elif (config.root / found["file"]).resolve() == handlers.file.resolve():
            name = _method_at(cls, number)
            problems.append(f"{where}:{number}: {handlers.cls}{'.' + name if name else ''}: {message}")
    if ran.returncode not in (0, 1) or (ran.returncode == 1 and not problems):
        problems.append(f"{where}: mypy could not check the handlers: {(ran.stderr or ran.stdout).strip()[:500]}")
    return list(dict.fromkeys(problems))


@dataclass(frozen=True)
class DriftReport:
    """What `generate` and `check` print: notes (stdout) and problems (stderr: the command fails)."""

    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def handlers_drift(config: CodegenConfig, operations: list[Operation], *, append: bool) -> DriftReport:
    """`append` (generate): stubs for the operations the handlers lack, noted; else (check) a stub
    left is a problem. Then the type check: a problem a line, or a note that it passed or was skipped."""
    handlers = handlers_module(config)
    if handlers is None:
        return DriftReport()
    where = config.relative(handlers.file)
    if not handlers.configured and _parsed(handlers)[2] is None:  # a module of another shape: not ours to judge
        return DriftReport((f"note: {where} has no class {handlers.cls}: handlers not checked against the "
                            "protocol (name yours with handlers = \"module:Class\" in [tool.evidencekit.codegen])",))
    notes: list[str] = []
    problems: list[str] = []
    if append:
        notes += [f"note: {where}: appended a stub for {name} ({STUB_DOC}): implement it"
                  for name in append_stubs(handlers, operations, config.package)]
    else:
        problems += stubs(handlers, config)
    started = time.perf_counter()
    found = type_problems(handlers, operations, config)
    if found is None:
        notes.append(MYPY_MISSING)
    elif found:
        problems += found
    else:
        notes.append(f"{where}: {handlers.cls} matches the generated Handlers protocol "
                     f"(mypy, {time.perf_counter() - started:.2f}s)")
    return DriftReport(tuple(notes), tuple(problems))
