"""Check a result against the published contracts before it is stored.

A stored result that breaks the contract would leave its receipt unreadable for good: every status
call and every repeated retrieve would answer 500. So a result is placed in a receipt (a fixed,
valid envelope) and checked against every output variant of retrieve and status, which both carry
it, before the worker settles the receipt.
"""

from __future__ import annotations

from typing import Any

from evidencekit.contracts import FieldError
from evidencekit.contracts._validation import validator_for
from evidencekit.server.generated.operations import RETRIEVE, STATUS

ENVELOPE: dict[str, Any] = {
    "id": "30000000-0000-4000-8000-000000000007",
    "workspace_id": "11111111-1111-4111-8111-111111111111",
    "mutation_id": "40000000-0000-4000-8000-000000000001",
    "state": "completed",
    "created_at": "2099-01-15T09:00:00Z",
    "settled_at": "2099-01-15T09:00:01Z",
    "valid_until": "2099-01-16T09:00:00Z",
    "evidence": None,
}


def result_violations(result: dict[str, Any]) -> list[FieldError]:
    """Where `result`, placed in a receipt, breaks a published output variant (empty when it does not)."""
    payload = {"retrieval": {**ENVELOPE, "kind": result.get("kind"), "result": result}}
    return [error for spec in (RETRIEVE, STATUS)
            for error in validator_for(spec).output_errors(payload)]
