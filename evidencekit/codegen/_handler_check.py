"""The project's handlers against the generated `Handlers` protocol: drift caught before serving.

The handlers are the class `handlers = "module:Class"` names in `[tool.evidencekit.codegen]`
(default: what `evidencekit init` writes, `<package without .generated>.handlers:Handlers`).
`codegen generate` appends a stub (raising NotImplementedError) for every operation the class has
no method for; `codegen generate` and `codegen check` then type-check the module with mypy against
the generated package (a required output field the contract dropped and a handler still sends is
`Handlers.greet: Extra key "greeting" for TypedDict "GreetOutputData"`), and `check` flags every
stub left. Stubs go in only when the result parses as the class with exactly the new methods (else
the note gives the code to paste). Only errors in the class and in its agreement with the protocol
count. Only the handlers module, the generated package and the runtime modules the protocol's types
come from are read: everything else counts as Any, so the check takes about a second, and a fraction
of one with mypy's cache. `handlers_check = false` turns it all off.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import re
import site
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import evidencekit
from evidencekit.codegen._config import CodegenConfig, ConfigError
from evidencekit.contracts._loader import Operation

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


def _bound(body: list[ast.stmt]) -> set[str]:
    """The names a class or module body binds: defs, classes, assignments, imports (also under if/try)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.If | ast.Try):
            names |= _bound([*node.body, *node.orelse, *getattr(node, "finalbody", []),
                             *(line for handler in getattr(node, "handlers", []) for line in handler.body)])
    return names


def _is_stub(method: ast.AsyncFunctionDef | ast.FunctionDef) -> bool:
    body = [node for node in method.body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]  # docstrings
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def stub_method(op: Operation, indent: str = "    ") -> list[str]:
    """A method for `op` as `init` writes it: the generated signature, a body that raises."""
    return [
        f"{indent}async def {op.python_name}(self, payload: {op.class_prefix}Input, context: RequestContext) "
        f"-> {op.class_prefix}OutputData:",
        f'{indent * 2}raise NotImplementedError("{op.python_name}: answer with the {op.class_prefix}OutputData '
        'of the contract")',
    ]


def _parse(file: Path) -> tuple[str, ast.Module]:
    text = file.read_bytes().decode("utf-8")  # line endings kept
    try:
        return text, ast.parse(text)
    except SyntaxError as exc:
        raise ConfigError(file, f"line {exc.lineno}: {exc.msg}") from None


def _parsed(handlers: HandlersModule) -> tuple[str, ast.Module, ast.ClassDef | None]:
    text, tree = _parse(handlers.file)
    return text, tree, _class(tree, handlers.cls)


def _module_file(config: CodegenConfig, module: str) -> Path | None:
    base = config.package_dir(module)
    return next((file for file in (base.with_suffix(".py"), base / "__init__.py") if file.is_file()), None)


def _imported_from(module: str, file: Path, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    package = module.split(".") if file.name == "__init__.py" else module.split(".")[:-1]
    if node.level - 1 > len(package):
        return None
    base = package[:len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])]) or None


def definition(config: CodegenConfig, module: str, name: str, hops: int = 5) -> tuple[Path, ast.ClassDef] | None:
    """The file defining class `name` of `module` and its class, following re-exports (`from .x
    import Name` in a package's __init__); None when it is nowhere to be read."""
    file = _module_file(config, module)
    if file is None:
        return None
    _, tree = _parse(file)
    cls = _class(tree, name)
    if cls is not None:
        return file, cls
    for node in tree.body if hops else []:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                source = _imported_from(module, file, node) if (alias.asname or alias.name) == name else None
                if source is not None:
                    return definition(config, source, alias.name, hops - 1)
    return None


