"""What a retrieved URL is called (server/evidence/source_urls.py), through the real service over
MCP: pages fetched over HTTPS from a loopback origin under a test CA. Tracking parameters do not
make a second document; a secret in the query string reaches the origin and nobody else: not a
document name, a search result, a get_documents or status answer, nor a log line."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.origin import LocalCA, Origin, Reply
from tests.support import allow_origin, running_service, settled_over_mcp, validator_named

pytestmark = pytest.mark.anyio
SECRET, OTHER_SECRET = "SECRET123", "OTHER456"


@pytest.fixture(scope="module")
def service(origin: Origin, tls: LocalCA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    bundle = tmp_path_factory.mktemp("ca") / "ca.pem"
    tls.ca.cert_pem.write_to_path(str(bundle))  # the origin's certificate is trusted as a public one would be
    with running_service(tmp_path_factory.mktemp("names"), allow=allow_origin(origin.url),
                         env={"EVIDENCEKIT_CA_BUNDLE": str(bundle)}) as running:
        yield running


class Agent:
    """An MCP client of the service that keeps every answer's text, as an agent would read it."""

    def __init__(self, session: ClientSession, workspace: str) -> None:
        self.session, self.workspace = session, workspace
        self.read: list[str] = []

    async def call(self, tool: str, arguments: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
        result = await self.session.call_tool(tool, arguments)
        self.read.extend(block.text for block in result.content if hasattr(block, "text"))
        assert result.is_error is error, result.content
        if error:
            return {}
        self.read.append(json.dumps(result.structured_content))
        assert validator_named(tool).output_errors(result.structured_content) == []
        return result.structured_content  # type: ignore[no-any-return]

    async def retrieve(self, url: str) -> dict[str, Any]:
        retrieval = await settled_over_mcp(self.call, self.workspace, url)
        assert retrieval["result"]["status"] == "ready", retrieval
        return retrieval

    async def search(self, query: str) -> list[dict[str, Any]]:
        return (await self.call("search_documents", {"query": query}))["results"]  # type: ignore[no-any-return]

    async def documents(self, *names: str) -> list[dict[str, Any]]:
        return (await self.call("get_documents", {"names": list(names)}))["documents"]  # type: ignore[no-any-return]


@asynccontextmanager
async def agent(service: dict[str, Any]) -> AsyncIterator[Agent]:
    headers = {"Authorization": f"Bearer {service['token']}"}
    async with httpx2.AsyncClient(headers=headers) as http, \
            streamable_http_client(service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield Agent(session, service["workspace_id"])


def page(word: str, links: str = "") -> Reply:
    return Reply(f"<html lang='de'><head><title>Zählung</title></head><body><main><h1>Zählung</h1>"
                 f"<p>Am Morgen zählten wir {word} am See, am Abend noch einmal.</p>{links}</main></body></html>".encode())


async def test_a_page_under_tracking_parameters_is_one_document(service: dict[str, Any], origin: Origin) -> None:
    url = origin.reply("/names/heron", page("Kormoranzählung"))
    async with agent(service) as reader:
        for variant in (f"{url}?utm_source=news&utm_medium=mail", url, f"{url}?fbclid=abc#top"):
            await reader.retrieve(variant)
        [hit] = await reader.search("kormoranzählung")
        name = "documents/" + url.split("://", 1)[1]
        assert (hit["parent"], hit["uri"]) == (name, url)
        # a name with tracking parameters is that document, answered with its own name, also beside it
        tracked, plain = await reader.documents(name + "?utm_source=news", name)
        assert (tracked["name"], tracked["uri"]) == (name, url) and tracked == plain
        assert "Kormoranzählung" in tracked["content"]
    assert origin.queries["/names/heron"][0] == "utm_source=news&utm_medium=mail"  # fetched as given


async def test_a_secret_in_the_query_reaches_the_origin_and_no_one_else(
        service: dict[str, Any], origin: Origin, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    links = "<p><a href='#tabelle'>Zur Tabelle</a>, <a href='?seite=2'>weiter</a></p>"
    url = origin.reply("/names/vault", page("Eisvogelbestand", links))
    async with agent(service) as reader:
        first = await reader.retrieve(f"{url}?api_key={SECRET}&lang=de")
        assert first["result"]["provenance"]["source_url"] == f"{url}?api_key=redacted&lang=de"
        [hit] = await reader.search("eisvogelbestand")
        assert hit["uri"].startswith(f"{url}?api_key=redacted-") and hit["uri"].endswith("&lang=de")
        [by_parent] = await reader.documents(hit["parent"])
        assert by_parent["uri"] == hit["uri"] and "Eisvogelbestand" in by_parent["content"]
        # the name spelled with the secret itself finds the document, and is not echoed
        [by_secret] = await reader.documents("documents/" + f"{url}?api_key={SECRET}&lang=de".split("://", 1)[1])
        assert (by_secret["name"], by_secret["uri"]) == (hit["parent"], hit["uri"])
        await reader.call("get_documents", {"names": ["documents/" + f"{url}?token={SECRET}".split("://", 1)[1]]},
                          error=True)
        # another secret is another document: never the first caller's page under the same name
        await reader.retrieve(f"{url}?api_key={OTHER_SECRET}&lang=de")
        hits = await reader.search("eisvogelbestand")
        assert len({result["parent"] for result in hits}) == 2
    assert origin.queries["/names/vault"] == [f"api_key={SECRET}&lang=de", f"api_key={OTHER_SECRET}&lang=de"]
    for text in reader.read:
        assert SECRET not in text and OTHER_SECRET not in text
    # every line at INFO or above, and the service's own and its HTTP client's at any level (the
    # database drivers' DEBUG lines hold every statement's parameters, the receipt's URL among them,
    # and the MCP client's there is this test's own)
    ours = ("evidencekit", "httpx", "httpcore")
    logged = [(record.name, record.getMessage()) for record in caplog.records
              if record.levelno >= logging.INFO or record.name.split(".")[0] in ours]
    assert any(name == "httpx" and "/names/vault" in line for name, line in logged)  # the fetch, without its query
    assert [(name, line) for name, line in logged if SECRET in line or OTHER_SECRET in line] == []
