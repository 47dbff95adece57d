from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from evidencekit.server.evidence.source_urls import source_key
from evidencekit.server.evidence.store import jobs, receipts
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.models import Evidence, Receipt
from evidencekit.server.evidence.store.receipts import MutationConflict, RetrieveRequest
from tests.support import until, validator_named

pytestmark = pytest.mark.anyio
WORKSPACE = uuid.UUID("11111111-1111-4111-8111-111111111111")


def request(url: str = "https://example.com/a", **changes: Any) -> RetrieveRequest:
    base = {"workspace_id": WORKSPACE, "mutation_id": uuid.UUID("40000000-0000-4000-8000-000000000001"),
            "url": url, "kind": "url_text", "language": None}
    return RetrieveRequest(**{**base, **changes})


def contract_errors(retrieval: dict[str, Any]) -> list[str]:
    errors = validator_named("sosoapi_research_evidence_retrieve").output_errors({"retrieval": retrieval})
    errors += validator_named("sosoapi_research_evidence_status").output_errors({"retrieval": retrieval})
    return [f"[{e.variant}] {e.path}: {e.message}" for e in errors]


RESULT = {
    "kind": "url_text", "status": "ready", "text": "Some text.", "title": "T", "description": "D",
    "segments": [], "reason": None, "warnings": [], "retry_after_seconds": None,
    "provenance": {"source_url": "https://example.com/a", "retrieved_at": "2099-01-15T09:00:01Z",
                   "mime_type": "text/html", "parser_version": "research-public-retrieval/v1",
                   "content_kind": "document_text", "caption_format": None, "language": None,
                   "language_source": "unknown", "platform_native_verified": False},
}


def content(text: str = "Some text.") -> Content:
    return Content(f"hash-of-{text}", "https://example.com/a", "T", "D", text, f"# {text}", [])


async def test_first_submit_creates_and_repeats_return_the_same_receipt(store: str) -> None:
    first, created = await receipts.submit(request())
    again, created_again = await receipts.submit(request())
    assert (created, created_again) == (True, False)
    assert again.id == first.id and again.state == "pending"
    assert await Receipt.all().count() == 1


async def test_same_mutation_with_another_input_is_a_conflict_and_changes_nothing(store: str) -> None:
    original, _ = await receipts.submit(request())
    for changed in (request("https://example.com/b"), request(kind="published_captions"), request(language="de")):
        with pytest.raises(MutationConflict):
            await receipts.submit(changed)
    stored = await Receipt.get(id=original.id)
    assert (stored.url, stored.kind, stored.language) == ("https://example.com/a", "url_text", None)


