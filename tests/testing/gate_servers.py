"""Servers for the conformance gate's tests: the service's generated app with violations planted,
and a recorder of what reached it."""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import replace

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencekit.server.generated.app import OPENAPI
from evidencekit.server.generated.mcp_tools import TOOLS_BY_NAME
from evidencekit.server.generated.models import RetrieveInput, RetrieveOutput
from evidencekit.server.generated.operations import (
    GET_DOCUMENTS,
    RETRIEVE,
    SEARCH_DOCUMENTS,
    STATUS,
)
from evidencekit.server.runtime._app import Binding, build_app
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._mcp import McpSettings, ToolBinding
from tests.support import AllowAll, ExampleHandlers

# A uuid of version 0: the MCP output variant admits it, the REST one (versions 1-8) does not.
VERSION_0 = "12345678-1234-0234-8234-123456789abc"
RETRIEVE_PATH = "/research-api/evidence/retrieve"


class OneVariantHandlers(ExampleHandlers):
    """Answers a receipt whose id only the MCP output variant admits."""

    async def retrieve(self, payload: RetrieveInput, context: RequestContext) -> RetrieveOutput:
        answer = await super().retrieve(payload, context)
        data = answer.model_dump(mode="json")
        data["retrieval"]["id"] = VERSION_0
        return RetrieveOutput.model_validate(data)


class WithoutFields:
    """Sends every 400 without its `fields`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None

        async def strip(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] == 400:
                start = message
                return
            if start is not None and message["type"] == "http.response.body":
                body = json.loads(message["body"])
                body.pop("fields", None)
                encoded = json.dumps(body).encode()
                headers = [(k, v) for k, v in start["headers"] if k != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length", str(len(encoded)).encode())]})
                await send({"type": "http.response.body", "body": encoded})
                return
            await send(message)

        await self.app(scope, receive, strip)


class Recorder:
    """Counts what reaches the app: REST paths, and MCP tools/call by tool name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.calls: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages = []
        while True:  # read the whole body, then hand the app the same messages
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = b"".join(m.get("body", b"") for m in messages)
        if scope["path"] == "/mcp":
            with_name = json.loads(body) if body else {}
            if isinstance(with_name, dict) and with_name.get("method") == "tools/call":
                self.calls["tool " + str(with_name["params"]["name"])] += 1
        else:
            self.calls[scope["path"]] += 1
        replay = iter(messages)

        async def again() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, again, send)


def broken_app() -> Recorder:
    """The service's skeleton with three violations planted: retrieve answers outside its REST
    output variant (this server checks its answers against the MCP variant only), get_documents is
    listed with another inputSchema (maxItems 50), and a 400 carries no `fields`."""
    handlers = OneVariantHandlers()
    # another name: the runtime compiles validators once per (name, hash), and the real spec's
    # (every variant) may be compiled already in this process
    retrieve = replace(RETRIEVE, name=f"{RETRIEVE.name} (MCP variant only)",
                       schemas={"mcp": RETRIEVE.schemas["mcp"]})
    documents = copy.deepcopy(TOOLS_BY_NAME["get_documents"])
    documents["inputSchema"]["properties"]["names"]["maxItems"] = 50
    operations = [Binding(GET_DOCUMENTS, handlers.get_documents), Binding(retrieve, handlers.retrieve),
                  Binding(STATUS, handlers.status), Binding(SEARCH_DOCUMENTS, handlers.search_documents)]
    tools = [ToolBinding(documents, GET_DOCUMENTS, handlers.get_documents),
             ToolBinding(TOOLS_BY_NAME["sosoapi_research_evidence_retrieve"], retrieve, handlers.retrieve),
             ToolBinding(TOOLS_BY_NAME["sosoapi_research_evidence_status"], STATUS, handlers.status),
             ToolBinding(TOOLS_BY_NAME["search_documents"], SEARCH_DOCUMENTS, handlers.search_documents)]
    app = build_app(operations, tools, ServiceHooks(auth=AllowAll()), mcp=McpSettings(name="broken"),
                    openapi=OPENAPI)
    return Recorder(WithoutFields(app))
