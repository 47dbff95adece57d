from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from evidencekit.server.evidence.auth import EvidenceAuth
from evidencekit.server.evidence.store import access
from evidencekit.server.evidence.store.models import Token, User, Workspace
from evidencekit.server.generated.operations import RETRIEVE, STATUS
from evidencekit.server.runtime._errors import Forbidden, Unauthorized
from tests.support import admitted

pytestmark = pytest.mark.anyio


async def setup_people() -> tuple[Workspace, User, User]:
    workspace = await Workspace.create(name="lab")
    editor = await User.create(name="ed")
    viewer = await User.create(name="vi")
    await access.add_member(workspace, editor, "editor")
    await access.add_member(workspace, viewer, "viewer")
    return workspace, editor, viewer


async def test_tokens_are_stored_hashed_and_authenticate(store: str) -> None:
    _, editor, _ = await setup_people()
    token, secret = await access.create_token(editor)
    stored = await Token.get(id=token.id)
    assert secret.startswith("ek_") and secret not in stored.secret_hash and len(stored.secret_hash) == 64
    principal = await access.authenticate(secret)
    assert principal is not None and principal.user_id == editor.id and "agent:research" in principal.capabilities
    assert await access.authenticate(secret + "x") is None and await access.authenticate("") is None


async def test_revoked_and_expired_tokens_do_not_authenticate(store: str) -> None:
    _, editor, _ = await setup_people()
    token, secret = await access.create_token(editor)
    assert await access.revoke_token(token.id) and await access.authenticate(secret) is None
    _, short = await access.create_token(editor, expires_in=timedelta(seconds=1))
    assert await access.authenticate(short) is not None
    assert await access.authenticate(short, now=datetime.now(UTC) + timedelta(seconds=5)) is None


async def retrieve_as(principal: access.Principal | None, workspace_id: uuid.UUID) -> None:
    """A retrieve (its manifest: capability agent:research, role editor) in `workspace_id`, through
    the runtime's pipeline with the service's Auth: returns when the handler would run."""
    await admitted(RETRIEVE, EvidenceAuth(), principal, {"workspace_id": workspace_id, "mutation_id": uuid.uuid4(),
                                                         "url": "https://example.com/a", "kind": "url_text"})


async def status_as(principal: access.Principal | None, workspace_id: uuid.UUID) -> None:
    """A status read (role viewer), the same way."""
    await admitted(STATUS, EvidenceAuth(), principal, {"workspace_id": workspace_id, "mutation_id": uuid.uuid4()})


async def test_rights_are_capability_within_the_owners_current_role(store: str) -> None:
    workspace, editor, viewer = await setup_people()
    _, editor_secret = await access.create_token(editor)
    _, viewer_secret = await access.create_token(viewer)
    _, bare_secret = await access.create_token(editor, capabilities=())
    ed = await access.authenticate_bearer(editor_secret)
    vi = await access.authenticate_bearer(viewer_secret)
    bare = await access.authenticate_bearer(bare_secret)
    assert ed and vi and bare
    await retrieve_as(ed, workspace.id)
    await status_as(vi, workspace.id)
    for call, principal, code in [(retrieve_as, vi, "insufficient_role"), (status_as, bare, "missing_capability")]:
        with pytest.raises(Forbidden) as caught:
            await call(principal, workspace.id)
        assert caught.value.code == code
    with pytest.raises(Forbidden) as caught:
        await status_as(ed, uuid.uuid4())
    assert caught.value.code == "not_a_member"
    with pytest.raises(Unauthorized):
        await status_as(await access.authenticate_bearer(bare_secret + "x"), workspace.id)
    await access.add_member(workspace, editor, "viewer")  # demoted: the old token follows
    access.forget_cached()  # once the cached role has lived its TTL
    with pytest.raises(Forbidden) as caught:
        await retrieve_as(ed, workspace.id)
    assert caught.value.code == "insufficient_role"
    await status_as(ed, workspace.id)  # what the viewer role allows


async def test_cached_lookups_follow_revocation_and_demotion_within_the_ttl(store: str) -> None:
    from evidencekit.server.evidence.store.ttl_cache import TTLCache
    from tests.support import ManualClock

    workspace, editor, _ = await setup_people()
    token, secret = await access.create_token(editor)
    previous = access._principals, access._roles
    clock = ManualClock()
    access._principals, access._roles = TTLCache(ttl=5, clock=clock), TTLCache(ttl=5, clock=clock)
    try:
        assert await access.authenticate_bearer(secret) is not None
        await Token.filter(id=token.id).update(revoked_at=datetime.now(UTC))  # revoked by another process
        clock.advance(4.9)
        assert await access.authenticate_bearer(secret) is not None  # still cached here
        clock.advance(0.2)
        assert await access.authenticate_bearer(secret) is None  # the TTL has passed
        here, secret_here = await access.create_token(editor)
        assert await access.authenticate_bearer(secret_here) is not None
        await access.revoke_token(here.id)  # revoked by this process: at once
        assert await access.authenticate_bearer(secret_here) is None
        _, fresh = await access.create_token(editor)
        principal = await access.authenticate_bearer(fresh)
        assert principal is not None
        await retrieve_as(principal, workspace.id)
        await access.add_member(workspace, editor, "viewer")  # demoted: the cached role lives out its TTL
        clock.advance(4.9)
        await retrieve_as(principal, workspace.id)  # the cached role, still
        clock.advance(0.2)
        with pytest.raises(Forbidden) as caught:
            await retrieve_as(principal, workspace.id)
        assert caught.value.code == "insufficient_role"
    finally:
        access._principals, access._roles = previous


async def test_no_cache_keeps_a_token_past_its_expiry(store: str) -> None:
    from evidencekit.server.evidence.store.ttl_cache import TTLCache
    from tests.support import ManualClock

    _, editor, _ = await setup_people()
    token, secret = await access.create_token(editor, expires_in=timedelta(seconds=30))
    previous = access._principals
    clock = ManualClock()
    access._principals = TTLCache(ttl=60, expiry=lambda principal: principal.expires_at, clock=clock)
    try:
        assert await access.authenticate_bearer(secret) is not None  # cached, for at most 30 s
        clock.advance(31)
        await Token.filter(id=token.id).update(expires_at=datetime.now(UTC) - timedelta(seconds=1))  # the store's time
        assert await access.authenticate_bearer(secret) is None  # a 60 s cache did not keep it
    finally:
        access._principals = previous


async def test_sessions_and_delegations_expire_by_default(store: str) -> None:
    _, editor, _ = await setup_people()
    before = datetime.now(UTC)
    session, _ = await access.create_token(editor, kind="user_session")
    delegated, _ = await access.create_token(editor, kind="delegated_oauth")
    personal, _ = await access.create_token(editor)
    assert session.expires_at is not None and timedelta(hours=11) < session.expires_at - before <= timedelta(hours=12, seconds=5)
    assert delegated.expires_at is not None and delegated.expires_at - before <= timedelta(hours=1, seconds=5)
    assert personal.expires_at is None  # a personal access token lives until it is revoked
