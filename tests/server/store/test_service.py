from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from evidencekit.contracts._spec import OperationSpec
from evidencekit.server.evidence.auth import EvidenceAuth
from evidencekit.server.evidence.service import EvidenceService, RateLimited, ServiceSettings
from evidencekit.server.evidence.store import access
from evidencekit.server.evidence.store.models import Receipt, User, Workspace
from evidencekit.server.evidence.store.receipts import MutationConflict
from evidencekit.server.generated.operations import RETRIEVE, STATUS
from evidencekit.server.runtime._checked_answer import CheckedAnswer, answer_data
from evidencekit.server.runtime._errors import Forbidden
from tests.support import admitted

pytestmark = pytest.mark.anyio


async def principal_in(workspace: Workspace, name: str, role: str) -> access.Principal:
    user = await User.create(name=name)
    await access.add_member(workspace, user, role)
    _, secret = await access.create_token(user)
    principal = await access.authenticate(secret)
    assert principal is not None
    return principal


async def allowed(spec: OperationSpec, principal: access.Principal, arguments: dict[str, Any]) -> None:
    """What the runtime checks before the handler runs (its pipeline, on REST and MCP alike): the
    manifest's requirement, with the service's role check."""
    await admitted(spec, EvidenceAuth(), principal, arguments)


async def test_retrieve_and_status_follow_the_roles(store: str) -> None:
    lab = await Workspace.create(name="lab")
    other = await Workspace.create(name="other")
    editor, viewer = await principal_in(lab, "ed", "editor"), await principal_in(lab, "vi", "viewer")
    outsider = await principal_in(other, "out", "owner")
    service = EvidenceService(ServiceSettings(retrieve_per_minute=100))
    mutation = uuid.uuid4()
    created = await service.retrieve(lab.id, mutation, "https://example.com/a", "url_text", None)
    assert created["retrieval"]["state"] == "pending"
    answer = await service.status(lab.id, mutation)  # checked already: the runtime sends it as it is
    assert isinstance(answer, CheckedAnswer) and answer_data(answer)["retrieval"]["id"] == created["retrieval"]["id"]
    assert (await service.status(lab.id, uuid.uuid4())) == {"retrieval": None}
    await allowed(RETRIEVE, editor, {"workspace_id": lab.id, "mutation_id": mutation, "url": "https://e.com",
                                     "kind": "url_text"})
    with pytest.raises(Forbidden) as caught:
        await allowed(RETRIEVE, viewer, {"workspace_id": lab.id, "mutation_id": mutation, "url": "https://e.com",
                                         "kind": "url_text"})
    assert caught.value.code == "insufficient_role"
    # An outsider learns nothing: the same refusal whether the receipt exists or not.
    refusals = []
    for probe in (mutation, uuid.uuid4()):
        with pytest.raises(Forbidden) as caught:
            await allowed(STATUS, outsider, {"workspace_id": lab.id, "mutation_id": probe})
        refusals.append((caught.value.code, caught.value.message))
    assert refusals[0] == refusals[1] and refusals[0][0] == "not_a_member"
    # ... and is told which workspaces are its own (not the one it named)
    assert refusals[0][1].startswith("you are not a member of this workspace; your workspace_id: ")
    assert str(lab.id) not in refusals[0][1]
    with pytest.raises(MutationConflict):
        await service.retrieve(lab.id, mutation, "https://example.com/b", "url_text", None)
    assert await Receipt.all().count() == 1


async def test_retrieve_is_rate_limited_per_workspace(store: str) -> None:
    lab = await Workspace.create(name="lab", retrieve_rate_per_minute=2)
    await principal_in(lab, "ed", "editor")
    service = EvidenceService(ServiceSettings(retrieve_per_minute=100))
    for _ in range(2):
        await service.retrieve(lab.id, uuid.uuid4(), "https://example.com/a", "url_text", None)
    with pytest.raises(RateLimited) as caught:
        await service.retrieve(lab.id, uuid.uuid4(), "https://example.com/a", "url_text", None)
    assert 1 <= caught.value.retry_after <= 60


