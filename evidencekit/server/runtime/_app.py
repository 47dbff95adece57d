"""One Starlette app from an adopting service's bound operations: REST routes, `/mcp` (Streamable
HTTP, stateless), `/openapi.json`, `/docs`, `/healthz`, the bearer check, the access log and errors
in one JSON shape.

The generated `create_app(handlers, hooks)` of each project calls `build_app`, and returns its app:
the service adds its own routes (a health check that asks its database, say), mounts, middleware
and exception handlers to it as to any Starlette app, and its lifespan (its database, its workers).
An operation cannot take the runtime's own paths (contracts._loader.RESERVED_PATHS).

Every request takes one path through the app's one middleware stack:

    ServiceApp.__call__ (what Starlette's ServerErrorMiddleware does: an exception nothing handled
    answered by the 500 handler, http_errors.ErrorHandler or the team's; _exceptions.py)
      the team's middleware (`middleware`, `add_middleware`), outermost first
        Policies (_policies.py), in order: the access log (access_log: one line per request), the
        Host check (hosts, every route but /healthz), the bearer check (bearer: auth.identify, on
        the operations, /mcp and the protected prefixes), the exception handlers (those of
        http_errors and the team's, by Starlette's rules)
          ExactRouter (routing: Starlette's router, fixed paths found by lookup)
            the operations' endpoints (rest_runtime), /mcp, /openapi.json, /docs, the
            team's routes and mounts, /healthz

Each policy is decided in one place, the same on REST and MCP: the caller (_auth.py), request sizes
(_request_size.py), hosts (_hosts.py), success statuses and the MCP text content (the generated
OperationSpec, read from the manifest by contracts/_policy.py; _mcp_text.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.contracts._spec import OperationSpec
from evidencekit.server.runtime._api_docs import docs_routes
from evidencekit.server.runtime._bearer import BearerCheck, Protected
from evidencekit.server.runtime._body_limit import BodyLimit
from evidencekit.server.runtime._caller_instructions import CallerInstructions
from evidencekit.server.runtime._exceptions import ServerErrors
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._hosts import HostPolicy
from evidencekit.server.runtime._http_errors import contract_headers, exception_handlers
from evidencekit.server.runtime._mcp import McpSettings, ToolBinding, ToolCaller, build_server
from evidencekit.server.runtime._mcp_direct import McpDirect
from evidencekit.server.runtime._mcp_hosts import McpHosts
from evidencekit.server.runtime._mcp_streams import McpStreams
from evidencekit.server.runtime._pipeline import Handler
from evidencekit.server.runtime._policies import Policies
from evidencekit.server.runtime._request_size import mcp_message_limit
from evidencekit.server.runtime._rest_runtime import operation_endpoint
from evidencekit.server.runtime._routing import ExactRouter
from evidencekit.server.runtime._sent import Sent

MCP_PATH = "/mcp"
HEALTHZ_PATH = "/healthz"
Lifespan = Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]


@dataclass(frozen=True)
class Binding:
    """An operation and the handler that serves it (bound in generated code)."""

    spec: OperationSpec
    handler: Handler


class ServiceApp(Starlette):
    """The app `build_app` makes: a Starlette app, extended as any (`add_route`, `mount`,
    `add_middleware`, `add_exception_handler`, `routes`, `state`), whose router is an ExactRouter,
    whose outermost error handling is its own call's and whose innermost layer runs the policies
    (_policies.py) and the exception handlers."""

    def __init__(self, *, routes: Sequence[BaseRoute], lifespan: Lifespan, **options: Any) -> None:
        super().__init__(routes=routes, lifespan=lifespan, **options)
        self.router = ExactRouter(routes, lifespan=lifespan)
        # Policies' hosts, exempt, check and protects (build_app's; none: the exception handlers only)
        self._policies: dict[str, Any] = {}
        self._server_errors: ServerErrors | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Starlette.__call__ with ServerErrorMiddleware's work in it: a layer less for every request
        scope["app"] = self
        if self.middleware_stack is None:
            self.middleware_stack = self.build_middleware_stack()
        if scope["type"] != "http":
            await self.middleware_stack(scope, receive, send)
            return
        sent = Sent(send, scope)  # outermost: nothing watches further out; every answer gets a request id
        try:
            await self.middleware_stack(scope, receive, sent.send)
        except Exception as exc:
            assert self._server_errors is not None
            await self._server_errors.answer(scope, receive, send, sent, exc)

    def build_middleware_stack(self) -> ASGIApp:
        """Starlette's stack (Starlette.build_middleware_stack) with its error middlewares' work
        done by this app's call (the outermost) and by the policy layer (the innermost)."""
        error_handler = None
        handlers: dict[Any, Any] = {}
        for key, value in self.exception_handlers.items():
            if key in (500, Exception):
                error_handler = value
            else:
                handlers[key] = value
        self._server_errors = ServerErrors(self.router, handler=error_handler, debug=self.debug)
        middleware = [*([Middleware(RequestBodyLimitMiddleware, max_body_size=self.max_body_size)]
                        if self.max_body_size is not None else []), *self.user_middleware]
        app: ASGIApp = Policies(self.router, handlers=handlers, debug=self.debug, **self._policies)
        for cls, args, kwargs in reversed(middleware):
            app = cls(app, *args, **kwargs)
        return app


