"""Parse JSON from the wire into a generated model the way the contract reads it.

Lax pydantic coerces what JSON Schema rejects (12345 as a date-time, "1" as an integer), so
payloads that arrive as JSON are parsed in strict JSON mode, where a date-time or a uuid is
still read from its string form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], raw: bytes | str) -> M:
    return model.model_validate_json(raw, strict=True)


def wire_data(answer: BaseModel | Mapping[str, Any]) -> Any:
    """A handler's answer as the JSON data it is sent as: JSON data (an `<Prefix>OutputData`) as it
    is, a model dumped by its aliases. Either is then checked against the contract."""
    if type(answer) is dict or not isinstance(answer, BaseModel):  # dict first: BaseModel's check is an ABC's
        return answer
    return answer.model_dump(mode="json", by_alias=True)
