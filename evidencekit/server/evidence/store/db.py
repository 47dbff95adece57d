"""Where the store lives and how it opens: SQLite in a data folder by default, PostgreSQL by URL.

Opening applies the committed migrations (tortoise's own tooling) under a lock, so several
processes starting at once do not race to create the tables.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import platformdirs
from tortoise import Tortoise
from tortoise.backends.base import executor
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.context import TortoiseContext

from evidencekit.server.evidence.store import pg_reads, receipt_reads
from evidencekit.server.evidence.store.migrate import migrate

DATA_DIR_ENV = "EVIDENCEKIT_DATA_DIR"
# The embedded database's settings (tortoise applies a SQLite URL's parameters as PRAGMAs):
# - WAL (tortoise's default) with synchronous=NORMAL: a commit survives the process crashing; a
#   power cut may undo the last few (the file stays whole). FULL syncs every commit: about 30%
#   fewer settles a second (scripts/bench_store.py); DATABASE_URL=sqlite://...?synchronous=FULL.
# - 64 MiB of page cache (SQLite's default is 2 MiB) and reads through a 1 GiB memory map: the
#   indexes of a million receipts stay in memory (scripts/bench scale).
SQLITE_PRAGMAS = {"busy_timeout": 10000, "synchronous": "NORMAL"} | receipt_reads.SQLITE_MEMORY
DATABASE_URL_ENV = "DATABASE_URL"
APP = "models"


def is_postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://", "asyncpg://"))


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where the SQLite file and the bootstrap token live: EVIDENCEKIT_DATA_DIR when set, else this
    user's data folder (~/.local/share/evidencekit on Linux, per platformdirs): the same folder
    whichever folder a command runs from."""
    env = os.environ if environ is None else environ
    chosen = env.get(DATA_DIR_ENV)
    return Path(chosen).expanduser().resolve() if chosen else Path(platformdirs.user_data_dir("evidencekit"))


def database_url(environ: Mapping[str, str] | None = None) -> str:
    """DATABASE_URL when set, else SQLite in the data folder (data_dir), created on first run."""
    env = os.environ if environ is None else environ
    if env.get(DATABASE_URL_ENV):
        return env[DATABASE_URL_ENV]
    folder = data_dir(env)
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite://{folder / 'evidencekit.sqlite3'}?{urlencode(SQLITE_PRAGMAS)}"


def shown_url(url: str) -> str:
    """The database URL without its password (in the credentials or as a query parameter).

    The credentials end at the last "@" of the URL: a password written with a raw "/", "?", "#" or
    "@" does not parse as one (urlsplit then sees no password) and must not be shown either."""
    scheme, sep, rest = url.partition("://")
    credentials, at, location = rest.rpartition("@")
    if at and ":" in credentials:
        user = credentials.split(":", 1)[0]
        rest = f"{user}:***@{location}"
    elif at:
        rest = f"{credentials}@{location}"
    parts = urlsplit(f"{scheme}{sep}{rest}")
    query = urlencode([(key, "***" if key == "password" else value) for key, value in parse_qsl(parts.query)],
                      safe="*")
    return urlunsplit(parts._replace(query=query))


def has_password(url: str) -> bool:
    """Whether shown_url hides something of this URL (a password in its credentials or its query)."""
    credentials, at, _ = url.partition("://")[2].rpartition("@")
    return bool(at and ":" in credentials) or any(key == "password" for key, _ in parse_qsl(urlsplit(url).query))


def database_name(url: str) -> str:
    """The database as a user may be shown it: the SQLite file's path, or the URL without its password."""
    return shown_url(url) if is_postgres(url) else sqlite_path(url)


