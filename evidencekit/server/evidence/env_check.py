"""The settings read from the environment, checked once when a process starts, so that a typo is
one clear line and exit code 2 rather than a traceback from deep inside the first use."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping
from typing import TypeVar

T = TypeVar("T")

LOG_LEVEL_ENV = "EVIDENCEKIT_LOG_LEVEL"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DATABASE_SCHEMES = ("sqlite://", "postgres://", "postgresql://", "asyncpg://")


def _whole(minimum: int) -> tuple[str, Callable[[str], bool]]:
    return f"a whole number >= {minimum}", lambda text: text.isdigit() and int(text) >= minimum


def _number(positive: bool) -> tuple[str, Callable[[str], bool]]:
    def test(text: str) -> bool:
        try:
            value = float(text)
        except ValueError:
            return False
        return math.isfinite(value) and (value > 0 if positive else value >= 0)
    return ("a number > 0" if positive else "a number >= 0"), test


# name -> (what it must be, the test)
_NUMBERS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "EVIDENCEKIT_RETRIEVE_PER_MINUTE": _whole(1),
    "EVIDENCEKIT_MAX_ATTEMPTS": _whole(1),
    "EVIDENCEKIT_WORKER_CONCURRENCY": _whole(1),
    "EVIDENCEKIT_WORKER_SPARE_SLOTS": _whole(0),
    "EVIDENCEKIT_PARSE_PROCESSES": _whole(0),
    "EVIDENCEKIT_LEASE_SECONDS": _number(positive=True),
    "EVIDENCEKIT_POLL_SECONDS": _number(positive=True),
    "EVIDENCEKIT_HEARTBEAT_SECONDS": _number(positive=True),
    "EVIDENCEKIT_RETENTION_HOURS": _number(positive=True),
    "EVIDENCEKIT_WORKER_GRACE_SECONDS": _number(positive=False),
    "EVIDENCEKIT_AUTH_CACHE_SECONDS": _number(positive=False),
    "EVIDENCEKIT_REQUEST_READ_SECONDS": _number(positive=True),
    "EVIDENCEKIT_MAX_CONNECTIONS_PER_CLIENT": _whole(1),
    "EVIDENCEKIT_MAX_CONNECTIONS": _whole(1),
    "EVIDENCEKIT_MCP_STREAMS_PER_TOKEN": _whole(1),
    "EVIDENCEKIT_MCP_STREAMS": _whole(1),
    "EVIDENCEKIT_MCP_IDLE_SECONDS": _number(positive=True),
}


def setting(name: str, default: str, environ: Mapping[str, str] | None = None) -> str:
    """A setting as `problems` reads it: surrounding spaces dropped, empty the same as unset."""
    env = os.environ if environ is None else environ
    return env.get(name, "").strip() or default


def setting_as(name: str, default: T, convert: Callable[[str], T], environ: Mapping[str, str] | None = None) -> T:
    """A setting read as `setting` does and made a value by `convert`; `default` when unset or empty:
    the settings object's own default, so that no default is written twice."""
    value = setting(name, "", environ)
    return convert(value) if value else default


def problems(environ: Mapping[str, str] | None = None) -> list[str]:
    """What is wrong with the settings in `environ` (empty when nothing is)."""
    env = os.environ if environ is None else environ
    found = []
    for name, (must_be, test) in _NUMBERS.items():
        value = setting(name, "", env)
        if value and not test(value):
            found.append(f"{name} must be {must_be}, not {value!r}")
    level = setting(LOG_LEVEL_ENV, "", env)
    if level and level.upper() not in LOG_LEVELS:
        found.append(f"{LOG_LEVEL_ENV} must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
    url = env.get("DATABASE_URL", "")
    if url and not url.startswith(DATABASE_SCHEMES):
        scheme = url.split("://", 1)[0] if "://" in url else "(none)"
        found.append(f"DATABASE_URL must start with postgres:// (or postgresql://), or sqlite://; its scheme "
                     f"is {scheme}")
    profile = setting("EVIDENCEKIT_MCP_PROFILE", "", env)
    if profile and profile not in ("core", "full"):
        found.append(f"EVIDENCEKIT_MCP_PROFILE must be core or full, not {profile!r}")
    return found + _fetch_problems(env)


def _fetch_problems(env: Mapping[str, str]) -> list[str]:
    import ssl

    from evidencekit.server.evidence.fetch.fetcher import CA_BUNDLE_ENV, default_ssl_context
    from evidencekit.server.evidence.fetch.policy import parse_allowlist

    found = []
    try:
        parse_allowlist(env.get("EVIDENCEKIT_ALLOW_PRIVATE_HOSTS", ""))
    except ValueError as exc:
        found.append(str(exc))
    try:
        default_ssl_context(setting(CA_BUNDLE_ENV, "", env))  # what the fetcher will build from the same setting
    except (OSError, ssl.SSLError) as exc:
        found.append(f"{CA_BUNDLE_ENV} must be a readable PEM file of CA certificates: {setting(CA_BUNDLE_ENV, '', env)}: "
                     f"{getattr(exc, 'strerror', None) or exc}")
    return found


def check_or_exit(environ: Mapping[str, str] | None = None) -> None:
    """Print every problem, one line each, and exit 2; return when there is none."""
    found = problems(environ)
    if found:
        for line in found:
            print(f"evidencekit: {line}", file=sys.stderr)
        raise SystemExit(2)


# What EVIDENCEKIT_LOG_LEVEL=DEBUG turns on: these loggers' DEBUG lines, none of which carries a
# query string, a header, a token or fetched text (the HTTP client's trace is redacted:
# fetch/log_redaction.py). Every other library stays at INFO: at DEBUG the ORM and its SQLite
# driver print every statement with its parameters (fetched URLs, result text), and the MCP SDK
# and its event streams every message they carry.
DEBUG_LOGGERS = ("evidencekit", "httpx", "httpcore", "asyncio")


def configure_logging(default: str) -> None:
    """Log to stderr at EVIDENCEKIT_LOG_LEVEL (any case; checked by `check_or_exit`), written by a
    thread of its own, off the event loop. DEBUG is DEBUG for DEBUG_LOGGERS only."""
    import logging

    from evidencekit.server.runtime import log_off_the_loop

    level = (os.environ.get(LOG_LEVEL_ENV, "").strip() or default).upper()
    log_off_the_loop("INFO" if level == "DEBUG" else level)
    if level == "DEBUG":
        for name in DEBUG_LOGGERS:
            logging.getLogger(name).setLevel(logging.DEBUG)
