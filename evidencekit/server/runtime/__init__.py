"""The REST and MCP runtime a project built with evidencekit imports (docs/toolkit.md, "Public API").

    handlers   RequestContext (what a handler knows of the call), MISSING (an optional field the
               caller left out), the errors a handler raises (ApiError, BadRequest, Unauthorized,
               Forbidden, NotFound, Conflict, PayloadTooLarge, RateLimited, ServiceUnavailable),
               answers checked once (CheckedAnswer, checked_answer, checked_frame, Frame, answer_data)
    auth       Auth (what a project implements), Principal (what the runtime reads of a caller),
               NoAuth, ServiceHooks (what a project plugs in besides its handlers)
    the app    build_app, Binding, ToolBinding, Handler, ServiceApp, Lifespan, stdio_server: what the
               generated app module calls; HostPolicy (the hosts the app answers to: create_app's
               `hosts`)
    MCP        McpSettings, StreamLimits, serve_stdio
    serving    serve, listen, ServingLimits, log_off_the_loop, flush_logs: what `evidencekit serve` runs

Every module beneath this package (`_app`, `_mcp`, `_pipeline`, ...) is private: its names may change
in any release. Names are imported when first used, so importing one does not import them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import MISSING

from evidencekit._exports import lazy_exports

__all__ = [
    "MISSING",
    "ApiError",
    "Auth",
    "BadRequest",
    "Binding",
    "CheckedAnswer",
    "Conflict",
    "Forbidden",
    "Frame",
    "Handler",
    "HostPolicy",
    "Lifespan",
    "McpSettings",
    "NoAuth",
    "NotFound",
    "PayloadTooLarge",
    "Principal",
    "RateLimited",
    "RequestContext",
    "ServiceApp",
    "ServiceHooks",
    "ServiceUnavailable",
    "ServingLimits",
    "StreamLimits",
    "ToolBinding",
    "Unauthorized",
    "answer_data",
    "build_app",
    "checked_answer",
    "checked_frame",
    "flush_logs",
    "listen",
    "log_off_the_loop",
    "serve",
    "serve_stdio",
    "stdio_server",
]

if TYPE_CHECKING:
    from evidencekit.server.runtime._app import (
        Binding,
        Lifespan,
        ServiceApp,
        build_app,
        stdio_server,
    )
    from evidencekit.server.runtime._auth import Auth, NoAuth, Principal
    from evidencekit.server.runtime._checked_answer import (
        CheckedAnswer,
        Frame,
        answer_data,
        checked_answer,
        checked_frame,
    )
    from evidencekit.server.runtime._context import RequestContext
    from evidencekit.server.runtime._errors import (
        ApiError,
        BadRequest,
        Conflict,
        Forbidden,
        NotFound,
        PayloadTooLarge,
        RateLimited,
        ServiceUnavailable,
        Unauthorized,
    )
    from evidencekit.server.runtime._hooks import ServiceHooks
    from evidencekit.server.runtime._hosts import HostPolicy
    from evidencekit.server.runtime._log_queue import flush_logs, log_off_the_loop
    from evidencekit.server.runtime._mcp import McpSettings, ToolBinding, serve_stdio
    from evidencekit.server.runtime._mcp_streams import StreamLimits
    from evidencekit.server.runtime._pipeline import Handler
    from evidencekit.server.runtime._serving import ServingLimits, listen
    from evidencekit.server.runtime._serving import run as serve
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        **dict.fromkeys(["Binding", "Lifespan", "ServiceApp", "build_app", "stdio_server"], "_app"),
        **dict.fromkeys(["Auth", "NoAuth", "Principal"], "_auth"),
        **dict.fromkeys(["CheckedAnswer", "Frame", "answer_data", "checked_answer", "checked_frame"],
                        "_checked_answer"),
        "RequestContext": "_context",
        **dict.fromkeys(["ApiError", "BadRequest", "Conflict", "Forbidden", "NotFound", "PayloadTooLarge",
                         "RateLimited", "ServiceUnavailable", "Unauthorized"], "_errors"),
        "ServiceHooks": "_hooks",
        "HostPolicy": "_hosts",
        **dict.fromkeys(["flush_logs", "log_off_the_loop"], "_log_queue"),
        **dict.fromkeys(["McpSettings", "ToolBinding", "serve_stdio"], "_mcp"),
        "StreamLimits": "_mcp_streams",
        "Handler": "_pipeline",
        "ServingLimits": "_serving", "listen": "_serving", "serve": "_serving:run",
    })