def selecting_env(environ: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """The settings that choose this process's database, as shell assignments to put before a
    command run in another shell (which may have neither set): EVIDENCEKIT_DATA_DIR as resolved (the
    bootstrap token is kept there too), DATABASE_URL when set; shell-quoted, each followed by a
    space. A DATABASE_URL that holds a password is left out, never printed: the second value says
    so (the caller names the variable instead)."""
    env = os.environ if environ is None else environ
    assignments = []
    if env.get(DATA_DIR_ENV):
        assignments.append(f"{DATA_DIR_ENV}={shlex.quote(str(data_dir(env)))} ")
    url = env.get(DATABASE_URL_ENV, "")
    hidden = bool(url) and has_password(url)
    if url and not hidden:
        assignments.append(f"{DATABASE_URL_ENV}={shlex.quote(url)} ")
    return "".join(assignments), hidden


def _owner_only(path: str) -> None:
    """The SQLite file holds retrieved content and token hashes: readable by its owner only (SQLite
    gives its -wal and -shm files the same mode)."""
    with contextlib.suppress(OSError):  # ":memory:", or a file someone else owns
        os.chmod(path, 0o600)


def sqlite_path(url: str) -> str:
    return url.removeprefix("sqlite://").split("?")[0]


async def _keep_session(_: Any) -> None:
    """asyncpg's pool runs `RESET ALL; UNLISTEN *; ...` on every release by default: one more
    round trip per query. Nothing here changes session state on pooled connections (the migration
    lock has its own connection), and asyncpg still rolls back a transaction left open."""


def connection_config(url: str) -> str | dict[str, Any]:
    if not is_postgres(url):
        return url
    config = expand_db_url(url)
    credentials = config["credentials"]
    credentials.setdefault("reset", _keep_session)
    # the pool's size as configured (tortoise's default 5), and the one the status reads keep
    # (pg_reads): counted in, a maxsize=1 would leave every other query waiting for it forever
    credentials["maxsize"] = int(credentials.get("maxsize", 5)) + 1
    return config


def tortoise_config(url: str) -> dict[str, Any]:
    return {
        "connections": {"default": connection_config(url)},
        "apps": {APP: {"models": ["evidencekit.server.evidence.store.models"], "default_connection": "default",
                       "migrations": "evidencekit.server.evidence.store.migrations"}},
        "use_tz": True,
        "timezone": "UTC",
    }


@asynccontextmanager
async def _migration_lock(url: str) -> AsyncIterator[None]:
    if is_postgres(url):
        import asyncpg

        connection = await asyncpg.connect(url.replace("postgres://", "postgresql://", 1).split("?")[0])
        try:
            await connection.execute("SELECT pg_advisory_lock(727274)")
            yield
        finally:
            await connection.close()  # releases the advisory lock
    else:
        with open(f"{sqlite_path(url)}.migrate.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield


@asynccontextmanager
async def open_store(url: str | None = None, *, shared: bool = False) -> AsyncIterator[TortoiseContext]:
    """Migrate (idempotently) and connect; connections are closed on exit.

    `shared`: also make it the process-wide fallback context, for a server whose requests run in
    tasks that do not inherit the lifespan's context (one shared store per process).
    """
    url = url or database_url()
    if is_postgres(url):
        try:
            import asyncpg  # noqa: F401  # the `postgres` extra
        except ImportError:
            raise RuntimeError("PostgreSQL needs its driver: pip install 'evidencekit[postgres]'") from None
    config = tortoise_config(url)
    executor.EXECUTOR_CACHE.clear()  # statements cached for another dialect must not be reused
    async with TortoiseContext() as context:
        async with _migration_lock(url):
            await migrate(config)
        await Tortoise.init(config=config, _enable_global_fallback=shared)  # migrate() left no connections
        if not is_postgres(url):
            _owner_only(sqlite_path(url))
        try:
            yield context
        finally:
            client = context.connections.get("default")
            receipt_reads.forget(client)
            if is_postgres(url):
                await pg_reads.release(client)
            else:
                receipt_reads.close_direct(sqlite_path(url))


async def make_migrations() -> list[str]:
    """Write a migration for model changes since the last one (scripts/makemigrations)."""
    from tortoise.migrations.autodetector import MigrationAutodetector

    config = tortoise_config("sqlite:///:memory:")
    async with TortoiseContext() as context:
        await context.init(config=config, init_connections=False)
        assert context.apps is not None
        writers = await MigrationAutodetector(context.apps, config["apps"]).changes()
        return [str(writer.write()) for writer in writers]
