"""Who may do what: tokens (stored as sha256, shown once), capabilities, workspace roles.

A token never exceeds its owner's rights: what it may do is its granted capabilities, within the
role its owner holds in the workspace now (a demoted owner's old tokens are demoted too).
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from evidencekit.server.evidence.store.models import (
    ROLES,
    TOKEN_KINDS,
    Membership,
    Token,
    User,
    Workspace,
)
from evidencekit.server.evidence.store.ttl_cache import TTLCache

if TYPE_CHECKING:
    from evidencekit.server.evidence.oauth import OAuthVerifier

ROLE_RANK = {role: rank for rank, role in enumerate(ROLES, start=1)}
RESEARCH = "agent:research"
TOKEN_PREFIX = "ek_"


class AccessDenied(Exception):
    """Authenticated, but not allowed; `code` says which rule refused."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Principal:
    user_id: uuid.UUID
    token_id: uuid.UUID
    kind: str
    capabilities: frozenset[str]
    expires_at: float | None = None  # the credential's expiry (Unix time): no cache keeps it past this


# Credentials of these kinds expire unless told otherwise: a session or a delegation is not for ever.
DEFAULT_LIFETIME = {"user_session": timedelta(hours=12), "delegated_oauth": timedelta(hours=1)}


async def create_token(user: User, *, kind: str = "personal_access_token",
                       capabilities: tuple[str, ...] = (RESEARCH,), expires_in: timedelta | None = None,
                       label: str = "") -> tuple[Token, str]:
    """A new token and its secret; the secret is not stored and cannot be shown again."""
    if kind not in TOKEN_KINDS:
        raise ValueError(f"token kind must be one of {', '.join(TOKEN_KINDS)}")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires_in = expires_in or DEFAULT_LIFETIME.get(kind)
    expires_at = datetime.now(UTC) + expires_in if expires_in else None
    token = await Token.create(owner=user, kind=kind, secret_hash=hash_secret(secret),
                               capabilities=list(capabilities), expires_at=expires_at, label=label)
    return token, secret


async def authenticate(secret: str, *, now: datetime | None = None) -> Principal | None:
    """The principal behind a bearer secret; None for unknown, revoked or expired tokens."""
    if not secret:
        return None
    token = await Token.get_or_none(secret_hash=hash_secret(secret))
    now = now or datetime.now(UTC)
    if token is None or token.revoked_at is not None or (token.expires_at and token.expires_at <= now):
        return None
    expires = token.expires_at.timestamp() if token.expires_at else None
    return Principal(token.owner_id, token.id, token.kind, frozenset(token.capabilities),  # type: ignore[attr-defined]
                     expires)


_principals: TTLCache[Principal] = TTLCache(expiry=lambda principal: principal.expires_at)
_roles: TTLCache[str] = TTLCache()


def keep_for(seconds: float) -> None:
    """How long this process's caches keep a principal and a role (EVIDENCEKIT_AUTH_CACHE_SECONDS, read
    with the settings where the process or the app starts: settings.EvidenceSettings)."""
    _principals.ttl = _roles.ttl = seconds


def forget_cached() -> None:
    """Drop cached principals and roles (what the cache TTL does on its own, a few seconds later)."""
    _principals.clear()
    _roles.clear()


async def _verify_bearer(secret: str, oauth: OAuthVerifier | None) -> Principal | None:
    if secret.startswith(TOKEN_PREFIX):
        return await authenticate(secret)
    return None if oauth is None else await oauth.verify(secret)


async def authenticate_bearer(secret: str, oauth: OAuthVerifier | None = None) -> Principal | None:
    """A bearer credential of either kind: this service's own token, or (with `oauth`, when OAuth is
    configured) an OAuth JWT; cached briefly (see ttl_cache) because every request asks."""
    if not secret:
        return None
    # Cached under a digest, never the secret itself; blake2s is ~3x quicker here than the sha256
    # the database keeps (its OpenSSL lookup costs more than hashing a token).
    key = hashlib.blake2s(secret.encode()).digest()
    return _principals.peek(key) or await _principals.get(key, lambda: _verify_bearer(secret, oauth))


async def revoke_token(token_id: uuid.UUID) -> bool:
    """Revoked at once in this process (its cached principals are dropped: they are keyed by the
    secret's digest, which is not stored); other processes within EVIDENCEKIT_AUTH_CACHE_SECONDS."""
    revoked = await Token.filter(id=token_id, revoked_at=None).update(revoked_at=datetime.now(UTC)) == 1
    _principals.clear()
    return revoked


def cached_role(principal: Principal, workspace_id: uuid.UUID) -> str | None:
    """The role the cache holds (no await: a polled status read asks on every request), else None."""
    return _roles.peek((principal.user_id.int, workspace_id.int))  # ints hash in C; UUID.__hash__ is Python


async def role_in(principal: Principal, workspace_id: uuid.UUID) -> str | None:
    """The caller's role in the workspace (None: not a member), through the cache."""
    key = (principal.user_id.int, workspace_id.int)
    return await _roles.get(key, lambda: _role_of(principal.user_id, workspace_id))


def role_refusal(role: str | None, minimum_role: str) -> AccessDenied | None:
    if role is None:
        return AccessDenied("not_a_member", "you are not a member of this workspace")
    if ROLE_RANK[role] < ROLE_RANK[minimum_role]:
        return AccessDenied("insufficient_role", f"this needs the {minimum_role} role in the workspace "
                                                 f"(you are {role})")
    return None


async def workspaces_of(user_id: uuid.UUID) -> list[tuple[str, str, str]]:
    """(workspace_id, name, role) of every workspace the user is a member of, by name."""
    memberships = await Membership.filter(user_id=user_id).prefetch_related("workspace")
    return sorted(((str(m.workspace.id), m.workspace.name, m.role) for m in memberships), key=lambda w: (w[1], w[0]))


def workspaces_text(workspaces: list[tuple[str, str, str]]) -> str:
    """How the refusal and the MCP instructions name them: `<id> (<name>, <role>)`, ..."""
    if not workspaces:
        return "you are a member of no workspace (an admin adds you: research-evidence admin member ...)"
    return "your workspace_id" + ("s" if len(workspaces) > 1 else "") + ": " + ", ".join(
        f"{workspace_id} ({name}, {role})" for workspace_id, name, role in workspaces)


async def _role_of(user_id: uuid.UUID, workspace_id: uuid.UUID) -> str | None:
    membership = await Membership.get_or_none(workspace_id=workspace_id, user_id=user_id)
    return None if membership is None else membership.role


async def remove_member(workspace: Workspace, user: User) -> bool:
    """The user leaves the workspace (their tokens lose it at once in this process, within
    EVIDENCEKIT_AUTH_CACHE_SECONDS elsewhere); False when they were not a member."""
    removed = await Membership.filter(workspace=workspace, user=user).delete() > 0
    _roles.clear()
    return removed


async def add_member(workspace: Workspace, user: User, role: str) -> Membership:
    if role not in ROLE_RANK:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    try:
        async with in_transaction():
            return await Membership.create(workspace=workspace, user=user, role=role)
    except IntegrityError:
        membership = await Membership.get(workspace=workspace, user=user)
        membership.role = role
        await membership.save(update_fields=["role"])
        return membership
