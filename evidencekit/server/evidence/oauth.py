"""OAuth 2.1 resource server for remote MCP clients (delegated_oauth credentials).

Access tokens are JWTs from an external authorization server: the signature is checked against the
issuer's JWKS, and `exp`, `iss`, `aud` (bound to this server) and the `agent:research` scope must
hold. The token's `sub` maps to a user (`research-evidence admin user NAME --oauth-subject SUB`). Off
unless EVIDENCEKIT_OAUTH_ISSUER and EVIDENCEKIT_OAUTH_AUDIENCE are set (read with the settings where
the process or the app starts: settings.EvidenceSettings; the service's Auth holds one verifier).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import jwt

from evidencekit.server.evidence.store.access import RESEARCH, Principal
from evidencekit.server.evidence.store.models import User

ISSUER_ENV = "EVIDENCEKIT_OAUTH_ISSUER"
AUDIENCE_ENV = "EVIDENCEKIT_OAUTH_AUDIENCE"
JWKS_ENV = "EVIDENCEKIT_OAUTH_JWKS_URL"
ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"]


@dataclass(frozen=True)
class OAuthSettings:
    issuer: str
    audience: str
    jwks_url: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OAuthSettings | None:
        env = os.environ if environ is None else environ
        issuer, audience = env.get(ISSUER_ENV, "").strip(), env.get(AUDIENCE_ENV, "").strip()
        if not issuer or not audience:
            return None
        jwks = env.get(JWKS_ENV, "").strip() or issuer.rstrip("/") + "/.well-known/jwks.json"
        return cls(issuer, audience, jwks)

    @property
    def metadata_url(self) -> str:
        """Where this resource's metadata is (RFC 9728 3.1: the well-known path between the audience's
        host and its path), built from the configuration, never from a request's Host header."""
        parts = urlsplit(self.audience)
        path = parts.path.rstrip("/")
        return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{path}"

    def resource_metadata(self) -> dict[str, Any]:
        """RFC 9728 protected resource metadata."""
        return {"resource": self.audience, "authorization_servers": [self.issuer],
                "scopes_supported": [RESEARCH], "bearer_methods_supported": ["header"]}


class OAuthVerifier:
    def __init__(self, settings: OAuthSettings) -> None:
        self.settings = settings
        self._keys = jwt.PyJWKClient(settings.jwks_url, cache_keys=True, lifespan=300, timeout=5)

    def _claims(self, token: str) -> dict[str, Any]:
        key = self._keys.get_signing_key_from_jwt(token)
        return jwt.decode(token, key.key, algorithms=ALGORITHMS, audience=self.settings.audience,
                          issuer=self.settings.issuer, options={"require": ["exp", "iss", "aud", "sub"]})

    async def verify(self, token: str) -> Principal | None:
        """The principal of a valid access token for this server; None for anything else."""
        try:
            claims = await asyncio.to_thread(self._claims, token)
        except (jwt.PyJWTError, OSError, ValueError):
            return None
        user = await User.get_or_none(oauth_subject=str(claims["sub"]))
        if user is None:
            return None
        scopes = claims.get("scope", "")
        granted = set(scopes.split()) if isinstance(scopes, str) else set(claims.get("scp", []))
        token_id = uuid.UUID(hashlib.sha256(token.encode()).hexdigest()[:32])
        return Principal(user.id, token_id, "delegated_oauth", frozenset(granted & {RESEARCH}),
                         float(claims["exp"]))

