"""A SQLite transaction in which tortoise's DDL scripts stay inside the transaction.

`executescript` commits whatever is open before it runs; here a script is split into statements and
each runs through the transaction. tortoise picks a schema editor by the client class's module name
("sqlite" in it), so this class lives in a module so named.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from evidencekit.server.evidence.store.tortoise_adapter import NestingSqliteTransaction


def statements(script: str) -> Iterator[str]:
    """The SQL statements of a script, split where SQLite itself says one ends (comments dropped)."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if _has_sql(pending):
                yield pending.strip()
            pending = ""


def _has_sql(text: str) -> bool:
    return any(line.strip().strip(";").strip() and not line.strip().startswith("--") for line in text.splitlines())


class ScriptsInTransaction(NestingSqliteTransaction):
    async def execute_script(self, query: str) -> None:
        for statement in statements(query):
            await self.execute_query(statement)
