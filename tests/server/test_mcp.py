"""MCP over Streamable HTTP (mounted at /mcp) and stdio, with the official SDK client."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.client import Client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from evidencekit.server.evidence.admin import bootstrap
from evidencekit.server.evidence.handlers import EvidenceHandlers
from evidencekit.server.evidence.mcp_server import build_server, listed_tools
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.generated.mcp_tools import TOOLS_BY_NAME
from tests.origin import Origin, Reply, serve_origin
from tests.support import Hold, allow_origin, running_service, until, validator_named

ROOT = Path(__file__).resolve().parents[2]
PAGE = (b"<html lang='en'><head><title>Field log</title><meta name='description' content='Day one.'></head>"
        b"<body><main><h1>Field log</h1><p>We counted <b>twelve</b> herons at the lake.</p>"
        b"<ul><li>north shore</li><li>south shore</li></ul></main></body></html>")
VTT = b"WEBVTT\n\n00:00.000 --> 00:02.000\nWelcome to the lake.\n\n00:02.000 --> 00:04.000\nHerons ahead.\n"
pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("profile", ["core", "full"])
@pytest.mark.parametrize("with_output", [False, True])
def test_tools_list_is_the_published_descriptors(profile: str, with_output: bool) -> None:
    tools = {tool.name: tool.model_dump(mode="json", by_alias=True, exclude_none=True)
             for tool in listed_tools(profile, with_output)}
    expected = {"get_documents", "search_documents"} | ({"sosoapi_research_evidence_retrieve", "sosoapi_research_evidence_status"}
                                    if profile == "full" else set())
    assert set(tools) == expected
    for name, tool in tools.items():
        published = TOOLS_BY_NAME[name]
        assert tool["inputSchema"] == published["inputSchema"] and tool["title"] == published["title"]
        assert tool["description"] == published["description"]
        assert tool["annotations"] == published["annotations"]
        assert ("outputSchema" in tool) is with_output
        if with_output:
            assert tool["outputSchema"] == published["outputSchema"]


@pytest.fixture(scope="module")
def origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server


def seeded(data: Path) -> dict[str, Any]:
    async def boot() -> dict[str, Any]:
        async with open_store(f"sqlite://{data / 'evidencekit.sqlite3'}?busy_timeout=10000"):
            return await bootstrap()
    return asyncio.run(boot())


@pytest.fixture(scope="module")
def http_service(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_service(tmp_path_factory.mktemp("mcp-http"), allow=allow_origin(origin.url)) as running:
        yield running


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    return await session.call_tool(name, arguments)


def check(name: str, result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data = result.structured_content
    assert json.loads(result.content[0].text) == data
    assert validator_named(name).output_errors(data) == []
    return data  # type: ignore[no-any-return]


def notes(result: Any) -> str:
    """The text blocks after the JSON: what the answer means, and the untrusted-content note."""
    return "\n".join(block.text for block in result.content[1:])


async def settle(session: ClientSession, workspace: str, mutation: str) -> dict[str, Any]:
    async def settled() -> dict[str, Any] | None:
        data: dict[str, Any] = check("sosoapi_research_evidence_status", await call(
            session, "sosoapi_research_evidence_status", {"workspace_id": workspace, "mutation_id": mutation}))
        return None if data["retrieval"]["state"] in ("pending", "running") else data

    return await until(settled, what=f"receipt {mutation} to settle", every=0.05)


async def exercise(session: ClientSession, origin: Origin, workspace: str, tag: str) -> None:
    """retrieve a page and a caption file, poll status, read the page back with get_documents."""
    started = await session.initialize()
    assert started.instructions and "sosoapi_research_evidence_status" in started.instructions
    page = origin.reply(f"/{tag}/log", Reply(PAGE))
    captions = origin.reply(f"/{tag}/talk.vtt", Reply(VTT, content_type="text/vtt"))
    page_mutation, caption_mutation = str(uuid.uuid4()), str(uuid.uuid4())
    accepted = await call(session, "sosoapi_research_evidence_retrieve", {
        "workspace_id": workspace, "mutation_id": page_mutation, "url": page, "kind": "url_text"})
    assert check("sosoapi_research_evidence_retrieve", accepted)["retrieval"]["result"] is None
    assert "Not settled (state pending)" in notes(accepted) and "untrusted" not in notes(accepted)
    check("sosoapi_research_evidence_retrieve", await call(session, "sosoapi_research_evidence_retrieve", {
        "workspace_id": workspace, "mutation_id": caption_mutation, "url": captions, "kind": "published_captions"}))
    done = (await settle(session, workspace, page_mutation))["retrieval"]
    assert done["state"] == "completed" and "twelve herons" in done["result"]["text"]
    read_back = await call(session, "sosoapi_research_evidence_status",
                           {"workspace_id": workspace, "mutation_id": page_mutation})
    assert "untrusted" in notes(read_back) and "settled" not in notes(read_back).lower()
    missing = await call(session, "sosoapi_research_evidence_status",
                         {"workspace_id": workspace, "mutation_id": str(uuid.uuid4())})
    assert check("sosoapi_research_evidence_status", missing)["retrieval"] is None
    assert notes(missing) == "No receipt for this workspace_id and mutation_id: nothing was started under it."
    by_receipt_id = await call(session, "sosoapi_research_evidence_status",
                               {"workspace_id": workspace, "mutation_id": done["id"]})
    assert check("sosoapi_research_evidence_status", by_receipt_id)["retrieval"] is None  # the contract's answer
    assert (f"{done['id']} is the id of a receipt of this workspace (retrieval.id), not its mutation_id: call "
            f"sosoapi_research_evidence_status with mutation_id {page_mutation} to read it.") in notes(by_receipt_id)
    conflict = await call(session, "sosoapi_research_evidence_retrieve", {
        "workspace_id": workspace, "mutation_id": page_mutation, "url": page + "?other", "kind": "url_text"})
    assert conflict.is_error and "mutation_conflict" in conflict.content[0].text
    assert "use a new mutation_id (a fresh UUID) for a different retrieval" in conflict.content[0].text
    cues = (await settle(session, workspace, caption_mutation))["retrieval"]["result"]["segments"]
    assert [c["text"] for c in cues] == ["Welcome to the lake.", "Herons ahead."]
    name = "documents/" + page.split("://", 1)[1]
    read = await call(session, "get_documents", {"names": [name]})
    documents = check("get_documents", read)["documents"]
    assert "untrusted" in notes(read)
    assert documents[0]["uri"] == page and documents[0]["title"] == "Field log"
    assert "**twelve**" in documents[0]["content"] and "- north shore" in documents[0]["content"]
    unknown = await call(session, "get_documents", {"names": ["documents/nowhere.test/x"]})
    assert unknown.is_error and "documents/nowhere.test/x" in unknown.content[0].text
    bad = await call(session, "sosoapi_research_evidence_retrieve", {"workspace_id": "nope", "url": 5, "kind": "x"})
    assert bad.is_error and "$.url" in bad.content[0].text and "$.mutation_id" in bad.content[0].text
    assert "$.workspace_id must be a UUID such as 3f2c9a4e-8b1d-4c6e-9f0a-1b2c3d4e5f60" in bad.content[0].text
    assert "[0-9a-fA-F]" not in bad.content[0].text  # not the contract's regex
    too_many = await call(session, "get_documents", {"names": [name] * 21})
    assert too_many.is_error and "$.names" in too_many.content[0].text
    with pytest.raises(MCPError):
        await call(session, "no_such_tool", {})


async def test_streamable_http_end_to_end(http_service: dict[str, Any], origin: Origin) -> None:
    headers = {"Authorization": f"Bearer {http_service['token']}"}
    async with httpx2.AsyncClient(headers=headers) as http, \
            streamable_http_client(http_service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await exercise(session, origin, http_service["workspace_id"], "http")


async def test_an_unsafe_url_result_says_why_and_names_the_setting(http_service: dict[str, Any]) -> None:
    """blocked/unsafe_url has no field for its cause: the MCP note gives it (plain http? a private
    address? credentials?) and names EVIDENCEKIT_ALLOW_PRIVATE_HOSTS where that setting would help."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {http_service['token']}"}) as http, \
            streamable_http_client(http_service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        workspace = http_service["workspace_id"]
        said = {}
        for url in ("http://example.com/plain", "https://10.1.2.3/inside", "https://me:secret@example.com/"):
            mutation = str(uuid.uuid4())
            check("sosoapi_research_evidence_retrieve", await call(session, "sosoapi_research_evidence_retrieve", {
                "workspace_id": workspace, "mutation_id": mutation, "url": url, "kind": "url_text"}))
            settled = await settle(session, workspace, mutation)
            assert (settled["retrieval"]["result"]["status"], settled["retrieval"]["result"]["reason"]) == \
                ("blocked", "unsafe_url")
            said[url] = notes(await call(session, "sosoapi_research_evidence_status",
                                         {"workspace_id": workspace, "mutation_id": mutation}))
    assert "Why unsafe_url: plain http; only https URLs are fetched." in said["http://example.com/plain"]
    assert "Why unsafe_url: address 10.1.2.3 is not public" in said["https://10.1.2.3/inside"]
    for url in ("http://example.com/plain", "https://10.1.2.3/inside"):
        assert "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS=host:port" in said[url]
    credentials = said["https://me:secret@example.com/"]
    assert "Why unsafe_url: credentials in the URL" in credentials and "secret" not in credentials
    assert "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS" not in credentials  # that setting would not help


async def test_http_without_a_valid_token_is_401(http_service: dict[str, Any]) -> None:
    for headers in ({}, {"Authorization": "Bearer ek_wrong"}):
        async with httpx2.AsyncClient(headers=headers) as http:
            response = await http.post(http_service["mcp"], json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                       headers={"Accept": "application/json, text/event-stream"})
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"


async def test_a_token_without_rights_gets_an_error_result(http_service: dict[str, Any]) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {http_service['token']}"}) as http, \
            streamable_http_client(http_service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("sosoapi_research_evidence_status", {
            "workspace_id": str(uuid.uuid4()), "mutation_id": str(uuid.uuid4())})
    assert result.is_error and "not a member" in result.content[0].text


