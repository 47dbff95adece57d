"""How long the sweeper's purge takes over many expired receipts, each with its own evidence revision.

    .venv/bin/python scripts/bench_purge.py [--receipts 20000] [--postgres postgresql://postgres@127.0.0.1:5432/test]

Fills a fresh SQLite file and a fresh PostgreSQL database (127.0.0.1 only), then times one
`receipts.purge_expired()` on each and checks every receipt and revision was purged.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_common import database_url_beside  # noqa: E402

from evidencekit.server.evidence.store import receipts  # noqa: E402
from evidencekit.server.evidence.store.db import open_store  # noqa: E402
from evidencekit.server.evidence.store.models import Evidence, EvidenceRevision, Receipt  # noqa: E402


async def fill(total: int) -> None:
    now, workspace = datetime.now(UTC), uuid.uuid4()
    sources = [Evidence(id=uuid.uuid4(), workspace_id=workspace, source_key=f"https://example.com/{number}",
                        kind="url_text", revision=1) for number in range(total)]
    await Evidence.bulk_create(sources, batch_size=1000)
    await EvidenceRevision.bulk_create([
        EvidenceRevision(evidence_id=source.id, revision=1, content_hash="h", text="x" * 200, segments=[])
        for source in sources], batch_size=1000)
    await Receipt.bulk_create([
        Receipt(id=uuid.uuid4(), workspace_id=workspace, mutation_id=uuid.uuid4(), input_hash="h", url="u",
                kind="url_text", state="completed", created_at=now, valid_until=now - timedelta(seconds=1),
                result={"text": "t", "title": "x", "description": None, "segments": []},
                evidence_id=source.id, evidence_revision=1) for source in sources], batch_size=1000)


async def measure(url: str, total: int) -> float:
    async with open_store(url):
        await fill(total)
        started = time.perf_counter()
        purged = await receipts.purge_expired()
        seconds = time.perf_counter() - started
        blanked = await EvidenceRevision.filter(purged_at__isnull=False).count()
        if (purged, blanked) != (total, total):
            raise SystemExit(f"purged {purged} receipts and {blanked} revisions, expected {total} each")
        return seconds


async def on_postgres(admin_url: str, total: int) -> float:
    import asyncpg

    name = f"evidencekit_purge_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        return await measure(database_url_beside(admin_url, name), total)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--receipts", type=int, default=20000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sqlite = asyncio.run(measure(f"sqlite:///{Path(folder) / 'purge.sqlite3'}", args.receipts))
    print(f"SQLite:     purged {args.receipts} receipts and revisions in {sqlite:.2f} s")
    postgres = asyncio.run(on_postgres(args.postgres, args.receipts))
    print(f"PostgreSQL: purged {args.receipts} receipts and revisions in {postgres:.2f} s")


if __name__ == "__main__":
    main()
