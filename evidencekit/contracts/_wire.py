"""Parse JSON from the wire into a generated model the way the contract reads it.

Lax pydantic coerces what JSON Schema rejects (12345 as a date-time, "1" as an integer), so
payloads that arrive as JSON are parsed in strict JSON mode, where a date-time or a uuid is
still read from its string form; a number with no fractional part where an integer goes (`13.0`,
an integer to JSON Schema) is read in lax mode, as the only thing that failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], raw: bytes | str) -> M:
    """`raw` as `model`, strictly, but for a number with no fractional part where an integer goes:
    JSON Schema counts `13.0` as an integer (the contract check accepted it), strict pydantic does not."""
    try:
        return model.model_validate_json(raw, strict=True)
    except ValidationError as exc:
        if not all(_integral_float(error) for error in exc.errors()):
            raise
    return model.model_validate_json(raw, strict=False)  # fails only where the strict parse did


def _integral_float(error: Any) -> bool:
    value = error.get("input")
    return error.get("type") == "int_type" and isinstance(value, float) and value.is_integer()


def wire_data(answer: BaseModel | Mapping[str, Any]) -> Any:
    """A handler's answer as the JSON data it is sent as: JSON data (an `<Prefix>OutputData`) as it
    is, a model dumped by its aliases. Either is then checked against the contract."""
    if type(answer) is dict or not isinstance(answer, BaseModel):  # dict first: BaseModel's check is an ABC's
        return answer
    return answer.model_dump(mode="json", by_alias=True)
