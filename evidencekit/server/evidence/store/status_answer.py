"""A completed receipt's status answer, checked once as it settles and sent as stored by every read.

A completed receipt's status answer does not change until it expires: the same ids, timestamps,
result and evidence on every read, and the final poll of every client reads it. Checking that
answer against the status contract, and parsing the stored result to make it, cost a settled read
~17 µs more than a pending one (docs/benchmarks.md). So the settle checks it (checked_answer.checked_frame)
and keeps the answer's text around the result (models.Receipt.answer_*); a read of the receipt
before it expires sends that text with the stored result's text between, parsing and checking
nothing. An answer stored under another contract or by another version of this code (MADE_BY)
is not sent: like a receipt without one (expired, cancelled, or settled before the columns
existed), its answer is built and checked on every read as before.

A receipt still waiting is polled many times with the same answer: that answer is checked at its
first read and kept in memory for the reads after, for as long as the row reads the same
(`status_of`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from evidencekit.server.evidence.store.receipt_reads import ReceiptView
from evidencekit.server.evidence.store.receipts import as_retrieval
from evidencekit.server.evidence.store.timestamps import as_datetime
from evidencekit.server.generated.operations import STATUS
from evidencekit.server.runtime import CheckedAnswer, Frame, checked_answer, checked_frame

_RESULT = ("retrieval", "result")
# What a stored answer was made by: the status contract (its hash) and this code. Bump the version
# when as_retrieval, contract_time or the contract check change what a completed receipt's answer
# is: a stored answer made otherwise is not sent, and the read builds and checks the answer anew.
ANSWER_VERSION = 1
MADE_BY = f"{STATUS.contract_hash} answer/{ANSWER_VERSION}"


def frame_of(receipt: ReceiptView, now: datetime) -> Frame | None:
    """The status answer of completed `receipt` as of `now`, checked, without its result; None
    when it has no result, is expired at `now`, or its answer violates the contract (logged:
    every read then checks it, and refuses it, as before)."""
    if receipt.state != "completed" or receipt.result_json is None or now >= as_datetime(receipt.valid_until):
        return None
    return checked_frame(STATUS, {"retrieval": as_retrieval(receipt, now=now)}, _RESULT)


def stored_columns(receipt: ReceiptView, now: datetime) -> tuple[str | None, str | None, str | None]:
    """What completed `receipt`, settled at `now`, keeps in answer_contract, answer_head and
    answer_tail (all None when frame_of makes no answer)."""
    frame = frame_of(receipt, now)
    return (None, None, None) if frame is None else (MADE_BY, frame.head, frame.tail)


def _stored(receipt: ReceiptView) -> CheckedAnswer | None:
    """The answer kept when `receipt` settled, if it is completed and kept one that this code and
    contract would make."""
    head, tail, result = receipt.answer_head, receipt.answer_tail, receipt.result_json
    if head is None or tail is None or result is None or receipt.answer_contract != MADE_BY or \
            receipt.state != "completed":
        return None
    return Frame(STATUS.contract_hash, head, tail).around(result)


# Answers of receipts without a result (pending, running, unconfirmed), checked once per version
# of the row: each is polled again and again until it settles, the same answer each time. Keyed by
# every column the answer shows, so a row that changes is another key; cleared when full.
_polled: dict[tuple[object, ...], CheckedAnswer] = {}
POLLED_KEPT = 8192


def status_of(receipt: ReceiptView, now: datetime) -> CheckedAnswer | dict[str, Any]:
    """`receipt`'s status answer as of `now`: checked already when it settled or when the same row
    was last read (a CheckedAnswer), or built here as JSON data for the runtime to check."""
    if now < as_datetime(receipt.valid_until):
        stored = _stored(receipt)
        if stored is not None:
            return stored
        if receipt.result_json is None:
            return _polled_answer(receipt, now)
    return {"retrieval": as_retrieval(receipt, now=now)}


def _polled_answer(receipt: ReceiptView, now: datetime) -> CheckedAnswer | dict[str, Any]:
    key = (receipt.id, receipt.workspace_id, receipt.mutation_id, receipt.state, receipt.kind, receipt.created_at,
           receipt.settled_at, receipt.valid_until, receipt.evidence_id, receipt.evidence_revision)
    found = _polled.get(key)
    if found is not None:
        return found
    data = {"retrieval": as_retrieval(receipt, now=now)}
    checked = checked_answer(STATUS, data)
    if checked is None:  # violates the contract (logged): the runtime checks it, and refuses it
        return data
    if len(_polled) >= POLLED_KEPT:
        _polled.clear()
    _polled[key] = checked
    return checked
