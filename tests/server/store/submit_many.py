"""Run as a process: submit the same retrieve COUNT times concurrently; print how many created it."""

from __future__ import annotations

import asyncio
import sys
import uuid

from evidencekit.server.evidence.store import receipts
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.receipts import RetrieveRequest


async def main(url: str, count: int, target: str) -> None:
    request = RetrieveRequest(uuid.UUID("11111111-1111-4111-8111-111111111111"),
                              uuid.UUID("40000000-0000-4000-8000-000000000001"), target, "url_text")
    async with open_store(url):
        outcomes = await asyncio.gather(*(receipts.submit(request) for _ in range(count)))
    print(sum(created for _, created in outcomes), len({receipt.id for receipt, _ in outcomes}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
