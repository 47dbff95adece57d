"""One log line per HTTP request: method, path, status, duration, request id. Never headers,
bodies or query strings (they may carry tokens)."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("evidencekit.access")


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        request_id = "-"

        async def observe(message: Message) -> None:
            nonlocal status, request_id
            if message["type"] == "http.response.start":
                status = message["status"]
                for key, value in message.get("headers", []):
                    if key == b"x-request-id":
                        request_id = value.decode("latin-1")
            await send(message)

        try:
            await self.app(scope, receive, observe)
        finally:
            log.info("%s %s %s %.1fms request_id=%s", scope["method"], scope["path"], status,
                     (time.perf_counter() - started) * 1000, request_id)
