"""uvicorn's httptools protocol with named hooks: the only module that touches uvicorn's private
names (its HttpToolsProtocol's parser callbacks, `on_response_complete`, `_start_asgi_task`,
`_unset_keepalive_if_required`, `timeout_keep_alive_handler`, `pipeline`, `flow`, `url`, `app`,
`client`, `loop`, `timeout_keep_alive`, `server_state`).

uvicorn publishes the `http=` option (a protocol class), not the protocol's insides. The hardened
protocol (_http_protocol.py) subclasses HttpToolsAdapter and uses only what is named here, besides
asyncio.Protocol's own methods (connection_made, connection_lost, data_received): the hooks it
overrides, and the properties and methods it reads the connection through.

One piece is a copy: `on_response_complete` is uvicorn's, with the keep-alive timer it arms (a
call_later and its cancel per response, ~5-9 us of a ~55 us status read) replaced by the
`idle_began` hook, which the hardened protocol answers with one sweep per loop. It is the same in
every uvicorn from 0.45 (the first with `_start_asgi_task`) to 0.55.

tests/server/test_uvicorn_adapter.py holds the adapter to what serving relies on, in process and
on a real uvicorn server: a keep-alive connection answers a request, then the next on the same
connection; pipelined requests are answered in order, each started when the one before is done;
no keep-alive timer of uvicorn's closes a connection; `close_idle` closes an idle one; the hooks
see the request's path and client and can hand a request to another app. Tested on the lowest and
highest uvicorn the pin in pyproject.toml allows: 0.45.0 and 0.55.0 (httptools 0.6.0 and 0.9.0;
the last release of each minor between passed too, on httptools 0.6.0).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HttpToolsAdapter(HttpToolsProtocol):
    """uvicorn's HttpToolsProtocol, its internals behind the names below. The hooks do nothing
    here; a subclass overrides them."""

    # -- hooks

    def request_began(self) -> None:
        """A request's first byte was parsed (its head is arriving)."""

    def head_complete(self) -> None:
        """A request's head is parsed; the app has not been started for it yet (`answer_with`
        still decides which app answers it)."""

    def request_complete(self) -> None:
        """A request (head and body) has arrived whole."""

    def response_complete(self, pipelined: bool) -> None:
        """A response was sent whole; `pipelined`: another request is waiting on this connection
        (it is started next). Called first, before the connection reads again."""

    def idle_began(self) -> None:
        """A response is complete, the connection stays open and no request is waiting: where uvicorn
        arms its keep-alive timer (no timer is armed; `close_idle` closes the connection)."""

    def idle_ended(self) -> None:
        """Data came, a response completed or the connection was lost: where uvicorn cancels that
        timer."""

    # -- the connection, read and acted on

    @property
    def client_host(self) -> str | None:
        """The client's address (None when the transport does not say)."""
        return self.client[0] if self.client else None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.event_loop: asyncio.AbstractEventLoop = self.loop  # read on every request: no property's call

    @property
    def keep_alive_seconds(self) -> float:
        """How long an idle connection is kept (uvicorn's `timeout_keep_alive`)."""
        return float(self.timeout_keep_alive)

    def request_path(self) -> str | None:
        """The path of the request whose head is complete (latin-1), None if it has no URL
        httptools can parse."""
        try:
            return httptools.parse_url(self.url).path.decode("latin-1")
        except httptools.HttpParserInvalidURLError:
            return None

    def answer_with(self, app: Any) -> None:
        """This connection's requests, from the one whose head is complete on, go to `app`."""
        self.app = app

    def close_idle(self) -> None:
        """Close the connection as uvicorn does when its keep-alive timeout passes."""
        self.timeout_keep_alive_handler()

    # -- uvicorn's internals, behind the hooks (its methods called by name, not through super():
    # each runs on every request, and super() makes an object each time)

    def on_message_begin(self) -> None:
        HttpToolsProtocol.on_message_begin(self)
        self.request_began()

    def on_headers_complete(self) -> None:
        self.head_complete()
        HttpToolsProtocol.on_headers_complete(self)

    def on_message_complete(self) -> None:
        HttpToolsProtocol.on_message_complete(self)
        self.request_complete()

    def _unset_keepalive_if_required(self) -> None:
        self.idle_ended()
        HttpToolsProtocol._unset_keepalive_if_required(self)  # a timer uvicorn armed itself (none here)

    def on_response_complete(self) -> None:
        # uvicorn's own (0.45-0.55), with the keep-alive timer replaced by idle_began
        self.response_complete(bool(self.pipeline))
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:  # the next pipelined request starts
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self.idle_began()
