"""What the runtime reads of a request's head: the few headers it uses, found once per request, and
the request id every answer carries (`X-Request-Id`: the caller's when it is a sane token, else a
new one)."""

from __future__ import annotations

import os
import re

from starlette.types import Scope

CONTRACT_HASH_HEADER = "X-Contract-Hash"
# on an answer to a client of an earlier, compatible contract: the contract this server serves now
CONTRACT_NEWER_HEADER = "X-Contract-Newer"
REQUEST_ID_HEADER = "X-Request-Id"
REQUEST_ID_KEY = REQUEST_ID_HEADER.lower().encode()
CONTRACT_HASH_KEY = CONTRACT_HASH_HEADER.lower().encode()
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Every request header the runtime reads, found in one pass: the Host check (Host), /mcp's checks
# (Origin, Content-Type), the bearer check (Authorization), then the endpoint
_READ_HEADERS = frozenset({b"host", b"origin", b"authorization", b"content-length", b"content-type", REQUEST_ID_KEY,
                           CONTRACT_HASH_KEY})
_FOUND = "evidencekit.headers"
_DECIDED_ID = "evidencekit.request_id"


def new_request_id() -> str:
    """128 random bits from the kernel's generator: a per-process counter would tell callers the
    server's volume and its restarts. Read for _POOLED ids at a time: a read per id was a system
    call on every request (~1.5 us of the server's CPU under load). A forked child starts with an
    empty pool (no two processes hand out the same ids); `list.pop` is atomic, so no two threads
    get the same one."""
    while True:
        try:
            return _pool.pop()
        except IndexError:
            fresh = os.urandom(16 * _POOLED).hex()
            _pool.extend([fresh[start:start + 32] for start in range(0, len(fresh), 32)])


_POOLED = 256
_pool: list[str] = []
os.register_at_fork(after_in_child=_pool.clear)


def request_id_for(given: str) -> str:
    """The caller's X-Request-Id when it is a sane token, else a new one."""
    return given if given and _VALID_REQUEST_ID.match(given) else new_request_id()


def header_values(scope: Scope) -> dict[bytes, str]:
    """The request headers the runtime reads, found once per request and kept in its scope (ASGI
    names are lowercase; the first of a name wins)."""
    found: dict[bytes, str] | None = scope.get(_FOUND)
    if found is None:
        found = scope[_FOUND] = {}
        for name, value in scope["headers"]:
            if name in _READ_HEADERS and name not in found:
                found[name] = value.decode("latin-1")
    return found


def request_id_of(scope: Scope) -> str:
    """The id of the request `scope` describes (request_id_for its X-Request-Id), decided once and
    kept in its scope: its answer, its error body and its access line carry the same one."""
    decided: str | None = scope.get(_DECIDED_ID)
    if decided is None:
        decided = scope[_DECIDED_ID] = request_id_for(header_values(scope).get(REQUEST_ID_KEY, ""))
    return decided
