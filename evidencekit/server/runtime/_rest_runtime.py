"""The REST surface of one operation: read the JSON body, run the operation's pipeline, answer.

The app factory (_app.py) routes one `OperationEndpoint` per operation the generated `rest.py`
binds. The endpoint is a plain ASGI app rather than a Starlette request/response function: a
polled operation pays for Starlette's Request, Response and exception wrappers more than for the
work they wrap (measured on the evidence service's status read). It answers its own errors, through
http_errors.error_answer as every other error is answered, except an exception the app has a
handler of the team's for (`app.add_exception_handler`): that one goes up to the handler, as it
would from any Starlette endpoint.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from pydantic_core import from_json
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from evidencekit.contracts._loader import CONTRACT_HASH_PATTERN
from evidencekit.contracts._notes import NOTE_HEADER, header_value
from evidencekit.contracts._query import from_query
from evidencekit.contracts._spec import OperationSpec
from evidencekit.server.runtime._checked_answer import CheckedAnswer
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._errors import BadRequest, PreconditionFailed
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._http_errors import error_answer, handled_by_app
from evidencekit.server.runtime._json_answer import answer_bytes
from evidencekit.server.runtime._pipeline import Handler, OperationPipeline
from evidencekit.server.runtime._request_head import (
    CONTRACT_HASH_KEY,
    CONTRACT_NEWER_HEADER,
    REQUEST_ID_KEY,
    header_values,
    request_id_of,
)
from evidencekit.server.runtime._request_size import DEFAULT_LIMIT, SizeLimit, json_input
from evidencekit.server.runtime._sent import forwarding

log = logging.getLogger("evidencekit.rest")

NOTE_KEY = NOTE_HEADER.lower().encode()
_HASH_FORM = re.compile(CONTRACT_HASH_PATTERN.strip("^$"))


async def read_body(receive: Receive, headers: Mapping[bytes, str], limit: SizeLimit = DEFAULT_LIMIT) -> bytes:
    """The whole request body, refused (PayloadTooLarge) as soon as it is known to pass `limit`."""
    declared = headers.get(b"content-length")
    if declared is not None and declared.isdigit():
        limit.check(int(declared))
    message = await receive()
    if message["type"] == "http.disconnect":
        raise ClientDisconnect()
    body: bytes = message.get("body", b"")
    if message.get("more_body", False):  # rare: most bodies arrive in one message, used as is
        pieces = bytearray(body)
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnect()
            pieces += message.get("body", b"")
            limit.check(len(pieces))
            if not message.get("more_body", False):
                break
        body = bytes(pieces)
    limit.check(len(body))
    return body


async def read_json_body(receive: Receive, headers: Mapping[bytes, str],
                         limit: SizeLimit = DEFAULT_LIMIT) -> tuple[bytes, Any]:
    """The raw body and its parsed JSON, refused early when too large or not JSON."""
    body = await read_body(receive, headers, limit)
    content_type = headers.get(b"content-type", "")
    if content_type != "application/json" and content_type.split(";")[0].strip().lower() not in ("application/json", ""):
        raise BadRequest("request body must be application/json", code="unsupported_media_type")
    try:  # pydantic-core's parser: the one the typed model reads the body with, ~10x json.loads
        return body, from_json(body, cache_strings=False)
    except ValueError as exc:  # not UTF-8 JSON, too deep, a lone surrogate, an integer past 4300 digits
        raise BadRequest(f"request body is not valid JSON: {exc}", code="invalid_json") from None


class OperationEndpoint:
    """An ASGI app that serves one operation exactly as its contract says."""

    def __init__(self, spec: OperationSpec, handler: Handler, hooks: ServiceHooks) -> None:
        assert spec.rest_variant is not None
        self.spec = spec
        self.hooks = hooks
        self.pipeline = OperationPipeline(spec, handler, hooks.auth)
        self._hash_header = [(CONTRACT_HASH_KEY, spec.contract_hash.encode())]
        variant = spec.schemas.get(spec.rest_variant or "")
        self._query_schema = variant.input_schema if spec.rest_method == "GET" and variant is not None else None
        # a client of an earlier compatible contract is told its own hash (the answer is valid under
        # it, so clients that predate the newer header keep working) and the newer one beside it
        newer = (CONTRACT_NEWER_HEADER.lower().encode(), spec.contract_hash.encode())
        self._compatible = {known: [(CONTRACT_HASH_KEY, known.encode()), newer] for known in spec.compatible_hashes}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # one coroutine from the request to its answer's bytes: each one more would cost every
        # request a frame (the pipeline's `checked` is the next)
        headers = header_values(scope)
        request_id = request_id_of(scope)
        spec = self.spec
        sent_hash = headers.get(CONTRACT_HASH_KEY)
        expected = "" if sent_hash is None else sent_hash.strip()
        hash_headers = self._compatible.get(expected, self._hash_header)
        notes: list[str] = []  # the handler's (RequestContext.notes): X-Note headers beside the body
        try:
            if sent_hash is not None and not _HASH_FORM.fullmatch(expected):  # sent empty too: no contract hash
                raise BadRequest("X-Contract-Hash must be a contract hash (sha256: and 16 hex digits), "
                                 f"not {expected[:80]!r}", code="invalid_contract_hash")
            if expected and expected != spec.contract_hash and expected not in self._compatible:
                # refused before anything is done
                raise PreconditionFailed(f"this request was made for contract {expected[:80]} of {spec.name}; "
                                         f"this server serves {spec.contract_hash}: regenerate or upgrade the client")
            size = None  # a body's: its length
            if self._query_schema is not None:  # a GET: the input is the query string, measured as MCP arguments are
                body = from_query(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True),
                                  self._query_schema)
                raw, size = json_input(body)
            else:
                raw, body = await read_json_body(receive, headers, self.pipeline.limit)  # refuses lone surrogates
            state = scope.setdefault("state", {})
            context = RequestContext(request_id, "rest", Headers(scope=scope), state, state.get("principal"), notes)
            answer = await self.pipeline.checked(body, raw, context, size)
            answer_body = answer.body if type(answer) is CheckedAnswer else answer_bytes(answer)
        except ClientDisconnect:
            log.info("client went away while sending %s (request %s)", spec.name, request_id)
            await send({"type": "http.response.start", "status": 400, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        except Exception as exc:  # contract and handler errors, answered here unless the team handles them
            if handled_by_app(scope, exc):
                raise  # an exception handler the team added answers it (Starlette's rules)
            answer_error = error_answer(exc, scope, request_id=request_id, hooks=self.hooks,
                                        where=f"{spec.name} (request {request_id})", headers=hash_headers)
            await answer_error(scope, receive, send)
            return
        start, forward = forwarding(send, {"type": "http.response.start", "status": spec.success_status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(answer_body)).encode()),
            (REQUEST_ID_KEY, request_id.encode()), *hash_headers,
            *((NOTE_KEY, header_value(n).encode()) for n in notes)]})
        await forward(start)
        await forward({"type": "http.response.body", "body": answer_body})


def operation_endpoint(spec: OperationSpec, handler: Handler, hooks: ServiceHooks) -> OperationEndpoint:
    return OperationEndpoint(spec, handler, hooks)
