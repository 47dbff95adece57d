"""Who is calling, and whether they may: authentication is the adopting service's, authorization
is the manifests'.

A service plugs in an `Auth`: it turns a bearer credential into a principal (its own type, with
the credential's `kind` and granted `capabilities`) and, when an operation declares a
`minimum_role`, says whether the principal holds it for this payload (roles are scoped by the
service's own data: a workspace, a project).

The verdict on a call is decided here, the same on REST, MCP over HTTP and MCP over stdio:

1. `identify`: the caller behind the credential. A credential that is sent is always checked, on a
   public operation too: one that is malformed (not `Bearer <token>`) or that the Auth does not know
   is refused (401 unauthenticated), never taken as no credential. None sent: anonymous, which only
   an operation without `auth` serves.
2. `check_caller`: the operation's declared requirement that needs nothing but the caller (who,
   which credential kind, which capability), before the input is checked against the contract: an
   unauthenticated or unprivileged caller learns nothing of the input's shape. A missing credential
   is refused before the input's size counts (401, then 413); the kind and the capability after it
   (413, then 403) and, over REST, after the body is read as JSON (a body that is no JSON is 400).
3. the Auth's `check_role` (a `minimum_role`), once the input is valid: the role is held where the
   payload acts.

Over HTTP the bearer middleware (_bearer.py) runs `identify` before the request is read, on the
operations' paths and /mcp; the operation's pipeline (_pipeline.py) runs the rest. Over stdio the
tool caller (_mcp.py) runs `identify` with the process's credential on every call.
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
MALFORMED = "the Authorization header is not a bearer token: send `Authorization: Bearer <token>`"


async def identify(auth: Auth, credential: str | None, required: bool,
                   unauthenticated: str = UNAUTHENTICATED) -> Any:
    """The caller behind `credential`: the bearer secret sent (over HTTP the Authorization header's
    token, '' when the header is not `Bearer <token>`; over stdio the process's token), None when
    none was sent. Unauthorized for a credential sent that is malformed or unknown, and for none
    where `required`; None (anonymous) for none where it is not."""
    if credential is None:
        if not required:
            return None
        credential = ""  # the Auth's "none sent"
    elif not credential:
        raise Unauthorized(MALFORMED)
    principal = await auth.authenticate(credential)
    if principal is None:
        raise Unauthorized(unauthenticated)
    return principal


def sent_credential(authorization: str | None) -> str | None:
    """What `identify` takes from an Authorization header's value (None: no header)."""
    return None if authorization is None else bearer_secret(authorization)


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
