"""A completed receipt's status answer, checked once as it settles and sent as stored by every read.

A completed receipt's status answer does not change until it expires: the same ids, timestamps,
result and evidence on every read, and the final poll of every client reads it. Checking that
answer against the status contract, and parsing the stored result to make it, was a third of
what such a read cost (docs/benchmarks.md). So the settle checks it (checked_answer.checked_frame)
and keeps the answer's text around the result (models.Receipt.answer_*); a read of the receipt
before it expires sends that text with the stored result's text between, parsing and checking
nothing. The runtime checks it again when the status contract's hash is not the one it was
checked against (a newer contract), and a receipt without a stored answer (expired, in another
state, or settled before the columns existed) is built and checked on every read as before.
"""

from __future__ import annotations

from datetime import datetime

from evidencekit.server.evidence.store.receipt_reads import ReceiptView
from evidencekit.server.evidence.store.receipts import as_retrieval
from evidencekit.server.evidence.store.timestamps import as_datetime
from evidencekit.server.generated.operations import STATUS
from evidencekit.server.runtime.checked_answer import CheckedAnswer, Frame, checked_frame

_RESULT = ("retrieval", "result")


def frame_of(receipt: ReceiptView, now: datetime) -> Frame | None:
    """The status answer of completed `receipt` as of `now`, checked, without its result; None
    when it has no result, is expired at `now`, or its answer violates the contract (logged:
    every read then checks it, and refuses it, as before)."""
    if receipt.state != "completed" or receipt.result_json is None or now >= as_datetime(receipt.valid_until):
        return None
    return checked_frame(STATUS, {"retrieval": as_retrieval(receipt, now=now)}, _RESULT)


def stored_answer(receipt: ReceiptView, now: datetime) -> CheckedAnswer | None:
    """The answer kept when `receipt` settled, while it stands: completed, not expired at `now`."""
    head, tail, result = receipt.answer_head, receipt.answer_tail, receipt.result_json
    if head is None or tail is None or result is None or receipt.answer_contract is None or \
            receipt.state != "completed" or now >= as_datetime(receipt.valid_until):
        return None
    return Frame(receipt.answer_contract, head, tail).around(result)
