"""No false alarms against servers built without the toolkit, and real findings when they break
their contract: an MCP server on the SDK's own high-level server (its published descriptors taken
as the contracts), and another team's REST implementation of two library contracts."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from evidencekit.cli import main as evidencekit
from evidencekit.codegen._cli import main as codegen
from evidencekit.testing._mcp_client import stdio_session
from evidencekit.testing._serve import serve_app
from tests.support import REPO
from tests.testing.peer_servers import independent_library, peer_mcp

PEER = Path(__file__).with_name("peer_servers.py")
PYPROJECT = '[project]\nname = "peer"\n[tool.evidencekit.codegen]\ncontracts = "contracts"\npackage = "peer.generated"\n'


def publish(tools: list[dict[str, Any]], root: Path) -> Path:
    """The tools as a contracts folder (what the peer publishes of each), locked."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    for tool in tools:
        folder = root / "contracts" / tool["name"]
        folder.mkdir(parents=True)
        variant = {"input": "mcp.input.schema.json", "output": "mcp.output.schema.json"}
        (folder / variant["input"]).write_text(json.dumps(tool["inputSchema"]))
        (folder / variant["output"]).write_text(json.dumps(tool.get("outputSchema", {"type": "object"})))
        manifest = {"operation": tool["name"], "python_name": tool["name"], "title": {"en": tool["name"]},
                    "description": {"en": tool.get("description", "")}, "variants": {"mcp": variant},
                    "model_variant": "mcp", "mcp": {"tool_name": tool["name"], "variant": "mcp",
                                                    "annotations": tool.get("annotations", {})}}
        (folder / "manifest.json").write_text(json.dumps(manifest))
    assert codegen(["lock", "--project", str(root)]) == 0
    return root / "contracts"


@pytest.fixture(scope="module")
def peer_tools() -> list[dict[str, Any]]:
    """What the peer lists: the descriptors it publishes."""
    command = [sys.executable, str(PEER)]
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
            stdio_session(command[0], command[1:], dict(os.environ), sys.stderr)) as session:
        tools = portal.call(session.list_tools).tools
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


