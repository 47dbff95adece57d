"""The floor of the status benchmark: the status read's own steps with no web framework at all.

Bearer lookup, body, JSON, every input variant, the typed input, role check, the (batched)
database read, the answer's JSON data, every output variant, JSON out (or the answer checked
already, when it settled or at an earlier poll: store/status_answer): the calls `evidencekit
serve` makes, in a bare ASGI function (no dispatch, middleware, request ids, error mapping or
access log).
Whatever the plumbing costs, the service cannot beat this; scripts/bench.py prints it beside the
service and the bare peer. Answers only a valid, authorized status call; anything else is a 500.
"""

import contextlib
from typing import Any

from pydantic_core import from_json

from evidencekit.contracts._validation import validator_for
from evidencekit.contracts._wire import parse
from evidencekit.server.evidence.auth import EvidenceAuth
from evidencekit.server.evidence.service import EvidenceService
from evidencekit.server.evidence.store import access
from evidencekit.server.evidence.store.access import RESEARCH
from evidencekit.server.evidence.store.db import database_url, open_store
from evidencekit.server.generated.models import StatusInput
from evidencekit.server.generated.operations import STATUS
from evidencekit.server.runtime import CheckedAnswer, answer_data
from evidencekit.server.runtime._json_answer import answer_bytes

VALIDATORS = validator_for(STATUS)
SERVICE = EvidenceService()
AUTH = EvidenceAuth()


async def lifespan(receive: Any, send: Any) -> None:
    async with contextlib.AsyncExitStack() as stack:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await stack.enter_async_context(open_store(database_url(), shared=True))
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return


async def status(scope: dict[str, Any], receive: Any) -> bytes:
    authorization = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
    principal = await access.authenticate_bearer(authorization.decode().partition(" ")[2])
    raw = (await receive())["body"]
    if principal is None or VALIDATORS.input_errors(from_json(raw)):
        raise ValueError("the floor answers only valid, authenticated status calls")
    payload = parse(StatusInput, raw)
    if RESEARCH not in principal.capabilities:  # what the runtime enforces from the manifest
        raise ValueError("the floor answers only authorized status calls")
    await AUTH.check_role(principal, "viewer", payload)  # the service's Auth, as the runtime asks it
    data = await SERVICE.status(payload.workspace_id, payload.mutation_id)  # the batched read
    if isinstance(data, CheckedAnswer):
        if data.contract_hash == STATUS.contract_hash:
            return data.body
        data = answer_data(data)
    if VALIDATORS.output_errors(data):
        raise ValueError("contract violation")
    return answer_bytes(data)


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    body = await status(scope, receive)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})

