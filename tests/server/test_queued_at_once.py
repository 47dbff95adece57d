"""A retrieval queued through the service starts at once: the worker running in the same process is
told of it (Arrivals), over REST here and over stdio (tests/server/test_mcp.py's stdio tests run a
worker that polls once a minute)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidencekit.client.generated.client import Client
from tests.origin import Origin, Reply, serve_origin
from tests.support import allow_origin, eventually, running_service

PAGE = b"<html lang='en'><head><title>Queued</title></head><body><p>Started when it was queued.</p></body></html>"


@pytest.fixture(scope="module")
def origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server


def test_a_retrieval_starts_when_it_is_queued_not_at_the_workers_next_poll(
        origin: Origin, tmp_path: Path) -> None:
    """The in-process worker is told of a receipt the moment a retrieve call queues it: with a poll
    interval of a minute, an idle server still settles a new retrieval within seconds."""
    targets = [origin.reply(f"/at-once/{n}", Reply(PAGE)) for n in range(2)]
    with (running_service(tmp_path, allow=allow_origin(origin.url), poll_interval=60.0) as app,
          Client(app["base"], token=app["token"]) as client):
        for target in targets:  # the second is queued while the worker, done with the first, waits idle
            mutation = str(uuid.uuid4())
            client.retrieve({"workspace_id": app["workspace_id"], "mutation_id": mutation, "url": target,
                             "kind": "url_text"})
            final = eventually(functools.partial(_settled, client, app["workspace_id"], mutation), timeout=20,
                               what="the retrieval to settle before the worker's next poll", every=0.05)
            assert final["retrieval"]["state"] == "completed"


def _settled(client: Client, workspace: str, mutation: str) -> dict[str, object] | None:
    status = client.status({"workspace_id": workspace, "mutation_id": mutation})
    assert status.retrieval is not None
    return None if status.retrieval.state in ("pending", "running") else status.model_dump(mode="json")
