"""What generated code knows about one operation, as a value the hand-written runtime can use."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel


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
