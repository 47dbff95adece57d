"""Who is calling, and whether they may: authentication is the adopting service's, authorization
is the manifests'.

A service plugs in an `Auth`: it turns a bearer credential into a principal (its own type, with
the credential's `kind` and granted `capabilities`) and, when an operation declares a
`minimum_role`, says whether the principal holds it for this payload (roles are scoped by the
service's own data: a workspace, a project). The runtime enforces every operation's declared
`Requirement` itself, on REST and MCP alike, after the input is valid and before the handler runs
(OperationPipeline, in _pipeline.py: `check_caller`, then the Auth's `check_role`).
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any, Protocol

from evidencekit.contracts._spec import OperationSpec, Requirement
from evidencekit.server.runtime._errors import Forbidden, Unauthorized


class Principal(Protocol):
    """What the runtime reads of a caller."""

    @property
    def kind(self) -> str: ...  # the credential kind, e.g. personal_access_token

    @property
    def capabilities(self) -> Set[str]: ...


class Auth(Protocol):
    async def authenticate(self, credential: str) -> Principal | None:
        """The caller behind a bearer credential ('' when none was sent), or None."""
        ...

    async def check_role(self, principal: Any, minimum_role: str, payload: Any) -> None:
        """Raise Forbidden unless `principal` holds `minimum_role` where `payload` acts."""
        ...

    def challenge(self, base_url: str) -> str:
        """The `WWW-Authenticate` value of a 401 (e.g. naming OAuth resource metadata)."""
        ...


class NoAuth:
    """For an API whose operations declare no `auth`: nobody is authenticated."""

    async def authenticate(self, credential: str) -> Principal | None:
        return None

    async def check_role(self, principal: Any, minimum_role: str, payload: Any) -> None:
        raise Forbidden(f"this server checks no roles; the operation needs {minimum_role}")

    def challenge(self, base_url: str) -> str:
        return "Bearer"


def bearer_secret(authorization: str) -> str:
    """The credential of an `Authorization: Bearer <secret>` header value, else ''."""
    scheme, _, secret = authorization.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


UNAUTHENTICATED = "a valid bearer token is required (Authorization: Bearer <token>)"


def check_caller(spec: OperationSpec, principal: Any, unauthenticated: str = UNAUTHENTICATED) -> None:
    """The checks that need nothing but the caller, in the order that reveals least: who, which
    credential, which capability."""
    requirement: Requirement = spec.requirement
    if principal is None:
        raise Unauthorized(unauthenticated)
    if requirement.credential_kinds and principal.kind not in requirement.credential_kinds:
        raise Forbidden(f"{spec.name} does not accept {principal.kind} credentials",
                        code="credential_kind_not_accepted")
    if requirement.capability and requirement.capability not in principal.capabilities:
        raise Forbidden(f"this token was not granted {requirement.capability}", code="missing_capability")