async def test_only_new_receipts_count_against_the_rate(store: str) -> None:
    """Clients may poll by repeating retrieve (DESIGN.md): a repeat returns the receipt, never a 429."""
    lab = await Workspace.create(name="lab", retrieve_rate_per_minute=2)
    await principal_in(lab, "ed", "editor")
    service = EvidenceService(ServiceSettings(retrieve_per_minute=100))
    first = uuid.uuid4()
    created = await service.retrieve(lab.id, first, "https://example.com/a", "url_text", None)
    for _ in range(5):
        repeat = await service.retrieve(lab.id, first, "https://example.com/a", "url_text", None)
        assert repeat == created
        with pytest.raises(MutationConflict):
            await service.retrieve(lab.id, first, "https://example.com/b", "url_text", None)
    await service.retrieve(lab.id, uuid.uuid4(), "https://example.com/c", "url_text", None)
    with pytest.raises(RateLimited):
        await service.retrieve(lab.id, uuid.uuid4(), "https://example.com/d", "url_text", None)
    assert await service.retrieve(lab.id, first, "https://example.com/a", "url_text", None) == created
    with pytest.raises(MutationConflict):
        await service.retrieve(lab.id, first, "https://example.com/b", "url_text", None)


async def test_concurrent_repeats_and_conflicts_are_not_rate_limited(store: str) -> None:
    """Many identical calls at once (a client retrying on a timeout) make one receipt and spend one
    unit of the rate; none of them gets a 429, nor does a concurrent conflicting call."""
    lab = await Workspace.create(name="lab", retrieve_rate_per_minute=2)
    await principal_in(lab, "ed", "editor")
    service = EvidenceService(ServiceSettings(retrieve_per_minute=100))
    mutation = uuid.uuid4()

    async def call(url: str) -> object:
        try:
            return await service.retrieve(lab.id, mutation, url, "url_text", None)
        except (RateLimited, MutationConflict) as refused:
            return refused

    answers = await asyncio.gather(*(call("https://example.com/a") for _ in range(8)),
                                   call("https://example.com/b"))
    assert not [answer for answer in answers if isinstance(answer, RateLimited)]
    receipts = [answer for answer in answers if isinstance(answer, dict)]
    conflicts = [answer for answer in answers if isinstance(answer, MutationConflict)]
    assert len(receipts) + len(conflicts) == 9 and len(conflicts) in (1, 8)  # whichever input came first
    assert all(answer == receipts[0] for answer in receipts)
    assert await Receipt.all().count() == 1
    await service.retrieve(lab.id, uuid.uuid4(), "https://example.com/c", "url_text", None)
    with pytest.raises(RateLimited):
        await service.retrieve(lab.id, uuid.uuid4(), "https://example.com/d", "url_text", None)


async def test_status_given_a_receipt_id_points_to_its_mutation_id_only_in_its_own_workspace(store: str) -> None:
    """An agent that passes retrieval.id as the mutation_id gets the contract's null answer, and over
    MCP a note naming the mutation_id to use; another workspace's receipt is never named."""
    from evidencekit.server.evidence.handlers import EvidenceHandlers
    from evidencekit.server.generated.models import StatusInput
    from evidencekit.server.runtime._context import RequestContext

    lab, other = await Workspace.create(name="lab"), await Workspace.create(name="other")
    handlers = EvidenceHandlers(EvidenceService(ServiceSettings(retrieve_per_minute=100)))
    mutation = uuid.uuid4()
    receipt_id = (await handlers.service.retrieve(lab.id, mutation, "https://example.com/a", "url_text",
                                                  None))["retrieval"]["id"]

    async def status(workspace: Workspace, given: str, surface: str = "mcp") -> tuple[Any, list[str]]:
        context = RequestContext("request", surface)
        answer = await handlers.status(StatusInput.model_validate(
            {"workspace_id": str(workspace.id), "mutation_id": given}), context)
        return answer, context.notes

    answer, notes = await status(lab, receipt_id)
    assert answer == {"retrieval": None}
    assert notes == [f"{receipt_id} is the id of a receipt of this workspace (retrieval.id), not its mutation_id: "
                     f"call sosoapi_research_evidence_status with mutation_id {mutation} to read it."]
    assert await status(other, receipt_id) == ({"retrieval": None}, [])  # not another workspace's receipt
    assert await status(lab, str(uuid.uuid4())) == ({"retrieval": None}, [])
