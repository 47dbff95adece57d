"""SQLite upgrades that a crash cannot leave half done.

tortoise applies a migration's DDL through `executescript`, which commits at once, and records the
migration only afterwards; a crash in between left a change without its record, and every later
start failed on it ("index ... already exists"). On PostgreSQL the whole upgrade is one transaction
(db.migrate). On SQLite, before any pending migration runs, the database is copied aside (SQLite's
backup API, so the copy is consistent); the copy is removed once every migration is recorded. A
start that finds the copy knows the last upgrade did not finish: it puts the copy back and runs the
upgrade again. Called under the migration lock, before any connection is opened.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

log = logging.getLogger("evidencekit.store")
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_SIDE_FILES = ("-wal", "-shm", "-journal")


def _pending(database: Path) -> bool:
    shipped = {path.stem for path in MIGRATIONS_DIR.glob("[0-9]*.py")}
    with closing(sqlite3.connect(database)) as connection:
        try:
            applied = {name for (name,) in connection.execute("SELECT name FROM tortoise_migrations")}
        except sqlite3.OperationalError:  # no such table: nothing applied yet
            applied = set()
    return bool(shipped - applied)


def _copy(source: Path, target: Path) -> None:
    with closing(sqlite3.connect(source)) as reading, closing(sqlite3.connect(target)) as writing:
        reading.backup(writing)


def _remove(database: Path) -> None:
    for path in (database, *(database.with_name(database.name + side) for side in _SIDE_FILES)):
        path.unlink(missing_ok=True)


@contextmanager
def upgrade_guard(database: Path) -> Iterator[None]:
    backup = database.with_name(database.name + ".pre-upgrade")
    if backup.exists():
        log.warning("the last upgrade of %s did not finish; restoring the copy made before it and upgrading again",
                    database)
        if backup.stat().st_size == 0:  # the database did not exist before that upgrade
            _remove(database)
        else:
            _copy(backup, database)
        backup.unlink()
    fresh = not database.exists() or database.stat().st_size == 0
    if not fresh and not _pending(database):
        yield
        return
    staging = backup.with_name(backup.name + ".partial")
    staging.unlink(missing_ok=True)
    staging.touch(mode=0o600)  # the copy holds what the database holds
    if not fresh:
        _copy(database, staging)
    os.replace(staging, backup)  # the copy appears whole or not at all
    yield  # an exception leaves the copy: the next start restores it
    backup.unlink()
