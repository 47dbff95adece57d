"""One operation call, whichever surface it came in on: validate the input against the contract,
enforce the declared requirement, parse, call the handler, check the answer against every published
output variant. REST (rest_runtime) and MCP (mcp) both call `OperationPipeline.run`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from evidencekit.contracts.spec import OperationSpec
from evidencekit.contracts.validation import FieldError, validator_for
from evidencekit.contracts.wire import parse, wire_data
from evidencekit.server.runtime.auth import Auth, enforce
from evidencekit.server.runtime.context import RequestContext
from evidencekit.server.runtime.errors import BadRequest, ContractViolation

log = logging.getLogger("evidencekit.runtime")

Handler = Callable[[Any, RequestContext], Awaitable[BaseModel | Mapping[str, Any]]]


def model_errors(exc: ValidationError) -> list[FieldError]:
    return [
        FieldError("$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]),
                   e["msg"], e["type"])
        for e in exc.errors()
    ]


class OperationPipeline:
    """An operation's spec, its handler and the service's auth, bound once."""

    def __init__(self, spec: OperationSpec, handler: Handler, auth: Auth) -> None:
        self.spec = spec
        self.handler = handler
        self.auth = auth
        self.validators = validator_for(spec)

    async def run(self, body: Any, raw: bytes | str, context: RequestContext) -> Any:
        """The answer's JSON data; ApiError for anything the caller should be told. `raw` is the
        body's JSON text, which the typed model parses (pydantic-core, faster than from `body`)."""
        spec = self.spec
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
        if spec.requirement.authenticated:
            await enforce(spec, self.auth, context.principal, payload)
        data = wire_data(await self.handler(payload, context))
        violations = self.validators.output_errors(data)
        if violations:
            log.error("contract violation in %s answer (request %s, %s): %s", spec.name, context.request_id,
                      context.surface, "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations))
            raise ContractViolation("the server produced a response that violates its contract")
        return data
