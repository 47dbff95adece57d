"""What an answer said of itself as it was sent: whether it started, its status and its request id.

The app's outermost error handling (ServiceApp.__call__: a 500 only before an answer started) and
its policy layer need to know it: the access log (the line's status and request id) and the
exception handlers (a handled exception after the answer started is an error, not a second answer).
Each watching `send` costs a request a call per message; so one `Sent` is made per request, by the
app's call, and a layer handed that watcher's own `send` (no layer between them changed it) reads
the same one instead of watching again (`watch`); an endpoint that writes its whole answer at once
notes its start there and sends past it (`forwarding`)."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import Message, Scope, Send

from evidencekit.server.runtime._request_head import REQUEST_ID_KEY, request_id_of


class Sent:
    """`send` forwards every message to `forward`, noting the answer's start. Given the request's
    `scope` (the outermost watcher's: ServiceApp.__call__), an answer without an X-Request-Id gets
    the request's (request_id_of): /openapi.json, /docs, /healthz and a team's own routes carry one as
    the operations' answers do, and the access line names it."""

    __slots__ = ("forward", "scope", "started", "status", "_headers")

    def __init__(self, forward: Send, scope: Scope | None = None) -> None:
        self.forward = forward
        self.scope = scope
        self.started = False
        self.status = 500  # what a request that sent nothing is logged with
        self._headers: Iterable[tuple[bytes, bytes]] = ()

    async def send(self, message: Message) -> None:
        await self.forward(self.starting(message) if message["type"] == "http.response.start" else message)

    def starting(self, message: Message) -> Message:
        """Note the answer's start (`message`, an http.response.start) and give the message to
        forward in its place (with the request's X-Request-Id, given the scope)."""
        self.started = True
        self.status = message["status"]
        headers = self._headers = message.get("headers", ())
        if self.scope is not None:
            for key, _ in headers:
                if key == REQUEST_ID_KEY:
                    break
            else:
                headers = self._headers = [*headers, (REQUEST_ID_KEY, request_id_of(self.scope).encode())]
                message = {**message, "headers": headers}
        return message

    @property
    def request_id(self) -> str:
        """The answer's X-Request-Id; before an answer, the request's when the scope is known (a 500
        the outermost middleware is about to send carries it), else "-"."""
        for key, value in self._headers:
            if key == REQUEST_ID_KEY:
                return value.decode("latin-1")
        return "-" if self.scope is None or self.started else request_id_of(self.scope)


def forwarding(send: Send, start: Message) -> tuple[Message, Send]:
    """What an endpoint that writes its whole answer at once sends its messages to, and the start
    message to send there: the watcher's own destination, its start noted (`Sent.starting`), when
    `send` is a watcher's (nothing between them changed it); else `send` itself. Each message
    then skips a call through the watcher (the operations' answers: every request pays for it)."""
    sent = getattr(send, "__self__", None)
    if type(sent) is Sent:
        return sent.starting(start), sent.forward
    return start, send


def watch(send: Send) -> tuple[Sent, Send]:
    """The request's watcher and the `send` to hand on: the one made further out when `send` is
    its own, else a new one."""
    sent = getattr(send, "__self__", None)
    if type(sent) is Sent:
        return sent, send
    sent = Sent(send)
    return sent, sent.send