async def test_an_oversized_message_is_refused_before_it_is_read(http_service: dict[str, Any]) -> None:
    """The cap REST has (413 past 64 KiB) holds for /mcp, declared or chunked."""
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 3_000_000}})

    async def pieces() -> Any:
        for start in range(0, len(message), 65_536):
            yield message[start:start + 65_536].encode()

    headers = {"Authorization": f"Bearer {http_service['token']}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(headers=headers) as http:
        for content in (message.encode(), pieces()):
            response = await http.post(http_service["mcp"], content=content)
            assert response.status_code == 413 and len(response.content) < 500
            assert response.json()["code"] == "payload_too_large"


async def test_a_foreign_origin_is_refused(http_service: dict[str, Any]) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {http_service['token']}"}) as http:
        response = await http.post(http_service["mcp"], json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                   headers={"Origin": "http://evil.example",
                                            "Accept": "application/json, text/event-stream"})
    assert response.status_code == 403


@pytest.fixture
def stdio_params(origin: Origin, tmp_path: Path) -> Iterator[StdioServerParameters]:
    who = seeded(tmp_path)
    # a worker polling every minute: a retrieval made over stdio starts when it is queued (Arrivals)
    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(tmp_path), "SOSOAPI_ACCESS_TOKEN": who["token"],
           "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": f"127.0.0.1:{origin.url.rsplit(':', 1)[1]}",
           "EVIDENCEKIT_POLL_SECONDS": "60", "PYTHONPATH": str(ROOT), "WORKSPACE": who["workspace_id"]}
    yield StdioServerParameters(command=sys.executable, args=["-m", "evidencekit", "mcp"], cwd=str(tmp_path), env=env)


