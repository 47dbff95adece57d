"""The MCP surface (official `mcp` SDK, low-level server): tools from the generated descriptors,
each call through the same OperationPipeline as REST.

Tool failures (bad input, authentication, permissions, the handler's refusals) are `isError`
results carrying the REST error body; unknown tools are protocol errors. Over HTTP the bearer
check has put the caller in the request's state; over stdio the credential given at start-up is
authenticated per call. What a result means for the caller's next step is the service's to say
(`McpSettings.notes`), not the runtime's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from starlette.types import Scope

from evidencekit.contracts._spec import OperationSpec
from evidencekit.contracts._validation import FieldError
from evidencekit.server.runtime._auth import UNAUTHENTICATED, identify
from evidencekit.server.runtime._caller_instructions import with_caller
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._errors import ApiError, BadRequest
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._http_errors import unexpected
from evidencekit.server.runtime._mcp_streams import StreamLimits
from evidencekit.server.runtime._mcp_text import result_text
from evidencekit.server.runtime._pipeline import Handler, OperationPipeline
from evidencekit.server.runtime._request_head import new_request_id
from evidencekit.server.runtime._request_size import json_input

log = logging.getLogger("evidencekit.mcp")


def no_notes(spec: OperationSpec, data: Mapping[str, Any]) -> list[str]:
    return []


@dataclass(frozen=True)
class ToolBinding:
    """One tool: its descriptor as generated (name, schemas, annotations, profiles), its operation
    and the handler that serves it (bound in generated code, so it is type-checked)."""

    descriptor: Mapping[str, Any]
    spec: OperationSpec
    handler: Handler


@dataclass(frozen=True)
class McpSettings:
    name: str
    version: str = "0.1.0"
    instructions: str | None = None
    profile: str | None = None  # list only the tools of this profile; None: every tool
    output_schemas: bool = True  # list each tool's outputSchema in tools/list
    notes: Callable[[OperationSpec, Mapping[str, Any]], list[str]] = no_notes  # text after the result's JSON
    unauthenticated: str = UNAUTHENTICATED  # the 401 message (say how a stdio caller gives its credential)
    streams: StreamLimits = StreamLimits()  # what /mcp over HTTP holds open (mcp_streams)
    # over HTTP, text added to `instructions` in the answer to an authenticated caller's `initialize`
    # (caller_instructions): given the caller's principal, say, the workspaces it may name
    caller_instructions: Callable[[Any], Awaitable[str | None]] | None = None


def listed_tools(bindings: Sequence[ToolBinding], profile: str | None, output_schemas: bool) -> list[types.Tool]:
    """tools/list: the published descriptors of the profile; outputSchema only when asked for."""
    tools = []
    for binding in bindings:
        descriptor = binding.descriptor
        if profile is not None and profile not in descriptor.get("profiles", ()):
            continue
        wire = {key: descriptor[key] for key in ("name", "title", "description", "inputSchema", "annotations")
                if key in descriptor}
        if output_schemas:
            wire["outputSchema"] = descriptor["outputSchema"]
        tools.append(types.Tool.model_validate(wire))
    return tools


def error_result(error: ApiError, request_id: str) -> dict[str, Any]:
    """The REST error body (error, message, code, request_id, fields, retry_after_seconds) as an
    isError result (its JSON data)."""
    return {"content": [{"type": "text", "text": json.dumps(error.to_json(request_id))}], "isError": True}


def _arguments_refused(errors: Sequence[FieldError]) -> BadRequest:
    fields = "; ".join(f"{e.path} {e.message}" for e in errors)
    return BadRequest(f"arguments do not match the contract: {fields}", code="validation_failed", fields=errors)


@dataclass
class ToolCaller:
    """Runs one tools/call: find the tool, take the caller, run the operation's pipeline."""

    bindings: Sequence[ToolBinding]
    hooks: ServiceHooks
    settings: McpSettings
    stdio_credential: str | None = None  # over stdio: the credential every call acts with
    _pipelines: dict[str, OperationPipeline] = field(init=False)
    _listed: frozenset[str] = field(init=False)  # the names of the tools the profile lists
    _tools: list[types.Tool] = field(init=False)
    _by_name: dict[str, ToolBinding] = field(init=False)

    def __post_init__(self) -> None:
        settings = self.settings
        self._pipelines = {binding.descriptor["name"]: OperationPipeline(binding.spec, binding.handler,
                                                                         self.hooks.auth, settings.unauthenticated)
                           for binding in self.bindings}
        self._tools = listed_tools(self.bindings, settings.profile, settings.output_schemas)
        self._listed = frozenset(tool.name for tool in self._tools)  # a tool the profile hides is not callable either
        self._by_name = {binding.descriptor["name"]: binding for binding in self.bindings}

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        """A listed tool's inputSchema (None for one the profile does not list): what the SDK checks a
        2026-07-28 call's Mcp-Param headers against. Without it the SDK lists every tool, validated
        and serialized again, on each such call to find the schema."""
        binding = self._by_name.get(name)
        return binding.descriptor["inputSchema"] if binding is not None and name in self._listed else None

    def tools(self) -> list[types.Tool]:
        """tools/list's tools, made once: the SDK lists them again for every 2026-07-28 call that
        names its tool in a header (to check the header against the tool's schema)."""
        return list(self._tools)

    async def list_tools(self, ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools())

    async def call_tool(self, ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        """The SDK's tools/call handler (stdio, and the HTTP requests mcp_direct leaves to the SDK)."""
        scope = ctx.request.scope if ctx.request is not None else None
        return types.CallToolResult.model_validate(await self.result(params.name, params.arguments, scope))

    async def result(self, name: str, arguments: Mapping[str, Any] | None, http: Scope | None) -> dict[str, Any]:
        """tools/call's result as JSON data: the answer (content and structuredContent) or an
        isError result; MCPError for a tool the profile does not list. `http`: the request's scope,
        where the bearer check has put the caller (auth.identify); None over stdio, where the
        process's credential is identified here, on every call, as the bearer check does over HTTP.
        What the caller may call, and how large its arguments may be, the pipeline decides."""
        pipeline = self._pipelines.get(name)
        if pipeline is None or name not in self._listed:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
        request_id = new_request_id()
        spec = pipeline.spec
        try:
            context = RequestContext(request_id, "mcp")
            if http is not None:  # HTTP: the bearer check has identified the caller, if one was sent
                context.principal = http.get("state", {}).get("principal")
            elif self.stdio_credential:  # stdio: the process's, checked whatever the tool (as a sent one is over HTTP)
                context.principal = await identify(self.hooks.auth, self.stdio_credential, False,
                                                   pipeline.unauthenticated)
            arguments = arguments or {}
            raw, size = json_input(arguments)
            data = await pipeline.run(arguments, raw, context, size)  # the caller's verdict, then the size's
            content = [{"type": "text", "text": result_text(spec, data, context)}]
            notes = [*self.settings.notes(spec, data), *context.notes]
            content += [{"type": "text", "text": note} for note in notes]
        except BadRequest as refused:
            if refused.code == "validation_failed":
                refused = _arguments_refused(refused.fields)
            return error_result(refused, request_id)
        except ApiError as error:
            return error_result(error, request_id)
        except Exception as exc:  # a tool failure, not a protocol error: the caller gets an isError result
            return error_result(unexpected(exc, f"{spec.name} (request {request_id})", self.hooks), request_id)
        return {"content": content, "structuredContent": data, "isError": False}


class _InstructedServer(Server[Any]):
    """The SDK's server whose instructions are read when an `initialize` is answered: the settings',
    then the caller's (caller_instructions)."""

    def __init__(self, settings: McpSettings, **kwargs: Any) -> None:
        self._settings = settings
        super().__init__(settings.name, **kwargs)

    @property
    def instructions(self) -> str | None:
        return with_caller(self._settings.instructions)

    @instructions.setter
    def instructions(self, _: str | None) -> None:  # the SDK's __init__ sets it: read from the settings
        pass


def build_server(caller: ToolCaller) -> Server[Any]:
    return _InstructedServer(caller.settings, version=caller.settings.version,
                             on_list_tools=caller.list_tools, on_call_tool=caller.call_tool,
                             get_tool_input_schema=caller.input_schema)


# At the end of input, how long requests already read may still take to be answered.
STDIO_DRAIN_SECONDS = 60.0


async def serve_stdio(server: Server[Any], drain_seconds: float = STDIO_DRAIN_SECONDS) -> None:
    """MCP over this process's stdin and stdout until the end of input. Requests read before the
    end of input are answered first (`printf '...tools/call...' | evidencekit mcp myapi.app:create_stdio` gets its result):
    the SDK's server stops, and drops calls in hand, as soon as its input ends."""
    import anyio
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        inner_send, inner_read = anyio.create_memory_object_stream[Any](0)
        inner_write, outer_write = anyio.create_memory_object_stream[Any](0)
        pending: set[Any] = set()  # ids of requests read and not yet answered
        answered = anyio.Event()

        async def forward_input() -> None:
            nonlocal answered
            async with inner_send:
                async for message in read:
                    root = getattr(getattr(message, "message", None), "root", getattr(message, "message", None))
                    if isinstance(root, types.JSONRPCRequest):
                        pending.add(root.id)
                    await inner_send.send(message)
                with anyio.move_on_after(drain_seconds):
                    while pending:
                        answered = anyio.Event()
                        await answered.wait()

        async def forward_output() -> None:
            async with outer_write, write:  # closing `write` ends stdio_server's stdout writer
                async for message in outer_write:
                    root = getattr(getattr(message, "message", None), "root", getattr(message, "message", None))
                    if isinstance(root, types.JSONRPCResponse | types.JSONRPCError):
                        pending.discard(root.id)
                        answered.set()
                    await write.send(message)

        async with anyio.create_task_group() as group:
            group.start_soon(forward_input)
            group.start_soon(forward_output)
            async with inner_write:
                await server.run(inner_read, inner_write, server.create_initialization_options())