async def test_receipt_reads_as_the_contract_in_every_state(store: str) -> None:
    receipt, _ = await receipts.submit(request())
    pending = receipts.as_retrieval(receipt)
    assert pending["state"] == "pending" and pending["result"] is None and contract_errors(pending) == []
    claimed = await jobs.claim("w1", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None and claimed.id == receipt.id
    await jobs.settle(claimed, "w1", RESULT, content())
    done = receipts.as_retrieval(await Receipt.get(id=receipt.id))
    assert done["state"] == "completed" and done["evidence"]["revision"] == 1
    assert done["result"]["text"] == "Some text." and contract_errors(done) == []
    later = receipts.as_retrieval(await Receipt.get(id=receipt.id), now=datetime.now(UTC) + timedelta(days=2))
    assert later["state"] == "expired" and later["result"]["text"] == "" and later["result"]["title"] is None
    assert contract_errors(later) == []


async def test_a_claim_is_exclusive_and_settling_needs_the_lease(store: str) -> None:
    receipt, _ = await receipts.submit(request())
    first = await jobs.claim("w1", timedelta(seconds=30), max_attempts=3)
    assert first is not None
    assert await jobs.claim("w2", timedelta(seconds=30), max_attempts=3) is None
    with pytest.raises(jobs.LeaseLost):
        await jobs.settle(first, "w2", RESULT, None)
    assert (await Receipt.get(id=receipt.id)).state == "running"


async def test_an_expired_lease_is_reclaimed_and_the_old_worker_cannot_settle(store: str) -> None:
    await receipts.submit(request())
    past = datetime.now(UTC) - timedelta(minutes=5)
    stale = await jobs.claim("dead", timedelta(seconds=1), max_attempts=3, now=past)
    assert stale is not None
    taken = await jobs.claim("alive", timedelta(seconds=30), max_attempts=3)
    assert taken is not None and taken.id == stale.id and taken.attempts == 2
    with pytest.raises(jobs.LeaseLost):
        await jobs.settle(stale, "dead", RESULT, None)
    await jobs.settle(taken, "alive", RESULT, None)
    assert (await Receipt.get(id=taken.id)).state == "completed"


async def test_receipts_that_exhaust_their_attempts_settle_unconfirmed(store: str) -> None:
    receipt, _ = await receipts.submit(request())
    past = datetime.now(UTC) - timedelta(minutes=5)
    for attempt in range(3):  # each worker dies: its one-second lease has expired at the next claim
        at = past + timedelta(seconds=10 * attempt)
        assert await jobs.claim(f"w{attempt}", timedelta(seconds=1), max_attempts=3, now=at) is not None
    assert await jobs.claim("w9", timedelta(seconds=30), max_attempts=3) is None
    assert await jobs.settle_abandoned(3) == 1
    view = receipts.as_retrieval(await Receipt.get(id=receipt.id))
    assert view["state"] == "unconfirmed" and view["settled_at"] and contract_errors(view) == []


async def test_release_gives_the_receipt_back_without_spending_an_attempt(store: str) -> None:
    receipt, _ = await receipts.submit(request())
    claimed = await jobs.claim("w1", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None and await jobs.release(claimed.id, "w1")
    again = await Receipt.get(id=receipt.id)
    assert (again.state, again.attempts, again.lease_owner) == ("pending", 0, None)


async def test_evidence_revisions_follow_the_content(store: str) -> None:
    ids = []
    for number, text in enumerate(["one", "one", "two", "two", "three"]):
        r, _ = await receipts.submit(request("https://Example.com:443/a#frag", mutation_id=uuid.uuid4()))
        claimed = await jobs.claim("w", timedelta(seconds=30), max_attempts=3)
        assert claimed is not None, number
        await jobs.settle(claimed, "w", RESULT, content(text))
        settled = await Receipt.get(id=r.id)
        ids.append((settled.evidence_id, settled.evidence_revision))  # type: ignore[attr-defined]
    assert len({evidence_id for evidence_id, _ in ids}) == 1
    assert [revision for _, revision in ids] == [1, 1, 2, 2, 3]
    other, _ = await receipts.submit(request(mutation_id=uuid.uuid4(), language="de"))
    claimed = await jobs.claim("w", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None and claimed.id == other.id
    await jobs.settle(claimed, "w", RESULT, content("one"))
    assert await Evidence.all().count() == 2
    assert source_key("HTTPS://Example.com:443/a#frag", b"") == "https://example.com/a"


@pytest.mark.parametrize(("url", "key"), [
    ("http://[::1]:18704/page.html", "http://[::1]:18704/page.html"),
    ("https://[2001:DB8::1]/a?b=1", "https://[2001:db8::1]/a?b=1"),
    ("https://Bücher.example/x", "https://xn--bcher-kva.example/x"),
    ("https://xn--bcher-kva.example/x", "https://xn--bcher-kva.example/x"),
])
def test_a_source_key_is_a_uri_get_documents_can_answer_with(url: str, key: str) -> None:
    assert source_key(url, b"") == key
    answer = {"documents": [{"name": "documents/x", "uri": key, "content": "", "description": "", "title": ""}]}
    assert validator_named("get_documents").output_errors(answer) == []


async def test_cancel_and_purge(store: str) -> None:
    from evidencekit.server.evidence.retrieval.engine import cancelled_result
    from evidencekit.server.evidence.store.models import EvidenceRevision

    pending, _ = await receipts.submit(request())
    assert await receipts.cancel(WORKSPACE, pending.mutation_id, cancelled_result("url_text"))
    view = receipts.as_retrieval(await Receipt.get(id=pending.id))
    assert view["state"] == "cancelled" and view["result"]["status"] == "cancelled" and contract_errors(view) == []
    assert not await receipts.cancel(WORKSPACE, pending.mutation_id, cancelled_result("url_text"))

    done, _ = await receipts.submit(request(mutation_id=uuid.uuid4()), retention=timedelta(seconds=1))
    claimed = await jobs.claim("w", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None
    await jobs.settle(claimed, "w", RESULT, content("secret findings"))
    assert await receipts.purge_expired(now=datetime.now(UTC) + timedelta(seconds=5)) == 1
    stored = await Receipt.get(id=done.id)
    assert stored.state == "expired" and stored.result is not None and stored.result["text"] == ""
    revision = await EvidenceRevision.get(evidence_id=stored.evidence_id)  # type: ignore[attr-defined]
    assert revision.text == "" and revision.markdown is None and revision.purged_at is not None


async def settled_receipt(text: str, retention: timedelta) -> Receipt:
    submitted, _ = await receipts.submit(request(mutation_id=uuid.uuid4()), retention=retention)
    claimed = await jobs.claim("w", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None and claimed.id == submitted.id
    await jobs.settle(claimed, "w", RESULT, content(text))
    return await Receipt.get(id=submitted.id)


@pytest.mark.parametrize("batch", [1, 2, receipts.PURGE_BATCH])
async def test_purge_hides_expired_results_and_keeps_content_still_referred_to(store: str, batch: int) -> None:
    from evidencekit.server.evidence.store.models import EvidenceRevision

    shared_old = await settled_receipt("shared", timedelta(seconds=1))
    shared_new = await settled_receipt("shared", timedelta(hours=1))
    alone = await settled_receipt("alone", timedelta(seconds=1))
    never_ran, _ = await receipts.submit(request(mutation_id=uuid.uuid4()), retention=timedelta(seconds=1))
    assert shared_old.evidence_revision == shared_new.evidence_revision != alone.evidence_revision
    later = datetime.now(UTC) + timedelta(seconds=5)

    assert await receipts.purge_expired(now=later, batch=batch) == 3
    assert await receipts.purge_expired(now=later, batch=batch) == 0
    for expired_id in (shared_old.id, alone.id):
        stored = await Receipt.get(id=expired_id)
        assert stored.state == "expired" and stored.purged_at is not None and stored.lease_owner is None
        assert stored.result == {**RESULT, "text": "", "title": None, "description": None, "segments": []}
        assert contract_errors(receipts.as_retrieval(stored)) == []
    pending = await Receipt.get(id=never_ran.id)
    assert (pending.state, pending.result) == ("expired", None)
    assert (await Receipt.get(id=shared_new.id)).state == "completed"
    kept = await EvidenceRevision.get(evidence_id=shared_new.evidence_id,  # type: ignore[attr-defined]
                                      revision=shared_new.evidence_revision)
    assert (kept.text, kept.purged_at) == ("shared", None)
    gone = await EvidenceRevision.get(evidence_id=alone.evidence_id,  # type: ignore[attr-defined]
                                      revision=alone.evidence_revision)
    assert (gone.text, gone.markdown, gone.title, gone.segments) == ("", None, None, [])
    assert gone.purged_at is not None


async def waits_for_a_lock() -> bool:
    """Whether a statement of this database waits for another's lock (PostgreSQL), or a task for the
    one connection another holds in a transaction (SQLite)."""
    from tortoise.connection import get_connection

    from evidencekit.server.evidence.store.sql import is_postgres_connection

    connection = get_connection("default")
    if is_postgres_connection(connection):
        rows = await connection.execute_query_dict(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        return bool(rows[0]["n"])
    return bool(getattr(connection._lock, "_waiters", None))  # asyncio.Lock's queue


async def test_a_purge_during_a_settle_never_blanks_the_revision_the_settle_refers_to(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settle reuses a revision whose only receipt just expired; a purge running meanwhile must
    either leave it (the settle's receipt refers to it) or blank it before the settle reads it."""
    import asyncio

    from evidencekit.server.evidence.store import evidence as evidence_store
    from evidencekit.server.evidence.store.models import EvidenceRevision

    expired = await settled_receipt("findings", timedelta(seconds=1))
    fresh, _ = await receipts.submit(request(mutation_id=uuid.uuid4()), retention=timedelta(hours=1))
    claimed = await jobs.claim("w", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None and claimed.id == fresh.id
    recorded, resume = asyncio.Event(), asyncio.Event()
    real_record = evidence_store.record_many

    async def record_then_wait(*args: Any) -> list[tuple[str, int]]:
        found = await real_record(*args)
        recorded.set()
        await resume.wait()  # the settle's transaction stays open here
        return found

    monkeypatch.setattr(evidence_store, "record_many", record_then_wait)
    settling = asyncio.create_task(jobs.settle(claimed, "w", RESULT, content("findings")))
    await recorded.wait()
    purging = asyncio.create_task(receipts.purge_expired(now=datetime.now(UTC) + timedelta(seconds=5)))
    await until(lambda: purging.done() or waits_for_a_lock(), what="the purge to run as far as it can")
    resume.set()
    await settling
    await purging
    settled = await Receipt.get(id=fresh.id)
    assert settled.state == "completed"
    revision = await EvidenceRevision.get(evidence_id=settled.evidence_id,  # type: ignore[attr-defined]
                                          revision=settled.evidence_revision)
    assert (revision.text, revision.purged_at) == ("findings", None)
    assert (await Receipt.get(id=expired.id)).state == "expired"


async def test_a_workspace_with_nothing_running_is_served_before_a_busy_ones_backlog(store: str) -> None:
    """Eight slow URLs of one workspace do not hold up another's single one beyond one slot."""
    busy, quiet = uuid.uuid4(), uuid.uuid4()
    backlog = [(await receipts.submit(request(f"https://slow.example/{n}", workspace_id=busy,
                                              mutation_id=uuid.uuid4())))[0] for n in range(8)]
    late, _ = await receipts.submit(request("https://quick.example/", workspace_id=quiet, mutation_id=uuid.uuid4()))
    lease = timedelta(seconds=30)
    claimed = [await jobs.claim(f"w{slot}", lease, max_attempts=3) for slot in range(4)]
    assert [receipt.id for receipt in claimed if receipt] == [backlog[0].id, late.id, backlog[1].id, backlog[2].id]
    await jobs.settle(claimed[1], "w1", RESULT, content())  # the quiet workspace's receipt is done
    nxt = await jobs.claim("w1", lease, max_attempts=3)
    assert nxt is not None and nxt.id == backlog[3].id  # then the backlog, oldest first, as before


async def test_each_purge_batch_reads_its_own_receipts_in_order_not_everything_due(store: str) -> None:
    """The batch's statement walks an index in valid_until order and stops at the batch's size:
    no sort of every receipt due (at 10^6 receipts with 10% due, PostgreSQL read them all, with a
    whole-table scan, for each batch of 500)."""
    from tortoise.connection import get_connection

    from evidencekit.server.evidence.store.sql import (
        dialect_params,
        is_postgres_connection,
        sql_time,
    )

    connection: Any = get_connection("default")
    postgres = is_postgres_connection(connection)
    due = dialect_params(receipts._DUE.replace("{uuid_text}", "::text" if postgres else ""), postgres)
    values = [sql_time(datetime.now(UTC), postgres), 500]
    if postgres:
        async with connection.acquire_connection() as raw:
            await raw.execute("SET enable_seqscan = off")  # as on a table too large to read whole
            plan = "\n".join(row[0] for row in await raw.fetch("EXPLAIN " + due, *values))
            await raw.execute("RESET enable_seqscan")
        assert "Index Scan" in plan and "Sort" not in plan, plan
    else:
        rows = await connection.execute_query_dict("EXPLAIN QUERY PLAN " + due, values)
        plan = "\n".join(row["detail"] for row in rows)
        assert "USING INDEX" in plan and "TEMP B-TREE" not in plan, plan