async def test_stdio_end_to_end(stdio_params: StdioServerParameters, origin: Origin) -> None:
    assert stdio_params.env is not None
    with open(os.devnull, "w") as errlog:
        async with stdio_client(stdio_params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await exercise(session, origin, stdio_params.env["WORKSPACE"], "stdio")


async def receipt_after_closing_mid_fetch(params: StdioServerParameters, origin: Origin, data: Path,
                                          path: str) -> Receipt:
    """Start a retrieval of a page the origin holds, close the session while it is being fetched,
    and read the receipt back once the server has gone (the page is answered only then)."""
    assert params.env is not None
    held = Hold()
    url = origin.reply(path, Reply(b"<html><body><p>Slow.</p></body></html>", hold=held))
    mutation = str(uuid.uuid4())
    try:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await call(session, "sosoapi_research_evidence_retrieve", {
                    "workspace_id": params.env["WORKSPACE"], "mutation_id": mutation, "url": url, "kind": "url_text"})
                await until(lambda: path in origin.hits, what="the worker to fetch")
        async with open_store(f"sqlite:///{data / 'evidencekit.sqlite3'}"):
            return await Receipt.get(mutation_id=mutation)
    finally:
        held.release()


async def test_stdio_worker_takes_the_worker_settings(stdio_params: StdioServerParameters, origin: Origin,
                                                      tmp_path: Path) -> None:
    """With a short EVIDENCEKIT_WORKER_GRACE_SECONDS, closing the session releases a slow retrieval."""
    assert stdio_params.env is not None
    stdio_params.env["EVIDENCEKIT_WORKER_GRACE_SECONDS"] = "0.2"
    receipt = await receipt_after_closing_mid_fetch(stdio_params, origin, tmp_path, "/slow-for-stdio")
    assert (receipt.state, receipt.lease_owner, receipt.result) == ("pending", None, None)


async def test_a_client_that_stops_waiting_gets_the_receipts_released(stdio_params: StdioServerParameters,
                                                                       origin: Origin, tmp_path: Path) -> None:
    """With the default 30 s grace the worker is still fetching when the SDK client, 2 s after closing
    stdin, sends SIGTERM: the receipt is released for any worker to take up, not left running under
    a lease that nobody renews."""
    receipt = await receipt_after_closing_mid_fetch(stdio_params, origin, tmp_path, "/slower-for-stdio")
    assert (receipt.state, receipt.lease_owner, receipt.result) == ("pending", None, None)


def test_public_hostname_is_allowed() -> None:
    from evidencekit.server.evidence.app import host_policy
    from evidencekit.server.evidence.settings import EvidenceSettings

    hosts = host_policy(EvidenceSettings.from_env({"EVIDENCEKIT_PUBLIC_HOSTNAME": "evidence.example.org"}))
    assert hosts.allows_host("evidence.example.org") and hosts.allows_host("evidence.example.org:8443")
    assert hosts.allows_origin("https://evidence.example.org")
    assert not host_policy(EvidenceSettings()).allows_host("evidence.example.org")
    assert "EVIDENCEKIT_PUBLIC_HOSTNAME" in str(host_policy(EvidenceSettings()).host_refusal("evidence.example.org"))


@pytest.mark.parametrize(("host", "sent_origin"), [("127.0.0.1", None), ("localhost", "http://localhost"),
                                                  ("[::1]", "http://[::1]")])
def test_loopback_without_a_port_reaches_mcp(http_service: dict[str, Any], host: str, sent_origin: str | None) -> None:
    """A server on the scheme's default port (80) is called with a Host that names no port."""
    headers = {"Host": host, "Authorization": f"Bearer {http_service['token']}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", **({"Origin": sent_origin} if sent_origin else {})}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    response = httpx.post(http_service["mcp"], json=initialize, headers=headers, timeout=10)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("value", ["", "  ", "full ", " core"])
def test_a_profile_setting_with_spaces_or_empty_reads_as_env_check_reads_it(value: str) -> None:
    from evidencekit.server.evidence.settings import EvidenceSettings

    read = EvidenceSettings.from_env({"EVIDENCEKIT_MCP_PROFILE": value}).mcp.profile
    assert read == (value.strip() or "full") and {tool.name for tool in listed_tools(read)} != set()


class FailingHandlers(EvidenceHandlers):
    async def status(self, payload: Any, context: Any) -> Any:
        raise RuntimeError("boom: the database went away")


async def test_an_unexpected_failure_is_an_error_result_not_a_protocol_error(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Tool failures are isError results (DESIGN.md), also when the cause is a bug or an outage."""
    async with open_store(f"sqlite://{tmp_path / 'evidencekit.sqlite3'}"):
        who = await bootstrap()
        async with Client(build_server(FailingHandlers(), stdio_token=who["token"])) as client:
            result = await client.call_tool("sosoapi_research_evidence_status", {
                "workspace_id": who["workspace_id"], "mutation_id": str(uuid.uuid4())})
    assert result.is_error
    body = json.loads(result.content[0].text)
    assert body == {"error": "internal_error", "message": "internal server error", "code": "internal_error",
                    "request_id": body["request_id"]}
    assert "boom" in caplog.text and body["request_id"] in caplog.text  # the cause goes to the log, with the id


def test_stdio_with_an_unreachable_database_says_so_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOSOAPI_ACCESS_TOKEN": "ek_x",
           "DATABASE_URL": "postgres://bob:S3cretPW@127.0.0.1:1/gone"}
    done = subprocess.run([sys.executable, "-m", "evidencekit", "mcp"], env=env, cwd=tmp_path, input="",
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "research-evidence mcp: cannot open the database postgres://bob:***@127.0.0.1:1/gone: ConnectionRefusedError: "
        "[Errno 111] Connect call failed ('127.0.0.1', 1)"]


def test_a_call_followed_at_once_by_the_end_of_input_is_answered(stdio_params: StdioServerParameters,
                                                                  origin: Origin) -> None:
    """`printf '<initialize>\\n<initialized>\\n<tools/call>\\n' | evidencekit mcp` gets the call's result."""
    assert stdio_params.env is not None
    mutation = str(uuid.uuid4())
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "sosoapi_research_evidence_retrieve", "arguments": {
                "workspace_id": stdio_params.env["WORKSPACE"], "mutation_id": mutation,
                "url": origin.reply("/piped", Reply(PAGE)), "kind": "url_text"}}},
    ]
    done = subprocess.run([sys.executable, "-m", "evidencekit", "mcp"], env=stdio_params.env, cwd=stdio_params.cwd,
                          input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True, text=True,
                          timeout=90, check=False)
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines()) if "id" in a}
    assert set(answers) == {1, 2}, done.stdout
    assert answers[2]["result"]["structuredContent"]["retrieval"]["mutation_id"] == mutation


