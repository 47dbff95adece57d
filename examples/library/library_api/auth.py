"""Bearer tokens for the catalogue: each token names a caller and the capabilities it was granted.

The runtime asks `authenticate` for the caller behind a request's token, then enforces what each
manifest's `auth` declares (add_book needs `catalog:write`); the handlers never check tokens.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evidencekit.server.runtime import Forbidden

WRITE = "catalog:write"


@dataclass(frozen=True)
class Caller:
    name: str
    capabilities: frozenset[str] = frozenset()
    kind: str = "api_token"


class TokenAuth:
    """The `Auth` the runtime plugs in (evidencekit.server.runtime.Auth): a fixed table of tokens."""

    def __init__(self, tokens: Mapping[str, Caller]) -> None:
        self.tokens = dict(tokens)

    async def authenticate(self, credential: str) -> Caller | None:
        found = None
        for token, caller in self.tokens.items():  # every token compared, in constant time
            if hmac.compare_digest(token.encode(), credential.encode()):
                found = caller
        return found

    async def check_role(self, principal: Any, minimum_role: str, payload: Any) -> None:
        raise Forbidden(f"this catalogue has no roles; {minimum_role} cannot be granted")

    def challenge(self, base_url: str) -> str:
        return "Bearer"
