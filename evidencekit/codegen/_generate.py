"""Plan every generated file from the contracts, then write it or check it against the tree.

Generated files live only in the folders the configuration gives the generator (the package, the
client package, the docs), which it owns entirely: a file there that the plan does not contain is
stale too.
"""

from __future__ import annotations

import difflib
import json
import pprint
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import jinja2

from evidencekit.codegen._config import CodegenConfig
from evidencekit.codegen._formatting import format_python
from evidencekit.codegen._headers import markdown_header, python_header
from evidencekit.codegen._lock import compatible_hashes
from evidencekit.codegen._models import ModelNote, render_model
from evidencekit.codegen._openapi import openapi_document
from evidencekit.codegen._views import (
    OperationView,
    mcp_descriptor,
    operation_view,
    variant_schemas,
)
from evidencekit.contracts._examples import example_payloads
from evidencekit.contracts._loader import load_operations
from evidencekit.contracts._spec import OperationSpec


def _pyrepr(value: Any) -> str:
    return pprint.pformat(value, sort_dicts=False, width=100)


_env = jinja2.Environment(
    loader=jinja2.PackageLoader("evidencekit.codegen", "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)
_env.filters["pyrepr"] = _pyrepr


# What a generated OperationSpec leaves out where the value is the spec's own default (contracts._policy's)
SPEC_DEFAULTS = {spec_field.name: spec_field.default for spec_field in fields(OperationSpec)
                 if spec_field.name in ("success_status", "max_request_bytes", "mcp_text_content")}


def render(template: str, **context: Any) -> str:
    return _env.get_template(template).render(**context)


@dataclass
class Plan:
    files: dict[str, str] = field(default_factory=dict)
    notes: list[ModelNote] = field(default_factory=list)
    owned: list[str] = field(default_factory=list)  # folders the generator owns, relative to the root


def plan(config: CodegenConfig) -> Plan:
    """Every generated file of the project `config` describes, keyed by its path from the project root."""
    operations = load_operations(config.contracts)
    result = Plan(owned=[config.relative(folder) for folder in config.owned_dirs])
    server, client = config.relative(config.server_dir), config.relative(config.client_dir)
    package = config.package
    python: dict[str, str] = {}
    compatible = compatible_hashes(config.contracts)
    views = [operation_view(op, compatible.get(op.name, ()), config.max_request_bytes) for op in operations]
    rest_views = [view for view in views if view.rest_path]
    mcp_ops = [op for op in operations if op.mcp]
    rest_ops = [op for op in operations if op.rest]
    everything = python_header(operations)

    models: dict[str, str] = {}  # operation's python name + direction -> its model module's source
    for op in operations:
        for direction in ("input", "output", "output_data"):
            module = f"{op.python_name}_{direction}"
            models[module], notes = render_model(op, direction, f"{server}/models/{module}.py")
            result.notes += notes

    def add_models(folder: str, header: str, of: list[OperationView]) -> None:
        """`folder`/models: the models of the operations `of`, and their package exporting them."""
        for view in of:
            for direction in ("input", "output", "output_data"):
                module = f"{view.python_name}_{direction}"
                python[f"{folder}/models/{module}.py"] = models[module]
        exports = sorted(name for v in of for name in (v.input_class, v.output_class, v.output_data_class))
        python[f"{folder}/models/__init__.py"] = render(
            "models_init.py.jinja", header=header, operations=of, exports=exports)

    add_models(server, everything, views)

    python[f"{server}/__init__.py"] = render(
        "package_init.py.jinja", header=everything,
        docstring="Generated from the contracts: models, operation specs, the handler interface, REST routes, "
                  "MCP tools, the app factory and the OpenAPI document.")
    python[f"{server}/operations.py"] = render(
        "operations.py.jinja", header=everything, operations=views, package=package, defaults=SPEC_DEFAULTS)
    python[f"{server}/schemas.py"] = render(
        "schemas.py.jinja", header=everything, schemas={op.name: variant_schemas(op) for op in operations})
    python[f"{server}/handlers.py"] = render(
        "handlers.py.jinja", header=everything, operations=views, package=package)
    python[f"{server}/rest.py"] = render(
        "rest.py.jinja", header=python_header(rest_ops), rest_operations=rest_views, package=package)
    python[f"{server}/app.py"] = render(
        "app.py.jinja", header=everything, package=package, title=config.title, allowed_hosts=config.allowed_hosts,
        healthz=config.healthz,
        mcp_operations=[view for view in views if view.mcp_tool])
    python[f"{server}/mcp_tools.py"] = render(
        "mcp_tools.py.jinja", header=python_header(mcp_ops), package=package,
        tools=[mcp_descriptor(op) for op in mcp_ops])

    if rest_views:  # a client of the REST surface, when there is one
        if client != server:  # a package of its own, whole without the server's: its models too
            python[f"{client}/__init__.py"] = render(
                "package_init.py.jinja", header=python_header(rest_ops),
                docstring="Generated REST client (sync and async), and the models of what it sends and "
                          "receives.")
            add_models(client, python_header(rest_ops), rest_views)
        python[f"{client}/client.py"] = render(
            "client.py.jinja", header=python_header(rest_ops), rest_operations=rest_views,
            package=config.client_package)

    result.files.update(format_python(python))

    # as payloads: a tools/call message shown on a page is its arguments in a REST request
    examples = {op.name: example_payloads(op, op.rest["variant"]) for op in rest_ops}  # type: ignore[index]
    document = openapi_document(operations, examples, config, compatible)
    result.files[f"{server}/openapi.json"] = json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    if config.docs is not None:
        docs = config.relative(config.docs)
        for op, view in zip(operations, views, strict=True):
            result.files[f"{docs}/{op.name}.md"] = render(
                "reference.md.jinja", header=markdown_header([op]), op=view)
        result.files[f"{docs}/README.md"] = render(
            "reference_index.md.jinja", header=markdown_header(operations), operations=views,
            openapi=f"{server}/openapi.json")
    return result


def _existing(result: Plan, out_root: Path) -> set[str]:
    found = set()
    for folder in result.owned:
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
    for rel in sorted(_existing(result, out_root) - set(result.files)):
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
    for rel in sorted(_existing(result, out_root) - set(result.files)):
        diffs.append(f"{rel}: not produced by the generator (remove it, or regenerate)\n")
    return diffs
