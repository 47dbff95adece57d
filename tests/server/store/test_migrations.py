"""The committed migrations describe the models exactly (the store's equivalent of `codegen check`)."""

from __future__ import annotations

import pytest
from tortoise.context import TortoiseContext
from tortoise.migrations.autodetector import MigrationAutodetector

from server.store.db import tortoise_config


@pytest.mark.anyio
async def test_models_need_no_new_migration(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tortoise_config(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    async with TortoiseContext() as context:
        await context.init(config=config, init_connections=False)
        pending = await MigrationAutodetector(context.apps, config["apps"]).changes()
    assert pending == [], "models changed: run scripts/makemigrations and commit the migration"
