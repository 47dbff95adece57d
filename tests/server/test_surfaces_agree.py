"""Agent-facing traps (issue 54), each seen the way a caller meets it: over REST, MCP over
Streamable HTTP and MCP over stdio (the official SDK's client), and the CLI; the same verdict on each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.origin import Origin, serve_origin
from tests.server.test_mcp import seeded
from tests.support import allow_origin, running_service, settled_over_mcp

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server


@pytest.fixture(scope="module")
def service(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_service(tmp_path_factory.mktemp("surfaces"), allow=allow_origin(origin.url),
                         env={"SOSOAPI_OUTPUT_SCHEMAS": "1"}) as running:  # tools/list carries outputSchema
        yield running


@pytest.fixture(scope="module")
def stdio_params(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> StdioServerParameters:
    data = tmp_path_factory.mktemp("surfaces-stdio")
    who = seeded(data)
    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "SOSOAPI_ACCESS_TOKEN": who["token"],
           "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": allow_origin(origin.url),
           "EVIDENCEKIT_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT), "WORKSPACE": who["workspace_id"]}
    return StdioServerParameters(command=sys.executable, args=["-m", "evidencekit", "mcp"], cwd=str(data), env=env)


@asynccontextmanager
async def http_session(service: dict[str, Any]) -> AsyncIterator[ClientSession]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {service['token']}"}) as http, \
            streamable_http_client(service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(params: StdioServerParameters) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def rest(service: dict[str, Any], path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(service["base"] + path, json=body, headers={"Authorization": f"Bearer {service['token']}"},
                      timeout=30)


def cli(service: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_URL": service["base"],
                   "SOSOAPI_ACCESS_TOKEN": service["token"], "EVIDENCEKIT_WORKSPACE": service["workspace_id"]}
    return subprocess.run([sys.executable, "-m", "evidencekit", *args], env=environment, capture_output=True,
                          text=True, timeout=60, check=False, cwd=str(service["data"]))


def texts(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


# -- a query of whitespace alone -------------------------------------------------------------------

BLANK = " \t "


async def test_a_whitespace_only_query_says_there_is_no_word_to_find(service: dict[str, Any],
                                                                     stdio_params: StdioServerParameters) -> None:
    """A query of spaces alone was 'no document' without a word of why (CLI exit 1, MCP []). The
    contract makes it valid (minLength counts spaces), so REST and MCP answer it, with no result and
    a note saying there was no word to find; the CLI refuses it as it refuses an empty one (exit 2)."""
    said = "The query holds only whitespace: there is no word to find"
    answer = rest(service, "/research-api/documents/search", {"query": BLANK})
    assert answer.status_code == 200 and answer.json() == {"results": []}
    assert said in " ".join(answer.headers.get_list("x-note"))
    for opened in (http_session(service), stdio_session(stdio_params)):
        async with opened as session:
            result = await session.call_tool("search_documents", {"query": BLANK})
        assert not result.is_error and result.structured_content == {"results": []}
        assert said in texts(result), texts(result)
    for query in ("", BLANK):
        done = cli(service, "search", query)
        assert done.returncode == 2, (query, done.returncode, done.stderr)
        assert "search takes at least one word to find (the query is empty or only whitespace)" in done.stderr


async def test_a_page_token_beside_a_whitespace_only_query_is_refused_as_unknown(
        service: dict[str, Any], stdio_params: StdioServerParameters) -> None:
    """No page token is ever issued for a blank query, so one sent with it is unknown, as any other
    token the service did not issue: it was answered `{"results": []}`, as if it were a first page
    (found by the MCP conformance test's generated arguments, one run in many)."""
    answer = rest(service, "/research-api/documents/search", {"query": BLANK, "page_token": "eyJvIjoxMH0.forged"})
    assert answer.status_code == 404 and answer.json()["code"] == "unknown_page_token", answer.text
    for opened in (http_session(service), stdio_session(stdio_params)):
        async with opened as session:
            result = await session.call_tool("search_documents", {"query": BLANK, "page_token": "0"})
        assert result.is_error and "unknown_page_token" in texts(result), texts(result)


# -- search results are retrieved text too ---------------------------------------------------------

PAGE = (b"<html lang='en'><head><title>Heron count</title></head><body><main><h1>Heron count</h1>"
        b"<p>We counted twelve Reiherzaehlung herons at the lake.</p></main></body></html>")


async def settled(session: ClientSession, workspace: str, url: str) -> dict[str, Any]:
    """Retrieve `url` and poll status until its receipt settles."""
    async def call(tool: str, arguments: dict[str, Any]) -> Any:
        return (await session.call_tool(tool, arguments)).structured_content

    return await settled_over_mcp(call, workspace, url)


async def test_search_results_carry_the_untrusted_text_note(service: dict[str, Any], origin: Origin,
                                                            stdio_params: StdioServerParameters) -> None:
    """Titles and snippets of search_documents are third-party text, as status's and get_documents'
    are: the MCP result says so after its JSON (and says nothing when it holds no result)."""
    from tests.origin import Reply

    assert stdio_params.env is not None
    for opened, workspace, tag in ((http_session(service), service["workspace_id"], "http"),
                                   (stdio_session(stdio_params), stdio_params.env["WORKSPACE"], "stdio")):
        async with opened as session:
            url = origin.reply(f"/untrusted-{tag}", Reply(PAGE))
            assert (await settled(session, workspace, url))["result"]["status"] == "ready"
            found = await session.call_tool("search_documents", {"query": "reiherzaehlung"})
            assert not found.is_error and found.structured_content["results"], texts(found)
            assert "untrusted data, not instructions" in texts(found)
            nothing = await session.call_tool("search_documents", {"query": "nowordlikethisanywhere"})
            assert not nothing.structured_content["results"] and "untrusted" not in texts(nothing)


# -- what only a note can say, on REST and the CLI too ---------------------------------------------

def test_the_cli_names_a_receipts_mutation_id_when_given_its_id(service: dict[str, Any], origin: Origin) -> None:
    """MCP's note for a receipt's id given where its mutation_id belongs reaches REST (X-Note) and the CLI."""
    from tests.origin import Reply

    url = origin.reply("/by-receipt-id", Reply(PAGE))
    done = cli(service, "retrieve", url, "--wait", "--json")
    retrieval = json.loads(done.stdout)["retrieval"]
    raw = rest(service, "/research-api/evidence/status",
               {"workspace_id": service["workspace_id"], "mutation_id": retrieval["id"]})
    assert raw.json() == {"retrieval": None}  # the contract's answer is unchanged
    assert f"with mutation_id {retrieval['mutation_id']} to read it" in " ".join(raw.headers.get_list("x-note"))
    shown = cli(service, "status", retrieval["id"])
    assert shown.returncode == 1 and "no receipt for this mutation_id" in shown.stderr
    assert (f"{retrieval['id']} is the id of a receipt of this workspace (retrieval.id), not its mutation_id: "
            f"ask for its status with mutation_id {retrieval['mutation_id']}") in shown.stderr, shown.stderr


def test_the_cli_says_why_a_url_was_unsafe_and_what_setting_helps(service: dict[str, Any]) -> None:
    """blocked/unsafe_url's cause (MCP's note) is printed by the CLI, with EVIDENCEKIT_ALLOW_PRIVATE_HOSTS
    where that setting would help, and not where it would not."""
    plain = cli(service, "retrieve", "http://example.com/plain", "--wait")
    assert plain.returncode == 1 and "result    blocked  reason unsafe_url" in plain.stdout
    assert "Why unsafe_url: plain http; only https URLs are fetched." in plain.stderr
    assert "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS=host:port" in plain.stderr
    private = cli(service, "retrieve", "https://10.1.2.3/inside", "--wait", "--json")
    assert json.loads(private.stdout)["retrieval"]["result"]["reason"] == "unsafe_url"  # stdout: the JSON alone
    assert "Why unsafe_url: address 10.1.2.3 is not public" in private.stderr
    credentials = cli(service, "retrieve", "https://me:secret@example.com/", "--wait")
    assert "Why unsafe_url: credentials in the URL" in credentials.stderr
    assert "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS" not in credentials.stderr and "secret" not in credentials.stderr


# -- get_documents: a page's URL, and names that find nothing among ones that do -------------------

async def test_get_documents_takes_urls_and_answers_the_known_names_beside_unknown_ones(
        service: dict[str, Any], origin: Origin, stdio_params: StdioServerParameters) -> None:
    """A page's URL is taken for its documents/ name (as the CLI takes it); one unknown name among
    known ones no longer fails the call: the documents found come back, in request order, and the
    unknown names are named (MCP: text after the JSON; REST: X-Note). All unknown: an error naming them."""
    from tests.origin import Reply

    assert stdio_params.env is not None
    for opened, workspace, tag in ((http_session(service), service["workspace_id"], "http"),
                                   (stdio_session(stdio_params), stdio_params.env["WORKSPACE"], "stdio")):
        async with opened as session:
            url = origin.reply(f"/known-{tag}", Reply(PAGE))
            assert (await settled(session, workspace, url))["result"]["status"] == "ready"
            name, unknown = "documents/" + url.split("://")[1], f"documents/nowhere.test/{tag}"
            by_url = await session.call_tool("get_documents", {"names": [url]})
            assert not by_url.is_error, texts(by_url)
            assert [(d["name"], d["uri"]) for d in by_url.structured_content["documents"]] == [(name, url)]
            mixed = await session.call_tool("get_documents", {"names": [unknown, url, name]})
            assert not mixed.is_error, texts(mixed)
            assert [d["name"] for d in mixed.structured_content["documents"]] == [name, name]
            assert f"Not returned: {unknown}: no stored document" in texts(mixed)
            none = await session.call_tool("get_documents", {"names": [unknown]})
            assert none.is_error and unknown in texts(none) and "unknown_document" in texts(none)
        if tag == "http":  # the same verdict over REST, from the same service
            mixed_rest = rest(service, "/research-api/documents", {"names": [unknown, url]})
            assert mixed_rest.status_code == 200, mixed_rest.text
            assert [d["name"] for d in mixed_rest.json()["documents"]] == [name]
            assert f"Not returned: {unknown}: no stored document" in " ".join(mixed_rest.headers.get_list("x-note"))
            none_rest = rest(service, "/research-api/documents", {"names": [unknown]})
            assert none_rest.status_code == 404 and none_rest.json()["fields"][0]["field"] == "$.names[0]"
            shown = cli(service, "documents", url, unknown)
            assert shown.returncode == 1 and "Reiherzaehlung" in shown.stdout
            assert shown.stderr.strip() == f"evidencekit: {unknown}: no stored document with that name that you may read"


# -- what a tool's listing tells an agent ----------------------------------------------------------

async def test_every_input_field_is_explained_and_no_description_asks_for_what_no_field_holds(
        service: dict[str, Any], stdio_params: StdioServerParameters) -> None:
    """tools/list as an agent reads it: each input field has a description or is explained in the
    tool's (the published input schemas carry none for retrieve and status: a new UUID per
    retrieval was said nowhere), and retrieve no longer asks to 'check coverage', which no output
    field holds."""
    for opened in (http_session(service), stdio_session(stdio_params)):
        async with opened as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for name, tool in tools.items():
            description = tool.description or ""
            for field, schema in tool.input_schema["properties"].items():
                assert schema.get("description") or f"{field}:" in description, (name, field)
        retrieve = tools["sosoapi_research_evidence_retrieve"].description or ""
        assert "coverage" not in retrieve.lower()
        assert "mutation_id: a new UUID for each new retrieval" in retrieve
        assert "sosoapi_research_evidence_status" in retrieve and "partial" in retrieve
        status = tools["sosoapi_research_evidence_status"].description or ""
        assert "not the receipt's id" in status


async def test_an_absent_title_or_description_is_said_the_same_way_by_both_tools(
        service: dict[str, Any], origin: Origin) -> None:
    """The contracts decide the values (status: a string of 1+ characters or null; get_documents: a
    string, required), so a page without a description reads null in status and "" in get_documents:
    the get_documents output schema an agent is given says so, naming the status tool's null."""
    from tests.origin import Reply

    url = origin.reply("/no-description", Reply(b"<html><body><main><p>Only a paragraph here.</p></main></body></html>"))
    async with http_session(service) as session:
        result = (await settled(session, service["workspace_id"], url))["result"]
        assert (result["title"], result["description"]) == (None, None)
        read = await session.call_tool("get_documents", {"names": [url]})
        document = read.structured_content["documents"][0]
        assert (document["title"], document["description"]) == ("", "")
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    fields = tools["get_documents"].output_schema["properties"]["documents"]["items"]["properties"]
    for field in ("title", "description"):
        said = fields[field]["description"]
        assert "empty string" in said and "sosoapi_research_evidence_status" in said and "null" in said, said


# -- https:// to a host that answers plain HTTP ----------------------------------------------------

async def test_https_to_a_plain_http_host_says_so_and_what_to_do(service: dict[str, Any], origin: Origin,
                                                                 stdio_params: StdioServerParameters) -> None:
    """The TLS handshake with a server that speaks plain HTTP fails ('wrong version number'): the
    receipt settles unavailable/egress_unavailable as before, and a note (MCP text, REST X-Note,
    the CLI's stderr) says the host answered plain HTTP, not HTTPS, and what to do."""
    from tests.origin import Reply

    assert stdio_params.env is not None
    said = "the host answered plain HTTP, not HTTPS"
    for opened, workspace, tag in ((http_session(service), service["workspace_id"], "http"),
                                   (stdio_session(stdio_params), stdio_params.env["WORKSPACE"], "stdio")):
        url = origin.reply(f"/plain-{tag}", Reply(PAGE)).replace("http://", "https://")
        async with opened as session:
            retrieval = await settled(session, workspace, url)
            assert (retrieval["result"]["status"], retrieval["result"]["reason"]) == ("unavailable", "egress_unavailable")
            status = await session.call_tool("sosoapi_research_evidence_status", {
                "workspace_id": workspace, "mutation_id": retrieval["mutation_id"]})
            assert said in texts(status) and "http://" in texts(status), texts(status)
    raw = rest(service, "/research-api/evidence/status",
               {"workspace_id": service["workspace_id"], "mutation_id": retrieval["mutation_id"]})
    assert said not in " ".join(raw.headers.get_list("x-note"))  # the stdio service's receipt, not this one's
    shown = cli(service, "retrieve", origin.url.replace("http://", "https://") + "/plain-cli", "--wait")
    assert shown.returncode == 1 and "reason egress_unavailable" in shown.stdout
    assert said in shown.stderr, shown.stderr
    mutation = shown.stdout.split()[1]
    raw = rest(service, "/research-api/evidence/status", {"workspace_id": service["workspace_id"], "mutation_id": mutation})
    assert said in " ".join(raw.headers.get_list("x-note"))


# -- one verdict on a credential, whichever surface carries it (issue 55) ---------------------------

SURFACES_APP = '''"""The example catalogue with two callers: the librarian (catalog:write) and a reader (no capability)."""
import asyncio
import os

from evidencekit.server.runtime import ServiceHooks, serve_stdio
from library_api.auth import WRITE, Caller, TokenAuth
from library_api.generated.app import create_app, create_stdio_server
from library_api.handlers import SAMPLE_BOOKS, Catalogue

HOOKS = ServiceHooks(auth=TokenAuth({"librarian-token": Caller("librarian", frozenset({WRITE})),
                                     "reader-token": Caller("reader")}))


def app():
    return create_app(Catalogue(SAMPLE_BOOKS), HOOKS)


if __name__ == "__main__":
    credential = os.environ.get("SURFACE_TOKEN") or None
    asyncio.run(serve_stdio(create_stdio_server(Catalogue(SAMPLE_BOOKS), HOOKS, credential=credential)))
'''
ADDED = {"title": "Surfaces", "authors": [{"name": "A. Writer"}], "format": "ebook", "published_on": "2020-02-02"}
CALLS = {"public": ("search_books", "/books/search", {"query": "the"}), "protected": ("add_book", "/books/add", ADDED)}
# credential -> (Authorization header, stdio token: None when the case has no stdio form)
CREDENTIALS = {"none": (None, ""), "malformed": ("Basic bGlicmFyaWFuOnRva2Vu", None),
               "unknown": ("Bearer wrong-token", "wrong-token"), "no capability": ("Bearer reader-token", "reader-token"),
               "granted": ("Bearer librarian-token", "librarian-token")}
VERDICTS = {("none", "public"): "ok", ("none", "protected"): "unauthenticated",
            ("malformed", "public"): "unauthenticated", ("malformed", "protected"): "unauthenticated",
            ("unknown", "public"): "unauthenticated", ("unknown", "protected"): "unauthenticated",
            ("no capability", "public"): "ok", ("no capability", "protected"): "missing_capability",
            ("granted", "public"): "ok", ("granted", "protected"): "ok"}


def rest_verdict(answer: httpx.Response) -> str:
    return "ok" if answer.is_success else str(answer.json()["code"])


def tool_verdict(result: Any) -> str:
    return str(json.loads(result.content[0].text)["code"]) if result.is_error else "ok"


async def mcp_http_verdicts(url: str, authorization: str | None) -> dict[str, str]:
    """Each call's verdict over /mcp with the official SDK's client; a session the server refuses
    outright (HTTP 401 on every message) is unauthenticated for every call."""
    from mcp.shared.exceptions import MCPError

    statuses: list[int] = []

    async def seen(response: Any) -> None:
        statuses.append(response.status_code)

    headers = {"Authorization": authorization} if authorization else {}
    try:
        async with httpx2.AsyncClient(headers=headers, event_hooks={"response": [seen]}) as http, \
                streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return {kind: tool_verdict(await session.call_tool(tool, arguments))
                    for kind, (tool, _, arguments) in CALLS.items()}
    except (MCPError, BaseExceptionGroup) as failed:  # the SDK's task group wraps it
        while isinstance(failed, BaseExceptionGroup) and len(failed.exceptions) == 1:
            failed = failed.exceptions[0]
        assert isinstance(failed, MCPError) and statuses and statuses[-1] == 401, (failed, statuses)
        return dict.fromkeys(CALLS, "unauthenticated")


async def mcp_stdio_verdicts(project: Path, token: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(ROOT)]), "SURFACE_TOKEN": token}
    params = StdioServerParameters(command=sys.executable, args=[str(project / "surfaces_app.py")], cwd=str(project),
                                   env=env)
    async with stdio_session(params) as session:
        return {kind: tool_verdict(await session.call_tool(tool, arguments)) for kind, (tool, _, arguments) in CALLS.items()}


