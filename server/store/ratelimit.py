"""A per-workspace limit on retrieve, counted in the database so it holds across processes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from tortoise.exceptions import IntegrityError
from tortoise.expressions import F
from tortoise.transactions import in_transaction

from .models import RateWindow


async def take(workspace_id: uuid.UUID, limit_per_minute: int, *, now: datetime | None = None) -> int | None:
    """Count one call; None when within the limit, else the seconds until the window resets."""
    now = now or datetime.now(UTC)
    window = now.replace(second=0, microsecond=0)
    updated = await RateWindow.filter(workspace_id=workspace_id, window_start=window).update(count=F("count") + 1)
    if not updated:
        try:
            async with in_transaction():
                await RateWindow.create(workspace_id=workspace_id, window_start=window, count=1)
        except IntegrityError:  # another process opened the window first
            await RateWindow.filter(workspace_id=workspace_id, window_start=window).update(count=F("count") + 1)
    row = await RateWindow.get(workspace_id=workspace_id, window_start=window)
    if row.count <= limit_per_minute:
        return None
    return max(1, 60 - now.second)
