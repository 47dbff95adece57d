"""Parse JSON from the wire into a generated model the way the contract reads it.

Lax pydantic coerces what JSON Schema rejects (12345 as a date-time, "1" as an integer), so
payloads that arrive as JSON are parsed in strict JSON mode, where a date-time or a uuid is
still read from its string form.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], raw: bytes | str) -> M:
    return model.model_validate_json(raw, strict=True)
