"""What an answer said of itself as it was sent: whether it started, its status and its request id.

Two layers of the app need to know it: the access log (the line's status and request id) and the
exception middleware (a handled exception after the answer started is an error, not a second
answer). Each watching `send` costs a request a call per message; so one `Sent` is made per request,
kept in its scope, and a layer handed that watcher's own `send` (no layer between them changed it)
reads the same one instead of watching again (`watch`)."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import Message, Send

_REQUEST_ID = b"x-request-id"


class Sent:
    """`send` forwards every message to `forward`, noting the answer's start."""

    __slots__ = ("forward", "started", "status", "_headers")

    def __init__(self, forward: Send) -> None:
        self.forward = forward
        self.started = False
        self.status = 500  # what a request that sent nothing is logged with
        self._headers: Iterable[tuple[bytes, bytes]] = ()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.status = message["status"]
            self._headers = message.get("headers", ())
        await self.forward(message)

    @property
    def request_id(self) -> str:
        """The answer's X-Request-Id, "-" when it has none (or nothing was sent)."""
        for key, value in self._headers:
            if key == _REQUEST_ID:
                return value.decode("latin-1")
        return "-"


def watch(send: Send) -> tuple[Sent, Send]:
    """The request's watcher and the `send` to hand on: the one made further out when `send` is
    its own, else a new one."""
    sent = getattr(send, "__self__", None)
    if type(sent) is Sent:
        return sent, send
    sent = Sent(send)
    return sent, sent.send
