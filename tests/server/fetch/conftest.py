from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.origin import Canary


@pytest.fixture(scope="session")
def _canary_listener() -> Iterator[Canary]:
    listener = Canary()
    yield listener
    listener.close()


@pytest.fixture
def canary(_canary_listener: Canary) -> Canary:
    """A loopback listener no test allows; its count starts at zero in every test."""
    _canary_listener.connections = 0
    return _canary_listener
