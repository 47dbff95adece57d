"""Timestamps as the contracts write them: UTC, ISO 8601 with a `Z`, the fraction only when it is
not zero (`2026-12-01T08:45:04.068690Z`, `2026-12-01T08:45:04Z`): what
`value.astimezone(UTC).isoformat()` gives with `+00:00` written `Z`.

Every status answer carries two or three; `isoformat` alone costs ~1.1 µs each here, so the two
forms the store hands back take shortcuts: SQLite's text (tortoise writes `isoformat(" ")` in
UTC) is rewritten as a string, and an aware UTC datetime (asyncpg's) is printed by pydantic-core,
which writes the same text (tests/server/store/test_timestamps.py holds them to it).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pydantic_core import to_json

_ZERO = timedelta(0)


def contract_time(value: datetime | str) -> str:
    """`value` (an aware datetime, or SQLite's stored text of one) in the contracts' form."""
    if isinstance(value, str):
        if len(value) >= 25 and value[10] == " " and value.endswith("+00:00"):
            return f"{value[:10]}T{value[11:-6]}Z"
        value = datetime.fromisoformat(value)
    if value.utcoffset() != _ZERO:
        value = value.astimezone(UTC)
    return to_json(value)[1:-1].decode()


def as_datetime(value: datetime | str) -> datetime:
    """`value` as a datetime (SQLite's stored text parsed)."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value
