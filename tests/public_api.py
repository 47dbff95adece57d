"""The toolkit's public API as text, and the imports that reach past it.

The public modules are the toolkit's modules with no `_`-prefixed part in their dotted path (every
other one is private, free to change in any release); a public module's public names are its
`__all__`. `snapshot()` writes each of them with its kind and signature (classes with their public
members), read by griffe from the source as written, so the text changes exactly when what an
adopter can import or call changes. tests/test_public_api.py holds the committed snapshot
(tests/public_api.txt) to it; `scripts/public_api.py --update` rewrites it.

`private_uses` finds, in Python source, every import of a private toolkit module or of a name a
public module does not export: what the examples, an `init` project and the docs must not hold.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe

from tests.test_boundary import TOOLKIT

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "public_api.txt"
UPDATE = "PYTHONPATH=. .venv/bin/python scripts/public_api.py --update"

# Every toolkit module that is not private (tests/test_public_api.py checks this list against the tree).
PUBLIC_MODULES = (
    "evidencekit.cli",
    "evidencekit.client.runtime",
    "evidencekit.codegen",
    "evidencekit.commands",
    "evidencekit.contracts",
    "evidencekit.server.runtime",
    "evidencekit.testing",
    "evidencekit.testing.conformance",
)
HEADER = f"""\
# The public API of the evidencekit toolkit: every name its public modules export (`__all__`), with its
# kind and signature (classes: their public members). Anything in a `_`-prefixed module is private.
# Written by `{UPDATE}`; tests/test_public_api.py fails when the code and this file differ.
"""


def is_private(module: str) -> bool:
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
               for part in module.split("."))


def in_toolkit(module: str) -> bool:
    return any(module == root or module.startswith(root + ".") for root in TOOLKIT)


# --- the snapshot -------------------------------------------------------------------------------------


def _parameters(function: griffe.Function, skip_self: bool) -> str:
    shown: list[str] = []
    previous = None
    for index, parameter in enumerate(function.parameters):
        kind = parameter.kind
        if skip_self and index == 0 and parameter.name in ("self", "cls"):
            continue
        if previous is griffe.ParameterKind.positional_only and kind is not griffe.ParameterKind.positional_only:
            shown.append("/")
        if kind is griffe.ParameterKind.keyword_only and previous not in (
                griffe.ParameterKind.keyword_only, griffe.ParameterKind.var_positional):
            shown.append("*")
        text = {"var_positional": "*", "var_keyword": "**"}.get(kind.name, "") + parameter.name
        if parameter.annotation is not None:
            text += f": {parameter.annotation}"
        if parameter.default is not None and kind.name not in ("var_positional", "var_keyword"):
            text += f" = {parameter.default}" if parameter.annotation is not None else f"={parameter.default}"
        shown.append(text)
        previous = kind
    if previous is griffe.ParameterKind.positional_only:
        shown.append("/")
    return ", ".join(shown)


def _decorators(obj: griffe.Object) -> list[str]:
    return [f"@{decorator.value}" for decorator in getattr(obj, "decorators", [])]


def _function(function: griffe.Function, name: str, method: bool) -> str:
    prefix = "async def" if "async" in function.labels else "def"
    returns = f" -> {function.returns}" if function.returns is not None else ""
    return f"{prefix} {name}({_parameters(function, skip_self=method)}){returns}"


def _attribute(attribute: griffe.Attribute, name: str, fields: bool = False) -> str:
    text = name
    if "property" in attribute.labels:
        return f"@property {name}: {attribute.annotation}"
    if attribute.annotation is not None:
        text += f": {attribute.annotation}"
    # what __init__ assigns an instance attribute is how, not what: its name and type are the API (a
    # dataclass field's value is its default)
    if attribute.value is not None and (fields or "instance-attribute" not in attribute.labels):
        text += f" = {attribute.value}"
    return text


def _shown_member(name: str) -> bool:
    return not name.startswith("_") or name in ("__init__", "__call__", "__enter__", "__exit__",
                                                "__aenter__", "__aexit__", "__iter__", "__aiter__")


def _class(cls: griffe.Class, name: str, runtime: Any) -> list[str]:
    bases = ", ".join(str(base) for base in cls.bases)
    lines = [*_decorators(cls), f"class {name}({bases})" if bases else f"class {name}"]
    seen = set()
    for member_name in sorted(cls.members):
        if not _shown_member(member_name):
            continue
        member = cls.members[member_name]
        if member.is_alias:
            continue  # a name imported into the class body is no member of it
        seen.add(member_name)
        if isinstance(member, griffe.Function):
            lines += [f"  {line}" for line in _decorators(member) if line != "@property"]
            lines.append(f"  {_function(member, member_name, method=True)}")
        elif isinstance(member, griffe.Attribute):
            lines.append(f"  {_attribute(member, member_name, fields='dataclass' in cls.labels)}")
        elif isinstance(member, griffe.Class):
            lines += [f"  {line}" for line in _class(member, member_name, getattr(runtime, member_name, None))]
    # Values set where the source reader does not look (`status, error = 400, "bad_request"`), read
    # from the class itself.
    for member_name, value in sorted(vars(runtime).items() if runtime is not None else ()):
        if member_name in seen or not _shown_member(member_name) or callable(value) \
                or inspect.isdatadescriptor(value) or isinstance(value, classmethod | staticmethod):
            continue
        lines.append(f"  {member_name} = {value!r}")
    return lines


def _entry(module: griffe.Module, name: str, runtime_module: Any) -> list[str]:
    member = module.members[name]
    if member.is_alias:
        try:
            target = member.final_target
        except griffe.AliasResolutionError:  # another distribution's name, re-exported
            return [f"{name} = {member.target_path}"]
        if target.path != f"{module.path}.{name}" and not in_toolkit(target.path):
            return [f"{name} = {target.path}"]
    else:
        target = member
    runtime = getattr(runtime_module, name)
    if isinstance(target, griffe.Function):
        return [*_decorators(target), _function(target, name, method=False)]
    if isinstance(target, griffe.Class):
        return _class(target, name, runtime)
    if isinstance(target, griffe.Attribute):
        return [_attribute(target, name)]
    return [f"module {name}"]


def snapshot() -> str:
    """The public API, one block per public module, names sorted."""
    loader = griffe.GriffeLoader(search_paths=[str(ROOT)], allow_inspection=False)
    loader.load("evidencekit")  # the whole package, once (loading each public module reads it all again)
    loader.resolve_aliases(implicit=False, external=False)
    blocks = [HEADER]
    for name in PUBLIC_MODULES:
        module = loader.modules_collection.get_member(name)
        runtime = importlib.import_module(name)
        lines = [name]
        for export in sorted(runtime.__all__):
            lines += [f"  {line}" for line in _entry(module, export, runtime)]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


# --- imports past the public API ----------------------------------------------------------------------


def _exported(module: str) -> set[str]:
    found = importlib.import_module(module)
    return set(getattr(found, "__all__", ()))


def _problems(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if in_toolkit(alias.name) and is_private(alias.name):
                    yield f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and in_toolkit(node.module):
            if is_private(node.module):
                yield f"from {node.module} import ..."
                continue
            exported = _exported(node.module)
            for alias in node.names:
                if alias.name not in exported and f"{node.module}.{alias.name}" not in PUBLIC_MODULES:
                    yield f"from {node.module} import {alias.name}"
        elif isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id == "pytest_plugins"
                                                  for target in node.targets):
            for constant in ast.walk(node.value):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str) \
                        and in_toolkit(constant.value) and constant.value not in PUBLIC_MODULES:
                    yield f"pytest_plugins: {constant.value}"


def private_uses(source: str, where: str) -> list[str]:
    """`where: <import>` for every import in `source` past the public API."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a fragment in a doc: its import lines alone
        lines = [line.strip() for line in source.splitlines() if re.match(r"\s*(from|import)\s+evidencekit", line)]
        tree = ast.parse("\n".join(lines))
    return [f"{where}: {problem}" for problem in _problems(tree)]


def python_blocks(markdown: str) -> Iterator[tuple[int, str]]:
    """(line, code) of every ```python block of a markdown page."""
    for found in re.finditer(r"^```python\n(.*?)^```", markdown, re.M | re.S):
        yield markdown.count("\n", 0, found.start()) + 1, found[1]
