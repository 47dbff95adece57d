"""The conformance plugin's target: the catalogue served on a loopback port, called as the librarian."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from evidencekit.testing import Target, serve_app

from library_api.generated.app import create_app
from library_api.handlers import SAMPLE_BOOKS, Catalogue
from library_api.serve import hooks_for

pytest_plugins = ["evidencekit.testing.conformance"]

TOKEN = "conformance-librarian-token"


@pytest.fixture(scope="session")
def conformance_target() -> Iterator[Target]:
    with serve_app(create_app(Catalogue(SAMPLE_BOOKS), hooks_for(TOKEN))) as base_url:
        yield Target(base_url, headers={"Authorization": f"Bearer {TOKEN}"})