class StubsNotAppended(Exception):
    """The stubs could not be appended safely: `reason`; nothing was written."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _plain_bases(cls: ast.ClassDef) -> bool:
    """Only bases whose methods cannot hide a handler: object, Protocol, Generic (subscripted or not)."""
    for base in cls.bases:
        target = base.value if isinstance(base, ast.Subscript) else base
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if name not in {"object", "Protocol", "Generic"}:
            return False
    return not cls.keywords  # a metaclass may add methods too


def missing_operations(cls: ast.ClassDef, operations: list[Operation]) -> list[Operation]:
    present = _bound(cls.body)
    return [op for op in operations if op.python_name not in present]


def stub_code(operations: list[Operation], package: str) -> str:
    """The stubs and their imports, to paste by hand where they could not be appended."""
    names = sorted({f"{op.class_prefix}{kind}" for op in operations for kind in ("Input", "OutputData")})
    return "\n".join([f"from {package}.models import {', '.join(names)}",
                      "from evidencekit.server.runtime import RequestContext", "",
                      *(line for op in operations for line in ("", *stub_method(op)))])


def append_stubs(handlers: HandlersModule, operations: list[Operation], package: str) -> list[str]:
    """Append a stub to the handlers class for every operation it has no name for, with an import of
    the types the stubs name (the class body's indentation, the file's line endings); the operations
    given a stub. StubsNotAppended (nothing written) when that cannot be done safely: a class with
    bases that may hold the methods, a body on the class line, a result other than the class with
    exactly the new methods."""
    text, tree, cls = _parsed(handlers)
    if cls is None:
        return []
    missing = missing_operations(cls, operations)
    if not missing:
        return []
    if not _plain_bases(cls):
        raise StubsNotAppended(f"{cls.name} has bases or a metaclass that may hold these methods")
    lines = io.StringIO(text, newline="").readlines()
    first = cls.body[0]
    indent = lines[first.lineno - 1][:first.col_offset]
    if not indent or indent.strip() or len(set(indent)) != 1:
        raise StubsNotAppended(f"{cls.name}'s body does not start on a line of its own, indented by spaces or tabs")
    eol = next((line[len(line.rstrip("\r\n")):] for line in lines if line.endswith(("\n", "\r"))), "\n")
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += eol
    names = sorted({f"{op.class_prefix}{kind}" for op in missing for kind in ("Input", "OutputData")})
    bound = _bound(tree.body)
    imports = []
    if set(names) - bound:
        imports.append(f"from {package}.models import {', '.join(name for name in names if name not in bound)}")
    if "RequestContext" not in bound:
        imports.append("from evidencekit.server.runtime import RequestContext")
    class_start = min([cls.lineno, *(node.lineno for node in cls.decorator_list)])
    before = [node for node in tree.body if (node.end_lineno or 0) < class_start]
    at = max((node.end_lineno or 0 for node in before if isinstance(node, ast.Import | ast.ImportFrom)),
             default=0)
    if at == 0 and before and isinstance(before[0], ast.Expr) and isinstance(before[0].value, ast.Constant):
        at = before[0].end_lineno or 0  # after the module's docstring
    # from the bottom up: the stubs at the class's end, then the imports above it
    lines[cls.end_lineno or len(lines):cls.end_lineno or len(lines)] = [
        line + eol for op in missing for line in ("", *stub_method(op, indent))]
    lines[at:at] = [line + eol for line in imports]
    written = "".join(lines)
    if not _only_added(tree, cls, written, missing, imports, at):
        raise StubsNotAppended(f"appending to {cls.name} would have changed more than its methods")
    handlers.file.write_bytes(written.encode("utf-8"))
    return [op.python_name for op in missing]


def _only_added(tree: ast.Module, cls: ast.ClassDef, written: str, missing: list[Operation],
                imports: list[str], at: int) -> bool:
    """`written` parses, and is `tree` with the class given exactly the stubs and the module the imports."""
    try:
        new = ast.parse(written)
    except SyntaxError:
        return False
    new_cls = _class(new, cls.name)
    if new_cls is None:
        return False
    added = new_cls.body[len(cls.body):]
    if [node.name for node in added if isinstance(node, ast.AsyncFunctionDef) and _is_stub(node)] \
            != [op.python_name for op in missing] or len(added) != len(missing):
        return False
    del new_cls.body[len(cls.body):]
    index = sum(1 for node in tree.body if (node.end_lineno or 0) <= at)
    if not all(isinstance(node, ast.ImportFrom) for node in new.body[index:index + len(imports)]):
        return False
    del new.body[index:index + len(imports)]
    return ast.dump(new) == ast.dump(tree)


def stubs(handlers: HandlersModule, config: CodegenConfig) -> list[str]:
    """A line for every method of the handlers class that is still a stub."""
    found = definition(config, handlers.module, handlers.cls)
    if found is None:
        return []
    file, cls = found
    where = config.relative(file)
    return [f"{where}:{method.lineno}: {handlers.cls}.{name}: still a stub ({STUB_DOC}): implement it"
            for name, method in _methods(cls).items() if _is_stub(method)]


_ERROR = re.compile(r"^(?P<file>.+?):(?P<line>\d+): error: (?P<message>.*?)(?:  \[[a-z-]+\])?$")

# The toolkit's runtime modules the generated protocol's types come from: read (silently), so that
# CheckedAnswer and RequestContext are what they are, not Any: the public package the protocol and the
# handlers import them from, and the private modules that hold them.
RUNTIME_MODULES = ("evidencekit.server.runtime", "evidencekit.server.runtime._checked_answer",
                   "evidencekit.server.runtime._context")
# pydantic's package (not its modules) and pydantic-core: MISSING is their sentinel, so an optional
# field the caller may leave out is `int | MISSING` and a handler that reads it unnarrowed is refused
# (docs/toolkit.md); BaseModel and the rest stay Any. About 0.3 s the first time, nothing once cached.
PYDANTIC_MODULES = ("pydantic", "pydantic_core", "pydantic_core.*")


def _method_at(cls: ast.ClassDef | None, line: int) -> str | None:
    for name, method in (_methods(cls) if cls else {}).items():
        start = min([method.lineno, *(node.lineno for node in method.decorator_list)])
        if start <= line <= (method.end_lineno or method.lineno):
            return name
    return None


def _toolkit_path() -> list[str]:
    """Where mypy finds the toolkit's runtime modules: nothing more when it is installed in a
    site-packages (found there, py.typed), its source folder when installed editable (an import hook
    mypy does not follow)."""
    root = Path(evidencekit.__file__).resolve().parent.parent
    installed = {Path(folder).resolve() for folder in [*site.getsitepackages(), site.getusersitepackages()]}
    return [] if root in installed or root.name in ("site-packages", "dist-packages") else [str(root)]


def mypy_installed() -> bool:
    return importlib.util.find_spec("mypy") is not None


def type_problems(handlers: HandlersModule, operations: list[Operation], config: CodegenConfig) -> list[str] | None:
    """mypy's errors in the handlers class and in its agreement with the generated protocol, a line
    each naming the handler; None when mypy is not installed. The class is checked where it is
    imported from (`handlers`), read where it is defined (a package may re-export it)."""
    if not mypy_installed():
        return None
    found = definition(config, handlers.module, handlers.cls)
    file, cls = found if found is not None else (handlers.file, None)
    where = config.relative(file)
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
            f"[mypy-{config.package}.*,{','.join((*RUNTIME_MODULES, *PYDANTIC_MODULES))}]",
            "follow_imports = silent", ""]),
            encoding="utf-8")
        env = {**os.environ, "MYPYPATH": os.pathsep.join(dict.fromkeys([str(config.source_root), *_toolkit_path()]))}
        files = list(dict.fromkeys([str(handlers.file), str(file), str(check)]))
        ran = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(settings), "--no-error-summary",
                              "--no-pretty", "--no-color-output", "--show-error-codes", *files],
                             cwd=config.root, env=env, capture_output=True, text=True, check=False)
    lines = (min([cls.lineno, *(node.lineno for node in cls.decorator_list)]), cls.end_lineno or cls.lineno) \
        if cls is not None else (0, -1)
    problems = []
    for line in ran.stdout.splitlines():
        error = _ERROR.match(line)
        if error is None:
            continue
        number, message = int(error["line"]), error["message"]
        if Path(error["file"]).name == check.name:
            name = line_of.get(number)
            problems.append(f"{where}: {handlers.cls}{'.' + name if name else ''}: "
                            f"{'does not match the generated protocol: ' if name else ''}{message}")
        elif (config.root / error["file"]).resolve() == file.resolve() and lines[0] <= number <= lines[1]:
            name = _method_at(cls, number)
            problems.append(f"{where}:{number}: {handlers.cls}{'.' + name if name else ''}: {message}")
    if ran.returncode not in (0, 1) or (ran.returncode == 1 and not any(
            _ERROR.match(line) for line in ran.stdout.splitlines())):
        problems.append(f"{where}: mypy could not check the handlers: {(ran.stderr or ran.stdout).strip()[:500]}")
    return list(dict.fromkeys(problems))


@dataclass(frozen=True)
class DriftReport:
    """What `generate` and `check` print: notes (stdout) and problems (stderr: the command fails)."""

    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def handlers_drift(config: CodegenConfig, operations: list[Operation], *, append: bool) -> DriftReport:
    """`append` (generate): stubs for the operations the handlers lack, noted; else (check) a stub
    left is a problem. Then the type check: a problem a line, or a note that it passed or was skipped.
    Nothing with `handlers_check = false`."""
    if not config.handlers_check:
        return DriftReport()
    handlers = handlers_module(config)
    if handlers is None:
        return DriftReport()
    where = config.relative(handlers.file)
    found = definition(config, handlers.module, handlers.cls)
    if not handlers.configured and found is None:  # a module of another shape: not ours to judge
        return DriftReport((f"note: {where} has no class {handlers.cls}: handlers not checked against the "
                            "protocol (name yours with handlers = \"module:Class\" in [tool.evidencekit.codegen])",))
    notes: list[str] = []
    problems: list[str] = []
    if append and found is not None:
        try:
            if found[0] != handlers.file:
                missing = missing_operations(found[1], operations)
                if missing:
                    raise StubsNotAppended(f"{handlers.cls} is defined in {config.relative(found[0])}, "
                                           f"not in {where}")
            notes += [f"note: {where}: appended a stub for {name} ({STUB_DOC}): implement it"
                      for name in append_stubs(handlers, operations, config.package)]
        except StubsNotAppended as refused:
            missing = missing_operations(found[1], operations)
            notes.append(f"note: {where}: no stub appended for {', '.join(op.python_name for op in missing)} "
                         f"({refused.reason}); add to {handlers.cls}:\n{stub_code(missing, config.package)}")
    elif not append:
        problems += stubs(handlers, config)
    started = time.perf_counter()
    found_problems = type_problems(handlers, operations, config)
    if found_problems is None:
        notes.append(MYPY_MISSING)
    elif found_problems:
        problems += found_problems
    else:
        notes.append(f"{where}: {handlers.cls} matches the generated Handlers protocol "
                     f"(mypy, {time.perf_counter() - started:.2f}s)")
    return DriftReport(tuple(notes), tuple(problems))
