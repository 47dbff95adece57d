"""The research-evidence operations over the store, for a caller already authorized.

The runtime checks the manifest's requirement (capability, then the workspace role through
evidence.auth) before a handler calls in here, so a workspace the caller is not in never reveals
whether a receipt exists. Callers outside the runtime must check it themselves.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from evidencekit.server.evidence.arrivals import Arrivals
from evidencekit.server.evidence.store import ratelimit, receipt_reads, receipts
from evidencekit.server.evidence.store.models import Receipt, Workspace
from evidencekit.server.evidence.store.receipt_reads import ReceiptView
from evidencekit.server.evidence.store.status_answer import status_of
from evidencekit.server.evidence.store.ttl_cache import DEFAULT_TTL, TTLCache
from evidencekit.server.runtime import CheckedAnswer

RATE_ENV = "EVIDENCEKIT_RETRIEVE_PER_MINUTE"


class RateLimited(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many retrieve calls in this workspace; retry after {retry_after}s")
        self.retry_after = retry_after


@dataclass(frozen=True)
class ServiceSettings:
    """settings.EvidenceSettings reads them where the process starts."""

    retrieve_per_minute: int = 60  # EVIDENCEKIT_RETRIEVE_PER_MINUTE
    retention: timedelta = receipts.DEFAULT_RETENTION  # EVIDENCEKIT_RETENTION_HOURS
    cache_seconds: float = DEFAULT_TTL  # EVIDENCEKIT_AUTH_CACHE_SECONDS: a workspace's own rate is kept so long


async def _workspace_rate(workspace_id: uuid.UUID) -> int:
    workspace = await Workspace.get_or_none(id=workspace_id)
    return (workspace.retrieve_rate_per_minute or 0) if workspace else 0


class EvidenceService:
    def __init__(self, settings: ServiceSettings | None = None) -> None:
        self.settings = settings or ServiceSettings()
        self.arrivals = Arrivals()  # rung for each receipt queued: the workers of this process listen
        # The workspace's own retrieve rate, 0 for the server default; cached like roles (ttl_cache).
        self._workspace_rates: TTLCache[int] = TTLCache(self.settings.cache_seconds)

    async def retrieve(self, workspace_id: uuid.UUID, mutation_id: uuid.UUID,
                       url: str, kind: str, language: str | None) -> dict[str, Any]:
        request = receipts.RetrieveRequest(workspace_id, mutation_id, url, kind, language)
        receipt: Receipt | ReceiptView | None = await receipts.existing(request)
        if receipt is None:  # only a new receipt counts against the rate: repeats and conflicts are free
            limit = await self._workspace_rates.get(workspace_id, lambda: _workspace_rate(workspace_id))

            async def charge(connection: BaseDBAsyncClient) -> None:
                retry_after = await ratelimit.admit(workspace_id, limit or self.settings.retrieve_per_minute,
                                                    connection=connection)
                if retry_after is not None:
                    raise RateLimited(retry_after)

            receipt, created = await receipts.submit(request, retention=self.settings.retention, admit=charge)
            if created:
                self.arrivals.ring()
        return {"retrieval": receipts.as_retrieval(receipt)}

    async def status(self, workspace_id: uuid.UUID, mutation_id: uuid.UUID) -> dict[str, Any] | CheckedAnswer:
        """The receipt as the contract's answer, or that answer checked already (status_answer)."""
        receipt = await receipt_reads.find_view(workspace_id, mutation_id)
        if receipt is None:
            return {"retrieval": None}
        return status_of(receipt, receipts.utcnow())

    async def receipt_failure(self, workspace_id: uuid.UUID, mutation_id: uuid.UUID) -> tuple[str, str | None] | None:
        """The URL the receipt of (workspace_id, mutation_id) was asked for and why its fetch failed
        (None: it did not, or it settled before that was kept), or None without such a receipt."""
        found = await Receipt.filter(workspace_id=workspace_id, mutation_id=mutation_id).values_list("url", "failure")
        return (str(found[0][0]), found[0][1]) if found else None

    async def mutation_of_receipt(self, workspace_id: uuid.UUID, receipt_id: uuid.UUID) -> uuid.UUID | None:
        """The mutation_id of this workspace's receipt whose id is `receipt_id` (a caller that gave a
        receipt's id where its mutation_id belongs), or None; never another workspace's."""
        found = await Receipt.filter(workspace_id=workspace_id, id=receipt_id).values_list("mutation_id", flat=True)
        return uuid.UUID(str(found[0])) if found else None