def build_app(operations: Sequence[Binding], tools: Sequence[ToolBinding], hooks: ServiceHooks, *,
              mcp: McpSettings, openapi: Path, routes: Sequence[BaseRoute] = (),
              lifespan: Lifespan | None = None, hosts: HostPolicy | None = None,
              protected_prefixes: Sequence[str] = (), middleware: Sequence[Middleware] = (),
              docs_title: str | None = "API", healthz: bool = True) -> ServiceApp:
    """The service's Starlette app. `hosts`: the hosts it answers to (hosts.HostPolicy; default:
    loopback alone), on every route but /healthz. `protected_prefixes`: more paths (beneath each)
    that need a bearer token besides the operations that declare `auth` and /mcp. `middleware` (outermost
    first) wraps every route, the operations' included, as does a middleware added later
    (`add_middleware`, before the app serves). `docs_title`: the title of the interactive
    documentation at /docs (api_docs); None serves none. `healthz`: a `GET /healthz` answering 200
    `{"status": "ok"}` while the app serves (for a load balancer; no token needed, whatever the
    protected prefixes), unless `routes` has its own at that path, which is served instead (and
    protected as the project says)."""
    specs = [binding.spec for binding in operations]
    hashes = contract_headers(specs)
    check = BearerCheck(hooks, hashes)
    endpoints: dict[tuple[str, str], ASGIApp] = {
        (binding.spec.rest_method or "POST", binding.spec.rest_path): operation_endpoint(binding.spec, binding.handler, hooks)
        for binding in operations if binding.spec.rest_path}
    # the default /healthz: public, unless the project serves its own there (or none)
    default_health = healthz and not any(getattr(route, "path", None) == HEALTHZ_PATH for route in routes)
    # A credential sent is checked on every operation and on /mcp (auth.identify), a public
    # operation's too. /mcp needs one only when every tool does (a 401 with its challenge, as OAuth
    # clients expect); with public tools beside protected ones, a call without one goes on
    # anonymously and a protected tool answers an isError result that says what is missing
    needs = [binding.spec.requirement.authenticated for binding in tools]
    every_tool_authenticated = bool(needs) and all(needs)
    rest_paths = [binding.spec for binding in operations if binding.spec.rest_path]
    health_exempt = [HEALTHZ_PATH] if default_health else []  # the default /healthz: no token, any Host
    protects = Protected(
        paths=[spec.rest_path for spec in rest_paths if spec.requirement.authenticated and spec.rest_path],
        prefixes=(*protected_prefixes, *([MCP_PATH] if every_tool_authenticated else [])),
        optional=[*(spec.rest_path for spec in rest_paths if not spec.requirement.authenticated and spec.rest_path),
                  *([] if every_tool_authenticated else [MCP_PATH])],
        public=health_exempt)
    hosts = hosts or HostPolicy()
    # The Host check is the app's (Policies), the Origin check McpHosts' (JSON errors); the
    # SDK's own are left off, and its body limit is the tools' (BodyLimit's), not its 4 MiB
    caller = ToolCaller(tools, hooks, mcp)
    server = build_server(caller)
    message_limit = mcp_message_limit(binding.spec for binding in tools)
    # JSON answers (json_response): mcp_direct's, and the SDK's for what it leaves (a
    # 2026-07-28 call is then answered in the request's own task, ~25% cheaper than its event
    # stream); the tools send no notifications while they run, which only a stream could carry
    sessions = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True,
                                            security_settings=TransportSecuritySettings(
                                                enable_dns_rebinding_protection=False),
                                            max_request_body_size=message_limit.limit)
    # GET and DELETE answered 405, POSTs bounded per credential and in all, idle streams ended;
    # plain requests answered as JSON (mcp_direct), the rest by the SDK
    mcp_endpoint = McpStreams(McpHosts(BodyLimit(CallerInstructions(
        McpDirect(StreamableHTTPASGIApp(sessions), caller, server), mcp.caller_instructions),
        message_limit), hosts), mcp.streams)
    document = openapi.read_bytes()

    async def openapi_json(_: Request) -> Response:
        return Response(document, media_type="application/json")

    @contextlib.asynccontextmanager
    async def run(app: Starlette) -> AsyncIterator[None]:
        async with sessions.run():  # the MCP session manager runs inside the host app's lifespan
            if lifespan is None:
                yield
            else:
                async with lifespan(app):
                    yield

    all_routes: list[BaseRoute] = [
        *(Route(path, endpoint, methods=[method]) for (method, path), endpoint in endpoints.items()),
        Route("/openapi.json", openapi_json),
        *(docs_routes(docs_title) if docs_title is not None else []),
        Route(MCP_PATH, mcp_endpoint),
        *routes,
        *([Route(HEALTHZ_PATH, healthy, methods=["GET"])] if default_health else []),
    ]
    app = ServiceApp(routes=all_routes, exception_handlers=exception_handlers(hashes, hooks), lifespan=run,
                     middleware=middleware)
    app._policies = {"hosts": hosts, "exempt": health_exempt, "check": check, "protects": protects}
    return app


async def healthy(_: Request) -> Response:
    """The default health check: the app is up and answering."""
    return JSONResponse({"status": "ok"})


def stdio_server(tools: Sequence[ToolBinding], hooks: ServiceHooks, mcp: McpSettings,
                 credential: str | None) -> Server[Any]:
    """The MCP server for `evidencekit.server.runtime._mcp.serve_stdio`, acting with `credential`."""
    return build_server(ToolCaller(tools, hooks, mcp, stdio_credential=credential))
