"""A cap on request bodies for apps that read them their own way (the MCP Streamable HTTP app):
the body is read whole, up to its limit (request_size), before the app sees it; a larger one is a JSON 413."""

from __future__ import annotations

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencekit.server.runtime._errors import PayloadTooLarge
from evidencekit.server.runtime._http_errors import error_answer
from evidencekit.server.runtime._request_head import header_values
from evidencekit.server.runtime._request_size import DEFAULT_LIMIT, SizeLimit
from evidencekit.server.runtime._rest_runtime import read_body


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: SizeLimit = DEFAULT_LIMIT) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(receive, header_values(scope), self.limit)
        except PayloadTooLarge as error:
            await error_answer(error, scope)(scope, receive, send)
            return
        except ClientDisconnect:
            return
        await self.app(scope, replaying({"type": "http.request", "body": body, "more_body": False}, receive), send)


def replaying(first: Message, receive: Receive) -> Receive:
    """A `receive` that gives `first` (the request, read already) once, then what `receive` gives
    (after a whole body, only a disconnect can come)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return first

    return replay
