"""A generated client needs nothing of the server's generated package: a team that installs only
the client (its package, and the toolkit's client runtime) can build requests and make calls.

Each check runs in a fresh interpreter where importing the server side fails, as it would where it
is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from evidencekit.codegen._config import load_config
from evidencekit.codegen._generate import plan, write
from tests.support import REPO, ExampleHandlers, live_server, skeleton_app

WORKSPACE = "11111111-1111-4111-8111-111111111111"
MUTATION = "40000000-0000-4000-8000-000000000001"

# Put first on sys.meta_path: every import of a blocked package (argv[1], comma-separated) fails.
BLOCKING = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = tuple(sys.argv[1].split(","))


class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == blocked or name.startswith(blocked + ".") for blocked in BLOCKED):
            raise ImportError(f"{name} is not installed here (a client-only install)")
        return None


sys.meta_path.insert(0, NotInstalled())
"""


def run_without(blocked: list[str], code: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """`code` in a new interpreter (the repository, or `cwd`, first on its path) where `blocked`
    cannot be imported."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(cwd), str(REPO)]))}
    return subprocess.run([sys.executable, "-c", BLOCKING + code, ",".join(blocked), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


OUR_CLIENT = f"""
import uuid
from evidencekit.client.generated.client import Client
from evidencekit.client.generated.models import RetrieveInput, RetrieveOutput, StatusOutput

payload = RetrieveInput(url="https://example.com/a", kind="url_text", workspace_id=uuid.UUID("{WORKSPACE}"),
                        mutation_id=uuid.UUID("{MUTATION}"))
with Client(sys.argv[2], token="t0ken") as client:
    answer = client.retrieve(payload)
    assert isinstance(answer, RetrieveOutput) and str(answer.retrieval.mutation_id) == "{MUTATION}"
    status = client.status({{"workspace_id": "{WORKSPACE}", "mutation_id": "{MUTATION}"}})
    assert isinstance(status, StatusOutput)
assert not [name for name in sys.modules if name.startswith("evidencekit.server")]
print("called", answer.retrieval.state)
"""


def test_our_client_calls_a_server_without_the_servers_package() -> None:
    with live_server(skeleton_app(ExampleHandlers())) as base_url:
        done = run_without(["evidencekit.server"], OUR_CLIENT, base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("called ")


def test_the_service_client_needs_no_server_package() -> None:
    done = run_without(["evidencekit.server"], "import evidencekit.client.evidence\nprint('imported')")
    assert done.returncode == 0, done.stderr


TEAM_CLIENT = """
from library_client.client import AsyncClient, Client
from library_client.models import GetBookInput, GetBookOutput

assert GetBookInput(id="00000000-0000-4000-8000-000000000001").id and GetBookOutput and Client and AsyncClient
"""


@pytest.mark.parametrize(("client_package", "blocked"), [
    ("library_client", ["library_api", "evidencekit.server"]),  # the client apart: no server package at all
    # the default (what `init` and the example write): the client beside the server skeleton, in one
    # package, and importing it runs none of the skeleton
    ("library_api.generated", ["evidencekit.server", "library_api.generated.app", "library_api.generated.rest",
                               "library_api.generated.handlers", "library_api.generated.operations"]),
])
def test_a_teams_generated_client_imports_nothing_of_its_server(tmp_path: Path, client_package: str,
                                                                   blocked: list[str]) -> None:
    """A team's client comes with the models it sends and receives: with `client_package` apart from
    `package` (what it ships to its clients) it imports them from its own package."""
    config = replace(load_config(REPO / "examples" / "library"), client_package=client_package)
    written = plan(config)
    client = client_package.replace(".", "/")
    assert f"{client}/models/__init__.py" in written.files
    assert f"from {client_package}.models import (" in written.files[f"{client}/client.py"]
    write(written, tmp_path)
    code = TEAM_CLIENT.replace("library_client.", f"{client_package}.")
    done = run_without(blocked, code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
