"""Small typed objects the templates print; every decision about the output is made here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evidencekit.codegen._fields import markdown_table
from evidencekit.contracts._loader import ContractError, Operation, read_json
from evidencekit.contracts._policy import (
    DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_SUCCESS_STATUS,
    mcp_text_content,
    request_limit,
    success_statuses,
)
from evidencekit.contracts._query import query_problems


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def examples_of(op: Operation, variant: str) -> dict[str, Any]:
    """The variant's published example files as they are (the docs show them as published)."""
    files = op.manifest.get("examples", {}).get(variant)
    if not files:
        return {}
    return {key: read_json(op.folder / rel) for key, rel in files.items()}


@dataclass(frozen=True)
class VariantView:
    name: str
    source: str
    input_file: str
    output_file: str
    input_table: str
    output_table: str
    input_json: str
    output_json: str
    example_input: str
    example_output: str


@dataclass(frozen=True)
class OperationView:
    name: str
    python_name: str
    const_name: str
    title: str
    description: str
    contract_hash: str
    compatible_hashes: tuple[str, ...]  # earlier hashes whose clients this contract still serves (the lock)
    input_class: str
    output_class: str
    output_data_class: str
    variants: tuple[str, ...]
    rest_method: str | None
    success_status: int  # the first of rest.success_statuses (200 when none is declared)
    max_request_bytes: int  # the manifest's max_request_bytes, else the project's
    mcp_text_content: str  # mcp.text_content: "json" (the default), "pretty" or "handler"
    rest_path: str | None
    rest_variant: str | None
    mcp_tool: str | None
    mcp_variant: str | None
    profiles: tuple[str, ...]
    transports: tuple[str, ...]
    annotations_json: str
    credential_kinds: tuple[str, ...]
    capability: str
    minimum_role: str
    read_only: bool
    completion_rule: str
    published_hash: str | None
    published_checked: str | None
    variant_views: tuple[VariantView, ...]


def variant_view(op: Operation, name: str) -> VariantView:
    variant = op.variants[name]
    example = examples_of(op, name)
    return VariantView(
        name=name,
        source=variant.source,
        input_file=variant.input_file,
        output_file=variant.output_file,
        input_table=markdown_table(variant.input_schema),
        output_table=markdown_table(variant.output_schema),
        input_json=pretty_json(variant.input_schema),
        output_json=pretty_json(variant.output_schema),
        example_input=pretty_json(example["input"]) if example else "",
        example_output=pretty_json(example["output"]) if example else "",
    )


# Success statuses an answer with a JSON body may be sent with (204 and 205 carry no body)
_BODY_SUCCESS = frozenset(range(200, 300)) - {204, 205}


def query_input_problems(op: Operation) -> None:
    """A GET operation's input must be what a query string can carry (contracts._query)."""
    rest = op.rest or {}
    if rest.get("method") != "GET":
        return
    problems = query_problems(op.variants[rest["variant"]].input_schema)
    if problems:
        raise ContractError(op.folder / "manifest.json", "rest.method GET takes its input from the query string, "
                            "which cannot carry it: " + "; ".join(problems) + " (use POST)")


def success_status(op: Operation) -> int:
    """The status a REST answer is sent with: the first the manifest declares, else 200
    (contracts._policy.success_statuses), refused when an answer with a body cannot have it."""
    declared = success_statuses(op.manifest) or (DEFAULT_SUCCESS_STATUS,)  # (an operation not served over REST)
    refused = [status for status in declared if status not in _BODY_SUCCESS]
    if refused:
        raise ContractError(op.folder / "manifest.json", f"rest.success_statuses {refused}: an answer carries the "
                            "operation's output as JSON, so its status is a 2xx with a body (not 204 or 205)")
    return int(declared[0])


def operation_view(op: Operation, compatible_hashes: list[str] | tuple[str, ...] = (),
                   max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> OperationView:
    query_input_problems(op)
    mcp = op.mcp or {}
    rest = op.rest or {}
    auth = op.manifest.get("auth", {})
    return OperationView(
        name=op.name,
        python_name=op.python_name,
        const_name=op.python_name.upper(),
        title=op.title,
        description=op.description,
        contract_hash=op.contract_hash,
        compatible_hashes=tuple(compatible_hashes),
        input_class=f"{op.class_prefix}Input",
        output_class=f"{op.class_prefix}Output",
        output_data_class=f"{op.class_prefix}OutputData",
        variants=tuple(op.variants),
        rest_method=rest.get("method"),
        success_status=success_status(op),
        max_request_bytes=request_limit(op.manifest, max_request_bytes),
        mcp_text_content=mcp_text_content(op.manifest),
        rest_path=rest.get("path"),
        rest_variant=rest.get("variant"),
        mcp_tool=mcp.get("tool_name"),
        mcp_variant=mcp.get("variant"),
        profiles=tuple(mcp.get("profiles", ())),
        transports=tuple(mcp.get("transports", ())),
        annotations_json=pretty_json(mcp.get("annotations", {})),
        credential_kinds=tuple(auth.get("credential_kinds", ())),
        capability=str(auth.get("capability", "")),
        minimum_role=str(auth.get("minimum_role", "")),
        read_only=(mcp.get("annotations") or {}).get("readOnlyHint") is True,
        completion_rule=str(op.manifest.get("completion_rule", "")),
        published_hash=rest.get("published_contract_hash"),
        published_checked=rest.get("published_contract_checked"),
        variant_views=tuple(variant_view(op, name) for name in op.variants),
    )


@dataclass(frozen=True)
class ToolView:
    """A tool as the server lists it, less its schemas (the template takes them from SCHEMAS);
    `profiles` and `contractHash` are for the server, not the wire."""

    operation: str
    variant: str
    fields: dict[str, Any]


def mcp_descriptor(op: Operation) -> ToolView:
    mcp = op.mcp
    variant = op.mcp_variant
    assert mcp is not None and variant is not None
    return ToolView(op.name, variant.name, {
        "name": mcp["tool_name"],
        "title": op.title,
        "description": op.description,
        "annotations": mcp.get("annotations", {}),
        "profiles": mcp.get("profiles", []),
        "contractHash": op.contract_hash,
    })


def variant_schemas(op: Operation) -> dict[str, dict[str, Any]]:
    """Every variant's schemas, verbatim, as the generated code carries them."""
    return {name: {"input": v.input_schema, "output": v.output_schema} for name, v in op.variants.items()}
