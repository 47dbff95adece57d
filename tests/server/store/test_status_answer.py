"""A completed receipt's status answer is checked as it settles and read back as stored
(store/status_answer), on SQLite and PostgreSQL: the same answer the full read builds, never past
expiry, checked again under another contract, and not kept when it violates the contract."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from evidencekit.server.evidence.handlers import EvidenceHandlers
from evidencekit.server.evidence.service import EvidenceService
from evidencekit.server.evidence.store import jobs, receipts
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.status_answer import ANSWER_VERSION
from evidencekit.server.generated.operations import STATUS
from evidencekit.server.runtime._checked_answer import CheckedAnswer
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._errors import ContractViolation
from evidencekit.server.runtime._json_answer import answer_bytes
from evidencekit.server.runtime._pipeline import OperationPipeline
from tests.server.store.test_receipts import RESULT, WORKSPACE, contract_errors, request
from tests.support import AllowAll

pytestmark = pytest.mark.anyio
TEXT = "Ein Absatz mit Text — ünïcode, 中文 und עברית. " * 100


async def settled(result: dict[str, Any] | None = None) -> Receipt:
    receipt, _ = await receipts.submit(request())
    claimed = await jobs.claim("w1", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None
    page = Content("hash-of-the-page", "https://example.com/a", "T", "D", TEXT, f"# {TEXT}", [])
    await jobs.settle(claimed, "w1", result or {**RESULT, "text": TEXT}, page)
    return await Receipt.get(id=receipt.id)


async def status_answer() -> Any:
    """What the status handler answers, and what the runtime sends for it (REST's bytes, parsed)."""
    ask = {"workspace_id": str(WORKSPACE), "mutation_id": str(request().mutation_id)}
    answer = await EvidenceHandlers().status(STATUS.input_model.model_validate(ask), RequestContext("r", "rest"))
    pipeline = OperationPipeline(STATUS, EvidenceHandlers().status, AllowAll())
    checked = await pipeline.checked(ask, json.dumps(ask), RequestContext("r", "rest", principal=AllowAll.Caller()))
    # the bytes REST sends for it (rest_runtime: a CheckedAnswer's own body, else the data's JSON)
    sent = checked.body if type(checked) is CheckedAnswer else answer_bytes(checked)
    return answer, json.loads(sent)


async def test_a_completed_receipt_is_read_as_the_answer_checked_when_it_settled(store: str) -> None:
    receipt = await settled()
    assert receipt.answer_contract == f"{STATUS.contract_hash} answer/{ANSWER_VERSION}"
    assert receipt.answer_head is not None and receipt.answer_tail is not None
    assert TEXT[:100] not in receipt.answer_head + receipt.answer_tail  # the text is stored once
    answer, sent = await status_answer()
    assert isinstance(answer, CheckedAnswer) and answer.contract_hash == STATUS.contract_hash
    built = {"retrieval": receipts.as_retrieval(receipt)}  # what a read builds and checks without it
    assert json.loads(answer.body) == sent == built
    assert sent["retrieval"]["state"] == "completed" and sent["retrieval"]["result"]["text"] == TEXT
    assert sent["retrieval"]["evidence"]["revision"] == 1
    assert contract_errors(sent["retrieval"]) == []


@pytest.mark.parametrize("text", ['a "quoted" C:\\path\\n, not a newline\nbut this one, a tab\t', "emoji 🧪 and עברית 中文"])
async def test_a_stored_answer_sends_the_result_exactly_as_written(store: str, text: str) -> None:
    """The stored result goes out as the database gives its bytes: backslashes, quotes, control
    characters and four-byte characters come back as they were settled, in UTF-8, not escaped."""
    receipt = await settled({**RESULT, "text": text})
    answer, sent = await status_answer()
    assert isinstance(answer, CheckedAnswer)
    assert sent["retrieval"]["result"]["text"] == text
    assert sent == {"retrieval": receipts.as_retrieval(receipt)}
    if text.isprintable():
        assert text.encode() in answer.body


async def test_past_valid_until_the_receipt_reads_expired_not_as_stored(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    receipt = await settled()
    later = datetime.now(UTC) + timedelta(days=2)
    monkeypatch.setattr(receipts, "utcnow", lambda: later)
    answer, sent = await status_answer()
    assert not isinstance(answer, CheckedAnswer)  # not yet purged: the columns are still there
    assert sent["retrieval"]["state"] == "expired" and sent["retrieval"]["result"]["text"] == ""
    assert await receipts.purge_expired(now=later) == 1
    purged = await Receipt.get(id=receipt.id)
    assert (purged.answer_contract, purged.answer_head, purged.answer_tail) == (None, None, None)


@pytest.mark.parametrize("made_by", ["sha256:0000000000000000 answer/1", "{contract} answer/0"])
async def test_an_answer_stored_under_another_contract_or_version_is_built_anew(store: str, made_by: str) -> None:
    receipt = await settled()
    assert receipt.answer_head is not None
    # what a newer contract or builder may no longer make: not sent, and not what is read
    await Receipt.filter(id=receipt.id).update(answer_contract=made_by.format(contract=STATUS.contract_hash),
                                               answer_head=receipt.answer_head.replace('"completed"', '"done"'))
    answer, sent = await status_answer()
    assert not isinstance(answer, CheckedAnswer)
    assert sent == {"retrieval": receipts.as_retrieval(receipt)} and sent["retrieval"]["state"] == "completed"


async def test_a_receipt_settled_before_answers_were_stored_is_built_and_checked(store: str) -> None:
    receipt = await settled()
    await Receipt.filter(id=receipt.id).update(answer_contract=None, answer_head=None, answer_tail=None)
    answer, sent = await status_answer()
    assert not isinstance(answer, CheckedAnswer)
    assert sent == {"retrieval": receipts.as_retrieval(receipt)} and sent["retrieval"]["result"]["text"] == TEXT


async def test_a_result_that_violates_the_contract_is_settled_but_never_sent(store: str) -> None:
    receipt = await settled({**RESULT, "status": "splendid"})
    assert receipt.state == "completed" and receipt.answer_contract is None
    with pytest.raises(ContractViolation):  # as before: every read checks it, and refuses it
        await status_answer()


async def test_a_cancelled_receipt_is_built_and_checked_on_every_read(store: str) -> None:
    receipt, _ = await receipts.submit(request(mutation_id=uuid.uuid4()))
    assert await receipts.cancel(WORKSPACE, receipt.mutation_id, {**RESULT, "status": "cancelled"})
    answer = await EvidenceService().status(WORKSPACE, receipt.mutation_id)
    assert not isinstance(answer, CheckedAnswer) and answer["retrieval"]["state"] == "cancelled"


async def test_a_waiting_receipt_is_checked_once_and_never_read_stale(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    receipt, _ = await receipts.submit(request(mutation_id=uuid.uuid4()))
    service = EvidenceService()
    first = await service.status(WORKSPACE, receipt.mutation_id)
    assert isinstance(first, CheckedAnswer)  # checked as it was first read
    assert await service.status(WORKSPACE, receipt.mutation_id) is first  # and not again
    assert json.loads(first.body)["retrieval"]["state"] == "pending"
    claimed = await jobs.claim("w1", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None and claimed.id == receipt.id
    running = await service.status(WORKSPACE, receipt.mutation_id)
    assert isinstance(running, CheckedAnswer) and json.loads(running.body)["retrieval"]["state"] == "running"
    monkeypatch.setattr(receipts, "utcnow", lambda: datetime.now(UTC) + timedelta(days=2))
    expired = await service.status(WORKSPACE, receipt.mutation_id)
    assert not isinstance(expired, CheckedAnswer) and expired["retrieval"]["state"] == "expired"
    monkeypatch.undo()
    await jobs.settle(claimed, "w1", {**RESULT, "text": TEXT}, None)
    done = await service.status(WORKSPACE, receipt.mutation_id)
    assert isinstance(done, CheckedAnswer) and json.loads(done.body)["retrieval"]["state"] == "completed"


async def test_a_waiting_receipt_whose_answer_violates_the_contract_is_refused_on_every_read(store: str) -> None:
    receipt, _ = await receipts.submit(request())
    await Receipt.filter(id=receipt.id).update(state="paused")  # no such state in the contract
    for _ in range(2):
        with pytest.raises(ContractViolation):
            await status_answer()
