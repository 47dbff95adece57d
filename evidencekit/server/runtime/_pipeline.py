"""One operation call, whichever surface it came in on: enforce the declared requirement on the
caller (_auth.py: who, then which credential and which capability), with the operation's size
limit between the two (_request_size.py), validate the input against the contract, parse, check
the caller's role where the payload acts, call the handler, check the answer against every
published output variant (or take an answer checked when its data was written: checked_answer).
REST (rest_runtime) calls `OperationPipeline.checked` and sends the answer's bytes (a
CheckedAnswer's, or json_answer.answer_bytes of its data), MCP (mcp) `run` for its data; each has
identified the caller behind a credential sent first (auth.identify: the bearer check over HTTP,
the tool caller over stdio).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from evidencekit.contracts._spec import OperationSpec
from evidencekit.contracts._validation import FieldError, validator_for
from evidencekit.contracts._wire import parse, wire_data
from evidencekit.server.runtime._auth import UNAUTHENTICATED, Auth, check_caller, identify
from evidencekit.server.runtime._checked_answer import CheckedAnswer, answer_data
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._errors import BadRequest, ContractViolation
from evidencekit.server.runtime._request_size import operation_limit

Handler = Callable[[Any, RequestContext], Awaitable[BaseModel | Mapping[str, Any] | CheckedAnswer]]


def model_errors(exc: ValidationError) -> list[FieldError]:
    return [
        FieldError("$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]),
                   e["msg"], e["type"])
        for e in exc.errors()
    ]


_LOGS = {"rest": logging.getLogger("evidencekit.rest"), "mcp": logging.getLogger("evidencekit.mcp")}
_ANSWER = {"rest": "response", "mcp": "result"}


class OperationPipeline:
    """An operation's spec, its handler and the service's auth, bound once. `unauthenticated`: the
    401 message of this surface (over stdio there is no header to send). `limit`: the operation's
    size limit, which REST also reads its body with (refused as soon as it is known to pass)."""

    def __init__(self, spec: OperationSpec, handler: Handler, auth: Auth,
                 unauthenticated: str = UNAUTHENTICATED) -> None:
        self.spec = spec
        self.handler = handler
        self.auth = auth
        self.unauthenticated = unauthenticated
        self.validators = validator_for(spec)
        self.limit = operation_limit(spec)
        self._checked = spec.requirement.authenticated
        self._role = spec.requirement.minimum_role

    async def run(self, body: Any, raw: bytes | str, context: RequestContext, size: int | None = None) -> Any:
        """The answer's JSON data; ApiError for anything the caller should be told. `raw` is the
        body's JSON text, which the typed model parses (pydantic-core, faster than from `body`);
        `size`: the input's size as the surface measures it (len(raw) unless given);
        `context.principal` is the caller auth.identify found (None: none sent)."""
        answer = await self.checked(body, raw, context, size)
        return answer_data(answer) if isinstance(answer, CheckedAnswer) else answer

    async def checked(self, body: Any, raw: bytes | str, context: RequestContext, size: int | None = None) -> Any:
        """The answer's JSON data, or the handler's CheckedAnswer when it was checked against
        this contract."""
        spec = self.spec
        # who calls, first: a credential missing where one is needed is refused before the input
        # counts (as the bearer check refuses it over HTTP before the body is read)
        if self._checked and context.principal is None:  # none sent: the Auth's answer for no credential
            context.principal = await identify(self.auth, None, True, self.unauthenticated)
        self.limit.check(len(raw) if size is None else size)  # REST has refused a larger body as it read it
        if self._checked:  # then what the caller may do: nothing of the input is told to one who may not call
            check_caller(spec, context.principal, self.unauthenticated)
        errors = self.validators.input_errors(body)  # every variant: see OperationValidator.input_errors
        if errors:
            names = ", ".join(dict.fromkeys(error.path for error in errors))
            raise BadRequest(f"request does not match the contract: {names}",
                             code="validation_failed", fields=errors)
        try:
            payload = parse(spec.input_model, raw)
        except ValidationError as exc:  # the contract accepted it; the model must too
            raise BadRequest("request does not match the contract", code="validation_failed",
                             fields=model_errors(exc)) from None
        if self._role:
            await self.auth.check_role(context.principal, self._role, payload)
        answer = await self.handler(payload, context)
        if isinstance(answer, CheckedAnswer):
            if answer.contract_hash == spec.contract_hash:
                return answer
            answer = answer_data(answer)  # checked against another contract: checked again here
        data = wire_data(answer)
        violations = self.validators.output_errors(data)
        if violations:
            surface = context.surface if context.surface in _LOGS else "rest"
            _LOGS[surface].error("contract violation in %s %s (request %s): %s", spec.name, _ANSWER[surface],
                                 context.request_id,
                                 "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations))
            raise ContractViolation(f"the server produced a {_ANSWER[surface]} that violates its contract")
        return data
