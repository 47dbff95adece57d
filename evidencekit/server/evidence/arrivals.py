"""The bell a receipt queued in this process rings for the workers running in it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator


class Arrivals:
    """Rung when this process queued a receipt (EvidenceService.retrieve): a worker running here that
    has a free slot claims it at once, not at its next poll. Workers in other processes still find it
    by polling (`research-evidence worker`, EVIDENCEKIT_POLL_SECONDS)."""

    def __init__(self) -> None:
        self._listeners: set[Callable[[], None]] = set()

    def ring(self) -> None:
        for listener in tuple(self._listeners):
            listener()

    @contextlib.contextmanager
    def listening(self, listener: Callable[[], None]) -> Iterator[None]:
        self._listeners.add(listener)
        try:
            yield
        finally:
            self._listeners.discard(listener)