async def test_an_agent_learns_its_workspace_without_being_told(stdio_params: StdioServerParameters) -> None:
    """Over stdio the instructions name the token's workspaces; a call naming another workspace is
    refused with a message that lists them (HTTP and REST alike)."""
    assert stdio_params.env is not None
    workspace = stdio_params.env["WORKSPACE"]
    with open(os.devnull, "w") as errlog:
        async with stdio_client(stdio_params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            started = await session.initialize()
            assert started.instructions is not None
            assert f"This server acts for one token: your workspace_id: {workspace} (" in started.instructions
            refused = await call(session, "sosoapi_research_evidence_status",
                                 {"workspace_id": str(uuid.uuid4()), "mutation_id": str(uuid.uuid4())})
    assert refused.is_error
    body = json.loads(refused.content[0].text)  # type: ignore[union-attr]
    assert body["code"] == "not_a_member" and f"your workspace_id: {workspace} (" in body["message"]



@pytest.fixture
def served_token(tmp_path: Path) -> dict[str, Any]:
    """A token of the database `serve` uses (its own data folder)."""
    served = tmp_path / "served"
    served.mkdir()
    return seeded(served)


async def test_stdio_with_another_databases_token_says_which_database_it_opened(
        tmp_path: Path, served_token: dict[str, Any]) -> None:
    """A client that starts `research-evidence mcp` with serve's token but without serve's
    EVIDENCEKIT_DATA_DIR: stderr names the new, empty database it opened and the next step, and a
    call's refusal says the token is not known there (not that it is missing)."""
    home = tmp_path / "home"  # the user's data folder, where a client without the setting lands
    env = {key: value for key, value in os.environ.items()
           if key not in ("EVIDENCEKIT_DATA_DIR", "DATABASE_URL", "XDG_DATA_HOME")}
    env |= {"HOME": str(home), "SOSOAPI_ACCESS_TOKEN": served_token["token"], "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "evidencekit", "mcp"],
                                   cwd=str(tmp_path), env=env)
    opened = home / ".local" / "share" / "evidencekit" / "evidencekit.sqlite3"
    with open(tmp_path / "stderr", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            refused = await call(session, "sosoapi_research_evidence_status",
                                 {"workspace_id": served_token["workspace_id"], "mutation_id": str(uuid.uuid4())})
    stderr = (tmp_path / "stderr").read_text()
    assert refused.is_error
    message = json.loads(refused.content[0].text)["message"]  # type: ignore[union-attr]
    assert message.startswith("not authenticated: the token in SOSOAPI_ACCESS_TOKEN is not known to the "
                              f"database {opened} "), message
    assert "is required" not in message
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr  # one line, at start-up
    assert lines[0].startswith("research-evidence mcp: the token in SOSOAPI_ACCESS_TOKEN is not known to the "
                               f"database {opened} (it did not exist: created just now, empty); every tool "
                               "call will be refused. Set EVIDENCEKIT_DATA_DIR or DATABASE_URL"), stderr
    assert "`research-evidence admin bootstrap --json`" in lines[0]
