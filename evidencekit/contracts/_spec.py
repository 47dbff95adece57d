"""What generated code knows about one operation, as a value the hand-written runtime can use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from evidencekit.contracts._policy import (
    DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_MCP_TEXT_CONTENT,
    DEFAULT_SUCCESS_STATUS,
)


@dataclass(frozen=True)
class VariantSchemas:
    """One published variant's schemas, verbatim (the generated code carries them: the runtime
    validates against them without reading the contracts folder)."""

    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any]


@dataclass(frozen=True)
class Requirement:
    """What the manifest's `auth` declares a caller needs: the runtime enforces it on every surface."""

    capability: str | None = None
    minimum_role: str | None = None
    credential_kinds: tuple[str, ...] = ()

    @property
    def authenticated(self) -> bool:
        """Whether the operation needs a caller at all (an operation without `auth` is public)."""
        return bool(self.capability or self.minimum_role or self.credential_kinds)


@dataclass(frozen=True)
class OperationSpec:
    name: str
    python_name: str
    contract_hash: str
    variants: tuple[str, ...]
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    rest_method: str | None = None
    rest_path: str | None = None
    rest_variant: str | None = None
    mcp_tool: str | None = None
    mcp_variant: str | None = None
    schemas: Mapping[str, VariantSchemas] = field(default_factory=dict)
    requirement: Requirement = Requirement()
    read_only: bool = False
    # earlier contract hashes whose clients this one still serves (the lock's `compatible_with`):
    # a request made for one of them is answered, with a header naming this newer contract
    compatible_hashes: tuple[str, ...] = ()
    # the status a REST answer is sent with: the first of the manifest's `rest.success_statuses`
    success_status: int = DEFAULT_SUCCESS_STATUS
    # the largest request body taken (REST: the body; MCP: the arguments as JSON), 413 past it: the
    # manifest's `max_request_bytes`, else the project's
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    # an MCP result's text content: "json" (the result's JSON, compact), "pretty" (indented) or
    # "handler" (RequestContext.text): the manifest's `mcp.text_content`
    mcp_text_content: str = DEFAULT_MCP_TEXT_CONTENT
