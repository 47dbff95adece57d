"""A handler bug is found on every surface: the runtime answers it with a 500 over REST and an
isError result over MCP, and the gate reports the isError result as REST reports the 500 (shrunk,
with a reproduction), over MCP HTTP and stdio, in the CLI and in the pytest plugin. A declared
refusal of a valid input (404, 409) is an answer, not a bug."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from evidencekit.cli import main as evidencekit
from evidencekit.server.evidence.auth import evidence_hooks
from evidencekit.server.generated.app import create_app
from evidencekit.testing import conformance
from evidencekit.testing._target import Target
from tests.conformance.test_plugin_catches import identity, plugin_failures
from tests.support import CONTRACTS_DIR, REPO, AllowAll, live_server
from tests.testing.handler_bugs import HandlerBugs
from tests.testing.test_gate_broken import failures

SURFACES = ("rest", "mcp-http", "mcp-stdio")
BUGS = {(surface, operation, "no_server_error") for surface in SURFACES
        for operation in ("search_documents", "sosoapi_research_evidence_status")}


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with live_server(create_app(HandlerBugs(), replace(evidence_hooks(), auth=AllowAll())), lifespan="on") as url:
        yield url


def gate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = evidencekit(["conformance", "--contracts", str(CONTRACTS_DIR), "--seed", "3", "--max-examples", "10",
                        *args])
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize("strict", [[], ["--strict"]], ids=["default", "strict"])
def test_handler_bugs_are_reported_on_every_surface(base: str, capsys: pytest.CaptureFixture[str],
                                                    strict: list[str]) -> None:
    code, out = gate(capsys, *strict, "--url", base, "--mcp-url", base + "/mcp",
                     "--mcp-stdio", f"{sys.executable} -m tests.testing.handler_bugs", "--env", f"PYTHONPATH={REPO}")
    assert code == 1, out
    found = failures(out)
    assert set(found) == BUGS, out  # the 404 and 409 refusals of retrieve and get_documents are no finding
    for surface in ("mcp-http", "mcp-stdio"):
        raised = found[(surface, "search_documents", "no_server_error")]
        assert raised[0].startswith("an isError result (internal_error, code internal_error: HTTP 500 over "
                                    "REST) to a valid input"), raised
        # shrunk as REST's: the shortest query the handler raises on
        assert raised[1] == 'input (shrunk): {"query": "0000"}', raised
        call = json.loads(raised[2].removeprefix("reproduce: "))
        assert call["method"] == "tools/call" and call["params"] == {"name": "search_documents",
                                                                     "arguments": {"query": "0000"}}
        omitted = found[(surface, "sosoapi_research_evidence_status", "no_server_error")]
        assert omitted[0].startswith("an isError result (internal_error, code contract_violation: HTTP 500 "
                                     "over REST) to a valid input"), omitted
        assert omitted[1].startswith("input (shrunk): {")
    rest = found[("rest", "search_documents", "no_server_error")]
    assert rest[0].startswith("HTTP 500 to a valid input") and rest[1] == 'input (shrunk): {"query": "0000"}'
    assert "does not conform: 6 violations (rest 2, mcp-http 2, mcp-stdio 2)" in out


def test_the_plugin_reports_them_too(base: str, pytestconfig: pytest.Config) -> None:
    found = set()
    for operation in ("search_documents", "sosoapi_research_evidence_status",
                      "sosoapi_research_evidence_retrieve", "get_documents"):
        for surface, test in (("rest", conformance.test_rest_conformance),
                              ("mcp-http", conformance.test_mcp_conformance)):
            run = functools.partial(test, operation, Target(base), identity, pytestconfig)
            found |= {(surface, operation, check) for check in plugin_failures(run)}
    # status never answers with success, on either surface: the plugin requires one
    never = {(surface, "sosoapi_research_evidence_status", "success_seen") for surface in ("rest", "mcp-http")}
    assert found == {finding for finding in BUGS if finding[0] != "mcp-stdio"} | never


def test_the_plugin_failure_names_the_shrunk_input(base: str, pytestconfig: pytest.Config) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        conformance.test_mcp_conformance("search_documents", Target(base), identity, pytestconfig)
    message = str(failed.value)
    assert re.search(r"^no_server_error:$", message, re.MULTILINE), message
    assert "an isError result (internal_error, code internal_error: HTTP 500 over REST)" in message
    assert 'input (shrunk): {"query": "0000"}' in message and '"method": "tools/call"' in message


def sdk_server() -> Any:
    """A tool on the official SDK's high-level server (no toolkit) that raises on some inputs."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("crashing")

    @server.tool()
    def shorten(text: str) -> str:
        """The text, cut to three characters."""
        if len(text) > 3:
            raise RuntimeError("the planted bug")
        return text

    return server


def test_a_crash_on_a_server_built_elsewhere_is_reported(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The SDK answers a tool that raised with an isError result saying only `Error executing tool
    shorten`: reported as REST would report its 500, not taken for a refusal."""
    from evidencekit.testing._serve import serve_app
    from tests.testing.test_gate_peers import publish

    server = sdk_server()
    with serve_app(server.streamable_http_app()) as url:
        from anyio.from_thread import start_blocking_portal

        from evidencekit.testing._mcp_client import http_session

        with start_blocking_portal() as portal, portal.wrap_async_context_manager(
                http_session(f"{url}/mcp", {}, 10)) as session:
            tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                     for tool in portal.call(session.list_tools).tools]
        contracts = publish(tools, tmp_path / "project")
        code, out = gate(capsys, "--contracts", str(contracts), "--mcp-url", f"{url}/mcp")
    assert code == 1, out
    found = failures(out)
    assert set(found) == {("mcp-http", "shorten", "no_server_error")}, out
    assert found[("mcp-http", "shorten", "no_server_error")][:2] == [
        "an isError result (the SDK's text for a tool that raised) to a valid input: Error executing tool shorten",
        'input (shrunk): {"text": "0000"}']
