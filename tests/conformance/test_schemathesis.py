"""Schemathesis, run as its users run it (`st run URL/openapi.json --checks all`, its default
settings, no configuration of ours), against the served OpenAPI document of the real service and of
the generated example: what the document declares is what the server answers (statuses, bodies,
headers, valid and invalid data)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import SCHEMATHESIS as ST


def st_run(base: str, token: str, cwd: Path) -> None:
    """Every check, default settings; a fixed seed only so that a failure can be replayed."""
    assert ST.exists(), f"{ST} is missing: scripts/test (or `source scripts/_venv.sh`) installs it"
    done = subprocess.run(
        [str(ST), "run", base + "/openapi.json", "-H", f"Authorization: Bearer {token}", "--checks", "all",
         "--seed", "1", "--no-color"],
        capture_output=True, text=True, timeout=300, check=False, cwd=cwd,
        env={**os.environ, "SCHEMATHESIS_HOOKS": "", "SCHEMATHESIS_CONFIG": ""})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    counted = re.search(r"(\d+) generated, (\d+) passed", done.stdout)
    assert counted is not None and int(counted[1]) == int(counted[2]) > 100, done.stdout[-2000:]


def test_the_served_openapi_document_holds_under_schemathesis(server: dict[str, Any], tmp_path: Path) -> None:
    st_run(server["base"], server["token"], tmp_path)  # tmp_path: no schemathesis.toml found above it


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example project, locked and generated in a copy of its own, served as the librarian."""
    from tests.support import library_project, live_server

    with library_project(tmp_path_factory.mktemp("library")):
        from library_api.serve import app  # type: ignore[import-not-found]

        with live_server(app("librarian-token"), lifespan="on") as base:
            yield base


def test_the_generated_examples_openapi_document_holds_under_schemathesis(library: str, tmp_path: Path) -> None:
    st_run(library, "librarian-token", tmp_path)