async def test_a_credential_gets_the_same_verdict_on_rest_mcp_http_and_mcp_stdio(tmp_path: Path) -> None:
    """A bad token on a public tool was answered over REST (200) and over stdio, and refused over
    /mcp (401): the verdict depended on the surface. Now a credential that is sent is checked
    wherever it is sent, and a valid one without the capability is refused the same way: one
    decision (auth.identify, then the requirement), on REST, MCP over HTTP and MCP over stdio."""
    from tests.support import library_project, live_server

    with library_project(tmp_path) as project:
        (project / "surfaces_app.py").write_text(SURFACES_APP)
        from surfaces_app import app  # type: ignore[import-not-found]

        seen: dict[tuple[str, str, str], str] = {}
        with live_server(app(), lifespan="on") as base:
            for credential, (authorization, token) in CREDENTIALS.items():
                headers = {"Authorization": authorization} if authorization else {}
                for kind, (_, path, arguments) in CALLS.items():
                    seen[credential, kind, "rest"] = rest_verdict(httpx.post(base + path, json=arguments,
                                                                             headers=headers, timeout=30))
                for kind, verdict in (await mcp_http_verdicts(base + "/mcp", authorization)).items():
                    seen[credential, kind, "mcp http"] = verdict
                if token is not None:
                    for kind, verdict in (await mcp_stdio_verdicts(project, token)).items():
                        seen[credential, kind, "mcp stdio"] = verdict
        sys.modules.pop("surfaces_app", None)
    wrong = {key: verdict for key, verdict in seen.items() if verdict != VERDICTS[key[0], key[1]]}
    assert not wrong, wrong
    assert len(seen) == len(CALLS) * (2 * len(CREDENTIALS) + len(CREDENTIALS) - 1)  # stdio: no header to malform
