"""What raw statements need to run on both databases: placeholders and timestamps."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from functools import cache
from typing import Any

_PLACEHOLDER = re.compile(r"\{p(\d+)\}")


def is_postgres_connection(connection: Any) -> bool:
    return bool(connection.capabilities.dialect == "postgres")


@cache  # a handful of fixed statements, each rewritten on every call otherwise
def dialect_params(statement: str, postgres: bool) -> str:
    """`{p1}`, `{p2}`... as PostgreSQL's $1, $2 or SQLite's ?1, ?2: numbered on both, so a
    statement may use them in any order or more than once."""
    return _PLACEHOLDER.sub(lambda match: ("$" if postgres else "?") + match.group(1), statement)


def sql_uuid(value: uuid.UUID | str | None, postgres: bool) -> uuid.UUID | str | None:
    """A uuid as the column holds it: a UUID for asyncpg, its text on SQLite."""
    if value is None:
        return None
    return uuid.UUID(str(value)) if postgres else str(value)


def sql_time(value: datetime, postgres: bool) -> Any:
    """A timestamp as the column holds it: a datetime for asyncpg, tortoise's ISO text on SQLite."""
    return value if postgres else value.astimezone(UTC).isoformat(" ")
