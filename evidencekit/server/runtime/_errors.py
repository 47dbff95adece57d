"""One error tree that maps to the wire: `{error, message, code, request_id}` plus an HTTP status.
Every surface writes its body with `to_json`: over HTTP through http_errors.error_answer (every REST
error, /mcp's refusals, the serving protocol's), over MCP as isError results: `fields` when a body
does not match the contract, `retry_after_seconds` when the caller should wait (also the Retry-After
header; MCP has no headers).

    ApiError (500 internal_error)
    ├── BadRequest (400 invalid_request)        fields: every failing field
    ├── Unauthorized (401 unauthenticated)      adds WWW-Authenticate (its challenge; Bearer)
    ├── Forbidden (403 forbidden)
    ├── NotFound (404 not_found)
    ├── MethodNotAllowed (405 method_not_allowed)  adds Allow
    ├── Conflict (409 conflict)                 the request conflicts with an earlier one
    ├── PreconditionFailed (412 contract_mismatch)  the caller's X-Contract-Hash is not ours
    ├── MisdirectedRequest (421 host_not_allowed)  a Host /mcp does not answer to (DNS rebinding)
    ├── RequestTimeout (408 request_timeout)    the request did not arrive whole in time
    ├── PayloadTooLarge (413 payload_too_large)
    ├── RateLimited (429 rate_limited)          adds Retry-After
    ├── HeadTooLarge (431 request_header_fields_too_large)
    ├── ContractViolation (500 contract_violation)
    └── ServiceUnavailable (503 unavailable)  adds Retry-After when given
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from evidencekit.contracts._validation import FieldError


class ApiError(Exception):
    status: ClassVar[int] = 500
    error: ClassVar[str] = "internal_error"
    default_code: ClassVar[str] = "internal_error"
    retry_after: int | None = None  # seconds the caller should wait before trying again

    def __init__(self, message: str, *, code: str | None = None,
                 fields: Sequence[FieldError] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.fields = list(fields)

    def headers(self) -> dict[str, str]:
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}

    def to_json(self, request_id: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "error": self.error,
            "message": self.message,
            "code": self.code,
            "request_id": request_id,
        }
        if self.fields:
            body["fields"] = [field.to_json() for field in self.fields]
        if self.retry_after is not None:
            body["retry_after_seconds"] = self.retry_after
        return body


class BadRequest(ApiError):
    status, error, default_code = 400, "bad_request", "invalid_request"


class Unauthorized(ApiError):
    status, error, default_code = 401, "unauthorized", "unauthenticated"

    def __init__(self, message: str, *, code: str | None = None, challenge: str = "Bearer") -> None:
        super().__init__(message, code=code)
        self.challenge = challenge  # the WWW-Authenticate value (Auth.challenge: where to get a token)

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.challenge}


class Forbidden(ApiError):
    status, error, default_code = 403, "forbidden", "forbidden"


class NotFound(ApiError):
    status, error, default_code = 404, "not_found", "not_found"


class MethodNotAllowed(ApiError):
    status, error, default_code = 405, "method_not_allowed", "method_not_allowed"

    def __init__(self, message: str, *, allow: str) -> None:
        super().__init__(message)
        self.allow = allow

    def headers(self) -> dict[str, str]:
        return {"Allow": self.allow}


class Conflict(ApiError):
    status, error, default_code = 409, "conflict", "conflict"


class PreconditionFailed(ApiError):
    status, error, default_code = 412, "precondition_failed", "contract_mismatch"


class MisdirectedRequest(ApiError):
    status, error, default_code = 421, "misdirected_request", "host_not_allowed"


class RequestTimeout(ApiError):
    status, error, default_code = 408, "request_timeout", "request_timeout"


class HeadTooLarge(ApiError):
    status, error, default_code = 431, "request_header_fields_too_large", "request_header_fields_too_large"


class PayloadTooLarge(ApiError):
    status, error, default_code = 413, "payload_too_large", "payload_too_large"


class RateLimited(ApiError):
    status, error, default_code = 429, "rate_limited", "rate_limited"

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


class ContractViolation(ApiError):
    status, error, default_code = 500, "internal_error", "contract_violation"


class ServiceUnavailable(ApiError):
    status, error, default_code = 503, "unavailable", "unavailable"

    def __init__(self, message: str, *, code: str | None = None, retry_after: int | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after
