"""get_documents over the store: names map to the URL asked for, and expired content is never served."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from evidencekit.server.evidence.documents import UnknownDocument, get_documents
from evidencekit.server.evidence.store import jobs, receipts
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.models import Receipt, Workspace
from evidencekit.server.evidence.store.receipts import RetrieveRequest
from tests.server.store.test_receipts import RESULT
from tests.server.store.test_service import principal_in

pytestmark = pytest.mark.anyio


async def settle_page(workspace: Workspace, url: str, final_url: str, text: str) -> uuid.UUID:
    receipt, _ = await receipts.submit(RetrieveRequest(workspace.id, uuid.uuid4(), url, "url_text"))
    claimed = await jobs.claim("worker-1", timedelta(minutes=1), max_attempts=3)
    assert claimed is not None and claimed.id == receipt.id
    await jobs.settle(claimed, "worker-1", RESULT, Content(f"hash-{text}", final_url, "T", "D", text, f"# {text}", []))
    return receipt.id


async def test_a_redirected_page_answers_to_the_url_asked_for(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://Example.com/redir", "https://example.com/final", "Moved here.")
    answer = await get_documents(reader, ["documents/example.com/redir"])
    assert answer["documents"][0]["uri"] == "https://example.com/redir"
    assert answer["documents"][0]["content"] == "# Moved here."
    with pytest.raises(UnknownDocument):
        await get_documents(reader, ["documents/example.com/final"])


async def test_every_unknown_name_is_named_in_one_answer(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    await settle_page(lab, "https://example.com/known", "https://example.com/known", "Here.")
    asked = ["documents/a.test/x", "documents/example.com/known", "not-a-name", "documents/b.test/y",
             "documents/a.test/x"]
    with pytest.raises(UnknownDocument) as caught:
        await get_documents(reader, asked)
    assert caught.value.names == ["documents/a.test/x", "not-a-name", "documents/b.test/y"]
    assert "not-a-name: names have the form documents/{uri_without_scheme}" in str(caught.value)


async def test_content_is_hidden_the_moment_its_receipts_expire(store: str) -> None:
    lab = await Workspace.create(name="lab")
    reader = await principal_in(lab, "reader", "viewer")
    receipt_id = await settle_page(lab, "https://example.com/notes", "https://example.com/notes", "Notes.")
    assert (await get_documents(reader, ["documents/example.com/notes"]))["documents"][0]["content"] == "# Notes."
    await Receipt.filter(id=receipt_id).update(valid_until=datetime.now(UTC) - timedelta(seconds=1))
    with pytest.raises(UnknownDocument):  # before any sweep has purged it
        await get_documents(reader, ["documents/example.com/notes"])


async def test_an_expired_pending_receipt_is_never_fetched(store: str) -> None:
    lab = await Workspace.create(name="lab")
    receipt, _ = await receipts.submit(RetrieveRequest(lab.id, uuid.uuid4(), "https://example.com/late", "url_text"),
                                       retention=timedelta(seconds=-1))
    assert await jobs.claim("worker-1", timedelta(minutes=1), max_attempts=3) is None
    assert (await Receipt.get(id=receipt.id)).state == "pending"  # the sweeper marks it expired


async def test_documents_are_read_only_by_members_of_their_workspace(store: str) -> None:
    lab, other = await Workspace.create(name="lab"), await Workspace.create(name="other")
    await settle_page(lab, "https://example.com/private", "https://example.com/private", "Lab only.")
    outsider = await principal_in(other, "outsider", "owner")
    with pytest.raises(UnknownDocument, match="no stored document with that name that you may read"):
        await get_documents(outsider, ["documents/example.com/private"])
    member = await principal_in(lab, "member", "viewer")
    assert (await get_documents(member, ["documents/example.com/private"]))["documents"][0]["content"] == "# Lab only."


async def test_a_token_without_the_research_capability_reads_no_documents(store: str) -> None:
    """The manifest declares agent:research; the runtime refuses before the handler runs."""
    import json

    from evidencekit.server.evidence.auth import EvidenceAuth
    from evidencekit.server.evidence.handlers import EvidenceHandlers
    from evidencekit.server.evidence.store import access
    from evidencekit.server.evidence.store.models import User
    from evidencekit.server.generated.operations import GET_DOCUMENTS
    from evidencekit.server.runtime._context import RequestContext
    from evidencekit.server.runtime._errors import Forbidden
    from evidencekit.server.runtime._pipeline import OperationPipeline

    lab = await Workspace.create(name="lab")
    await settle_page(lab, "https://example.com/notes", "https://example.com/notes", "Notes.")
    user = await User.create(name="reader")
    await access.add_member(lab, user, "owner")
    _, secret = await access.create_token(user, capabilities=())
    principal = await access.authenticate(secret)
    assert principal is not None
    arguments = {"names": ["documents/example.com/notes"]}
    pipeline = OperationPipeline(GET_DOCUMENTS, EvidenceHandlers().get_documents, EvidenceAuth())
    with pytest.raises(Forbidden) as refused:
        await pipeline.run(arguments, json.dumps(arguments), RequestContext("r1", "rest", principal=principal))
    assert refused.value.code == "missing_capability"