@pytest.fixture(scope="module")
def peer_contracts(peer_tools: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return publish(peer_tools, tmp_path_factory.mktemp("peer") / "project")


def gate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = evidencekit(["conformance", "--max-examples", "10", "--seed", "5", *args])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_peer_mcp_server_over_stdio_conforms(peer_contracts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = gate(capsys, "--contracts", str(peer_contracts), "--mcp-stdio", f"{sys.executable} {PEER}")
    assert code == 0, out
    assert "conforms: 0 violations (mcp-stdio 0)" in out
    # its plain-text tool publishes no output schema: noted, not failed
    assert "results carry no structuredContent and the tool lists no outputSchema" in out


def test_a_peer_mcp_server_over_http_conforms(peer_contracts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve_app(peer_mcp().streamable_http_app()) as base:
        code, out = gate(capsys, "--contracts", str(peer_contracts), "--mcp-url", f"{base}/mcp",
                         "--require-success")
    assert code == 0, out
    assert "conforms: 0 violations (mcp-http 0)" in out


def test_a_contract_it_does_not_list_is_found(peer_tools: list[dict[str, Any]], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Contracts that say more than the server lists (a tighter limit, another annotation): real
    differences, each named, and the calls the server wrongly accepts; nothing else."""
    changed = copy.deepcopy(peer_tools)
    shout = next(tool for tool in changed if tool["name"] == "shout")
    shout["inputSchema"]["properties"]["text"]["maxLength"] = 50
    shout["annotations"] = {"readOnlyHint": True}
    contracts = publish(changed, tmp_path / "project")
    code, out = gate(capsys, "--contracts", str(contracts), "--mcp-stdio", f"{sys.executable} {PEER}")
    assert code == 1, out
    assert "3 violations (mcp-stdio 3)" in out
    assert "mcp-stdio shout: input_schema" in out and "$.properties.text.maxLength: listed 100, the contract 50" in out
    assert "mcp-stdio shout: annotations" in out and "readOnlyHint: listed nothing, the manifest declares true" in out
    # and the server takes the text the contract forbids: the coverage phase's, one past the bound
    assert "mcp-stdio shout: invalid_refused" in out and "maxLength broken at $.text" in out, out
    sent = next(line for line in out.splitlines() if line.strip().startswith("input (coverage phase): "))
    assert len(json.loads(sent.split(": ", 1)[1])["text"]) == 51, sent


@pytest.fixture(scope="module")
def library_contracts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("independent") / "library"
    shutil.copytree(REPO / "examples" / "library", root, ignore=shutil.ignore_patterns(
        "generated", "contracts.lock.json", "__pycache__", ".venv", ".pytest_cache", ".hypothesis"))
    assert codegen(["lock", "--project", str(root)]) == 0
    yield root / "contracts"


def test_an_independent_rest_implementation_conforms(library_contracts: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with serve_app(independent_library()) as base:
        code, out = gate(capsys, "--contracts", str(library_contracts), "--url", base, "--operation", "search_books",
                         "--operation", "get_book", "--require-success")
    assert code == 0, out
    assert "conforms: 0 violations (rest 0)" in out
    assert "toolkit-protocol checks off: GET " in out and "without X-Contract-Hash" in out


def test_its_bug_is_found_with_a_minimal_input(library_contracts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve_app(independent_library(crash_on_long_queries=True)) as base:
        code, out = gate(capsys, "--contracts", str(library_contracts), "--url", base, "--operation", "search_books",
                         "--max-examples", "40")
    assert code == 1, out
    assert "1 violation (rest 1)" in out and "rest search_books: no_server_error" in out
    shrunk = next(line for line in out.splitlines() if "input (shrunk)" in line)
    assert len(json.loads(shrunk.split(": ", 1)[1])["query"]) == 9, shrunk  # the shortest query that crashes it


def test_a_success_status_the_contract_does_not_publish_is_found(library_contracts: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """search_books declares no success status: its answers come with 200, the status OpenAPI
    publishes and the toolkit's server sends (contracts._policy, the one reading of the manifest). The
    gate took any 2xx of a contract that declared none, so a server answering 201 conformed though a
    client generated from the OpenAPI document refuses its answers."""
    with serve_app(independent_library(found_status=201)) as base:
        code, out = gate(capsys, "--contracts", str(library_contracts), "--url", base, "--operation", "search_books",
                         "--max-examples", "5")
    assert code == 1, out
    assert "rest search_books: valid_answers" in out and "the contract publishes success statuses [200]" in out, out


@pytest.mark.parametrize(("lax", "forbidden"), [("enum", "format"), ("maximum", "limit"), ("maxLength", "query")])
def test_a_server_accepting_a_forbidden_value_is_found(library_contracts: Path, capsys: pytest.CaptureFixture[str],
                                                       lax: str, forbidden: str) -> None:
    """Invalid inputs break one constraint at a time: a server that takes an out-of-enum format, a
    limit past its maximum or a query past its maxLength fails `invalid_refused`, shrunk."""
    with serve_app(independent_library(lax=lax)) as base:
        code, out = gate(capsys, "--contracts", str(library_contracts), "--url", base, "--operation", "search_books",
                         "--max-examples", "50")
    assert code == 1, out
    assert "1 violation (rest 1)" in out and "rest search_books: invalid_refused" in out, out
    refused = next(line for line in out.splitlines() if "an invalid input (" in line)
    assert f"$.{forbidden}" in refused, refused


def test_a_server_refusing_every_valid_input_as_invalid_is_told_so(library_contracts: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """No success because every valid input was refused as not matching (a server validating against
    another schema) is said as such, not blamed on credentials; with --require-success,
    `success_seen` is a JUnit case whether it fails or passes."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def refuse(request: Any) -> JSONResponse:
        return JSONResponse({"detail": "unexpected field"}, status_code=422)

    strict = Starlette(routes=[Route("/books/search", refuse, methods=["POST"])])
    with serve_app(strict) as base:
        code, out = gate(capsys, "--contracts", str(library_contracts), "--url", base, "--operation", "search_books")
    assert code == 0, out
    assert "note: every valid input was refused as invalid (HTTP 422)" in out
    assert "credential" not in out

    junit = tmp_path / "passing.xml"
    with serve_app(independent_library()) as base:
        code, out = gate(capsys, "--contracts", str(library_contracts), "--url", base, "--operation", "search_books",
                         "--require-success", "--junit", str(junit))
    assert code == 0, out
    assert 'name="success_seen"' in junit.read_text()
