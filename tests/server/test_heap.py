"""A server's heap is settled before it serves: what imports made is out of the collector's way."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from evidencekit.server.runtime import _heap as heap


@pytest.fixture
def restored_collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.mark.usefixtures("restored_collector")
def test_settling_freezes_what_exists_and_still_collects_new_cycles() -> None:
    heap.settle()
    assert gc.get_freeze_count() > 10_000  # the modules, classes and validators imported so far
    assert gc.get_threshold()[0] == heap.YOUNG_THRESHOLD

    class Node:
        partner: object

    first, second = Node(), Node()
    first.partner, second.partner = second, first  # a cycle made after settling
    del first, second
    assert gc.collect() >= 2
