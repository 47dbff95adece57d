"""The hand-written half of every generated REST route: parse, validate, call, validate, answer.

Generated `server/generated/rest.py` binds each operation's spec and handler to
`operation_endpoint`; everything that is the same for all operations lives here.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from contracts.spec import OperationSpec
from contracts.validation import FieldError, validator_for
from contracts.wire import parse

from .context import RequestContext
from .errors import ApiError, BadRequest, ContractViolation, PayloadTooLarge

log = logging.getLogger("evidencekit.rest")

CONTRACT_HASH_HEADER = "X-Contract-Hash"
REQUEST_ID_HEADER = "X-Request-Id"
MAX_BODY_BYTES = 64 * 1024
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

Handler = Callable[[Any, RequestContext], Awaitable[BaseModel]]
Endpoint = Callable[[Request], Awaitable[Response]]


class _RequestIds:
    """Unique ids without a random draw per request: a random per-process prefix and a counter."""

    def __init__(self) -> None:
        self.reset()
        os.register_at_fork(after_in_child=self.reset)

    def reset(self) -> None:
        self.prefix = uuid.uuid4().hex[:16]
        self.counter = itertools.count()

    def new(self) -> str:
        return f"{self.prefix}{next(self.counter):016x}"


_request_ids = _RequestIds()


def request_id_for(request: Request) -> str:
    """The caller's X-Request-Id when it is a sane token, else a new one."""
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if _VALID_REQUEST_ID.match(given) else _request_ids.new()


async def read_json_body(request: Request, limit: int = MAX_BODY_BYTES) -> tuple[bytes, Any]:
    """The raw body and its parsed JSON, refused early when too large or not JSON."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body is larger than {limit} bytes")
    body = bytearray()
    while True:  # request.stream() without its async generator: this runs on every call
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        body += message.get("body", b"")
        if len(body) > limit:
            raise PayloadTooLarge(f"request body is larger than {limit} bytes")
        if not message.get("more_body", False):
            break
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type not in ("application/json", ""):
        raise BadRequest("request body must be application/json", code="unsupported_media_type")
    try:
        return bytes(body), json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}", code="invalid_json") from None


def _error_response(error: ApiError, request_id: str, spec: OperationSpec) -> JSONResponse:
    headers = {REQUEST_ID_HEADER: request_id, CONTRACT_HASH_HEADER: spec.contract_hash, **error.headers()}
    return JSONResponse(error.to_json(request_id), status_code=error.status, headers=headers)


def _model_errors(exc: ValidationError) -> list[FieldError]:
    return [
        FieldError("$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]),
                   e["msg"], e["type"])
        for e in exc.errors()
    ]


def operation_endpoint(spec: OperationSpec, handler: Handler) -> Endpoint:
    """A Starlette endpoint that serves one operation exactly as its contract says."""
    assert spec.rest_variant is not None
    validators = validator_for(spec.name, spec.contract_hash)

    async def endpoint(request: Request) -> Response:
        request_id = request_id_for(request)
        try:
            raw, body = await read_json_body(request)
            errors = validators.input_errors(body)  # every variant: see OperationValidator.input_errors
            if errors:
                names = ", ".join(dict.fromkeys(error.path for error in errors))
                raise BadRequest(f"request does not match the contract: {names}",
                                 code="validation_failed", fields=errors)
            try:
                payload = parse(spec.input_model, raw)
            except ValidationError as exc:  # the contract accepted it; the model must too
                raise BadRequest("request does not match the contract", code="validation_failed",
                                 fields=_model_errors(exc)) from None
            context = RequestContext(request_id, "rest", request.headers, dict(request.scope.get("state", {})))
            result = await handler(payload, context)
            data = result.model_dump(mode="json", by_alias=True)
            violations = validators.output_errors(data)
            if violations:
                log.error("contract violation in %s response (request %s): %s", spec.name,
                          request_id, "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations))
                raise ContractViolation("the server produced a response that violates its contract")
        except ApiError as error:
            return _error_response(error, request_id, spec)
        except ClientDisconnect:
            log.info("client went away while sending %s (request %s)", spec.name, request_id)
            return Response(status_code=400)
        except Exception:
            log.exception("unhandled error in %s (request %s)", spec.name, request_id)
            return _error_response(ApiError("internal server error"), request_id, spec)
        headers = {REQUEST_ID_HEADER: request_id, CONTRACT_HASH_HEADER: spec.contract_hash}
        # pydantic-core's serializer: the same bytes as JSONResponse's json.dumps, ~6x faster. The
        # contracts have integers but no `number` fields, so no NaN can have passed validation.
        return Response(to_json(data), media_type="application/json", headers=headers)

    return endpoint
