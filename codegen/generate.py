"""Plan every generated file from the contracts, then write it or check it against the tree.

Generated files live only in GENERATED_DIRS, which the generator owns entirely: a file there
that the plan does not contain is stale too.
"""

from __future__ import annotations

import difflib
import json
import pprint
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from contracts.loader import load_operations

from .formatting import format_python
from .headers import markdown_header, python_header
from .models import ModelNote, render_model
from .openapi import openapi_document
from .views import examples_of, mcp_descriptor, operation_view

GENERATED_DIRS = ("contracts/models", "server/generated", "client/generated", "docs/reference")


def _pyrepr(value: Any) -> str:
    return pprint.pformat(value, sort_dicts=False, width=100)


_env = jinja2.Environment(
    loader=jinja2.PackageLoader("codegen", "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)
_env.filters["pyrepr"] = _pyrepr


def render(template: str, **context: Any) -> str:
    return _env.get_template(template).render(**context)


@dataclass
class Plan:
    files: dict[str, str] = field(default_factory=dict)
    notes: list[ModelNote] = field(default_factory=list)


def plan(contracts_root: Path | None = None) -> Plan:
    operations = load_operations(contracts_root) if contracts_root else load_operations()
    result = Plan()
    python: dict[str, str] = {}
    views = [operation_view(op) for op in operations]
    rest_views = [view for view in views if view.rest_path]
    mcp_ops = [op for op in operations if op.mcp]
    rest_ops = [op for op in operations if op.rest]
    everything = python_header(operations)

    for op in operations:
        for direction in ("input", "output", "output_data"):
            source, notes = render_model(op, direction)
            python[f"contracts/models/{op.python_name}_{direction}.py"] = source
            result.notes += notes
    exports = sorted(name for v in views for name in (v.input_class, v.output_class, v.output_data_class))
    python["contracts/models/__init__.py"] = render(
        "models_init.py.jinja", header=everything, operations=views, exports=exports)

    python["server/generated/__init__.py"] = render(
        "package_init.py.jinja", header=everything,
        docstring="Generated server skeleton: operation specs, handler interface, REST routes, MCP tools.")
    python["server/generated/operations.py"] = render(
        "operations.py.jinja", header=everything, operations=views)
    python["server/generated/handlers.py"] = render(
        "handlers.py.jinja", header=everything, operations=views)
    python["server/generated/rest.py"] = render(
        "rest.py.jinja", header=python_header(rest_ops), rest_operations=rest_views)
    python["server/generated/mcp_tools.py"] = render(
        "mcp_tools.py.jinja", header=python_header(mcp_ops),
        tools=[mcp_descriptor(op) for op in mcp_ops])

    python["client/generated/__init__.py"] = render(
        "package_init.py.jinja", header=python_header(rest_ops),
        docstring="Generated REST client (sync and async); hand-written layers live in client/.")
    python["client/generated/client.py"] = render(
        "client.py.jinja", header=python_header(rest_ops), rest_operations=rest_views)

    result.files.update(format_python(python))

    examples = {op.name: examples_of(op, op.rest["variant"]) for op in rest_ops}  # type: ignore[index]
    document = openapi_document(operations, examples)
    result.files["server/generated/openapi.json"] = json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    for op, view in zip(operations, views, strict=True):
        result.files[f"docs/reference/{op.name}.md"] = render(
            "reference.md.jinja", header=markdown_header([op]), op=view)
    result.files["docs/reference/README.md"] = render(
        "reference_index.md.jinja", header=markdown_header(operations), operations=views)
    return result


def _existing(out_root: Path) -> set[str]:
    found = set()
    for folder in GENERATED_DIRS:
        for path in (out_root / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                found.add(path.relative_to(out_root).as_posix())
    return found


def write(result: Plan, out_root: Path) -> list[str]:
    """Write the plan under out_root; returns the paths changed or removed."""
    changed = []
    for rel, text in sorted(result.files.items()):
        path = out_root / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        changed.append(rel)
    for rel in sorted(_existing(out_root) - set(result.files)):
        (out_root / rel).unlink()
        changed.append(f"{rel} (removed)")
    return changed


def stale(result: Plan, out_root: Path) -> list[str]:
    """A unified diff per generated file that differs from the plan (empty when up to date)."""
    diffs = []
    for rel, text in sorted(result.files.items()):
        path = out_root / rel
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            diffs.append("".join(difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True),
                fromfile=f"a/{rel}" if path.exists() else "/dev/null", tofile=f"b/{rel}")))
    for rel in sorted(_existing(out_root) - set(result.files)):
        diffs.append(f"{rel}: not produced by the generator (remove it, or regenerate)\n")
    return diffs
